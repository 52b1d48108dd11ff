// A fresh board learns from the built-in backbone (issue: few photos suffice): a card with class folders and
// no model boots the backbone tier; Learn imprints every class from the backbone's features and runs the
// head update, the same bytes as `tvtrain CARD/images --start backbone --update head`; a card model still
// wins over the backbone, and a corrupt one falls through to it.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "host/base/error.h"
#include "host/model/model_io.h"
#include "host/train/init_model.h"
#include "sim_support.h"
#include "test_support.h"
#include "tv/train/presets.h"

namespace fs = std::filesystem;
using namespace simtest;

namespace {

const std::vector<std::string> kWebmcuB = {"0Blank", "1Cup", "2Pen"};

// From the first menu item to Learn on the backbone tier: the classes, Train, Infer, then Learn.
std::string backbone_to_learn(size_t classes) {
  return std::string(classes + 2, 't') + "l\n";
}

}  // namespace

TEST(TvsimBackbone, AFreshBoardLearnsWithTheSameBytesAsTvtrainStartBackboneUpdateHead) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvtrain");
  TV_REQUIRE_SHARED("datasets/webmcu-b/images");
  const std::string card = make_card(tvtest::shared_path("datasets/webmcu-b/images"), kWebmcuB, 10);
  const SimRun r = sim("--sd " + card + " --epochs 9", backbone_to_learn(3));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "Weights: backbone (built-in tinyvision-64x64x3, ")) << r.out;
  EXPECT_TRUE(has(r.out,
                  ">>> Learn: no trained model yet: the built-in backbone's features and a head for the 3 "
                  "class folders"))
      << r.out;
  EXPECT_TRUE(has(r.out, "Imprinted class 0 (0Blank) from 7 training photos")) << r.out;
  EXPECT_TRUE(has(r.out, "Imprinted class 2 (2Pen) from 7 training photos")) << r.out;
  EXPECT_TRUE(has(r.out, "--- Learning Complete ---")) << r.out;
  EXPECT_TRUE(has(r.out, "Weights saved to SD: /header/model.tvb")) << r.out;
  const std::string host = tvtest::temp_dir("bb-host") + "/host.tvb";
  std::string out, err;
  ASSERT_EQ(tvtest::run_command(
                quote(tvtest::bin_path("tvtrain")) + " " + quote(card + "/images") +
                    " --start backbone --update head --epochs 9 --seed 1 --no-curve --no-report -q -o " + quote(host),
                &out, &err),
            0)
      << err;
  const tvh::LoadedModel device = tvh::load_model(card + "/header/model.tvb");
  const tvh::LoadedModel laptop = tvh::load_model(host);
  EXPECT_EQ(device.labels, laptop.labels);
  ASSERT_EQ(device.params.size(), laptop.params.size());
  EXPECT_TRUE(device.params == laptop.params) << "the board's Learn from the backbone differs from tvtrain's";
  EXPECT_EQ(tvh::provenance_value(device.provenance, "weights_before"), "backbone") << device.provenance;
  EXPECT_EQ(tvh::provenance_value(device.provenance, "update"), "head") << device.provenance;

  // The card's model now wins over the backbone; a corrupt one falls through to the backbone again.
  SimRun again = sim("--sd " + card, "");
  EXPECT_TRUE(has(again.out, "Weights: SD (/header/model.tvb")) << again.out;
  fs::remove(card + "/header/model.tvb.bak");
  std::string blob = tvtest::read_text(card + "/header/model.tvb");
  blob[blob.size() / 2] ^= 0x40;
  tvtest::write_text(card + "/header/model.tvb", blob);
  again = sim("--sd " + card, "");
  EXPECT_TRUE(has(again.out, "SD /header/model.tvb refused: CRC-32 mismatch")) << again.out;
  EXPECT_TRUE(has(again.out, "Weights: backbone (built-in tinyvision-64x64x3, ")) << again.out;
}

// Train on a fresh board follows the core's rule as tvtrain --start auto does: past 20 photos in the
// smallest class, He-init (the same bytes as tvtrain's default); the tier says so.
TEST(TvsimBackbone, TrainPastTheRulesPhotoCountStartsFromHeInitAsTvtrainDoes) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvtrain");
  const std::vector<std::string> classes = {"1circle", "2cross"};
  const std::string card = make_card(shapes_dir(), classes, 21);
  const SimRun r = sim("--sd " + card + " --epochs 2", to_train(2));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "Start: He-init (21 photos in the smallest class; the backbone helps up to 20)")) << r.out;
  const std::string host = tvtest::temp_dir("bb-he") + "/host.tvb";
  std::string out, err;
  ASSERT_EQ(tvtest::run_command(quote(tvtest::bin_path("tvtrain")) + " " + quote(card + "/images") +
                                    " --epochs 2 --seed 1 --no-curve --no-report -q -o " + quote(host),
                                &out, &err),
            0)
      << err;
  const tvh::LoadedModel device = tvh::load_model(card + "/header/model.tvb");
  const tvh::LoadedModel laptop = tvh::load_model(host);
  EXPECT_TRUE(device.params == laptop.params) << "the board's Train differs from tvtrain's";
  EXPECT_EQ(tvh::provenance_value(device.provenance, "weights_before"), "He-init") << device.provenance;
}
