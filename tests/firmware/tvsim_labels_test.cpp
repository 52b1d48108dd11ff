// Labels that would put two classes in one card folder: the same label twice (refused by the shared
// blob decoder, so by the board and every host tool), labels FAT makes one folder (letter case,
// trailing dots and spaces), and a class<i> fallback equal to another label (renamed, and said).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "host/model/model_io.h"
#include "sim_support.h"
#include "test_support.h"
#include "tv/crc32.h"
#include "tv/little_endian.h"
#include "tv/train/presets.h"

namespace fs = std::filesystem;
using namespace simtest;

namespace {

std::vector<uint8_t> model_with_labels(const std::vector<std::string>& labels) {
  tv::ModelDesc d;
  tv::webmcu_model((int)labels.size(), &d);
  auto plan = tvh::plan_or_throw(d, "webmcu");
  std::vector<float> p(plan->param_count, 0.01f);
  return tvh::encode_float_blob(*plan, p.data(), labels, "tool=test\npreset=webmcu\n");
}

// A model whose two labels are the same: encoded with "a" and "b", then "b" made "a" and the CRC-32
// recomputed (the encoder refuses duplicates itself).
std::vector<uint8_t> model_with_duplicate_labels() {
  std::vector<uint8_t> b = model_with_labels({"a", "b"});
  const uint8_t want[] = {1, 0, 'a', 1, 0, 'b'};
  const auto at = std::search(b.begin(), b.end(), std::begin(want), std::end(want));
  EXPECT_NE(at, b.end());
  at[5] = 'a';
  tv::write_le32(b.data() + 12, tv::crc32(0, b.data() + 16, b.size() - 16));
  return b;
}

std::string card_with_blob(const std::vector<uint8_t>& blob) {
  const std::string card = tvtest::temp_dir("labels-card");
  fs::create_directories(card + "/header");
  write_text(card + "/header/model.tvb", std::string(blob.begin(), blob.end()));
  return card;
}

}  // namespace

TEST(TvsimLabels, LabelsFatMakesOneFolderAreRenamedAndSaid) {
  TV_REQUIRE_BINARY("tvsim");
  struct Case {
    std::vector<std::string> labels;
    std::string menu;  // the class items of the menu
    std::vector<std::string> notes;
  };
  const Case cases[] = {
      {{"Cat", "cat"},
       "> 1. Cat\n2. class1\n",
       {"note: class 1's label 'cat' names the same card folder as class 0's 'Cat' (FAT ignores letter case and "
        "trailing dots and spaces): class 1 is called class1"}},
      {{"dog.", "DOG ", "class1"},
       "> 1. dog.\n2. class1_2\n3. class1\n",
       {"class 1's label 'DOG ' names the same card folder as class 0's 'dog.'", "class 1 is called class1_2"}},
      {{"class1", "a/b"},
       "> 1. class1\n2. class1_2\n",
       {"note: class 1's label cannot name a card folder (1 to 31 characters, no '/', '\\' or control characters, "
        "not only dots and spaces): it is called class1_2"}},
      {{"..", " .", "ok"}, "> 1. class0\n2. class1\n3. ok\n", {"class 0's label cannot name a card folder"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.labels[0] + "," + c.labels[1]);
    const SimRun r = sim("--sd " + card_with_blob(model_with_labels(c.labels)), "");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(has(r.out, "Weights: SD (/header/model.tvb")) << r.out;
    EXPECT_TRUE(has(r.out, "=== MENU ===\n" + c.menu)) << r.out;
    for (const auto& n : c.notes) EXPECT_TRUE(has(r.out, n)) << n << "\n" << r.out;
  }
}

TEST(TvsimLabels, ConfiguredLabelsThatShareAFolderStopTheBoard) {
  TV_REQUIRE_BINARY("tvsim");
  const SimRun r = sim("--sd " + tvtest::temp_dir("card") + " --labels Cat,cat.", "");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_TRUE(has(r.out, "FATAL: class labels 0 ('Cat') and 1 ('cat.') name the same card folder")) << r.out;
}

TEST(TvsimLabels, AModelWithTheSameLabelTwiceIsRefusedEverywhere) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvexport");
  const std::string card = card_with_blob(model_with_duplicate_labels());
  const SimRun r = sim("--sd " + card + " --labels x,y", "");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out,
                  "SD /header/model.tvb refused: classes 0 and 1 have the same label, so the model cannot tell "
                  "them apart"))
      << r.out;
  EXPECT_TRUE(has(r.out, "Weights: backbone"));
  // the host tools read models through the same decoder
  const std::string model = card + "/header/model.tvb";
  EXPECT_ANY_THROW(tvh::load_model(model));
  for (const std::string& cmd :
       {quote(tvtest::bin_path("tvexport")) + " " + quote(model) + " -o " + quote(tvtest::temp_dir("dup-out") + "/m.h"),
        quote(tvtest::bin_path("tvtrain")) + " " + quote(shapes_dir()) + " --init " + quote(model) + " --epochs 1 -o " +
            quote(tvtest::temp_dir("dup-out") + "/m.tvb")}) {
    SCOPED_TRACE(cmd);
    std::string out, err;
    EXPECT_EQ(tvtest::run_command(cmd, &out, &err), 1);
    EXPECT_TRUE(has(err,
                    "classes 0 and 1 have the same label, so the model cannot tell them apart; retrain it with "
                    "distinct class names."))
        << err;
  }
}

// Class folders that are one folder on a FAT card (possible on a card written by another system, and
// in tvsim's folder): the first by name is the class, the other is named as ignored.
TEST(TvsimLabels, ClassFoldersFatMakesOneAreOneClass) {
  TV_REQUIRE_BINARY("tvsim");
  const std::string card = tvtest::temp_dir("card");
  for (const char* d : {"Cat", "cat", "dog"}) fs::create_directories(card + "/images/" + d);
  const SimRun r = sim("--sd " + card, "");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(has(r.out, "note: the class folder /images/cat is the same folder as /images/Cat on a FAT card"))
      << r.out;
  EXPECT_TRUE(has(r.out, "=== MENU ===\n> 1. Cat\n2. dog\n3. Train\n")) << r.out;
}
