// The board and a valid model whose finite weights overflow float in the forward pass (issue 20): tvsim
// (the firmware on the simulated board) neither trains from it nor prints NaN predictions; it says which
// layer overflows. The check is the core's infer_u8, shared with the tools.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "host/model/model_io.h"
#include "sim_support.h"
#include "test_support.h"
#include "tv/train/net.h"
#include "tv/train/presets.h"

namespace fs = std::filesystem;
using simtest::has;

TEST(TvsimOverflow, AModelWhoseActivationsOverflowIsNeitherTrainedFromNorRun) {
  TV_REQUIRE_BINARY("tvsim");
  const std::vector<std::string> classes = {"0blank", "1circle", "2cross"};
  tv::ModelDesc d;
  tv::webmcu_model(3, &d);
  auto plan = tvh::plan_or_throw(d, "webmcu");
  std::vector<float> p(plan->param_count);
  tv::he_init(*plan, p.data(), 3);
  for (float& x : p) x *= 1e37f;  // every weight finite; the second convolution's sums are not
  const std::vector<uint8_t> blob = tvh::encode_float_blob(*plan, p.data(), classes, "tool=test\npreset=webmcu\n");
  const std::string card = simtest::make_card(simtest::shapes_dir(), classes, 4);
  fs::create_directories(card + "/header");
  std::ofstream(card + "/header/model.tvb", std::ios::binary)
      .write((const char*)blob.data(), (std::streamsize)blob.size());
  const std::string before = tvtest::read_text(card + "/header/model.tvb");
  simtest::SimRun r = simtest::sim("--sd " + card + " --epochs 1", simtest::to_train(3));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "Cannot train: layer 4 (conv2d) of the model outputs infinite or NaN values")) << r.out;
  EXPECT_FALSE(has(r.out, "--- Epoch 1/")) << r.out;
  EXPECT_FALSE(has(r.out, "Weights saved")) << r.out;
  EXPECT_EQ(tvtest::read_text(card + "/header/model.tvb"), before);
  // Infer: each frame says so instead of a NaN prediction.
  const std::string cam = simtest::make_camera(simtest::shapes_dir(), classes);
  r = simtest::sim("--sd " + card + " --camera " + cam, simtest::to_infer(3));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "Frame 1: the model cannot run: layer 4 (conv2d) outputs infinite or NaN values")) << r.out;
  EXPECT_FALSE(has(r.out, "Pred:")) << r.out;
  EXPECT_FALSE(has(r.out, "nan")) << r.out;
}
