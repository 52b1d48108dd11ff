// A detector on the core (tv::Task::Detect): the detect preset's plan, the refusals of inputs the grid
// cannot cover, and inference giving a softmax per grid cell.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tv/detect/grid.h"
#include "tv/model/model.h"
#include "tv/train/net.h"
#include "tv/train/presets.h"

namespace {

tv::ModelDesc detector(int h, int w, int c, int channels) {
  tv::DataShape data;
  data.height = h;
  data.width = w;
  data.channels = c;
  tv::ModelDesc d;
  EXPECT_TRUE(tv::preset_model_for("detect", channels, data, &d));
  return d;
}

TEST(Detector, ThePresetEndsInAGridOfAnEighthOfTheInput) {
  for (const auto& s : std::vector<std::vector<int>>{{96, 96, 1}, {64, 64, 3}, {48, 240, 3}, {240, 240, 3}}) {
    const tv::ModelDesc d = detector(s[0], s[1], s[2], 4);
    EXPECT_EQ(d.task, tv::Task::Detect);
    EXPECT_EQ(d.detect_threshold, tv::kDefaultDetectThreshold);
    tv::ModelPlan plan;
    ASSERT_TRUE(tv::plan_model(d, &plan).ok()) << s[0] << "x" << s[1];
    const tv::Shape& out = plan.layers[plan.num_layers - 1].out;
    EXPECT_EQ(out.h, s[0] / 8);
    EXPECT_EQ(out.w, s[1] / 8);
    EXPECT_EQ(out.c, 4);
    EXPECT_EQ(tv::plan_outputs(plan), (size_t)(s[0] / 8) * (s[1] / 8) * 4);
  }
  tv::TrainRecipe r;
  ASSERT_TRUE(tv::preset_recipe("detect", &r));
  EXPECT_EQ(r.opt.object_weight, tv::kObjectWeight);
  EXPECT_EQ(r.aug_shift, 0);
}

TEST(Detector, InputsTheGridCannotCoverAreRefused) {
  tv::ModelPlan plan;
  // sides: not a multiple of 8, under 48, over 240
  for (const auto& s : std::vector<std::vector<int>>{{100, 96}, {96, 92}, {40, 40}, {248, 96}}) {
    const tv::Status st = tv::plan_model(detector(s[0], s[1], 3, 3), &plan);
    EXPECT_EQ(st.code, tv::StatusCode::BadParameter) << s[0] << "x" << s[1];
  }
  EXPECT_EQ(tv::plan_model(detector(96, 96, 3, 18), &plan).code, tv::StatusCode::ClassCountMismatch);
  EXPECT_TRUE(tv::plan_model(detector(96, 96, 3, 17), &plan).ok());
  // a last layer that is not the grid: one pool too many
  tv::ModelDesc d = detector(96, 96, 3, 3);
  d.layers[d.num_layers - 1] = tv::maxpool_layer(2);
  tv::add_layer(&d, tv::conv2d_layer(3, 1));
  EXPECT_EQ(tv::plan_model(d, &plan).code, tv::StatusCode::ClassCountMismatch);
  // an unknown task
  d = detector(96, 96, 3, 3);
  d.task = (tv::Task)7;
  EXPECT_EQ(tv::plan_model(d, &plan).code, tv::StatusCode::NotSupported);
  // a classifier and a detector are never the same model
  tv::ModelDesc c = detector(96, 96, 3, 3);
  c.task = tv::Task::Classify;
  EXPECT_FALSE(tv::same_model(c, detector(96, 96, 3, 3)));
}

TEST(Detector, InferenceGivesEachCellItsOwnSoftmax) {
  const tv::ModelDesc d = detector(48, 64, 1, 3);
  tv::ModelPlan plan;
  ASSERT_TRUE(tv::plan_model(d, &plan).ok());
  std::vector<float> params(plan.param_count);
  tv::he_init(plan, params.data(), 3);
  const tv::InferenceMemory mem = tv::inference_memory(plan);
  std::vector<float> arena(mem.work_bytes / sizeof(float) + 4);
  tv::Inference inf;
  ASSERT_TRUE(tv::inference_init(&inf, &plan, params.data(), arena.data(), mem.work_bytes).ok());
  std::vector<uint8_t> image(48 * 64);
  for (size_t i = 0; i < image.size(); ++i) image[i] = (uint8_t)(i * 37 % 251);
  const size_t n = tv::plan_outputs(plan);
  ASSERT_EQ(n, 6u * 8u * 3u);
  std::vector<float> probs(n), logits(n);
  ASSERT_TRUE(tv::infer_u8(inf, image.data(), probs.data(), logits.data()).ok());
  for (size_t c = 0; c < n / 3; ++c) {
    const float* p = &probs[c * 3];
    EXPECT_NEAR(p[0] + p[1] + p[2], 1.0f, 1e-5f) << "cell " << c;
    const float* z = &logits[c * 3];  // p1 / p0 = exp(z1 - z0)
    EXPECT_NEAR(std::log(p[1] / p[0]), z[1] - z[0], 1e-3f) << "cell " << c;
  }
}

}  // namespace
