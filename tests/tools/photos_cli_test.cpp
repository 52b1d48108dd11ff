// Issue 9 through the real command lines: a messy photo folder (and its zip) through tvtrain --json,
// the results a person can act on (per-class figures, misclassified files, confusion picture, curve),
// tvtrain classify on float and int8 models, warnings before training, --augment, and refusals that
// say what to do. Every photo is made at test time (tests/photo_fixture.h).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <zip.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "host/base/files.h"
#include "host/photos/dataset.h"
#include "host/photos/jpeg.h"
#include "photo_fixture.h"
#include "test_support.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string tool(const std::string& name) {
  return tvtest::bin_path(name);
}

void put(const std::string& root, const std::string& rel, const std::vector<uint8_t>& bytes) {
  const fs::path p = fs::path(root) / rel;
  fs::create_directories(p.parent_path());
  tvh::write_file_atomic(p.string(), bytes);
}

// A JPEG showing the quadrant picture (class tl or br) once its EXIF orientation is applied.
std::vector<uint8_t> oriented_jpeg(int w, int h, bool top_left, int o, uint32_t seed) {
  auto shown = tvtest::quadrant_picture(w, h, top_left);
  for (size_t i = 0; i < shown.size(); i += 7) shown[i] = (uint8_t)(shown[i] ^ (seed & 15));
  const auto stored = tvtest::stored_for_orientation(shown, w, h, 3, o);
  const int sw = o >= 5 ? h : w, sh = o >= 5 ? w : h;
  return tvtest::with_exif_orientation(tvh::encode_jpeg(stored.data(), sw, sh, 3, 92), o);
}

// The messy folder: per class 8 EXIF-oriented JPEGs (nested, spaces, non-ASCII, .JPG), 2 PNGs; junk;
// a text file, a HEIC, a FIFO. Returns the relative paths of the pictures.
std::vector<std::string> make_messy(const std::string& root, bool fifo) {
  std::vector<std::string> pictures;
  for (bool tl : {true, false}) {
    const std::string c = tl ? "tl" : "br";
    for (int o = 1; o <= 8; ++o) {
      const std::string rel = c + (o % 2 ? "/" : "/année 2024/deep/") + "IMG " + std::to_string(o) + ".JPG";
      put(root, rel, oriented_jpeg(80, 60, tl, o, (uint32_t)o));
      pictures.push_back(rel);
    }
    for (int i = 0; i < 2; ++i) {
      const std::string rel = c + "/pngs/p" + std::to_string(i) + ".png";
      const auto rgb = tvtest::quadrant_picture(40 + i, 40, tl);
      put(root, rel, tvtest::encode_png(tvtest::to_rgba(rgb, 40 + i, 40), 40 + i, 40, tvtest::PngKind::Rgb, 8 + 8 * i));
      pictures.push_back(rel);
    }
    put(root, c + "/.DS_Store", {0, 0, 0, 1});
    put(root, c + "/Thumbs.db", {1});
  }
  put(root, "tl/notes.txt", {'x'});
  put(root, "br/clip.heic", {0, 0, 0, 24, 'f', 't', 'y', 'p'});
  if (fifo) {
    EXPECT_EQ(mkfifo((root + "/br/live.jpg").c_str(), 0644), 0);
  }
  return pictures;
}

}  // namespace

TEST(PhotosCli, MessyFolderAndZipEveryPictureUsedEverySkipNamed) {
  const std::string root = tvtest::temp_dir("messy cli");
  const auto pictures = make_messy(root + "/photos", true);
  const std::string out = tvtest::temp_dir("messy-cli-out");
  int rc = 0;
  std::string err;
  // `timeout`: a reader that opens the FIFO would hang here.
  const json j = tvtest::run_json("timeout 300 " + tool("tvtrain") + " '" + root +
                                      "/photos' --preset webmcu --epochs 2 -o " + out + "/m.tvb --json",
                                  &rc, &err);
  ASSERT_EQ(rc, 0) << err;
  EXPECT_EQ(j["images"], pictures.size());
  EXPECT_EQ(j["exif_rotated"], 14);  // orientations 2..8 in both classes
  EXPECT_EQ(j["skipped_images"], 3);
  EXPECT_EQ(j["skipped_by_reason"], json({{"not_a_regular_file", 1}, {"not_an_image", 1}, {"unsupported_format", 1}}));
  std::vector<std::string> names;
  for (const auto& s : j["skipped_files"]) names.push_back(fs::path(s["path"].get<std::string>()).filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"clip.heic", "live.jpg", "notes.txt"}));
  EXPECT_EQ(j["ignored_junk"], 4);
  EXPECT_NE(err.find("3 file(s) not used"), std::string::npos) << err;
  // Results a person can act on.
  ASSERT_EQ(j["per_class"].size(), 2u);
  EXPECT_EQ(j["per_class"][0]["class"], "br");
  EXPECT_TRUE(j["per_class"][0].contains("f1"));
  EXPECT_TRUE(j.contains("misclassified"));
  EXPECT_NE(err.find("precision"), std::string::npos) << err;
  const std::string confusion = tvtest::read_text(out + "/m.confusion.svg");
  EXPECT_NE(confusion.find("predicted class"), std::string::npos);
  const std::string curve = tvtest::read_text(out + "/m.curve.svg");
  EXPECT_NE(curve.find("validation loss"), std::string::npos);
  EXPECT_NE(curve.find("kept: epoch"), std::string::npos);
  EXPECT_NE(curve.find("loss (mean cross-entropy)"), std::string::npos);
  EXPECT_GE(j["history"][0]["val_loss"].get<double>(), 0.0);

  // The same folder as a zip (no FIFO can live in a zip): the same pictures, the same counts.
  const std::string zip_path = root + "/photos.zip";
  int zerr = 0;
  zip_t* z = zip_open(zip_path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &zerr);
  ASSERT_NE(z, nullptr);
  for (auto it = fs::recursive_directory_iterator(root + "/photos"); it != fs::recursive_directory_iterator(); ++it) {
    if (!it->is_regular_file()) continue;
    const std::string rel = "photos/" + fs::relative(it->path(), root + "/photos").generic_string();
    zip_source_t* src = zip_source_file(z, it->path().c_str(), 0, 0);
    ASSERT_GE(zip_file_add(z, rel.c_str(), src, ZIP_FL_ENC_UTF_8), 0) << rel;
  }
  ASSERT_EQ(zip_close(z), 0);
  const json k =
      tvtest::run_json(tool("tvtrain") + " '" + zip_path +
                           "' --preset webmcu --epochs 1 --no-curve --no-confusion -o " + out + "/z.tvb --json",
                       &rc, &err);
  ASSERT_EQ(rc, 0) << err;
  EXPECT_EQ(k["images"], pictures.size());
  EXPECT_EQ(k["exif_rotated"], 14);
  EXPECT_EQ(k["skipped_by_reason"], json({{"not_an_image", 1}, {"unsupported_format", 1}}));
}

TEST(PhotosCli, ClassifyFloatAndInt8AndRawWeights) {
  const std::string root = tvtest::temp_dir("classify");
  make_messy(root + "/photos", false);
  const std::string out = tvtest::temp_dir("classify-out");
  int rc = 0;
  std::string err, text;
  ASSERT_EQ(
      tvtest::run_command(tool("tvtrain") + " '" + root + "/photos' --preset webmcu --epochs 3 -q -o " + out + "/m.tvb",
                          nullptr, &err),
      0)
      << err;
  ASSERT_EQ(
      tvtest::run_command(tool("tvquant") + " " + out + "/m.tvb --calib '" + root + "/photos' -o " + out + "/m.q8.tvb",
                          nullptr, &err),
      0)
      << err;
  const std::string a = root + "/photos/tl/IMG 1.JPG", b = root + "/photos/br/pngs/p0.png";
  for (const std::string model : {"m.tvb", "m.q8.tvb"}) {
    const json j = tvtest::run_json(
        tool("tvtrain") + " classify " + out + "/" + model + " '" + a + "' '" + b + "' --json", &rc, &err);
    ASSERT_EQ(rc, 0) << model << ": " << err;
    ASSERT_EQ(j.size(), 2u);
    double sum = 0;
    for (const auto& [label, p] : j[0]["probabilities"].items()) sum += p.get<double>();
    EXPECT_NEAR(sum, 1.0, 0.02) << model;
    EXPECT_TRUE(j[1]["label"] == "tl" || j[1]["label"] == "br");
  }
  // Text output: one line per file with the label and every probability.
  ASSERT_EQ(tvtest::run_command(tool("tvtrain") + " classify " + out + "/m.tvb '" + a + "'", &text, &err), 0) << err;
  EXPECT_NE(text.find("IMG 1.JPG: "), std::string::npos) << text;
  EXPECT_NE(text.find("[br "), std::string::npos) << text;
  // A missing image: named, the others still classified, exit 1.
  rc = tvtest::run_command(tool("tvtrain") + " classify " + out + "/m.tvb '" + a + "' " + root + "/none.jpg", &text,
                           &err);
  EXPECT_EQ(rc, 1);
  EXPECT_NE(err.find("none.jpg' does not exist"), std::string::npos) << err;
  EXPECT_NE(text.find("IMG 1.JPG"), std::string::npos) << text;
  // The reference's raw myWeights.bin, with class names.
  ASSERT_EQ(tvtest::run_command(tool("tvtrain") + " '" + root + "/photos' --preset webmcu --epochs 1 -q -o " + out +
                                    "/r.tvb --raw-out " + out + "/myWeights.bin",
                                nullptr, &err),
            0)
      << err;
  ASSERT_EQ(tvtest::run_command(tool("tvtrain") + " classify " + out + "/myWeights.bin --classes br,tl '" + a + "'",
                                &text, &err),
            0)
      << err;
  EXPECT_NE(text.find("[br "), std::string::npos) << text;
}

TEST(PhotosCli, WarningsBeforeTrainingAndAugment) {
  const std::string root = tvtest::temp_dir("warn");
  for (int i = 0; i < 20; ++i) put(root, "many/" + std::to_string(i) + ".jpg", oriented_jpeg(32, 32, true, 1, i));
  for (int i = 0; i < 4; ++i) put(root, "few/" + std::to_string(i) + ".jpg", oriented_jpeg(32, 32, false, 1, i));
  put(root, "few/copy.jpg", tvh::read_file(root + "/many/3.jpg"));  // the same photo in two classes
  const std::string out = tvtest::temp_dir("warn-out");
  int rc = 0;
  std::string err;
  const json j =
      tvtest::run_json(tool("tvtrain") + " " + root + " --preset webmcu --epochs 1 --val-last 2 --augment none -o " +
                           out + "/m.tvb --json",
                       &rc, &err);
  ASSERT_EQ(rc, 0) << err;
  EXPECT_NE(err.find("out of balance"), std::string::npos) << err;
  EXPECT_NE(err.find("class 'few' has only 3 training image(s)"), std::string::npos) << err;
  EXPECT_NE(err.find("--kfold"), std::string::npos) << err;
  EXPECT_NE(err.find("are the same file in two classes"), std::string::npos) << err;
  EXPECT_EQ(j["augment"], json({{"flip", false}, {"shift", 0}, {"brightness", 0.0}}));
  const json k =
      tvtest::run_json(tool("tvtrain") + " " + root +
                           " --preset webmcu --epochs 1 --augment shift=3,brightness -q -o " + out + "/n.tvb --json",
                       &rc, &err);
  ASSERT_EQ(rc, 0) << err;
  EXPECT_EQ(k["augment"]["shift"], 3);
  EXPECT_EQ(k["augment"]["flip"], false);
  EXPECT_GT(k["augment"]["brightness"].get<double>(), 0.0);
  EXPECT_EQ(tvtest::run_command(tool("tvtrain") + " " + root + " --augment flop -o " + out + "/x.tvb", nullptr, &err),
            2);
  EXPECT_NE(err.find("'flop' is not one of none, flip"), std::string::npos) << err;
}

TEST(PhotosCli, RefusalsSayWhatToDo) {
  const std::string root = tvtest::temp_dir("refuse");
  for (int i = 0; i < 3; ++i) {
    put(root, "a/" + std::to_string(i) + ".jpg", oriented_jpeg(16, 16, true, 1, i));
    put(root, "b/" + std::to_string(i) + ".jpg", oriented_jpeg(16, 16, false, 1, i));
  }
  const std::string out = tvtest::temp_dir("refuse-out");
  std::string err;
  // An input too small for the preset: the smallest that works is named. (The default preset's rule
  // builds a network for any input size; the reference network needs 8x8.)
  EXPECT_EQ(tvtest::run_command(tool("tvtrain") + " " + root + " --preset webmcu --input 6x6x3 -o " + out + "/m.tvb",
                                nullptr, &err),
            1);
  EXPECT_NE(err.find("needs an input of at least"), std::string::npos) << err;
  EXPECT_NE(err.find("try --input"), std::string::npos) << err;
  // A file where the dataset folder is expected.
  put(out, "list.txt", {'a'});
  EXPECT_EQ(tvtest::run_command(tool("tvtrain") + " " + out + "/list.txt -o " + out + "/m.tvb", nullptr, &err), 1);
  EXPECT_NE(err.find("is a file but not a zip archive"), std::string::npos) << err;
  // More images at 4096x4096x3 than memory holds: refused from the listing, with the numbers, before
  // a single image is decoded.
  const uint64_t avail = tvh::available_memory_bytes();
  const uint64_t per_image = 4096ull * 4096 * 3;
  if (avail == 0 || avail / per_image > 4000) GTEST_SKIP() << "too much memory to fill with a few thousand files";
  const std::string big = tvtest::temp_dir("refuse-mem");
  put(big, "a/0.jpg", oriented_jpeg(16, 16, true, 1, 0));
  fs::create_directories(big + "/b");
  const uint64_t n = avail / per_image + 8;
  for (uint64_t i = 1; i < n; ++i) {  // hard links: many files, one write
    fs::create_hard_link(big + "/a/0.jpg", big + (i % 2 ? "/b/" : "/a/") + std::to_string(i) + ".jpg");
  }
  EXPECT_EQ(tvtest::run_command(tool("tvtrain") + " " + big + " --input 4096x4096x3 --epochs 1 -o " + out + "/m.tvb",
                                nullptr, &err),
            1);
  EXPECT_NE(err.find("not enough memory"), std::string::npos) << err;
  EXPECT_NE(err.find("is available: choose a smaller --input"), std::string::npos) << err;
  EXPECT_EQ(err.find("decoded in"), std::string::npos) << err;
}
