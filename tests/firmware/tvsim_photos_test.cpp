// Card photos the board cannot train on: each kind of skip named (the first few) and counted, with
// what works instead; a class none of whose photos decode refused by name; a folder of 20,000 photos
// refused from the count, before any list is made or photo read.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "host/photos/jpeg.h"
#include "photo_fixture.h"
#include "sim_support.h"
#include "test_support.h"

namespace fs = std::filesystem;
using namespace simtest;

namespace {

void put(const std::string& path, const std::vector<uint8_t>& bytes) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary).write((const char*)bytes.data(), (std::streamsize)bytes.size());
}

// A real baseline JPEG of w x h (a gradient).
std::vector<uint8_t> jpeg(int w, int h) {
  std::vector<uint8_t> px((size_t)w * h * 3);
  for (size_t i = 0; i < px.size(); ++i) px[i] = (uint8_t)(i * 7 % 251);
  return tvh::encode_jpeg(px.data(), w, h, 3, 80);
}

// One epoch of Train on the card (the shapes' two classes); the run itself must end well.
SimRun train(const std::string& card) {
  const SimRun r = sim("--sd " + card + labels_arg(kShapes2) + " --epochs 1", to_train(2));
  EXPECT_EQ(r.status, 0) << r.err;
  return r;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = 0; (at = text.find(what, at)) != std::string::npos; at += what.size()) ++n;
  return n;
}

}  // namespace

TEST(TvsimPhotos, EachSkipIsNamedCountedAndWhatWorksIsSaid) {
  TV_REQUIRE_BINARY("tvsim");
  const std::string card = make_card(shapes_dir(), kShapes2, 6);
  const std::string a = card + "/images/0blank/", b = card + "/images/1circle/";
  const std::vector<uint8_t> big = jpeg(1100, 1000);  // 1.1 megapixels
  for (int i = 0; i < 5; ++i) put(a + "big_" + std::to_string(i) + ".jpg", big);
  std::vector<uint8_t> cut = jpeg(64, 64);
  cut.resize(cut.size() / 3);  // the frame header is there, the data is not
  put(b + "cut_0.jpg", cut);
  put(b + "cut_1.jpg", cut);
  put(a + "photo.png", tvtest::encode_png(std::vector<uint8_t>(16 * 16 * 4, 200), 16, 16, tvtest::PngKind::Rgba, 8));
  put(a + "sub/img_9.jpg", jpeg(64, 64));
  const SimRun r = train(card);
  EXPECT_TRUE(has(r.out,
                  "Note: 1 sub-folder in the class folders ignored (e.g. /images/0blank/sub): photos must lie "
                  "directly in /images/<class>/"))
      << r.out;
  EXPECT_TRUE(has(r.out,
                  "Note: 1 file that is not JPEG ignored (e.g. /images/0blank/photo.png): the board trains on "
                  ".jpg/.jpeg photos (those it took itself work); for PNG and other photos train on the PC "
                  "with tvtrain"))
      << r.out;
  // the first three of a kind named, the rest counted
  EXPECT_EQ(count(r.out, "1100x1000 is larger than the 1048576 pixels this firmware decodes"), 3u) << r.out;
  EXPECT_EQ(count(r.out, "cut_"), 2u) << r.out;
  EXPECT_TRUE(has(r.out, "Skipped 7 of 19 photos: 5 over 1 megapixel, 2 corrupt\n")) << r.out;
  EXPECT_TRUE(has(r.out,
                  "The board decodes baseline JPEGs of up to 1048576 pixels (the photos it takes are "
                  "240x240); for other photos train on the PC (tvtrain photos/ -o model.tvb) and copy "
                  "model.tvb to /header/model.tvb on the card"))
      << r.out;
  EXPECT_TRUE(has(r.out, "--- Training Complete ---"));  // the 12 good photos train
}

TEST(TvsimPhotos, AClassNoneOfWhosePhotosDecodeIsRefusedByName) {
  TV_REQUIRE_BINARY("tvsim");
  const std::string card = make_card(shapes_dir(), {"0blank"}, 6);
  const std::vector<uint8_t> big = jpeg(1100, 1000);
  put(card + "/images/1circle/img_0.jpg", big);
  put(card + "/images/1circle/img_1.jpg", big);
  const SimRun r = train(card);
  EXPECT_TRUE(has(r.out,
                  "Cannot train: none of the 2 photos of class 1 (/images/1circle) could be decoded (see the "
                  "skips above); the model is unchanged"))
      << r.out;
  EXPECT_FALSE(has(r.out, "--- Epoch"));
  EXPECT_FALSE(fs::exists(card + "/header/model.tvb"));
}

TEST(TvsimPhotos, TwentyThousandPhotosInAClassAreRefusedFromTheCount) {
  TV_REQUIRE_BINARY("tvsim");
  const std::string card = make_card(shapes_dir(), kShapes2, 2);
  const std::string dir = card + "/images/0blank/";
  for (int i = 0; i < 20000; ++i) std::ofstream(dir + "p" + std::to_string(i) + ".jpg");  // empty files
  const SimRun r = train(card);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m,
                                std::regex("Cannot train: the 20004 photos in /images need (\\d+) bytes of PSRAM "
                                           "\\((\\d+) per photo at the model's 64x64x3 input, and their names\\), "
                                           "only (\\d+) are free: about (\\d+) photos fit; move some out of the "
                                           "class folders \\(the largest: /images/0blank, 20002 photos\\)")))
      << r.out;
  EXPECT_GT(std::stoull(m[1].str()), 20004ull * 64 * 64 * 3);
  EXPECT_LT(std::stoull(m[4].str()), 20004ull);
  // refused from the count: no photo read, none skipped one by one
  EXPECT_FALSE(has(r.out, "skipped "));
  EXPECT_FALSE(has(r.out, "Decoded "));
}

// What is not a regular file is said as such (tvsim printed "-1 bytes"): a FIFO named like a photo, a
// folder where myWeights.bin belongs.
TEST(TvsimPhotos, WhatIsNotAFileIsSaidAsSuch) {
  TV_REQUIRE_BINARY("tvsim");
  const std::string card = make_card(shapes_dir(), kShapes2, 6);
  ASSERT_EQ(mkfifo((card + "/images/0blank/fifo.jpg").c_str(), 0600), 0);
  const SimRun r = train(card);
  EXPECT_TRUE(has(r.out,
                  "skipped /images/0blank/fifo.jpg: not a regular file (a device, or removed since it was "
                  "listed)"))
      << r.out;
  EXPECT_FALSE(has(r.out, "-1 bytes")) << r.out;
  EXPECT_TRUE(has(r.out, "--- Training Complete ---"));
  fs::remove_all(card + "/header");
  fs::create_directories(card + "/header/myWeights.bin");
  const SimRun boot = sim("--sd " + card + labels_arg(kShapes2), "");
  EXPECT_TRUE(has(boot.out,
                  "SD /header/myWeights.bin refused: /header/myWeights.bin is a folder or a device, not a "
                  "file"))
      << boot.out;
  EXPECT_FALSE(has(boot.out, "-1 bytes")) << boot.out;
}
