// tvfashion-mnist (datasets/fashion_mnist.cpp) as a child process on small IDX files written and
// gzip-compressed here: the class folders, the pixels, the limits, and refusals that leave nothing behind.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "host/base/files.h"
#include "host/photos/jpeg.h"
#include "test_support.h"

namespace fs = std::filesystem;

namespace {

const char* const kClasses[10] = {"0tshirt", "1trouser", "2pullover", "3dress", "4coat",
                                  "5sandal", "6shirt",   "7sneaker",  "8bag",   "9boot"};

void put32(std::vector<uint8_t>& b, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) b.push_back((uint8_t)(v >> s));
}

// Pixel (y, x) of image i: a smooth gradient, so a JPEG at quality 100 keeps it within a few levels.
uint8_t pixel(int i, int y, int x) {
  return (uint8_t)(20 + 7 * i + 6 * y + 3 * x);
}

// Writes prefix-images-idx3-ubyte.gz and prefix-labels-idx1-ubyte.gz with n images of 8x8 (label i % 10).
void write_idx(const std::string& dir, const std::string& prefix, int n) {
  std::vector<uint8_t> im, lb;
  put32(im, 0x803);
  put32(im, (uint32_t)n);
  put32(im, 8);
  put32(im, 8);
  put32(lb, 0x801);
  put32(lb, (uint32_t)n);
  for (int i = 0; i < n; ++i) {
    for (int y = 0; y < 8; ++y)
      for (int x = 0; x < 8; ++x) im.push_back(pixel(i, y, x));
    lb.push_back((uint8_t)(i % 10));
  }
  const std::string a = dir + "/" + prefix + "-images-idx3-ubyte", b = dir + "/" + prefix + "-labels-idx1-ubyte";
  tvh::write_file_atomic(a, im);
  tvh::write_file_atomic(b, lb);
  ASSERT_EQ(tvtest::run_command("gzip -f '" + a + "' '" + b + "'"), 0);
}

std::string source_dir(const std::string& tag, int n_train, int n_test) {
  const std::string dir = tvtest::temp_dir(tag);
  write_idx(dir, "train", n_train);
  write_idx(dir, "t10k", n_test);
  return dir;
}

int convert(const std::string& args, std::string* err = nullptr) {
  return tvtest::run_command(tvtest::bin_path("tvfashion-mnist") + " " + args, nullptr, err);
}

size_t count_files(const std::string& dir) {
  size_t n = 0;
  for (auto& e : fs::recursive_directory_iterator(dir)) n += e.is_regular_file();
  return n;
}

}  // namespace

TEST(FashionMnistConverter, WritesClassFoldersOfJpegs) {
  const std::string src = source_dir("fm-src", 25, 12);
  const std::string out = tvtest::temp_dir("fm-out") + "/fm";
  std::string err;
  ASSERT_EQ(convert(out + " --source " + src + " --quality 100", &err), 0) << err;
  EXPECT_EQ(count_files(out + "/train"), 25u);
  EXPECT_EQ(count_files(out + "/test"), 12u);
  for (const char* c : kClasses) {
    EXPECT_TRUE(fs::is_directory(out + "/train/" + c)) << c;
    EXPECT_TRUE(fs::is_directory(out + "/test/" + c)) << c;
  }
  // Image 13 has label 3 and keeps its index in the name; its pixels survive the JPEG round trip.
  const std::string f = out + "/train/3dress/img_00013.jpg";
  ASSERT_TRUE(fs::exists(f));
  const tvh::Image img = tvh::decode_jpeg(tvh::read_file(f), f, 0);
  ASSERT_EQ(img.width, 8);
  ASSERT_EQ(img.height, 8);
  ASSERT_EQ(img.channels, 1);
  for (int y = 0; y < 8; ++y)
    for (int x = 0; x < 8; ++x) EXPECT_NEAR(img.pixels[(size_t)y * 8 + x], pixel(13, y, x), 3) << y << "," << x;
  // No temporary folder is left beside the result.
  EXPECT_EQ(std::distance(fs::directory_iterator(fs::path(out).parent_path()), fs::directory_iterator()), 1);
}

TEST(FashionMnistConverter, LimitsKeepTheFirstImages) {
  const std::string src = source_dir("fm-src-limit", 30, 20);
  const std::string out = tvtest::temp_dir("fm-out-limit") + "/fm";
  ASSERT_EQ(convert(out + " --source " + src + " --train-limit 11 --test-limit 4"), 0);
  EXPECT_EQ(count_files(out + "/train"), 11u);
  EXPECT_EQ(count_files(out + "/test"), 4u);
  EXPECT_TRUE(fs::exists(out + "/train/0tshirt/img_00010.jpg"));
  EXPECT_TRUE(fs::exists(out + "/test/3dress/img_00003.jpg"));
}

TEST(FashionMnistConverter, RefusesAnExistingFolderAndTouchesNothing) {
  const std::string src = source_dir("fm-src-exists", 10, 10);
  const std::string out = tvtest::temp_dir("fm-out-exists");
  tvh::write_file_atomic(out + "/mine.txt", std::string("keep me"));
  std::string err;
  EXPECT_NE(convert(out + " --source " + src, &err), 0);
  EXPECT_NE(err.find("already exists"), std::string::npos) << err;
  EXPECT_EQ(count_files(out), 1u);
}

TEST(FashionMnistConverter, BadSourcesFailWithOneSentenceAndLeaveNothing) {
  const std::string parent = tvtest::temp_dir("fm-out-bad");
  std::string err;
  // Missing files.
  EXPECT_NE(convert(parent + "/a --source " + parent + "/nowhere", &err), 0);
  EXPECT_NE(err.find("dataset-fashion-mnist"), std::string::npos) << err;
  // Labels that disagree with the images.
  const std::string src = source_dir("fm-src-bad", 10, 10);
  write_idx(src, "t10k", 9);
  write_idx(src, "t10k", 10);
  fs::rename(src + "/t10k-labels-idx1-ubyte.gz", src + "/keep.gz");
  write_idx(src, "t10k", 9);
  fs::rename(src + "/keep.gz", src + "/t10k-labels-idx1-ubyte.gz");  // 9 images, 10 labels
  EXPECT_NE(convert(parent + "/b --source " + src, &err), 0);
  EXPECT_NE(err.find("labels"), std::string::npos) << err;
  // Not gzip / not IDX.
  const std::string junk = source_dir("fm-src-junk", 10, 10);
  tvh::write_file_atomic(junk + "/train-images-idx3-ubyte.gz", std::string("this is not a gzip file at all"));
  EXPECT_NE(convert(parent + "/c --source " + junk, &err), 0);
  EXPECT_NE(err.find("train-images-idx3-ubyte.gz"), std::string::npos) << err;
  EXPECT_EQ(std::distance(fs::directory_iterator(parent), fs::directory_iterator()), 0) << "something was left behind";
}
