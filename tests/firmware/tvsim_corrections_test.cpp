// Corrections from the field (firmware/app/corrections.cpp) through tvsim: in Infer, 'c NAME' or a long
// press (a class picker) saves the frame just classified into the class's folder as img_<n>c.jpg, counted
// and shown, and the next Learn trains on it; refused names write nothing anywhere. Frames Infer is unsure
// of go to /images/_unsure/: at most one a second, at most kUnsureMaxFiles, the oldest removed, numbered
// on from the card's highest, never a class.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "link_support.h"
#include "sim_support.h"
#include "test_support.h"

namespace fs = std::filesystem;
using namespace simtest;

namespace tvsim_corrections {

// A camera folder of `count` photos of shapes' 2cross (a class the card's model does not have), cycling.
std::string cross_camera(int count) {
  const std::string cam = tvtest::temp_dir("corrcam");
  const std::string from = shapes_dir() + "/2cross";
  const std::vector<std::string> photos = sorted_jpegs(from);
  for (int i = 0; i < count; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "f%03d.jpg", i);
    fs::copy_file(from + "/" + photos[(size_t)i % photos.size()], cam + "/" + name);
  }
  return cam;
}

// Every file and folder below root (relative paths; files with their size), to compare before and after.
std::map<std::string, long long> tree_of(const std::string& root) {
  std::map<std::string, long long> t;
  for (const auto& e : fs::recursive_directory_iterator(root))
    t[fs::relative(e.path(), root).string()] = e.is_regular_file() ? (long long)e.file_size() : -1;
  return t;
}

// The camera file tvsim gave as frame n (its stderr: "tvsim: camera frame N: PATH").
std::string camera_frame(const std::string& err, int n) {
  std::smatch m;
  const std::regex re("tvsim: camera frame " + std::to_string(n) + ": (\\S+)");
  return std::regex_search(err, m, re) ? m[1].str() : "";
}

// The frame numbers of the "Frame N: unsure (...): kept as PATH" lines, and the paths.
std::vector<int> kept_unsure(const std::string& out, std::vector<std::string>* paths = nullptr) {
  std::vector<int> frames;
  static const std::regex re("Frame (\\d+): unsure \\([^\\n]*\\): kept as (\\S+)");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), re); it != std::sregex_iterator(); ++it) {
    frames.push_back(std::stoi((*it)[1].str()));
    if (paths) paths->push_back((*it)[2].str());
  }
  return frames;
}

std::vector<std::string> unsure_files(const std::string& card) {
  std::vector<std::string> v;
  if (fs::exists(card + "/images/_unsure"))
    for (const auto& e : fs::directory_iterator(card + "/images/_unsure")) v.push_back(e.path().filename().string());
  std::sort(v.begin(), v.end());
  return v;
}

// What Infer says it keeps (config.h's kUnsureMargin and kUnsureMaxFiles, as the board prints them).
struct UnsureRule {
  double margin = -1;
  int max_files = -1;
};
UnsureRule unsure_rule(const std::string& out) {
  std::smatch m;
  UnsureRule r;
  if (std::regex_search(out, m,
                        std::regex("less than ([0-9.]+) apart are kept in /images/_unsure for sorting on the "
                                   "PC \\(at most one a second, the newest (\\d+)\\)"))) {
    r.margin = std::stod(m[1]);
    r.max_files = std::stoi(m[2]);
  }
  return r;
}

std::string unsure_name(int counter, const std::string& label) {
  char b[64];
  std::snprintf(b, sizeof b, "%08d_%s.jpg", counter, label.c_str());
  return b;
}

}  // namespace tvsim_corrections

using namespace tvsim_corrections;

TEST(TvsimCorrections, CNameSavesTheFrameJustSeenIntoItsClassFolderMarkedAsACorrection) {
  TV_REQUIRE_BINARY("tvsim");
  const std::string card = card_with_model();
  const std::string cam = cross_camera(4);
  const std::string oled = tvtest::temp_dir("corroled") + "/oled.txt";
  // frame 2 is a circle, frame 3 is blank (as FAT finds folders: 1CIRCLE. is 1circle); frame 4 is said twice,
  // first as the wrong class: its photo moves
  const SimRun r = sim("--sd " + card + " --camera " + cam + " --oled " + oled,
                       to_infer(2) + "~frames 2\nc 1CIRCLE.\n~frames 1\nc 0blank\n~frames 1\nc 0blank\nc 1circle\n?\n");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string circle = card + "/images/1circle/img_6c.jpg", blank = card + "/images/0blank/img_6c.jpg";
  ASSERT_TRUE(fs::exists(circle)) << r.out;
  ASSERT_TRUE(fs::exists(blank)) << r.out;
  EXPECT_EQ(read_text(circle), read_text(camera_frame(r.err, 2)));  // the frame classified last, byte for byte
  EXPECT_EQ(read_text(blank), read_text(camera_frame(r.err, 3)));
  const std::string moved = card + "/images/1circle/img_7c.jpg";
  ASSERT_TRUE(fs::exists(moved)) << r.out;
  EXPECT_EQ(read_text(moved), read_text(camera_frame(r.err, 4)));
  EXPECT_FALSE(fs::exists(card + "/images/0blank/img_7c.jpg")) << "a frame corrected twice is in one class only";
  EXPECT_TRUE(has(r.out, "Correction 1: frame 2, seen as ")) << r.out;
  EXPECT_TRUE(has(r.out, "is 1circle: saved as /images/1circle/img_6c.jpg")) << r.out;
  EXPECT_TRUE(has(r.out, "Correction 3 moved: frame 4 is 1circle")) << r.out;
  // the count, on serial and on the display
  EXPECT_TRUE(has(r.out, "3 corrections since the last Learn")) << r.out;
  EXPECT_TRUE(has(r.out, "Inferring: 3 corrections since the last Learn")) << r.out;  // the help
  const std::string screens = read_text(oled);
  EXPECT_TRUE(has(screens, "|CORRECTED   |\n|1circle     |\n|fix 3       |")) << screens;
  EXPECT_TRUE(has(screens, "|INFER fix 2 |")) << screens;
  // the help lists the command
  EXPECT_TRUE(has(r.out, "c NAME = in Infer, the frame just seen is of class NAME")) << r.out;
}

TEST(TvsimCorrections, RefusedNamesWriteNothingAnywhere) {
  TV_REQUIRE_BINARY("tvsim");
  const std::string root = tvtest::temp_dir("corrroot");
  fs::copy(card_with_model(), root + "/card", fs::copy_options::recursive);
  const std::string card = root + "/card";
  const std::string cam = cross_camera(3);
  const auto before = tree_of(root);
  const SimRun r = sim("--sd " + card + " --camera " + cam,
                       "c 1circle\n" + to_infer(2) +
                           "~frames 1\nc ../etc\nc ../../x\nc /x\nc /\nc ..\nc .\nc a\\b\nc _unsure\nc _x\nc\n"
                           "c 0123456789012345678901234567890123\nc a:b\n");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(tree_of(root), before) << r.out;                       // nothing written, inside /images or outside
  EXPECT_TRUE(has(r.out, "c NAME works only in Infer")) << r.out;  // from the menu
  for (const char* name :
       {"../etc", "../../x", "/x", "/", "..", ".", "a\\b", "0123456789012345678901234567890123", "a:b"})
    EXPECT_TRUE(has(r.out, std::string("'") + name + "' cannot name a class folder: ")) << name << "\n" << r.out;
  EXPECT_TRUE(has(r.out, "'_unsure' is no class: folders starting with _ are the board's own")) << r.out;
  EXPECT_TRUE(has(r.out, "'_x' is no class")) << r.out;
  EXPECT_TRUE(has(r.out, "c needs the right class: c NAME")) << r.out;
  EXPECT_FALSE(has(r.out, "Correction 1")) << r.out;
}

TEST(TvsimCorrections, ANewNameMakesItsClassFolderAndAFailedWriteIsSaid) {
  TV_REQUIRE_BINARY("tvsim");
  const std::string card = card_with_model();
  const std::string cam = cross_camera(2);
  const SimRun r =
      sim("--sd " + card + " --camera " + cam + " --unsure-margin 0", to_infer(2) + "~frames 1\nc 2cross\nl\n");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::exists(card + "/images/2cross/img_0c.jpg")) << r.out;
  EXPECT_TRUE(has(r.out, "New class 2cross: its folder /images/2cross is made; Learn adds it to the model")) << r.out;
  EXPECT_TRUE(has(r.out, "2cross (new: Learn adds it)")) << r.out;
  // a card that accepts no more bytes: the correction is not saved, said, and Infer goes on
  const std::string full = card_with_model();
  const SimRun f = sim("--sd " + full + " --camera " + cam + " --sd-fail-write-at 0 --unsure-margin 0",
                       to_infer(2) + "~frames 1\nc 1circle\n");
  ASSERT_EQ(f.status, 0) << f.err;
  EXPECT_TRUE(has(f.out, "Correction not saved: writing /images/1circle/img_6c.tmp failed after 0 of")) << f.out;
  EXPECT_TRUE(has(f.out, "Frame 2: ")) << f.out;
  EXPECT_EQ(sorted_jpegs(full + "/images/1circle").size(), 6u);
  EXPECT_FALSE(fs::exists(full + "/images/1circle/img_6c.tmp"));
}

TEST(TvsimCorrections, TheNextLearnTrainsOnTheCorrections) {
  TV_REQUIRE_BINARY("tvsim");
  const std::string card = card_with_model();
  const std::string cam = cross_camera(3);
  // two corrections, back to the menu (the cursor on Infer), one t to Learn
  const SimRun r = sim("--sd " + card + " --camera " + cam + " --epochs 2",
                       to_infer(2) + "~frames 1\nc 1circle\n~frames 1\nc 1circle\nl\ntl\n");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, ">>> Learn mode")) << r.out;
  EXPECT_TRUE(has(r.out, "Val: 6 images  Train: 8 images")) << r.out;  // 6 + 6 photos, 2 corrections among them
  // img_6c.jpg and img_7c.jpg sort last in 1circle, but corrections always train
  EXPECT_TRUE(has(r.out, "2 of the training photos are corrections from the field (img_<n>c.jpg): trained on"))
      << r.out;
  EXPECT_TRUE(has(r.out, "The model learned from the 2 corrections saved since the last Learn")) << r.out;
  // the count starts again
  const SimRun again = sim("--sd " + card + " --camera " + cam, to_infer(2) + "~frames 1\nc 0blank\n");
  EXPECT_TRUE(has(again.out, "Correction 1: frame 1")) << again.out;
  EXPECT_TRUE(fs::exists(card + "/images/0blank/img_6c.jpg"));
}

TEST(TvsimCorrections, ALongPressOpensAClassPickerAndShortTapsStillGoBack) {
  TV_REQUIRE_BINARY("tvsim");
  const std::string card = card_with_model();
  // Infer goes on while the pad is held: a camera of 10 frames a second lasts through the presses
  const std::string cam = cross_camera(40);
  const std::string oled = tvtest::temp_dir("corrpick") + "/oled.txt";
  const std::string options = " --frame-ms 100 --unsure-margin 0 --oled " + oled;
  // a 0.9 s press is a tap (back to the menu); Infer again, a 1.5 s press opens the picker on the class after the
  // one the frame was seen as; one tap moves on, x cancels; then one tap leaves Infer
  const SimRun r = sim("--sd " + card + " --camera " + cam + options,
                       to_infer(2) + "~frames 1\n~hold 900\nl\n~hold 1500\n~tap 1\nx\n~tap 1\n");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "Touch: 1 tap (next)\nLeaving inference mode")) << r.out;
  EXPECT_TRUE(has(r.out, "Touch: long press (correct the frame just seen)")) << r.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex(">>> Correct frame (\\d+) \\(seen as (\\S+), "))) << r.out;
  // the picker: the classes, then Cancel; it starts on the class after the one the frame was seen as
  const bool seen_blank = m[2] == "0blank";
  EXPECT_TRUE(has(r.out, seen_blank ? "> 2. 1circle\n3. Cancel\n" : "> 1. 0blank\n2. 1circle\n3. Cancel\n")) << r.out;
  EXPECT_TRUE(has(r.out, seen_blank ? "> 3. Cancel\n" : "> 2. 1circle\n3. Cancel\n")) << r.out;  // one tap on
  EXPECT_TRUE(has(r.out, "Correction cancelled: nothing saved; inferring again")) << r.out;
  EXPECT_EQ(sorted_jpegs(card + "/images/0blank").size() + sorted_jpegs(card + "/images/1circle").size(), 12u);
  EXPECT_TRUE(has(r.out, "Touch: 1 tap (next)\nLeaving inference mode after")) << r.out;
  // again, choosing the first class offered (3 taps at once)
  const SimRun s = sim("--sd " + card + " --camera " + cam + options, to_infer(2) + "~frames 1\n~hold 1500\n~tap 3\n");
  ASSERT_EQ(s.status, 0) << s.err;
  ASSERT_TRUE(std::regex_search(s.out, m, std::regex(">>> Correct frame (\\d+) \\(seen as (\\S+), "))) << s.out;
  const std::string picked = m[2] == "0blank" ? "1circle" : "0blank";
  const std::string saved = card + "/images/" + picked + "/img_6c.jpg";
  ASSERT_TRUE(fs::exists(saved)) << s.out;
  EXPECT_EQ(read_text(saved), read_text(camera_frame(s.err, std::stoi(m[1]))));
  EXPECT_TRUE(has(s.out, "Correction 1: frame " + m[1].str())) << s.out;
  const std::string screens = read_text(oled);
  EXPECT_TRUE(has(screens, "|FIX AS      |\n|> " + picked)) << screens;
}

TEST(TvsimCorrections, UnsureFramesAreKeptAtMostOneASecond) {
  TV_REQUIRE_BINARY("tvsim");
  const std::string card = card_with_model();
  // every frame below the margin (100 points: any frame short of certainty): a camera of 4 frames a second
  // keeps frames 1, 5 and 9 (each 4 frames, 1 s of the board's clock, after the last; frame 4 comes 750 ms
  // plus the real time of 3 frames after frame 1)
  const SimRun r =
      sim("--sd " + card + " --camera " + cross_camera(12) + " --frame-ms 250 --unsure-margin 100", to_infer(2));
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<std::string> paths;
  EXPECT_EQ(kept_unsure(r.out, &paths), (std::vector<int>{1, 5, 9})) << r.out;
  EXPECT_EQ(unsure_files(card).size(), 3u);
  for (const auto& p : paths) EXPECT_TRUE(fs::exists(card + p)) << p;
  // a camera with no pause (the board's clock moves 1 ms a frame): one frame in all
  const std::string burst = card_with_model();
  const SimRun b = sim("--sd " + burst + " --camera " + cross_camera(8) + " --unsure-margin 100", to_infer(2));
  EXPECT_EQ(kept_unsure(b.out), std::vector<int>{1}) << b.out;
}

TEST(TvsimCorrections, UnsureFramesAreTheOnesUnderTheDocumentedMargin) {
  TV_REQUIRE_BINARY("tvsim");
  const std::string card = card_with_model();
  // one frame a second: every unsure frame is kept; the default margin (config.h)
  const SimRun r = sim("--sd " + card + " --camera " + cross_camera(24) + " --frame-ms 1000", to_infer(2));
  ASSERT_EQ(r.status, 0) << r.err;
  const double rule = unsure_rule(r.out).margin;
  EXPECT_EQ(rule, 0.2) << r.out;  // the documented default
  const std::vector<int> kept = kept_unsure(r.out);
  const std::set<int> kept_set(kept.begin(), kept.end());
  static const std::regex line("Frame (\\d+): [0-9.]+ ms [^\\n]*Pred: \\S+ \\(([0-9.]+)%\\)");
  int frames = 0, under = 0;
  for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), line); it != std::sregex_iterator(); ++it) {
    const double margin = 2 * std::stod((*it)[2]) / 100 - 1;  // two classes: top minus the other
    ++frames;
    if (std::abs(margin - rule) < 0.005) continue;  // the printed figure is rounded
    EXPECT_EQ(kept_set.count(std::stoi((*it)[1])) == 1, margin < rule) << (*it)[0];
    under += margin < rule;
  }
  EXPECT_EQ(frames, 24);
  EXPECT_GT(under, 0) << "no frame under the margin: the test proves nothing\n" << r.out;
  EXPECT_LT(under, 24) << "every frame under the margin: the test proves nothing\n" << r.out;
}

TEST(TvsimCorrections, UnsureIsBoundedDropsTheOldestAndIsNeverAClass) {
  TV_REQUIRE_BINARY("tvsim");
  const std::string card = card_with_model();
  const int max = unsure_rule(sim("--sd " + card, to_infer(2)).out).max_files;
  ASSERT_EQ(max, 50);  // the documented bound
  const SimRun r =
      sim("--sd " + card + " --camera " + cross_camera(max + 3) + " --frame-ms 1000 --unsure-margin 100", to_infer(2));
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_EQ(kept_unsure(r.out).size(), (size_t)max + 3) << r.out;
  std::vector<std::string> want;
  for (int i = 4; i <= max + 3; ++i) want.push_back(unsure_name(i, "1circle"));
  std::vector<std::string> files = unsure_files(card);
  for (auto& f : files) f = f.substr(0, 9) + "1circle.jpg";  // the class each was seen as varies
  EXPECT_EQ(files, want);
  // after a reboot: the numbering goes on from the card's highest, the oldest go, a file that is not the
  // board's stays, a temporary a power cut left is removed; _unsure is no class anywhere
  tvtest::write_text(card + "/images/_unsure/mine.jpg", "x");
  const std::string stale = unsure_name(max + 4, "0blank");
  tvtest::write_text(card + "/images/_unsure/" + stale.substr(0, stale.size() - 4) + ".tmp", "half");
  const SimRun again =
      sim("--sd " + card + " --camera " + cross_camera(2) + " --frame-ms 1000 --unsure-margin 100", to_infer(2));
  ASSERT_EQ(again.status, 0) << again.err;
  std::vector<std::string> paths;
  kept_unsure(again.out, &paths);
  ASSERT_EQ(paths.size(), 2u) << again.out;
  EXPECT_TRUE(has(paths[0], "/images/_unsure/" + unsure_name(max + 4, "").substr(0, 9))) << paths[0];
  EXPECT_TRUE(has(paths[1], "/images/_unsure/" + unsure_name(max + 5, "").substr(0, 9))) << paths[1];
  files = unsure_files(card);
  EXPECT_EQ(files.size(), (size_t)max + 1);  // the board's 50 and mine.jpg
  EXPECT_EQ(files.front().substr(0, 9), unsure_name(6, "").substr(0, 9));
  EXPECT_EQ(files.back(), "mine.jpg");
  EXPECT_FALSE(has(again.out, "_unsure (new")) << again.out;
  EXPECT_FALSE(has(again.out, ". _unsure")) << again.out;
  EXPECT_TRUE(has(again.out, "Model: ")) << again.out;
  EXPECT_TRUE(has(again.out, "1. 0blank\n2. 1circle\n3. Train\n")) << again.out;
  // Learn: no new class from it
  const SimRun learn = sim("--sd " + card + " --epochs 1", "ttttl\n");
  EXPECT_TRUE(has(learn.out, "Val: 6 images  Train: 6 images")) << learn.out;
  EXPECT_FALSE(has(learn.out, "_unsure")) << learn.out;
}

TEST(TvsimCorrections, AFullCardStopsKeepingUnsureFramesOnceAndInferGoesOn) {
  TV_REQUIRE_BINARY("tvsim");
  const std::string card = card_with_model();
  const SimRun r =
      sim("--sd " + card + " --camera " + cross_camera(6) + " --frame-ms 1000 --unsure-margin 100 --sd-fail-write-at 0",
          to_infer(2));
  ASSERT_EQ(r.status, 0) << r.err;
  const std::regex said(
      "Unsure frames: writing /images/_unsure/00000001_\\S+\\.tmp failed after 0 of \\d+ bytes "
      "\\(card full or removed\\?\\); no more are kept until Infer starts again");
  EXPECT_EQ(std::distance(std::sregex_iterator(r.out.begin(), r.out.end(), said), std::sregex_iterator()), 1) << r.out;
  EXPECT_TRUE(has(r.out, "Frame 6: ")) << r.out;
  EXPECT_TRUE(unsure_files(card).empty());
}

// tvlink pull brings the unsure frames (and the corrections) to the PC, by their names.
TEST(TvsimCorrections, TvlinkPullBringsTheUnsureFramesAndTheCorrections) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvlink");
  const std::string card = card_with_model();
  const SimRun r = sim("--sd " + card + " --camera " + cross_camera(3) + " --frame-ms 1000 --unsure-margin 100",
                       to_infer(2) + "~frames 1\nc 0blank\n");
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<std::string> kept;
  kept_unsure(r.out, &kept);
  ASSERT_EQ(kept.size(), 3u) << r.out;
  linktest::PtyBoard board("--sd " + quote(card));
  ASSERT_FALSE(board.port().empty()) << board.err();
  const std::string dest = tvtest::temp_dir("corrpull");
  const tvtest::CommandResult p = linktest::tvlink("pull " + quote(board.port()) + " " + quote(dest));
  EXPECT_EQ(p.status, 0) << p.err;
  for (const auto& k : kept) {
    const std::string local = dest + k.substr(std::string("/images").size());
    ASSERT_TRUE(fs::exists(local)) << local << "\n" << p.out;
    EXPECT_EQ(read_text(local), read_text(card + k));
  }
  EXPECT_EQ(read_text(dest + "/0blank/img_6c.jpg"), read_text(card + "/images/0blank/img_6c.jpg"));
}
