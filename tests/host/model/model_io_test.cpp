// The sentences of host/model/model_io.h for the core's statuses: each number says what it is.
#include "host/model/model_io.h"

#include <gtest/gtest.h>

#include <string>

#include "test_support.h"
#include "tv/model/model.h"
#include "tv/train/presets.h"

namespace {

tv::ModelDesc tinyvision(int classes) {
  tv::ModelDesc d;
  EXPECT_TRUE(tv::preset_model("tinyvision", classes, &d));
  return d;
}

std::string plan_message(const tv::ModelDesc& d) {
  tv::ModelPlan plan;
  const tv::Status st = tv::plan_model(d, &plan);
  EXPECT_FALSE(st.ok());
  return tvh::status_message(st, &d);
}

using tvtest::contains;

TEST(StatusMessage, AGrayInputWithThreeChannelsSaysWhatIsRequired) {
  tv::ModelDesc d = tinyvision(3);
  d.input.order = tv::ChannelOrder::GRAY;  // 3 channels
  const std::string m = plan_message(d);
  EXPECT_TRUE(contains(m, "(3 where 1 is required)")) << m;
}

TEST(StatusMessage, OneClassSaysTheSmallestAccepted) {
  const std::string m = plan_message(tinyvision(1));
  EXPECT_TRUE(contains(m, "(1, at least 2)")) << m;
}

// The sentence plan_model's refusal gives for `layer` on an h x w gray input, before a dense head.
std::string first_layer_message(int h, int w, const tv::LayerDesc& layer) {
  tv::ModelDesc d;
  tv::set_input(&d, h, w, 1);
  d.num_classes = 2;
  tv::add_layer(&d, layer);
  tv::add_layer(&d, tv::flatten_layer());
  tv::add_layer(&d, tv::dense_layer());
  return plan_message(d);
}

TEST(StatusMessage, AnAdaptivePoolWiderThanItsInputNamesTheWidth) {
  const std::string m = first_layer_message(8, 4, tv::adaptive_avgpool_layer(2, 6));  // fits the height only
  EXPECT_TRUE(contains(m, "layer 0 (adaptive_avgpool2d)")) << m;
  EXPECT_TRUE(contains(m, "(6, at most 4)")) << m;
}

TEST(StatusMessage, AWindowLargerThanItsInputSaysTheLimit) {
  const std::string m = first_layer_message(4, 4, tv::conv2d_layer(4, 5, 1, tv::Padding::Valid));
  EXPECT_TRUE(contains(m, "layer 0 (conv2d)")) << m;
  EXPECT_TRUE(contains(m, "(5, at most 4)")) << m;
}

// Every kind of figures has its words, and none prints two bare numbers side by side.
TEST(StatusFiguresText, EveryKindSaysWhatItsNumbersAre) {
  const tv::Status kinds[] = {
      tv::status_over_limit(tv::StatusCode::TooManyLayers, -1, 70, 64),
      tv::status_under_minimum(tv::StatusCode::InvalidArgument, -1, 0, 1),
      tv::status_not_expected(tv::StatusCode::BlobBadVersion, -1, 3, 1),
      tv::status_too_small(tv::StatusCode::ArenaTooSmall, -1, 100, 200),
      tv::status_at_tensor_element(tv::StatusCode::NonFiniteWeight, 2, 4, 17),
      tv::status_at_element(tv::StatusCode::NonFiniteActivation, 2, 17),
      tv::status_classes(tv::StatusCode::BlobDuplicateLabel, 1, 3),
      tv::status_value(tv::StatusCode::UnknownLayer, 0, 99),
      tv::status_channel_value(tv::StatusCode::BadParameter, 1, 5, -2),
      tv::status_plan_figure(tv::StatusCode::Overflow, 1, tv::PlanFigure::Weights),
  };
  const char* words[] = {
      "(70, at most 64)",       "(0, at least 1)", "(3 where 1 is required)", "(100 where 200 are needed)",
      "(tensor 4, element 17)", "(element 17)",    "(classes 1 and 3)",       "(99)",
      "(channel 5: -2)",        "(the weights)"};
  for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); ++k) {
    const std::string text = tvh::status_figures_text(kinds[k]);
    EXPECT_TRUE(contains(text, words[k])) << "kind " << k << ": " << text;
  }
  EXPECT_EQ(tvh::status_figures_text(tv::status_plain(tv::StatusCode::NoLayers)), "");
  // Tensor -1: the input scale/offset or a raw file, which has no tensor index.
  EXPECT_EQ(tvh::status_figures_text(tv::status_at_tensor_element(tv::StatusCode::NonFiniteWeight, -1, -1, 1)),
            " (element 1)");
}

}  // namespace
