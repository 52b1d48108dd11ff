// Every state a power cut can leave a save in (card.h lists the steps), prepared on the card by hand,
// then booted: the newest model that verifies is loaded, nothing is deleted before something has
// loaded, and model.h / myWeights.bin are never lost between removing the old file and renaming the
// complete temporary.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>

#include "host/model/model_io.h"
#include "sim_support.h"
#include "test_support.h"
#include "tv/crc32.h"
#include "tv/train/presets.h"

namespace fs = std::filesystem;
using namespace simtest;

namespace {

// The files of two consecutive saves: old (the first training) and new (a second one on a copy).
struct Saves {
  std::string old_card, new_card;
  std::string m0, m1, h0, h1, w0, w1;  // model.tvb, model.h, myWeights.bin of each save
};

const Saves& saves() {
  static Saves s = [] {
    Saves r;
    r.old_card = card_with_model();
    r.new_card = copy_card(r.old_card);
    const SimRun t = sim("--sd " + r.new_card + labels_arg(kShapes2) + " --epochs 1", to_train(2));
    EXPECT_EQ(t.status, 0) << t.err;
    r.m0 = read_text(r.old_card + "/header/model.tvb");
    r.h0 = read_text(r.old_card + "/header/model.h");
    r.w0 = read_text(r.old_card + "/header/myWeights.bin");
    r.m1 = read_text(r.new_card + "/header/model.tvb");
    r.h1 = read_text(r.new_card + "/header/model.h");
    r.w1 = read_text(r.new_card + "/header/myWeights.bin");
    EXPECT_NE(r.m0, r.m1);
    EXPECT_NE(r.h0, r.h1);
    EXPECT_NE(r.w0, r.w1);
    return r;
  }();
  return s;
}

std::string crc_of(const std::string& bytes) {
  return hex(tv::crc32(0, bytes.data(), bytes.size()));
}

std::string corrupt(std::string b) {
  b[b.size() / 2] = (char)(b[b.size() / 2] ^ 0x40);
  return b;
}

// A valid model the board cannot run: 17 classes (it handles 2 to 16).
std::string unrunnable_model() {
  tv::ModelDesc d;
  tv::webmcu_model(17, &d);
  auto plan = tvh::plan_or_throw(d, "webmcu");
  std::vector<float> p(plan->param_count, 0.01f);
  std::vector<std::string> labels;
  for (int i = 0; i < 17; ++i) labels.push_back("c" + std::to_string(i));
  const auto b = tvh::encode_float_blob(*plan, p.data(), labels, "tool=test\n");
  return std::string(b.begin(), b.end());
}

// A card with the old save's images and exactly the given /header files ("" = absent).
std::string card_with(const std::string& model, const std::string& tmp, const std::string& bak) {
  const std::string card = copy_card(saves().old_card);
  fs::remove_all(card + "/header");
  fs::create_directories(card + "/header");
  if (!model.empty()) write_text(card + "/header/model.tvb", model);
  if (!tmp.empty()) write_text(card + "/header/model.tvb.tmp", tmp);
  if (!bak.empty()) write_text(card + "/header/model.tvb.bak", bak);
  return card;
}

std::string file_or_empty(const std::string& path) {
  return fs::exists(path) ? read_text(path) : "";
}

SimRun boot(const std::string& card) {
  const SimRun r = sim("--sd " + card + labels_arg(kShapes2), "");
  EXPECT_EQ(r.status, 0) << r.err;
  return r;
}

}  // namespace

TEST(TvsimRecover, EveryStateOfTheModelSaveBootsTheNewestModelThatVerifies) {
  TV_REQUIRE_BINARY("tvsim");
  const Saves& s = saves();
  const std::string bad = corrupt(s.m0), unrunnable = unrunnable_model(), half = s.m1.substr(0, s.m1.size() / 2);
  struct Case {
    const char* what;
    std::string model, tmp, bak;
    std::string boots;                   // the model loaded ("" = none: He-init)
    std::string after_model, after_bak;  // the card's model.tvb and .bak afterwards
    bool tmp_left;
  };
  const Case cases[] = {
      {"the new .tmp being written", s.m0, half, "", s.m0, s.m0, "", false},
      {"a verified .tmp beside the old model and backup", s.m0, s.m1, bad, s.m0, s.m0, bad, false},
      {"the old backup removed, model.tvb not yet renamed", s.m0, s.m1, "", s.m0, s.m0, "", false},
      {"model.tvb renamed to .bak, the .tmp not yet renamed", "", s.m1, s.m0, s.m1, s.m1, s.m0, false},
      {"a corrupt model.tvb beside a verified .tmp", bad, s.m1, "", s.m1, s.m1, bad, false},
      {"an unrunnable model.tvb beside a verified .tmp", unrunnable, s.m1, "", s.m1, s.m1, unrunnable, false},
      {"a corrupt model.tvb, a verified .tmp and a backup", bad, s.m1, s.m0, s.m1, s.m1, bad, false},
      {"a corrupt model.tvb, a partial .tmp and a backup", bad, half, s.m0, s.m0, bad, s.m0, false},
      {"a corrupt model.tvb and a partial .tmp: nothing loads, nothing is deleted", bad, half, "", "", bad, "", true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const std::string card = card_with(c.model, c.tmp, c.bak);
    const SimRun r = boot(card);
    if (c.boots.empty()) {
      EXPECT_TRUE(has(r.out, "Weights: backbone")) << r.out;
    } else {
      EXPECT_EQ(boot_crc(r.out), crc_of(c.boots)) << r.out;
    }
    EXPECT_TRUE(file_or_empty(card + "/header/model.tvb") == c.after_model);
    EXPECT_TRUE(file_or_empty(card + "/header/model.tvb.bak") == c.after_bak);
    EXPECT_EQ(fs::exists(card + "/header/model.tvb.tmp"), c.tmp_left);
    if (c.boots == s.m1 && !c.model.empty()) {
      EXPECT_TRUE(has(r.out, "SD /header/model.tvb refused: ")) << r.out;
      EXPECT_TRUE(has(r.out,
                      "SD: finished an interrupted save (/header/model.tvb.tmp -> /header/model.tvb; the "
                      "refused model.tvb is now model.tvb.bak)"))
          << r.out;
    }
    // the next boot loads the same model from model.tvb itself
    if (c.boots == s.m1) {
      EXPECT_EQ(boot_crc(boot(card).out), crc_of(s.m1));
    }
  }
}

TEST(TvsimRecover, TheHeaderAndReferenceWeightsAreNeverLostBetweenRemoveAndRename) {
  TV_REQUIRE_BINARY("tvsim");
  const Saves& s = saves();
  struct Side {
    const char* name;
    std::string old_bytes, new_bytes;
  };
  const Side sides[] = {{"model.h", s.h0, s.h1}, {"myWeights.bin", s.w0, s.w1}};
  for (const Side& f : sides) {
    const std::string path = std::string("/header/") + f.name, tmp = path + ".tmp";
    struct Case {
      const char* what;
      std::string file, tmp;  // "" = absent
      std::string after;      // the file afterwards
      bool finished;
    };
    const Case cases[] = {
        {"the old file removed, the complete .tmp not yet renamed", "", f.new_bytes, f.new_bytes, true},
        {"a complete .tmp beside the old file", f.old_bytes, f.new_bytes, f.new_bytes, true},
        {"a partial .tmp beside the old file", f.old_bytes, f.new_bytes.substr(0, f.new_bytes.size() - 1), f.old_bytes,
         false},
        {"a partial .tmp alone (the first save)", "", f.new_bytes.substr(0, 100), "", false},
        {"a .tmp of another model", "", f.old_bytes, "", false},
    };
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(f.name) + ": " + c.what);
      const std::string card = copy_card(s.new_card);  // model.tvb is the new save's
      fs::remove(card + path);
      if (!c.file.empty()) write_text(card + path, c.file);
      write_text(card + tmp, c.tmp);
      const SimRun r = boot(card);
      EXPECT_EQ(boot_crc(r.out), crc_of(s.m1)) << r.out;
      EXPECT_TRUE(file_or_empty(card + path) == c.after);
      EXPECT_FALSE(fs::exists(card + tmp));
      EXPECT_EQ(has(r.out, "SD: finished an interrupted save (" + tmp + " -> " + path + ")"), c.finished) << r.out;
      EXPECT_EQ(has(r.out, "SD: removed " + tmp + ", left by an interrupted save"), !c.finished) << r.out;
    }
  }
}

// The sweep over real power cuts: every card unit around the side files' renames (the model's own
// points are in Tvsim.PowerCutAtAnyPointOfASaveLeavesALoadableModel).
TEST(TvsimRecover, PowerCutsAroundTheSideFilesRenamesLoseNothing) {
  TV_REQUIRE_BINARY("tvsim");
  const Saves& s = saves();
  const std::string args = labels_arg(kShapes2) + " --epochs 1";
  SimRun r = sim("--sd " + copy_card(s.old_card) + args, to_train(2));
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.err, m, std::regex("\\((\\d+) card units\\)"))) << r.err;
  const long long total = std::stoll(m[1].str());
  // the reference weights' save is the last: create, bytes, remove the old, rename; the header's before it
  const long long raw_start = total - 3 - (long long)s.w1.size();
  std::vector<long long> cuts;
  for (long long k = -5; k <= 1; ++k) cuts.push_back(raw_start + k);
  for (long long k = 1; k <= 5; ++k) cuts.push_back(total - k);
  int header_finished = 0, raw_finished = 0;
  for (long long cut : cuts) {
    SCOPED_TRACE("power cut after " + std::to_string(cut) + " of " + std::to_string(total) + " card units");
    const std::string card = copy_card(s.old_card);
    r = sim("--sd " + card + args + " --power-cut-at " + std::to_string(cut), to_train(2));
    EXPECT_EQ(r.status, 86) << r.err;
    const SimRun b = boot(card);
    EXPECT_EQ(boot_crc(b.out), crc_of(s.m1)) << b.out;
    const std::string h = file_or_empty(card + "/header/model.h"), w = file_or_empty(card + "/header/myWeights.bin");
    EXPECT_TRUE(h == s.h0 || h == s.h1) << "model.h is " << h.size() << " bytes\n" << b.out;
    EXPECT_TRUE(w == s.w0 || w == s.w1) << "myWeights.bin is " << w.size() << " bytes\n" << b.out;
    header_finished += has(b.out, "finished an interrupted save (/header/model.h.tmp");
    raw_finished += has(b.out, "finished an interrupted save (/header/myWeights.bin.tmp");
  }
  // two cuts leave a complete .tmp: before removing the old file and between the remove and the rename
  EXPECT_EQ(header_finished, 2);
  EXPECT_EQ(raw_finished, 2);
}

// A side file's temporary the board cannot check (the model in use is the backup, not model.tvb) is
// kept, never removed unseen.
TEST(TvsimRecover, ASideTemporaryTheBoardCannotCheckIsKept) {
  TV_REQUIRE_BINARY("tvsim");
  const Saves& s = saves();
  const std::string card = card_with(corrupt(s.m1), "", s.m0);
  write_text(card + "/header/model.h.tmp", s.h1);
  const SimRun r = boot(card);
  EXPECT_EQ(boot_crc(r.out), crc_of(s.m0)) << r.out;
  EXPECT_TRUE(has(r.out,
                  "SD: kept /header/model.h.tmp (left by an interrupted save; the board cannot check it "
                  "against the model in use)"))
      << r.out;
  EXPECT_TRUE(read_text(card + "/header/model.h.tmp") == s.h1);
}
