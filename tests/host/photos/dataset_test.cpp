// tvh::load_dataset (folders, zips, the reference layout, broken files) and the splits over it.
// Every JPEG here is real: encoded at test time, or the committed datasets/shapes, or ../shared.
#include "host/photos/dataset.h"

#include <gtest/gtest.h>
#include <zip.h>

#include <algorithm>
#include <deque>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "host/base/error.h"
#include "host/base/files.h"
#include "host/photos/jpeg.h"
#include "host/photos/split.h"
#include "test_support.h"
#include "tv/image/image.h"

namespace fs = std::filesystem;

namespace {

// A photo-ish RGB (or gray) pattern that differs per seed.
std::vector<uint8_t> pattern(int w, int h, int c, uint32_t seed) {
  std::vector<uint8_t> img((size_t)w * h * c);
  uint32_t s = seed * 2654435761u + 17;
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      for (int ch = 0; ch < c; ++ch) {
        s = s * 1664525u + 1013904223u;
        const int v = (int)((x * (3 + seed % 5) + y * (2 + ch) + seed * 37 + ch * 60) % 200) + (int)(s >> 28);
        img[((size_t)y * w + x) * c + ch] = (uint8_t)v;
      }
    }
  }
  return img;
}

std::vector<uint8_t> make_jpeg(int w, int h, int c, uint32_t seed, bool progressive = false) {
  const auto px = pattern(w, h, c, seed);
  return tvh::encode_jpeg(px.data(), w, h, c, 90, progressive);
}

// Writes `bytes` to root/rel, creating folders.
void put(const std::string& root, const std::string& rel, const std::vector<uint8_t>& bytes) {
  const fs::path p = fs::path(root) / rel;
  fs::create_directories(p.parent_path());
  tvh::write_file_atomic(p.string(), bytes);
}

// What one image should look like in the cache: the file decoded, then the shared resize.
std::vector<uint8_t> expected_pixels(const std::vector<uint8_t>& jpeg, int h, int w, tv::ChannelOrder order) {
  const tvh::Image img = tvh::decode_jpeg(jpeg, "expected", 0);
  std::vector<uint8_t> out((size_t)h * w * tv::channel_count(order));
  std::vector<uint16_t> lut((size_t)h + w);
  EXPECT_TRUE(tv::resize_nearest_crop(img.pixels.data(), img.width, img.height, img.channels, out.data(), w, h, order,
                                      false, lut.data()));
  return out;
}

std::vector<uint8_t> image_of(const tvh::Dataset& ds, size_t i) {
  return std::vector<uint8_t>(ds.image(i), ds.image(i) + ds.image_bytes());
}

// A small two-class dataset: files by relative path (class/name) -> JPEG bytes.
std::map<std::string, std::vector<uint8_t>> two_class_files() {
  std::map<std::string, std::vector<uint8_t>> files;
  files["cat/b.jpg"] = make_jpeg(40, 40, 3, 1);
  files["cat/a.JPG"] = make_jpeg(64, 48, 3, 2);
  files["cat/c.jpeg"] = make_jpeg(30, 50, 3, 3);
  files["dog/x1.jpg"] = make_jpeg(48, 48, 3, 4);
  files["dog/x0.jpg"] = make_jpeg(80, 60, 3, 5);
  return files;
}

std::string make_folder(const std::map<std::string, std::vector<uint8_t>>& files, const std::string& prefix = "") {
  const std::string root = tvtest::temp_dir("ds");
  for (const auto& kv : files) put(root, prefix + kv.first, kv.second);
  return root;
}

// Builds a real .zip with libzip: files under `prefix`, plus explicit directory entries when asked.
std::string make_zip(const std::map<std::string, std::vector<uint8_t>>& files, const std::string& prefix,
                     bool dir_entries, const std::map<std::string, std::vector<uint8_t>>& extra = {}) {
  const std::string path = tvtest::temp_dir("zip") + "/data.zip";
  int err = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  EXPECT_NE(z, nullptr);
  std::set<std::string> dirs;
  auto add = [&](const std::string& name, const std::vector<uint8_t>& bytes) {
    if (dir_entries) {
      for (size_t slash = name.find('/'); slash != std::string::npos; slash = name.find('/', slash + 1)) {
        const std::string d = name.substr(0, slash);
        if (dirs.insert(d).second) {
          EXPECT_GE(zip_dir_add(z, d.c_str(), ZIP_FL_ENC_UTF_8), 0);
        }
      }
    }
    zip_source_t* src = zip_source_buffer(z, bytes.data(), bytes.size(), 0);  // bytes outlive zip_close
    EXPECT_NE(src, nullptr);
    EXPECT_GE(zip_file_add(z, name.c_str(), src, ZIP_FL_ENC_UTF_8), 0);
  };
  for (const auto& kv : files) add(prefix + kv.first, kv.second);
  for (const auto& kv : extra) add(kv.first, kv.second);
  EXPECT_EQ(zip_close(z), 0);
  return path;
}

tvh::Dataset load(const std::string& path, int h = 16, int w = 16, int c = 3,
                  tv::ChannelOrder order = tv::ChannelOrder::RGB, std::vector<std::string> classes = {},
                  int threads = 1) {
  tvh::DatasetOptions o;
  o.path = path;
  o.height = h;
  o.width = w;
  o.channels = c;
  o.order = order;
  o.classes = std::move(classes);
  o.threads = threads;
  return tvh::load_dataset(o);
}

// Checks classes, order, labels and every pixel of a dataset built from two_class_files().
void expect_two_class(const tvh::Dataset& ds, const std::map<std::string, std::vector<uint8_t>>& files) {
  ASSERT_EQ(ds.classes, (std::vector<std::string>{"cat", "dog"}));
  ASSERT_EQ(ds.size(), 5u);
  EXPECT_EQ(ds.labels, (std::vector<int>{0, 0, 0, 1, 1}));
  const std::vector<std::string> rel = {"cat/a.JPG", "cat/b.jpg", "cat/c.jpeg", "dog/x0.jpg", "dog/x1.jpg"};
  for (size_t i = 0; i < rel.size(); ++i) {
    EXPECT_NE(ds.paths[i].find(rel[i]), std::string::npos) << ds.paths[i];
    EXPECT_EQ(image_of(ds, i), expected_pixels(files.at(rel[i]), ds.height, ds.width, ds.order)) << rel[i];
  }
  EXPECT_EQ(ds.pixels.size(), 5u * 16 * 16 * 3);
  EXPECT_GE(ds.decode_seconds, 0.0);
}

bool any_contains(const std::vector<std::string>& v, const std::string& needle) {
  for (const auto& s : v) {
    if (s.find(needle) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST(Dataset, FolderOfClassFolders) {
  const auto files = two_class_files();
  const std::string root = make_folder(files);
  put(root, "README.txt", {'h', 'i'});
  put(root, "cat/notes.txt", {'n'});
  const tvh::Dataset ds = load(root);
  expect_two_class(ds, files);
  // Files that are not used are named with their reason.
  ASSERT_EQ(ds.skipped.size(), 2u);
  EXPECT_EQ(ds.skipped[0].path, root + "/README.txt");
  EXPECT_EQ(ds.skipped[0].reason, "outside_class_folders");
  EXPECT_EQ(ds.skipped[1].path, root + "/cat/notes.txt");
  EXPECT_EQ(ds.skipped[1].reason, "not_an_image");
  EXPECT_EQ(ds.paths[0], root + "/cat/a.JPG");
  EXPECT_TRUE(ds.warnings.empty());
  EXPECT_EQ(ds.class_counts(), (std::vector<size_t>{3, 2}));
  // A trailing slash names the same dataset.
  EXPECT_EQ(load(root + "/").pixels, ds.pixels);
}

TEST(Dataset, FolderWithoutImagesIsWarnedOnce) {
  const auto files = two_class_files();
  const std::string root = make_folder(files);
  fs::create_directories(root + "/empty");
  put(root, "header/myWeights.bin", {1, 2, 3});
  put(root, ".hidden/a.jpg", files.at("cat/b.jpg"));
  const tvh::Dataset ds = load(root);
  expect_two_class(ds, files);
  ASSERT_EQ(ds.warnings.size(), 2u) << ::testing::PrintToString(ds.warnings);
  EXPECT_TRUE(any_contains(ds.warnings, "/empty'"));
  EXPECT_TRUE(any_contains(ds.warnings, "/header'"));
}

TEST(Dataset, ZipWithoutTopLevelFolder) {
  const auto files = two_class_files();
  const std::string zip = make_zip(files, "", false);
  const tvh::Dataset ds = load(zip);
  expect_two_class(ds, files);
  EXPECT_EQ(ds.paths[0], zip + ":cat/a.JPG");
  EXPECT_EQ(ds.pixels, load(make_folder(files)).pixels);
}

TEST(Dataset, ZipWithTopLevelFolderAndDirEntries) {
  const auto files = two_class_files();
  std::map<std::string, std::vector<uint8_t>> junk;
  junk["__MACOSX/photos/cat/._a.JPG"] = {0, 5, 22, 7};  // macOS resource forks are not JPEGs
  const std::string zip = make_zip(files, "photos/", true, junk);
  const tvh::Dataset ds = load(zip);
  expect_two_class(ds, files);
  EXPECT_EQ(ds.paths[0], zip + ":photos/cat/a.JPG");
  EXPECT_TRUE(ds.warnings.empty()) << ::testing::PrintToString(ds.warnings);
}

TEST(Dataset, ReferenceLayoutUsesImagesFolder) {
  const auto files = two_class_files();
  const std::string root = make_folder(files, "images/");
  put(root, "header/myWeights.bin", {1, 2, 3, 4});
  const tvh::Dataset ds = load(root);
  expect_two_class(ds, files);
  EXPECT_EQ(ds.paths[0], root + "/images/cat/a.JPG");
  // The same layout zipped under a single top-level folder.
  std::map<std::string, std::vector<uint8_t>> header;
  header["webmcu/header/myWeights.bin"] = {1, 2, 3, 4};
  const tvh::Dataset zipped = load(make_zip(files, "webmcu/images/", false, header));
  expect_two_class(zipped, files);
}

TEST(Dataset, CorruptAndTruncatedFilesAreSkippedByName) {
  auto files = two_class_files();
  const std::string root = make_folder(files);
  std::vector<uint8_t> junk(3000);
  uint32_t s = 5;
  for (auto& b : junk) b = (uint8_t)((s = s * 1103515245u + 12345u) >> 23);
  put(root, "cat/junk.jpg", junk);
  const auto big = make_jpeg(240, 240, 3, 77);
  put(root, "dog/half.jpg", std::vector<uint8_t>(big.begin(), big.begin() + (long)big.size() / 2));
  put(root, "dog/zero.jpg", {});

  for (int threads : {1, 2}) {
    const tvh::Dataset ds = load(root, 16, 16, 3, tv::ChannelOrder::RGB, {}, threads);
    expect_two_class(ds, files);  // the good images, in order, unaffected
  }
  const tvh::Dataset ds = load(root);
  ASSERT_EQ(ds.skipped.size(), 3u);
  EXPECT_EQ(ds.skipped[0].path, root + "/cat/junk.jpg");
  EXPECT_EQ(ds.skipped[1].path, root + "/dog/half.jpg");
  EXPECT_EQ(ds.skipped[2].path, root + "/dog/zero.jpg");
  for (const auto& sk : ds.skipped) {
    EXPECT_NE(sk.message.find(sk.path), std::string::npos) << sk.message;  // the reason names the file
  }
  EXPECT_NE(ds.skipped[1].message.find("truncated"), std::string::npos) << ds.skipped[1].message;
}

TEST(Dataset, EveryImageBrokenIsAnError) {
  const std::string root = tvtest::temp_dir("ds");
  put(root, "a/1.jpg", {1, 2, 3});
  put(root, "b/1.jpg", {4, 5, 6});
  EXPECT_THROW(load(root), tvh::Error);
}

TEST(Dataset, GrayJpegIntoRgbModelAndRgbIntoGrayModel) {
  std::map<std::string, std::vector<uint8_t>> files;
  files["g/gray.jpg"] = make_jpeg(50, 50, 1, 8);
  files["c/color.jpg"] = make_jpeg(50, 50, 3, 9);
  const std::string root = make_folder(files);

  const tvh::Dataset rgb = load(root, 20, 20, 3);
  ASSERT_EQ(rgb.classes, (std::vector<std::string>{"c", "g"}));
  const tvh::Image gray_src = tvh::decode_jpeg(files["g/gray.jpg"], "gray", 0);
  ASSERT_EQ(gray_src.channels, 1);
  const uint8_t* g = rgb.image(1);
  for (int i = 0; i < 20 * 20; ++i) {
    const int y = i / 20, x = i % 20;
    const uint8_t v =
        gray_src.pixels[(size_t)tv::nearest_source_index(y, 50, 20) * 50 + tv::nearest_source_index(x, 50, 20)];
    ASSERT_EQ(g[3 * i], v);
    ASSERT_EQ(g[3 * i + 1], v);
    ASSERT_EQ(g[3 * i + 2], v);
  }

  const tvh::Dataset mono = load(root, 20, 20, 1);
  EXPECT_EQ(mono.channels, 1);
  EXPECT_EQ(mono.order, tv::ChannelOrder::GRAY);
  EXPECT_EQ(mono.pixels.size(), 2u * 20 * 20);
  const tvh::Image color_src = tvh::decode_jpeg(files["c/color.jpg"], "color", 0);
  const uint8_t* m = mono.image(0);
  for (int i = 0; i < 20 * 20; ++i) {
    const int y = i / 20, x = i % 20;
    const uint8_t* p =
        &color_src.pixels[((size_t)tv::nearest_source_index(y, 50, 20) * 50 + tv::nearest_source_index(x, 50, 20)) * 3];
    ASSERT_EQ(m[i], tv::luma_u8(p[0], p[1], p[2]));
  }
  EXPECT_EQ(image_of(mono, 1), expected_pixels(files["g/gray.jpg"], 20, 20, tv::ChannelOrder::GRAY));

  // BGR output swaps the channels of the RGB cache.
  const tvh::Dataset bgr = load(root, 20, 20, 3, tv::ChannelOrder::BGR);
  const tvh::Dataset rgb2 = load(root, 20, 20, 3, tv::ChannelOrder::RGB);
  for (size_t i = 0; i < 20 * 20; ++i) {
    ASSERT_EQ(bgr.image(0)[3 * i], rgb2.image(0)[3 * i + 2]);
    ASSERT_EQ(bgr.image(0)[3 * i + 2], rgb2.image(0)[3 * i]);
  }
}

TEST(Dataset, ProgressiveJpegLoads) {
  std::map<std::string, std::vector<uint8_t>> files;
  files["p/prog.jpg"] = make_jpeg(72, 72, 3, 10, true);
  files["q/base.jpg"] = make_jpeg(72, 72, 3, 11, false);
  const tvh::Dataset ds = load(make_folder(files), 24, 24);
  ASSERT_EQ(ds.size(), 2u);
  EXPECT_TRUE(ds.skipped.empty());
  EXPECT_EQ(image_of(ds, 0), expected_pixels(files["p/prog.jpg"], 24, 24, tv::ChannelOrder::RGB));
}

// 97x53 into an 8x8 model: crop side 53 at x offset 22; by hand floor((2i+1)*53/16) =
// 3, 9, 16, 23, 29, 36, 43, 49 (+22 for x).
TEST(Dataset, OddSizeCentreCropByHand) {
  std::map<std::string, std::vector<uint8_t>> files;
  files["odd/a.jpg"] = make_jpeg(97, 53, 3, 12);
  files["odd2/b.jpg"] = make_jpeg(53, 97, 3, 13);
  const tvh::Dataset ds = load(make_folder(files), 8, 8);
  ASSERT_EQ(ds.size(), 2u);
  const int lut[8] = {3, 9, 16, 23, 29, 36, 43, 49};
  const tvh::Image wide = tvh::decode_jpeg(files["odd/a.jpg"], "a", 3);
  const tvh::Image tall = tvh::decode_jpeg(files["odd2/b.jpg"], "b", 3);
  for (int y = 0; y < 8; ++y) {
    for (int x = 0; x < 8; ++x) {
      for (int c = 0; c < 3; ++c) {
        EXPECT_EQ(ds.image(0)[(y * 8 + x) * 3 + c], wide.pixels[((size_t)lut[y] * 97 + 22 + lut[x]) * 3 + c]);
        EXPECT_EQ(ds.image(1)[(y * 8 + x) * 3 + c], tall.pixels[((size_t)(22 + lut[y]) * 53 + lut[x]) * 3 + c]);
      }
    }
  }
}

TEST(Dataset, AbsurdDimensionsAreSkippedBeforeDecoding) {
  auto files = two_class_files();
  const std::string root = make_folder(files);
  std::vector<uint8_t> huge = make_jpeg(16, 16, 3, 14);
  // Patch the SOF0 segment (walk the segments to find it) to claim 60000x60000.
  size_t pos = 2;
  while (pos + 4 < huge.size() && huge[pos + 1] != 0xC0) pos += 2 + (((size_t)huge[pos + 2] << 8) | huge[pos + 3]);
  ASSERT_EQ(huge[pos + 1], 0xC0);
  huge[pos + 5] = 0xEA;  // height 60000
  huge[pos + 6] = 0x60;
  huge[pos + 7] = 0xEA;  // width 60000
  huge[pos + 8] = 0x60;
  put(root, "dog/huge.jpg", huge);
  const tvh::Dataset ds = load(root);
  ASSERT_EQ(ds.size(), 5u);
  ASSERT_EQ(ds.skipped.size(), 1u);
  EXPECT_EQ(ds.skipped[0].path, root + "/dog/huge.jpg");
  EXPECT_NE(ds.skipped[0].message.find("60000x60000"), std::string::npos) << ds.skipped[0].message;
  EXPECT_EQ(image_of(ds, 3), expected_pixels(files.at("dog/x0.jpg"), 16, 16, tv::ChannelOrder::RGB));
}

// A folder whose name starts with '_' (the board's _unsure/) is never a class: said, its photos skipped
// with the reason, and refused in an explicit class list.
TEST(Dataset, UnderscoreFoldersAreNeverClasses) {
  const auto files = two_class_files();
  const std::string root = make_folder(files);
  put(root, "_unsure/frame_1.jpg", files.at("cat/b.jpg"));
  const tvh::Dataset ds = load(root);
  expect_two_class(ds, files);
  EXPECT_TRUE(any_contains(ds.warnings, "/_unsure': a folder whose name starts with '_' is never a class"))
      << ::testing::PrintToString(ds.warnings);
  ASSERT_EQ(ds.skipped.size(), 1u);
  EXPECT_EQ(ds.skipped[0].reason, "outside_class_folders");
  EXPECT_NE(ds.skipped[0].message.find("whose name starts with '_': never a class"), std::string::npos);
  tvh::DatasetOptions o;
  o.path = root;
  o.classes = {"cat", "_unsure"};
  EXPECT_THROW(tvh::load_dataset(o), tvh::Error);
}

TEST(Dataset, ExplicitClassListOrder) {
  const auto files = two_class_files();
  const std::string root = make_folder(files);
  fs::create_directories(root + "/unused");
  put(root, "bird/z.jpg", files.at("dog/x0.jpg"));
  const tvh::Dataset ds = load(root, 16, 16, 3, tv::ChannelOrder::RGB, {"dog", "cat"});
  ASSERT_EQ(ds.classes, (std::vector<std::string>{"dog", "cat"}));
  ASSERT_EQ(ds.size(), 5u);
  EXPECT_EQ(ds.labels, (std::vector<int>{0, 0, 1, 1, 1}));
  EXPECT_EQ(ds.paths[0], root + "/dog/x0.jpg");
  EXPECT_EQ(ds.paths[2], root + "/cat/a.JPG");
  EXPECT_EQ(ds.warnings.size(), 2u) << ::testing::PrintToString(ds.warnings);  // bird (not listed), unused (empty)
  EXPECT_TRUE(any_contains(ds.warnings, "bird"));
  EXPECT_TRUE(any_contains(ds.warnings, "unused"));

  try {
    load(root, 16, 16, 3, tv::ChannelOrder::RGB, {"cat", "horse"});
    FAIL() << "missing class accepted";
  } catch (const tvh::Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'horse'"), std::string::npos) << msg;
    EXPECT_NE(msg.find(root), std::string::npos) << msg;
  }
  EXPECT_THROW(load(root, 16, 16, 3, tv::ChannelOrder::RGB, {"cat", "unused"}), tvh::Error);
  EXPECT_THROW(load(root, 16, 16, 3, tv::ChannelOrder::RGB, {"cat", "cat"}), tvh::Error);
}

TEST(Dataset, BadPathsAndOptionsAreErrors) {
  const std::string dir = tvtest::temp_dir("ds");
  EXPECT_THROW(load(dir + "/nope"), tvh::Error);
  EXPECT_THROW(load(dir), tvh::Error);  // no class folders
  tvh::write_file_atomic(dir + "/not.zip", std::string("hello"));
  try {
    load(dir + "/not.zip");
    FAIL();
  } catch (const tvh::Error& e) {
    EXPECT_NE(std::string(e.what()).find("not.zip"), std::string::npos) << e.what();
  }
  const std::string root = make_folder(two_class_files());
  EXPECT_THROW(load(root, 16, 16, 2), tvh::Error);
  EXPECT_THROW(load(root, 0, 16, 3), tvh::Error);
  EXPECT_THROW(load(root, 16, 16, 3, tv::ChannelOrder::GRAY), tvh::Error);
}

TEST(Dataset, ThreadCountDoesNotChangeTheResult) {
  tvh::DatasetOptions o;
  o.path = tvtest::source_path("datasets/shapes");
  o.height = o.width = 64;
  o.threads = 1;
  const tvh::Dataset one = tvh::load_dataset(o);
  o.threads = 2;
  const tvh::Dataset two = tvh::load_dataset(o);
  o.threads = 0;
  const tvh::Dataset all = tvh::load_dataset(o);
  ASSERT_GT(one.size(), 0u);
  EXPECT_EQ(one.pixels, two.pixels);
  EXPECT_EQ(one.paths, two.paths);
  EXPECT_EQ(one.labels, two.labels);
  EXPECT_EQ(one.pixels, all.pixels);
}

TEST(Dataset, CommittedShapesDataset) {
  const tvh::Dataset ds = load(tvtest::source_path("datasets/shapes"), 64, 64);
  EXPECT_EQ(ds.classes, (std::vector<std::string>{"0blank", "1circle", "2cross"}));
  EXPECT_EQ(ds.class_counts(), (std::vector<size_t>{36, 36, 36}));
  EXPECT_TRUE(ds.skipped.empty());
  EXPECT_TRUE(ds.warnings.empty());
  size_t bytes = 0;
  for (const auto& p : ds.paths) {
    const auto jpeg = tvh::read_file(p);
    bytes += jpeg.size();
    const tvh::JpegHeader h = tvh::read_jpeg_header(jpeg.data(), jpeg.size(), p);
    EXPECT_EQ(h.width, 240);
    EXPECT_EQ(h.height, 240);
    EXPECT_EQ(h.channels, 3);
  }
  EXPECT_LT(bytes, 600u * 1024);
}

TEST(Dataset, GeneratorReproducesCommittedShapes) {
  const std::string gen = tvtest::bin_path("tvgen-dataset");
  TV_REQUIRE_BINARY("tvgen-dataset");
  const std::string out = tvtest::temp_dir("gen");
  ASSERT_EQ(tvtest::run_command("'" + gen + "' '" + out + "'"), 0);
  const std::string committed = tvtest::source_path("datasets/shapes");
  size_t compared = 0;
  for (const char* cls : {"0blank", "1circle", "2cross"}) {
    for (const auto& e : fs::directory_iterator(fs::path(out) / cls)) {
      const fs::path mine = fs::path(committed) / cls / e.path().filename();
      ASSERT_TRUE(fs::exists(mine)) << mine;
      EXPECT_EQ(tvh::read_file(e.path().string()), tvh::read_file(mine.string())) << mine;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 108u);
}

// ---- reference datasets (../shared) ----

TEST(Dataset, WebmcuBReferenceSplit) {
  TV_REQUIRE_SHARED("datasets/webmcu-b");
  const std::string root = tvtest::shared_path("datasets/webmcu-b");
  const tvh::Dataset ds = load(root, 64, 64);
  ASSERT_EQ(ds.classes, (std::vector<std::string>{"0Blank", "1Cup", "2Pen"}));
  ASSERT_EQ(ds.size(), 90u);
  EXPECT_TRUE(ds.skipped.empty());
  const tvh::Split split = tvh::reference_split(ds);
  EXPECT_EQ(split.train.size(), 81u);
  ASSERT_EQ(split.val.size(), 9u);
  // The validation images are the last 3 sorted file names of each class, listed independently.
  std::vector<std::string> expected_val;
  for (const auto& cls : ds.classes) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(fs::path(root) / "images" / cls)) names.push_back(e.path().string());
    std::sort(names.begin(), names.end());
    expected_val.insert(expected_val.end(), names.end() - 3, names.end());
  }
  std::vector<std::string> val;
  for (int i : split.val) val.push_back(ds.paths[(size_t)i]);
  EXPECT_EQ(val, expected_val);
  // Train: class then path order, disjoint from val.
  EXPECT_TRUE(std::is_sorted(split.train.begin(), split.train.end()));
  for (int i : split.train) EXPECT_FALSE(std::count(split.val.begin(), split.val.end(), i));
  // The reference resize on a 240x240 capture: pixel (y, x) of the cache is source pixel (sy, sx).
  const tvh::Image src = tvh::decode_jpeg(tvh::read_file(ds.paths[0]), ds.paths[0], 3);
  for (int y = 0; y < 64; y += 9) {
    for (int x = 0; x < 64; x += 7) {
      const int sy = (int)((y + 0.5) * 240 / 64), sx = (int)((x + 0.5) * 240 / 64);
      EXPECT_EQ(ds.image(0)[(y * 64 + x) * 3 + 1], src.pixels[((size_t)sy * 240 + sx) * 3 + 1]);
    }
  }
}

// ---- splits on a synthetic label layout (no pixels needed) ----

namespace {
tvh::Dataset fake_dataset(const std::vector<int>& counts) {
  tvh::Dataset ds;
  ds.source = "fake";
  ds.height = ds.width = 1;
  ds.channels = 3;
  for (size_t c = 0; c < counts.size(); ++c) {
    ds.classes.push_back("c" + std::to_string(c));
    for (int k = 0; k < counts[c]; ++k) {
      ds.labels.push_back((int)c);
      ds.paths.push_back("c" + std::to_string(c) + "/" + std::to_string(1000 + k));
    }
  }
  ds.pixels.assign(ds.labels.size() * 3, 0);
  return ds;
}
}  // namespace

TEST(Splits, ReferenceSplitSmallClassesKeepATrainingImage) {
  const tvh::Dataset ds = fake_dataset({5, 3, 1});
  const tvh::Split s = tvh::reference_split(ds, 3);
  EXPECT_EQ(s.val, (std::vector<int>{2, 3, 4, 6, 7}));
  EXPECT_EQ(s.train, (std::vector<int>{0, 1, 5, 8}));
  EXPECT_THROW(tvh::reference_split(ds, -1), tvh::Error);
  EXPECT_TRUE(tvh::reference_split(ds, 0).val.empty());
}

TEST(Splits, ReferenceSplitTrainsOnEveryCorrectionFromTheBoard) {
  tvh::Dataset ds = fake_dataset({6, 3, 2});
  // the board's names: class 0 holds img_0..img_3 and two corrections sorting last; class 1 only corrections
  ds.paths = {"a/img_0.jpg",  "a/img_1.jpg",  "a/img_2.jpg",  "a/img_3.jpg", "a/img_4c.jpg", "a/img_5c.jpg",
              "b/img_0c.jpg", "b/img_1c.jpg", "b/img_2c.jpg", "c/img_0.jpg", "c/img_1c.jpg"};
  const tvh::Split s = tvh::reference_split(ds, 3);
  EXPECT_EQ(s.val, (std::vector<int>{1, 2, 3, 9}));
  EXPECT_EQ(s.train, (std::vector<int>{0, 4, 5, 6, 7, 8, 10}));
}

TEST(Splits, KFoldCoversEveryImageOnceStratified) {
  const tvh::Dataset ds = fake_dataset({30, 30, 31});
  const auto folds = tvh::kfold_splits(ds, 5, 42);
  ASSERT_EQ(folds.size(), 5u);
  std::vector<int> seen(ds.size(), 0);
  for (const auto& f : folds) {
    EXPECT_EQ(f.train.size() + f.val.size(), ds.size());
    EXPECT_TRUE(std::is_sorted(f.val.begin(), f.val.end()));
    EXPECT_TRUE(std::is_sorted(f.train.begin(), f.train.end()));
    EXPECT_GE(f.val.size(), 18u);
    EXPECT_LE(f.val.size(), 19u);
    for (int i : f.val) ++seen[(size_t)i];
    std::vector<int> per_class(3, 0);
    for (int i : f.val) ++per_class[(size_t)ds.labels[(size_t)i]];
    for (int n : per_class) EXPECT_TRUE(n == 6 || n == 7) << n;
  }
  for (int n : seen) EXPECT_EQ(n, 1);
  // Deterministic for a seed, different for another.
  const auto again = tvh::kfold_splits(ds, 5, 42);
  const auto other = tvh::kfold_splits(ds, 5, 43);
  for (size_t f = 0; f < 5; ++f) EXPECT_EQ(folds[f].val, again[f].val);
  EXPECT_NE(folds[0].val, other[0].val);
  EXPECT_THROW(tvh::kfold_splits(ds, 1, 0), tvh::Error);
  EXPECT_THROW(tvh::kfold_splits(ds, 92, 0), tvh::Error);
}

TEST(Splits, KFoldOnRealShapes) {
  const tvh::Dataset ds = load(tvtest::source_path("datasets/shapes"), 8, 8);
  const auto folds = tvh::kfold_splits(ds, 4, 7);
  std::vector<int> seen(ds.size(), 0);
  for (const auto& f : folds) {
    for (int i : f.val) ++seen[(size_t)i];
  }
  for (int n : seen) EXPECT_EQ(n, 1);
}

TEST(Splits, FractionSplitIsStratifiedAndSeeded) {
  const tvh::Dataset ds = fake_dataset({40, 20, 3, 1});
  const tvh::Split s = tvh::fraction_split(ds, 0.25, 9);
  std::vector<int> val_per_class(4, 0);
  for (int i : s.val) ++val_per_class[(size_t)ds.labels[(size_t)i]];
  EXPECT_EQ(val_per_class, (std::vector<int>{10, 5, 1, 0}));
  EXPECT_EQ(s.train.size() + s.val.size(), ds.size());
  EXPECT_TRUE(std::is_sorted(s.val.begin(), s.val.end()));
  std::set<int> all(s.train.begin(), s.train.end());
  all.insert(s.val.begin(), s.val.end());
  EXPECT_EQ(all.size(), ds.size());
  EXPECT_EQ(tvh::fraction_split(ds, 0.25, 9).val, s.val);
  EXPECT_NE(tvh::fraction_split(ds, 0.25, 10).val, s.val);
  // Fixed golden indices: the PRNG is our own, so this must hold on every platform.
  const tvh::Split small = tvh::fraction_split(fake_dataset({6}), 0.5, 1);
  EXPECT_EQ(small.val, (std::vector<int>{0, 3, 5}));
  EXPECT_EQ(small.train, (std::vector<int>{1, 2, 4}));
  const auto folds = tvh::kfold_splits(fake_dataset({6}), 3, 1);
  EXPECT_EQ(folds[0].val, (std::vector<int>{2, 3}));
  EXPECT_EQ(folds[1].val, (std::vector<int>{4, 5}));
  EXPECT_EQ(folds[2].val, (std::vector<int>{0, 1}));
  EXPECT_TRUE(tvh::fraction_split(ds, 0.0, 1).val.empty());
  EXPECT_THROW(tvh::fraction_split(ds, 1.0, 1), tvh::Error);
  EXPECT_THROW(tvh::fraction_split(ds, -0.1, 1), tvh::Error);
}
