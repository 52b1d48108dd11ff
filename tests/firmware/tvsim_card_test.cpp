// What the board finds on a card it did not write itself: a folder where the model should be, the
// temporaries a power cut leaves, a card that stops accepting bytes part-way through a save.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>

#include "sim_support.h"
#include "test_support.h"

namespace fs = std::filesystem;
using namespace simtest;

TEST(TvsimCard, AFolderWhereTheModelShouldBeIsNamedAsSuch) {
  TV_REQUIRE_BINARY("tvsim");
  const std::string card = tvtest::temp_dir("card");
  fs::create_directories(card + "/header/model.tvb");
  const SimRun r = sim("--sd " + card + " --labels a,b", "");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "SD /header/model.tvb refused: /header/model.tvb is a folder or a device, not a file"))
      << r.out;
  EXPECT_TRUE(has(r.out, "Weights: backbone"));
}

TEST(TvsimCard, TemporariesLeftByAPowerCutAreRemovedAtTheNextBoot) {
  TV_REQUIRE_BINARY("tvsim");
  const std::string card = make_card(shapes_dir(), kShapes2, 6);
  ASSERT_EQ(sim("--sd " + card + " --epochs 1", to_train(2)).status, 0);
  ASSERT_TRUE(fs::exists(card + "/header/model.tvb"));
  write_text(card + "/header/model.tvb.tmp", "half a model");
  write_text(card + "/header/model.h.tmp", "half a header");
  write_text(card + "/images/0blank/img_99.tmp", "half a JPEG");
  // boot, then into the first class's capture mode and back
  const SimRun r = sim("--sd " + card, "l\nl\n");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "SD: removed /header/model.tvb.tmp, left by an interrupted save")) << r.out;
  EXPECT_TRUE(has(r.out, "SD: removed /header/model.h.tmp, left by an interrupted save"));
  EXPECT_TRUE(has(r.out, "Removed /images/0blank/img_99.tmp, a capture cut short by a power cut"));
  EXPECT_TRUE(has(r.out, "Weights: SD (/header/model.tvb"));
  EXPECT_FALSE(fs::exists(card + "/header/model.tvb.tmp"));
  EXPECT_FALSE(fs::exists(card + "/header/model.h.tmp"));
  EXPECT_FALSE(fs::exists(card + "/images/0blank/img_99.tmp"));
}

TEST(TvsimCard, AFailedSaveReportsTheBytesTheCardAccepted) {
  TV_REQUIRE_BINARY("tvsim");
  const std::string card = make_card(shapes_dir(), kShapes2, 6);
  const SimRun r = sim("--sd " + card + " --epochs 1 --sd-fail-write-at 1000", to_train(2));
  ASSERT_EQ(r.status, 0) << r.err;
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(r.out, m, std::regex("writing /header/model.tvb.tmp failed after (\\d+) of (\\d+) bytes")))
      << r.out;
  EXPECT_EQ(m[1].str(), "1000");
  EXPECT_GT(std::stoul(m[2].str()), 1000ul);
  EXPECT_FALSE(fs::exists(card + "/header/model.tvb"));
}

// A folder where a save writes (or a file where /header belongs) would make every save fail after the
// training: checked before training starts, naming what to remove; nothing on the card changes.
TEST(TvsimCard, AFolderWhereASaveWritesIsSaidBeforeTraining) {
  TV_REQUIRE_BINARY("tvsim");
  const std::string base = make_card(shapes_dir(), kShapes2, 6);
  for (const char* name : {"model.tvb", "model.tvb.bak", "model.tvb.tmp", "model.h", "model.h.tmp", "myWeights.bin",
                           "myWeights.bin.tmp"}) {
    SCOPED_TRACE(name);
    const std::string card = copy_card(base);
    fs::create_directories(card + "/header/" + std::string(name) + "/inside");
    const SimRun r = sim("--sd " + card + labels_arg(kShapes2) + " --preset webmcu --epochs 1", to_train(2));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(has(r.out, "Cannot train: /header/" + std::string(name) +
                               " is a folder (or a device), so the trained model could not be saved: remove it from "
                               "the card on a computer"))
        << r.out;
    EXPECT_FALSE(has(r.out, "--- Epoch"));
    EXPECT_TRUE(fs::is_directory(card + "/header/" + std::string(name) + "/inside"));
  }
  const std::string card = copy_card(base);
  write_text(card + "/header", "a file");
  const SimRun r = sim("--sd " + card + labels_arg(kShapes2) + " --epochs 1", to_train(2));
  EXPECT_TRUE(has(r.out, "Cannot train: /header is a file, where the model's folder belongs")) << r.out;
  EXPECT_EQ(read_text(card + "/header"), "a file");
}

// A float model's file is freed as soon as its weights are copied, before the engine's buffers are
// allocated: the backup loads in the PSRAM it needs to run (its own ~56 KB file once counted against
// it, so it was refused with too small a "free" figure).
TEST(TvsimCard, AModelLoadsInThePsramItNeedsToRunNotPlusItsFile) {
  TV_REQUIRE_BINARY("tvsim");
  const std::string card = card_with_model();
  ASSERT_EQ(sim("--sd " + card + labels_arg(kShapes2) + " --epochs 1", to_train(2)).status, 0);
  std::string b = read_text(card + "/header/model.tvb");
  b[b.size() / 2] ^= 0x40;
  write_text(card + "/header/model.tvb", b);
  fs::remove(card + "/header/myWeights.bin");
  SimRun r = sim("--sd " + card + labels_arg(kShapes2) + " --psram-bytes 100000", "");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("model.tvb.bak refused: it needs (\\d+) bytes of PSRAM to run")))
      << r.out;
  const long long need = std::stoll(m[1].str());
  const long long file = (long long)fs::file_size(card + "/header/model.tvb.bak");
  ASSERT_GT(file, 1000);
  r = sim("--sd " + card + labels_arg(kShapes2) + " --psram-bytes " + std::to_string(need + file / 2), "");
  EXPECT_TRUE(has(r.out, "SD: using the backup /header/model.tvb.bak")) << r.out;
  EXPECT_EQ(boot_crc(r.out), hex(file_crc(card + "/header/model.tvb.bak")));
  r = sim("--sd " + card + labels_arg(kShapes2) + " --psram-bytes " + std::to_string(need - 1), "");
  EXPECT_TRUE(has(r.out, "model.tvb.bak refused: it needs " + std::to_string(need) + " bytes of PSRAM to run"))
      << r.out;
  EXPECT_TRUE(has(r.out, "only " + std::to_string(need - 1) + " are free")) << r.out;
}
