// Interop with the real device: the reference firmware's own trained weights, run by our forward
// pass on the images it was trained on, classify them as an independent re-implementation does.
#include <gtest/gtest.h>

#include "host/model/model_io.h"
#include "host/photos/dataset.h"
#include "test_support.h"
#include "tv/train/net.h"

namespace {

int count_correct(const std::string& dataset_rel, int* total) {
  tvh::LoadedModel m = tvh::load_model(tvtest::shared_path(dataset_rel + "/header/myWeights.bin"));
  EXPECT_EQ(m.format, "webmcu-bin");
  tvh::DatasetOptions opt;
  opt.path = tvtest::shared_path(dataset_rel);
  opt.height = opt.width = 64;
  opt.channels = 3;
  opt.order = tv::ChannelOrder::RGB;
  tvh::Dataset ds = tvh::load_dataset(opt);
  EXPECT_TRUE(ds.skipped.empty());
  tv::InferenceMemory im = tv::inference_memory(*m.plan);
  tvh::AlignedBuffer arena(im.work_bytes);
  tv::Inference inf;
  EXPECT_TRUE(tv::inference_init(&inf, m.plan.get(), m.params.data(), arena.data(), arena.size()).ok());
  int correct = 0;
  std::vector<float> probs(m.plan->desc.num_classes);
  for (size_t i = 0; i < ds.size(); ++i) {
    tv::infer_u8(inf, ds.image(i), probs.data());
    correct += tv::argmax(probs.data(), (int)probs.size()) == ds.labels[i];
  }
  *total = (int)ds.size();
  return correct;
}

}  // namespace

TEST(Interop, DeviceTrainedWeightsClassifyWebmcuB) {
  TV_REQUIRE_SHARED("datasets/webmcu-b");
  int total = 0;
  EXPECT_EQ(count_correct("datasets/webmcu-b", &total), 82);
  EXPECT_EQ(total, 90);
}

TEST(Interop, DeviceTrainedWeightsClassifyWebmcuA) {
  TV_REQUIRE_SHARED("datasets/webmcu-a");
  int total = 0;
  EXPECT_EQ(count_correct("datasets/webmcu-a", &total), 17);
  EXPECT_EQ(total, 18);
}
