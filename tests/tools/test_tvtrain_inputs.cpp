// The default preset at every input size from 16x16 to 160x160, square or not, 1 or 3 channels:
// tvtrain trains one epoch on datasets/shapes (child processes), tvexport info shows the network the
// rule chose, and the same seed gives the same bytes for any --threads.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "host/base/files.h"
#include "test_support.h"
#include "tv/train/presets.h"

using nlohmann::json;

namespace {

struct InputCase {
  int h, w, c;
};

std::string size_text(const InputCase& s) {
  return std::to_string(s.h) + "x" + std::to_string(s.w) + "x" + std::to_string(s.c);
}

}  // namespace

TEST(TvtrainInputs, EveryInputSizeTrainsOneEpochWithTheRulesNetwork) {
  const InputCase cases[] = {{16, 16, 1},  {16, 16, 3},  {28, 28, 1}, {30, 30, 3},   {32, 32, 3},
                             {48, 40, 1},  {64, 64, 3},  {96, 96, 3}, {128, 128, 1}, {160, 160, 3},
                             {16, 160, 3}, {160, 16, 1}, {100, 60, 3}};
  const std::string dir = tvtest::temp_dir("inputs");
  const std::string shapes = tvtest::source_path("datasets/shapes");
  for (const InputCase& s : cases) {
    const std::string size = size_text(s), model = dir + "/m" + size + ".tvb";
    const json r = tvtest::run_json(tvtest::bin_path("tvtrain") + " " + shapes + " --input " + size +
                                    " --epochs 1 -o " + model + " --json -q --no-curve");
    if (r.is_null()) continue;
    EXPECT_GT(r["params"].get<int>(), 0) << size;
    const json info = tvtest::run_json(tvtest::bin_path("tvexport") + " info " + model + " --json");
    if (info.is_null()) continue;
    EXPECT_EQ(info["input"]["height"], s.h) << size;
    EXPECT_EQ(info["input"]["width"], s.w) << size;
    EXPECT_EQ(info["input"]["channels"], s.c) << size;
    // The layers are the rule's: stem stride, pools and the head's bins.
    tv::DataShape data;
    data.height = s.h;
    data.width = s.w;
    data.channels = s.c;
    data.images = 108;
    const tv::TinyVisionPlan plan = tv::tinyvision_plan(data);
    const json& layers = info["layers"];
    ASSERT_TRUE(layers.is_array()) << size;
    EXPECT_EQ(layers[0]["type"], "conv2d") << size;
    EXPECT_NE(layers[0]["detail"].get<std::string>().find("stride " + std::to_string(plan.stem_stride)),
              std::string::npos)
        << size;
    int pools = 0;
    const json* head = nullptr;
    for (const json& l : layers) {
      pools += l["type"] == "maxpool2d";
      if (l["type"] == "adaptive_avgpool2d") head = &l;
    }
    EXPECT_EQ(pools,
              plan.pool_after_stem + plan.pool_after_block[0] + plan.pool_after_block[1] + plan.pool_after_block[2])
        << size;
    ASSERT_NE(head, nullptr) << size;
    EXPECT_EQ((*head)["output"][0], plan.head_h) << size;
    EXPECT_EQ((*head)["output"][1], plan.head_w) << size;
  }
}

TEST(TvtrainInputs, SameSeedSameBytesForAnyThreadCount) {
  const std::string dir = tvtest::temp_dir("inputs-threads");
  const std::string shapes = tvtest::source_path("datasets/shapes");
  std::string first;
  for (int threads : {1, 2, 3}) {
    const std::string model = dir + "/t" + std::to_string(threads) + ".tvb";
    std::string err;
    ASSERT_EQ(tvtest::run_command(tvtest::bin_path("tvtrain") + " " + shapes +
                                      " --input 28x28x1 --epochs 2 --seed 7 -q --no-curve --threads " +
                                      std::to_string(threads) + " -o " + model,
                                  nullptr, &err),
              0)
        << err;
    const auto bytes = tvh::read_file(model);
    const std::string text(bytes.begin(), bytes.end());
    if (first.empty())
      first = text;
    else
      EXPECT_TRUE(text == first) << threads << " threads gave other bytes than 1 thread";
  }
}
