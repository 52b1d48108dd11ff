// The board refuses a model with an infinite or NaN weight (issue 13): the check lives in the shared
// blob decoder, so the firmware (here tvsim, the firmware on the simulated board) gets it too.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/forged_model.h"
#include "host/model/model_io.h"
#include "test_support.h"
#include "tv/train/presets.h"

namespace fs = std::filesystem;

TEST(TvsimBoard, AModelWithANanWeightIsRefusedByTheBoard) {
  const std::string bin = tvtest::bin_path("tvsim");
  TV_REQUIRE_BINARY("tvsim");
  tv::ModelDesc d;
  tv::webmcu_model(2, &d);
  auto plan = tvh::plan_or_throw(d, "webmcu");
  std::vector<float> p(plan->param_count, 0.01f);
  p[plan->layers[8].param_offset + 2] = NAN;
  const std::vector<uint8_t> blob = tvh::encode_float_blob(*plan, p.data(), {"a", "b"}, "tool=test\npreset=webmcu\n");
  const std::string card = tvtest::temp_dir("nan-card");
  fs::create_directories(card + "/header");
  std::ofstream(card + "/header/model.tvb", std::ios::binary)
      .write((const char*)blob.data(), (std::streamsize)blob.size());
  const tvtest::CommandResult r = tvtest::run_capture("'" + bin + "' --labels a,b --sd '" + card + "' < /dev/null");
  ASSERT_EQ(r.status, 0) << r.err;
  // The core's sentence, as tvtrain's: the layer, its type, the tensor and the element.
  EXPECT_NE(r.out.find("SD /header/model.tvb refused: layer 8 (dense): a weight is infinite or NaN"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("(tensor 4, element 2)"), std::string::npos) << r.out;
}

// A forged model whose inference work buffer is 2^31 floats: tvsim (64-bit) printed the 32-bit wrapped
// figure; the plan now refuses it with the real one (the 32-bit build: Firmware32.AForgedModel...).
TEST(TvsimBoard, AForgedModelWhoseSizesWrapIsRefusedWithTheRealFigure) {
  TV_REQUIRE_BINARY("tvsim");
  const std::vector<uint8_t> blob = tvtest::forged_blob();
  ASSERT_FALSE(blob.empty());
  const std::string card = tvtest::temp_dir("forged-card");
  fs::create_directories(card + "/header");
  std::ofstream(card + "/header/model.tvb", std::ios::binary)
      .write((const char*)blob.data(), (std::streamsize)blob.size());
  const tvtest::CommandResult r =
      tvtest::run_capture("'" + tvtest::bin_path("tvsim") + "' --labels a,b --sd '" + card + "' < /dev/null");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(
      r.out.find("SD /header/model.tvb refused: its network is too large: the inference work buffer would "
                 "hold 2147483648 floats (8589934592 bytes) at layer 0, more than the 2147483647 a model may have"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Weights: backbone"), std::string::npos) << r.out;
}
