// tvtrain's HTML report (MODEL.report.html) and suspect labels, through the real command line.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include "host/base/files.h"
#include "host/photos/image.h"
#include "host/report/html_report.h"
#include "test_support.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using tvtest::contains;

// The checks every report passes: self-contained, anchors resolve, pictures decode.
void expect_self_contained(const std::string& html, size_t min_pictures) {
  EXPECT_EQ(html.rfind("<!-- TinyVision side output", 0), 0u);
  EXPECT_TRUE(contains(html, "<!DOCTYPE html>"));
  EXPECT_TRUE(tvtest::regex_captures(html, "(?:src|href)=\"(https?:[^\"]*)\"").empty());
  const std::set<std::string> ids = tvtest::regex_captures(html, "id=\"([^\"]+)\"");
  for (const auto& l : tvtest::regex_captures(html, "href=\"#([^\"]+)\""))
    EXPECT_TRUE(ids.count(l)) << "#" << l << " has no anchor";
  const std::set<std::string> srcs = tvtest::regex_captures(html, "src=\"([^\"]+)\"");
  EXPECT_GE(srcs.size(), min_pictures);
  for (const auto& s : srcs) {
    const std::vector<uint8_t> jpeg = tvtest::decode_data_uri(s);
    const tvh::Image img = tvh::decode_image(jpeg, "picture");
    EXPECT_GT(img.width, 0);
    EXPECT_LE(std::max(img.width, img.height), 96);
  }
}

}  // namespace

TEST(Report, WrittenNextToTheModelWithPhotosAndNetwork) {
  const std::string ds = tvtest::shapes_subset("report-train", 6);
  const std::string out = tvtest::temp_dir("report-train-out");
  const auto r = tvtest::run_capture(tvtest::bin_path("tvtrain") + " " + ds + " --epochs 2 -o " + out + "/m.tvb");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "wrote " + out + "/m.report.html")) << r.err;
  const std::string html = tvtest::read_text(out + "/m.report.html");
  // 3 classes x 4 samples, each with the photo and the model's input.
  expect_self_contained(html, 2 * 3 * 4 - 1);
  for (const char* id : {"run", "results", "samples", "network", "next", "class-0", "class-2"})
    EXPECT_TRUE(contains(html, std::string("id=\"") + id + "\"")) << id;
  EXPECT_TRUE(contains(html, "<polyline")) << "the curve";
  EXPECT_TRUE(contains(html, "href=\"#class-0\"")) << "a diagonal cell links to its class";
  EXPECT_TRUE(contains(html, "tvquant " + out + "/m.tvb --calib " + ds));
  EXPECT_FALSE(contains(html, "id=\"suspects\"")) << "no --kfold, no suspects";
  // --no-report writes none; --report names it.
  fs::remove(out + "/m.report.html");
  ASSERT_EQ(
      tvtest::run_command(tvtest::bin_path("tvtrain") + " " + ds + " --epochs 1 -q --no-report -o " + out + "/m.tvb"),
      0);
  EXPECT_FALSE(fs::exists(out + "/m.report.html"));
  ASSERT_EQ(tvtest::run_command(tvtest::bin_path("tvtrain") + " " + ds + " --epochs 1 -q --report " + out +
                                "/r.html -o " + out + "/m.tvb"),
            0);
  EXPECT_TRUE(fs::exists(out + "/r.html"));
  EXPECT_FALSE(fs::exists(out + "/m.report.html"));
}

TEST(Report, UsageAndTheSideOutputRule) {
  const std::string ds = tvtest::shapes_subset("report-usage", 4);
  const std::string out = tvtest::temp_dir("report-usage-out");
  const std::string train = tvtest::bin_path("tvtrain") + " " + ds + " --epochs 1 -q -o " + out + "/m.tvb";
  EXPECT_EQ(tvtest::run_command(train + " --report " + out + "/r.html --no-report"), 2);
  auto r = tvtest::run_capture(train + " --report " + out + "/r.svg");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(contains(r.err, "r.svg")) << r.err;
  // A file of the default name that we did not write is never replaced; the run stops before training.
  tvtest::write_text(out + "/m.report.html", "<html>mine</html>");
  r = tvtest::run_capture(train);
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "m.report.html")) << r.err;
  EXPECT_FALSE(fs::exists(out + "/m.tvb"));
  EXPECT_EQ(tvtest::read_text(out + "/m.report.html"), "<html>mine</html>");
  // Named, it may not be a photo the run reads.
  r = tvtest::run_capture(tvtest::bin_path("tvtrain") + " " + ds + " --epochs 1 -q --kfold 2 --report " + ds +
                          "/0blank/img_000.jpg");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(tvh::decode_image(tvh::read_file(ds + "/0blank/img_000.jpg"), "photo").width > 0);
  // Nor, through a link, a photo of the dataset (found among the listed files before decoding).
  const std::string photo = ds + "/1circle/img_001.jpg";
  const std::string before = tvtest::read_text(photo);
  fs::create_symlink(photo, out + "/link.html");
  r = tvtest::run_capture(tvtest::bin_path("tvtrain") + " " + ds + " --epochs 1 -q --kfold 2 --report " + out +
                          "/link.html");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "the same file as the dataset image " + photo)) << r.err;
  ASSERT_EQ(tvtest::run_command(train + " --no-report"), 0);
  r = tvtest::run_capture(tvtest::bin_path("tvquant") + " " + out + "/m.tvb --calib " + ds + " -q -o " + out +
                          "/q.tvb --report " + out + "/link.html");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "--report " + out + "/link.html: it is the same file as the dataset image " + photo))
      << r.err;
  EXPECT_FALSE(fs::exists(out + "/q.tvb"));
  EXPECT_EQ(tvtest::read_text(photo), before);
  // Ours is replaced.
  fs::remove(out + "/m.report.html");
  ASSERT_EQ(tvtest::run_command(train), 0);
  ASSERT_EQ(tvtest::run_command(train), 0);
}

TEST(Report, EvalAndKfoldWriteOneOnlyWhenAsked) {
  const std::string ds = tvtest::shapes_subset("report-eval", 5);
  const std::string out = tvtest::temp_dir("report-eval-out");
  ASSERT_EQ(
      tvtest::run_command(tvtest::bin_path("tvtrain") + " " + ds + " --epochs 1 -q --no-report -o " + out + "/m.tvb"),
      0);
  ASSERT_EQ(tvtest::run_command(tvtest::bin_path("tvtrain") + " " + ds + " --eval --init " + out + "/m.tvb -q"), 0);
  ASSERT_EQ(tvtest::run_command(tvtest::bin_path("tvtrain") + " " + ds + " --kfold 2 --epochs 1 -q"), 0);
  for (const auto& e : fs::directory_iterator(out)) EXPECT_NE(e.path().extension(), ".html") << e.path();
  ASSERT_EQ(tvtest::run_command(tvtest::bin_path("tvtrain") + " " + ds + " --eval --init " + out +
                                "/m.tvb -q --report " + out + "/e.html"),
            0);
  const std::string html = tvtest::read_text(out + "/e.html");
  expect_self_contained(html, 12);
  EXPECT_TRUE(contains(html, "every image"));
  int rc = 0;
  const json j = tvtest::run_json(
      tvtest::bin_path("tvtrain") + " " + ds + " --kfold 3 --epochs 2 -q --json --report " + out + "/k.html", &rc);
  ASSERT_EQ(rc, 0);
  ASSERT_TRUE(j.contains("suspect_labels"));
  ASSERT_TRUE(j["suspect_labels"].is_array());
  const std::string kf = tvtest::read_text(out + "/k.html");
  expect_self_contained(kf, 12);
  EXPECT_TRUE(contains(kf, "id=\"suspects\""));
  EXPECT_TRUE(contains(kf, "out-of-fold predictions of 3 folds"));
}

// Mislabelled photos planted in a copy of datasets/shapes: --kfold names them in --json (path, given,
// suggested, p_given), on stderr and first in the report.
TEST(Report, KfoldFindsPlantedLabelMistakes) {
  const std::string ds = tvtest::shapes_subset("report-planted", 20);
  // Two circles moved into the cross folder, one cross into the blank folder.
  const std::vector<std::pair<std::string, std::string>> moves = {{"1circle/img_003.jpg", "2cross/moved_circle_3.jpg"},
                                                                  {"1circle/img_011.jpg", "2cross/moved_circle_11.jpg"},
                                                                  {"2cross/img_007.jpg", "0blank/moved_cross_7.jpg"}};
  for (const auto& [from, to] : moves) fs::rename(ds + "/" + from, ds + "/" + to);
  const std::string out = tvtest::temp_dir("report-planted-out");
  std::string err;
  int rc = 0;
  const json j = tvtest::run_json(
      tvtest::bin_path("tvtrain") + " " + ds + " --kfold 5 --json --report " + out + "/k.html", &rc, &err);
  ASSERT_EQ(rc, 0) << err;
  std::map<std::string, std::string> found;  // path -> suggested
  for (const auto& s : j["suspect_labels"]) {
    for (const char* key : {"path", "given", "suggested", "p_given"}) EXPECT_TRUE(s.contains(key)) << key;
    found[s["path"]] = s["suggested"];
    EXPECT_LT(s["p_given"].get<double>(), 0.5);
  }
  EXPECT_EQ(found[ds + "/2cross/moved_circle_3.jpg"], "1circle") << j["suspect_labels"].dump();
  EXPECT_EQ(found[ds + "/2cross/moved_circle_11.jpg"], "1circle");
  EXPECT_EQ(found[ds + "/0blank/moved_cross_7.jpg"], "2cross");
  EXPECT_LE(found.size(), 6u) << "precision: at most as many false alarms as planted mistakes";
  EXPECT_TRUE(contains(err, "may be in the wrong class folder")) << err;
  EXPECT_TRUE(contains(err, "moved_")) << err;
  const std::string html = tvtest::read_text(out + "/k.html");
  EXPECT_LT(html.find("id=\"suspects\""), html.find("id=\"results\"")) << "the likely mistakes come first";
  EXPECT_TRUE(contains(html, "moved_circle_3.jpg"));
}

// A large dataset: the report stays under 3 MB (the pictures' budget), with 200 photos shown at most.
TEST(ReportSlow, StaysUnder3MBOnALargeDataset) {
  if (!tvtest::binary_exists("tvgen-dataset")) GTEST_SKIP() << "tvgen-dataset not built";
  const std::string dir = tvtest::temp_dir("report-big");
  ASSERT_EQ(tvtest::run_command(tvtest::bin_path("tvgen-dataset") + " " + dir + "/ds --per-class 400 --seed 5"), 0);
  std::string err;
  int rc = 0;
  const json j = tvtest::run_json(tvtest::bin_path("tvtrain") + " " + dir +
                                      "/ds --kfold 2 --epochs 1 --lr 1e-9 --json -q --report " + dir + "/big.html",
                                  &rc, &err);
  ASSERT_EQ(rc, 0) << err;
  const uintmax_t size = fs::file_size(dir + "/big.html");
  EXPECT_LT(size, 3u << 20);
  const std::string html = tvtest::read_text(dir + "/big.html");
  // A model that learnt nothing (--lr 1e-9): hundreds of mistakes, 200 shown with both pictures until
  // the budget stops the pictures.
  expect_self_contained(html, 200);
  EXPECT_TRUE(contains(html, "1200 images"));
  EXPECT_TRUE(contains(html, "the 200 worst are shown"));
}

TEST(Report, TvquantWritesItsOwnPage) {
  const std::string ds = tvtest::shapes_subset("report-quant", 6);
  const std::string out = tvtest::temp_dir("report-quant-out");
  ASSERT_EQ(
      tvtest::run_command(tvtest::bin_path("tvtrain") + " " + ds + " --epochs 2 -q --no-report -o " + out + "/m.tvb"),
      0);
  const std::string quant =
      tvtest::bin_path("tvquant") + " " + out + "/m.tvb --calib " + ds + " -q -o " + out + "/q.tvb";
  auto r = tvtest::run_capture(quant + " --report " + out + "/q.html");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string html = tvtest::read_text(out + "/q.html");
  for (const char* id : {"agreement", "disagree", "layers", "memory", "next"})
    EXPECT_TRUE(contains(html, std::string("id=\"") + id + "\"")) << id;
  EXPECT_TRUE(contains(html, "l0_conv2d"));
  EXPECT_TRUE(contains(html, "headroom"));
  EXPECT_TRUE(contains(html, "<td>1circle</td>"));
  EXPECT_TRUE(tvtest::regex_captures(html, "(?:src|href)=\"(https?:[^\"]*)\"").empty());
  // Refused before any work: a picture's extension, the model itself, a photo it reads.
  EXPECT_NE(tvtest::run_command(quant + " --report " + out + "/q.svg 2>/dev/null"), 0);
  EXPECT_NE(tvtest::run_command(quant + " --report " + out + "/m.tvb 2>/dev/null"), 0);
  EXPECT_TRUE(tvh::read_file(out + "/m.tvb").size() > 100);
  EXPECT_NE(tvtest::run_command(tvtest::bin_path("tvquant") + " " + out + "/m.tvb --calib " + ds + " -q -o " + out +
                                "/q2.tvb --report " + ds + "/0blank/img_000.jpg 2>/dev/null"),
            0);
  EXPECT_GT(tvh::decode_image(tvh::read_file(ds + "/0blank/img_000.jpg"), "photo").width, 0);
  EXPECT_FALSE(fs::exists(out + "/q2.tvb"));
}

TEST(Report, ItsRoomIsCountedWithTheOtherOutputsBeforeTraining) {
  // Room for the largest report alone, not for the model, curve and confusion picture beside it: all
  // of them are counted together (check_outputs), before training, not found short at the end.
  tvtest::SmallDisk disk("report-space", tvh::kReportMaxBytes + 4096);
  if (disk.dir.empty()) GTEST_SKIP() << "cannot mount a small tmpfs here (needs root)";
  const std::string ds = tvtest::shapes_subset("report-space-ds", 4);
  const auto r = tvtest::run_capture(tvtest::bin_path("tvtrain") + " " + ds + " --epochs 1 -o " + disk.dir + "/m.tvb");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "the report " + disk.dir + "/m.report.html") &&
              contains(r.err, "-o " + disk.dir + "/m.tvb") && contains(r.err, "together"))
      << r.err;
  EXPECT_FALSE(contains(r.err, "epoch 1/")) << "refused before training: " << r.err;
  EXPECT_FALSE(fs::exists(disk.dir + "/m.tvb"));
  // Without the report the rest fits.
  EXPECT_EQ(tvtest::run_command(tvtest::bin_path("tvtrain") + " " + ds + " --epochs 1 -q --no-report -o " + disk.dir +
                                "/m.tvb"),
            0);
}

TEST(Report, TvquantCountsItsRoomWithTheModel) {
  // tvquant -o and --report on one file system with room for the report's cap alone: refused before
  // quantizing, naming both, and nothing written.
  tvtest::SmallDisk disk("report-quant-space", tvh::kReportMaxBytes + 4096);
  if (disk.dir.empty()) GTEST_SKIP() << "cannot mount a small tmpfs here (needs root)";
  const std::string ds = tvtest::shapes_subset("report-quant-space-ds", 4);
  const std::string out = tvtest::temp_dir("report-quant-space-out");
  ASSERT_EQ(
      tvtest::run_command(tvtest::bin_path("tvtrain") + " " + ds + " --epochs 1 -q --no-report -o " + out + "/m.tvb"),
      0);
  const auto r = tvtest::run_capture(tvtest::bin_path("tvquant") + " " + out + "/m.tvb --calib " + ds + " -o " +
                                     disk.dir + "/q.tvb --report " + disk.dir + "/q.html");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "-o " + disk.dir + "/q.tvb") && contains(r.err, "--report " + disk.dir + "/q.html") &&
              contains(r.err, "together"))
      << r.err;
  EXPECT_FALSE(contains(r.err, "calibrating")) << "refused before the work: " << r.err;
  EXPECT_FALSE(fs::exists(disk.dir + "/q.tvb"));
  EXPECT_FALSE(fs::exists(disk.dir + "/q.html"));
}

TEST(Report, TvquantWritesItsPageEvenWhenStdoutIsRefused) {
  // Every file a run was asked for is written before the results go to stdout: a full disk on stdout is
  // exit 1 with its sentence, and the report is there beside the int8 model (as tvtrain does it).
  if (access("/dev/full", W_OK) != 0) GTEST_SKIP() << "/dev/full is not available";
  const std::string ds = tvtest::shapes_subset("report-quant-full", 4);
  const std::string out = tvtest::temp_dir("report-quant-full-out");
  ASSERT_EQ(
      tvtest::run_command(tvtest::bin_path("tvtrain") + " " + ds + " --epochs 1 -q --no-report -o " + out + "/m.tvb"),
      0);
  const auto r = tvtest::run_capture(tvtest::bin_path("tvquant") + " " + out + "/m.tvb --calib " + ds + " -q -o " +
                                     out + "/q.tvb --report " + out + "/q.html > /dev/full");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "standard output")) << r.err;
  EXPECT_TRUE(fs::exists(out + "/q.tvb"));
  EXPECT_TRUE(contains(tvtest::read_text(out + "/q.html"), "id=\"agreement\""));
}
