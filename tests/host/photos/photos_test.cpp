// Photos as people keep them (issue 9): PNG variants, CMYK JPEGs, all 8 EXIF orientations, nested
// folders with spaces and non-ASCII names, OS junk, FIFOs, a 12-megapixel photo, and the same as a zip.
// Every file is real and made at test time (tests/photo_fixture.h).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <zip.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "firmware/app/app.h"
#include "host/base/error.h"
#include "host/base/files.h"
#include "host/photos/dataset.h"
#include "host/photos/image.h"
#include "host/photos/jpeg.h"
#include "photo_fixture.h"
#include "test_support.h"
#include "tv/image/image.h"

namespace fs = std::filesystem;
using tvtest::PngKind;

namespace {

std::vector<uint8_t> jpeg_of(const std::vector<uint8_t>& rgb, int w, int h, bool progressive = false) {
  return tvh::encode_jpeg(rgb.data(), w, h, 3, 95, progressive);
}

// A JPEG that shows quadrant_picture(w, h, top_left) once EXIF `o` is applied.
std::vector<uint8_t> oriented_jpeg(int w, int h, bool top_left, int o, bool big_endian = false) {
  const auto shown = tvtest::quadrant_picture(w, h, top_left);
  const auto stored = tvtest::stored_for_orientation(shown, w, h, 3, o);
  const int sw = o >= 5 ? h : w, sh = o >= 5 ? w : h;
  return tvtest::with_exif_orientation(jpeg_of(stored, sw, sh), o, big_endian);
}

std::vector<uint8_t> oriented_png(int w, int h, bool top_left, int o, PngKind kind = PngKind::Rgb, int depth = 8) {
  const auto shown = tvtest::quadrant_picture(w, h, top_left);
  const auto stored = tvtest::stored_for_orientation(shown, w, h, 3, o);
  const int sw = o >= 5 ? h : w, sh = o >= 5 ? w : h;
  return tvtest::encode_png(tvtest::to_rgba(stored, sw, sh), sw, sh, kind, depth, o);
}

void put(const std::string& root, const std::string& rel, const std::vector<uint8_t>& bytes) {
  const fs::path p = fs::path(root) / rel;
  fs::create_directories(p.parent_path());
  tvh::write_file_atomic(p.string(), bytes);
}

int quadrant_of(const tvh::Image& img) {
  std::vector<uint8_t> out(64 * 64 * 3);
  std::vector<uint16_t> lut(128);
  EXPECT_TRUE(tv::resize_nearest_crop(img.pixels.data(), img.width, img.height, img.channels, out.data(), 64, 64,
                                      tv::ChannelOrder::RGB, false, lut.data()));
  return tvtest::bright_quadrant(out.data(), 64, 64, 3);
}

}  // namespace

TEST(PhotoDecode, OrientationTransformsByHand) {
  // A 3x2 stored image with pixel values 1..6 (row-major); the expected displayed images follow the
  // EXIF definition of each orientation.
  tvh::Image in;
  in.width = 3;
  in.height = 2;
  in.channels = 1;
  in.pixels = {1, 2, 3, 4, 5, 6};
  const std::map<int, std::vector<uint8_t>> expected = {
      {1, {1, 2, 3, 4, 5, 6}}, {2, {3, 2, 1, 6, 5, 4}}, {3, {6, 5, 4, 3, 2, 1}}, {4, {4, 5, 6, 1, 2, 3}},
      {5, {1, 4, 2, 5, 3, 6}}, {6, {4, 1, 5, 2, 6, 3}}, {7, {6, 3, 5, 2, 4, 1}}, {8, {3, 6, 2, 5, 1, 4}}};
  for (const auto& [o, want] : expected) {
    const tvh::Image out = tvh::apply_orientation(in, o);
    EXPECT_EQ(out.pixels, want) << "orientation " << o;
    EXPECT_EQ(out.width, o >= 5 ? 2 : 3) << o;
  }
  EXPECT_EQ(tvh::apply_orientation(in, 9).pixels, in.pixels);
}

TEST(PhotoDecode, ExifOrientationAllEightJpegAndPng) {
  for (int o = 1; o <= 8; ++o) {
    for (bool be : {false, true}) {
      const auto jpeg = oriented_jpeg(80, 60, true, o, be);
      EXPECT_EQ(tvh::exif_orientation(jpeg.data(), jpeg.size()), o);
      const tvh::Image img = tvh::decode_image(jpeg, "o.jpg");
      EXPECT_EQ(img.width, 80) << o;
      EXPECT_EQ(quadrant_of(img), 0) << "JPEG orientation " << o << (be ? " MM" : " II");
    }
    const auto png = oriented_png(80, 60, false, o);
    EXPECT_EQ(tvh::exif_orientation(png.data(), png.size()), o);
    const tvh::Image img = tvh::decode_image(png, "o.png");
    EXPECT_EQ(img.height, 60) << o;
    EXPECT_EQ(quadrant_of(img), 3) << "PNG orientation " << o;
  }
  // A damaged EXIF block never makes a readable image unreadable: it reads as orientation 1.
  auto jpeg = oriented_jpeg(40, 30, true, 1);
  jpeg[2 + 4 + 6 + 4] = 0x7F;  // IFD offset now points far outside the block
  EXPECT_EQ(tvh::exif_orientation(jpeg.data(), jpeg.size()), 1);
  EXPECT_NO_THROW(tvh::decode_image(jpeg, "bad-exif.jpg"));
}

TEST(PhotoDecode, PngVariants) {
  // 2 colours and a half-transparent / transparent pair, exact after decoding.
  const int w = 6, h = 4;
  std::vector<uint8_t> rgba((size_t)w * h * 4);
  for (int i = 0; i < w * h; ++i) {
    uint8_t* p = &rgba[(size_t)i * 4];
    p[0] = (uint8_t)(i % 2 ? 200 : 10);
    p[1] = (uint8_t)(i % 2 ? 100 : 20);
    p[2] = (uint8_t)(i % 2 ? 50 : 30);
    p[3] = (uint8_t)(i % 3 == 0 ? 255 : i % 3 == 1 ? 128 : 0);
  }
  auto over_white = [](int v, int a) { return (v * a + 255 * (255 - a) + 127) / 255; };
  for (PngKind kind :
       {PngKind::Gray, PngKind::GrayAlpha, PngKind::Rgb, PngKind::Rgba, PngKind::Palette, PngKind::PaletteTrns}) {
    for (int depth : {8, 16}) {
      if (depth == 16 && (kind == PngKind::Palette || kind == PngKind::PaletteTrns)) continue;
      for (bool interlaced : {false, true}) {
        const auto png = tvtest::encode_png(rgba, w, h, kind, depth, 0, interlaced);
        const tvh::Image img = tvh::decode_png(png.data(), png.size(), "v.png", 0);
        const bool gray = kind == PngKind::Gray || kind == PngKind::GrayAlpha;
        const bool alpha = kind == PngKind::GrayAlpha || kind == PngKind::Rgba || kind == PngKind::PaletteTrns;
        ASSERT_EQ(img.channels, gray ? 1 : 3);
        ASSERT_EQ(img.width, w);
        for (int i = 0; i < w * h; ++i) {
          for (int c = 0; c < img.channels; ++c) {
            const int v = rgba[(size_t)i * 4 + (size_t)c], a = alpha ? rgba[(size_t)i * 4 + 3] : 255;
            EXPECT_EQ(img.pixels[(size_t)i * img.channels + c], over_white(v, a))
                << "kind " << (int)kind << " depth " << depth << " interlaced " << interlaced << " pixel " << i;
          }
        }
      }
    }
  }
}

TEST(PhotoDecode, CmykAndYcckJpegs) {
  const int w = 48, h = 32;
  std::vector<uint8_t> rgb((size_t)w * h * 3);
  for (size_t i = 0; i < rgb.size(); ++i) rgb[i] = (uint8_t)(40 + (i * 7) % 180);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c) rgb[((size_t)y * w + x) * 3 + c] = (uint8_t)(x < w / 2 ? 200 - 60 * c : 30 + 50 * c);
  const auto jpeg = tvtest::encode_cmyk_jpeg(rgb, w, h);
  const tvh::JpegHeader header = tvh::read_jpeg_header(jpeg.data(), jpeg.size(), "print.jpg");
  EXPECT_TRUE(header.cmyk);
  const tvh::Image img = tvh::decode_image(jpeg, "print.jpg", 3);
  ASSERT_EQ(img.channels, 3);
  double err = 0;
  for (size_t i = 0; i < rgb.size(); ++i) err += std::abs((int)img.pixels[i] - (int)rgb[i]);
  EXPECT_LT(err / rgb.size(), 6.0);
}

// The host's "the board decodes this" limit is the firmware's own.
static_assert(tvh::kBoardMaxDecodePixels == (long long)tvfw::kMaxDecodePixels,
              "host/photos/image.h kBoardMaxDecodePixels must equal firmware/app/app.h kMaxDecodePixels");

TEST(PhotoDecode, LargeJpegsTakeTheScaledPathSmallOnesTheBoardPath) {
  // At the board's limit (1024x1024 = kBoardMaxDecodePixels): full decode, bit-identical to the board's path.
  const auto at_limit = jpeg_of(tvtest::quadrant_picture(1024, 1024, true), 1024, 1024);
  const tvh::InputImage a = tvh::decode_for_input(at_limit.data(), at_limit.size(), "a.jpg", 64, 64);
  EXPECT_EQ(a.scale_denom, 1);
  EXPECT_EQ(a.image.pixels, tvh::decode_jpeg(at_limit, "a.jpg", 0).pixels);
  // 4000x3000: the centre square is 3000 pixels, so 1/8 (375) still covers 64 and 1/4 (750) covers 512.
  const auto big = jpeg_of(tvtest::quadrant_picture(4000, 3000, false), 4000, 3000);
  const tvh::InputImage b = tvh::decode_for_input(big.data(), big.size(), "b.jpg", 64, 64);
  EXPECT_EQ(b.scale_denom, 8);
  EXPECT_EQ(b.image.width, 500);
  EXPECT_EQ(b.image.height, 375);
  EXPECT_EQ(quadrant_of(b.image), 3);
  EXPECT_EQ(tvh::decode_for_input(big.data(), big.size(), "b.jpg", 512, 300).scale_denom, 4);
  EXPECT_EQ(tvh::decode_for_input(big.data(), big.size(), "b.jpg", 1600, 1600).scale_denom, 1);
  // The scaled picture matches the full decode resized the same way, up to the DCT's averaging.
  const tvh::Image full = tvh::decode_jpeg(big, "b.jpg", 0);
  std::vector<uint8_t> x(64 * 64 * 3), y(64 * 64 * 3);
  std::vector<uint16_t> lut(128);
  ASSERT_TRUE(tv::resize_nearest_crop(full.pixels.data(), full.width, full.height, 3, x.data(), 64, 64,
                                      tv::ChannelOrder::RGB, false, lut.data()));
  ASSERT_TRUE(tv::resize_nearest_crop(b.image.pixels.data(), b.image.width, b.image.height, 3, y.data(), 64, 64,
                                      tv::ChannelOrder::RGB, false, lut.data()));
  double diff = 0;
  for (size_t i = 0; i < x.size(); ++i) diff += std::abs((int)x[i] - (int)y[i]);
  EXPECT_LT(diff / x.size(), 12.0);
}

TEST(PhotoDecode, OtherFormatsAreNamedWithTheFix) {
  EXPECT_EQ(tvh::unsupported_image_format("IMG_0001.HEIC"), "HEIC");
  EXPECT_EQ(tvh::unsupported_image_format("a/b.webp"), "WebP");
  EXPECT_EQ(tvh::unsupported_image_format("x.gif"), "GIF");
  EXPECT_EQ(tvh::unsupported_image_format("x.txt"), "");
  EXPECT_TRUE(tvh::is_image_name("IMG 0001.JPG"));
  EXPECT_TRUE(tvh::is_image_name("été.Png"));
  EXPECT_FALSE(tvh::is_image_name("a.png/readme"));
  const std::vector<uint8_t> gif = {'G', 'I', 'F', '8', '9', 'a', 1, 0, 1, 0, 0, 0, 0};
  try {
    tvh::decode_image(gif, "really-a-gif.jpg");
    FAIL() << "GIF decoded";
  } catch (const tvh::Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'really-a-gif.jpg' is a GIF image"), std::string::npos) << msg;
    EXPECT_NE(msg.find("convert it to JPEG or PNG"), std::string::npos) << msg;
  }
  // Truncated and corrupt PNGs are refused with the file's name.
  const auto png =
      tvtest::encode_png(tvtest::to_rgba(tvtest::quadrant_picture(20, 20, true), 20, 20), 20, 20, PngKind::Rgb, 8);
  const std::vector<uint8_t> half(png.begin(), png.begin() + (long)png.size() / 2);
  try {
    tvh::decode_image(half, "half.png");
    FAIL() << "truncated PNG decoded";
  } catch (const tvh::Error& e) {
    EXPECT_NE(std::string(e.what()).find("'half.png' is truncated"), std::string::npos) << e.what();
  }
}

// ---- the messy photo folder of issue 9, as a folder and as a zip ----

namespace {

struct Fixture {
  std::map<std::string, std::vector<uint8_t>> files;  // rel -> bytes
  std::map<std::string, int> quadrant;                // rel of every picture -> expected bright quadrant
  std::map<std::string, int> skipped_by_reason;       // in the folder form
};

// Classes "tl" and "br": the bright block is top-left resp. bottom-right once displayed.
Fixture messy_fixture() {
  Fixture f;
  auto picture = [&](const std::string& rel, std::vector<uint8_t> bytes, bool top_left) {
    f.files[rel] = std::move(bytes);
    f.quadrant[rel] = top_left ? 0 : 3;
  };
  for (bool tl : {true, false}) {
    const std::string c = tl ? "tl" : "br";
    for (int o = 1; o <= 8; ++o) {
      picture(c + "/orientation " + std::to_string(o) + ".JPG", oriented_jpeg(80, 60, tl, o, o % 2 == 0), tl);
    }
    picture(c + "/sub folder/deeper/été à la plage.jpeg", oriented_jpeg(64, 64, tl, 6), tl);
    picture(c + "/2024/IMG 0001.jpg", oriented_jpeg(50, 70, tl, 1), tl);
    picture(c + "/pngs/rgb8.png", oriented_png(60, 40, tl, 1), tl);
    picture(c + "/pngs/rgb16 rotated.png", oriented_png(60, 40, tl, 8, PngKind::Rgb, 16), tl);
    picture(c + "/pngs/gray16.PNG", oriented_png(40, 40, tl, 1, PngKind::Gray, 16), tl);
    picture(c + "/pngs/palette.png", oriented_png(40, 60, tl, 3, PngKind::Palette), tl);
    picture(c + "/pngs/alpha.png", oriented_png(40, 40, tl, 1, PngKind::Rgba), tl);
    picture(c + "/progressive.jpg", jpeg_of(tvtest::quadrant_picture(90, 60, tl), 90, 60, true), tl);
    picture(c + "/print cmyk.jpg", tvtest::encode_cmyk_jpeg(tvtest::quadrant_picture(60, 60, tl), 60, 60), tl);
    // OS junk, ignored quietly.
    f.files[c + "/.DS_Store"] = {0, 0, 0, 1};
    f.files[c + "/._IMG 0001.jpg"] = {0, 5, 22, 7};
    f.files[c + "/Thumbs.db"] = {1, 2, 3};
    f.files[c + "/2024/desktop.ini"] = {'[', ']'};
    f.files[c + "/.hidden/copy.jpg"] = oriented_jpeg(40, 40, !tl, 1);
  }
  // Unused, counted by reason and named.
  f.files["tl/clip.HEIC"] = {0, 0, 0, 24, 'f', 't', 'y', 'p', 'h', 'e', 'i', 'c'};
  f.files["br/animation.gif"] = {'G', 'I', 'F', '8', '9', 'a'};
  f.files["tl/notes.txt"] = {'h', 'i'};
  f.files["br/broken.jpg"] = {0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3};
  f.files["README.md"] = {'#'};
  f.skipped_by_reason = {
      {"unsupported_format", 2}, {"not_an_image", 1}, {"unreadable", 1}, {"outside_class_folders", 1}};
  return f;
}

// The 12-megapixel photo is added separately (only once: it is the slow one to encode).
const std::vector<uint8_t>& big_photo() {
  static const std::vector<uint8_t> bytes = jpeg_of(tvtest::quadrant_picture(4000, 3000, true), 4000, 3000);
  return bytes;
}

tvh::Dataset load(const std::string& path, int threads = 2) {
  tvh::DatasetOptions o;
  o.path = path;
  o.height = o.width = 32;
  o.threads = threads;
  return tvh::load_dataset(o);
}

std::map<std::string, int> by_reason(const tvh::Dataset& ds) {
  std::map<std::string, int> n;
  for (const auto& s : ds.skipped) ++n[s.reason];
  return n;
}

void expect_every_picture_right(const tvh::Dataset& ds, const Fixture& f, const std::string& prefix) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < ds.size(); ++i) index[ds.paths[i]] = i;
  for (const auto& [rel, q] : f.quadrant) {
    auto it = index.find(prefix + rel);
    ASSERT_NE(it, index.end()) << rel << " was not used";
    EXPECT_EQ(ds.classes[(size_t)ds.labels[it->second]], rel.substr(0, 2)) << rel;
    EXPECT_EQ(tvtest::bright_quadrant(ds.image(it->second), ds.width, ds.height, ds.channels), q) << rel;
  }
}

}  // namespace

TEST(PhotoDataset, MessyFolderEveryPictureUsedAndEverySkipCounted) {
  const Fixture f = messy_fixture();
  const std::string root = tvtest::temp_dir("messy photos");
  for (const auto& [rel, bytes] : f.files) put(root, rel, bytes);
  put(root, "tl/big/DSC 4000x3000.jpg", big_photo());
  ASSERT_EQ(mkfifo((root + "/br/stuck.jpg").c_str(), 0644), 0);
  ASSERT_EQ(mkfifo((root + "/br/pipe").c_str(), 0644), 0);

  const tvh::Dataset ds = load(root);
  EXPECT_EQ(ds.classes, (std::vector<std::string>{"br", "tl"}));
  EXPECT_EQ(ds.size(), f.quadrant.size() + 1);
  expect_every_picture_right(ds, f, root + "/");
  auto reasons = f.skipped_by_reason;
  reasons["not_a_regular_file"] = 2;
  EXPECT_EQ(by_reason(ds), reasons);
  EXPECT_EQ(ds.ignored_junk, 10u);  // 5 per class (.hidden counts as one)
  EXPECT_EQ(ds.scaled_decodes, 1u);
  EXPECT_EQ(ds.exif_rotated, 2u * (7 + 1 + 2));  // orientations 2..8, été (6), rgb16 (8), palette (3)
  for (const auto& s : ds.skipped) {
    EXPECT_EQ(s.message.find("'" + s.path + "'"), 0u) << s.message;
    if (s.reason == "unsupported_format") {
      EXPECT_NE(s.message.find("convert it to JPEG or PNG"), std::string::npos) << s.message;
    }
  }
  // The result does not depend on the thread count.
  EXPECT_EQ(load(root, 1).pixels, ds.pixels);
}

TEST(PhotoDataset, MessyZipEveryPictureUsedUnsafeEntriesAndBombsRefused) {
  const Fixture f = messy_fixture();
  const std::string dir = tvtest::temp_dir("messy-zip");
  const std::string zip_path = dir + "/my photos.zip";
  std::vector<std::vector<uint8_t>> keep;  // zip_source_buffer does not copy
  int err = 0;
  zip_t* z = zip_open(zip_path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  ASSERT_NE(z, nullptr);
  auto add = [&](const std::string& name, const std::vector<uint8_t>& bytes) {
    keep.push_back(bytes);
    zip_source_t* src = zip_source_buffer(z, keep.back().data(), keep.back().size(), 0);
    ASSERT_GE(zip_file_add(z, name.c_str(), src, ZIP_FL_ENC_UTF_8), 0) << name;
  };
  keep.reserve(f.files.size() + 64);
  for (const auto& [rel, bytes] : f.files) add("My Photos/" + rel, bytes);
  add("My Photos/tl/big/DSC 4000x3000.jpg", big_photo());
  add("__MACOSX/My Photos/tl/._x.jpg", {0, 5, 22, 7});
  // Unsafe names: absolute, "..", and ".." inside the path.
  add("/etc/tl/x.jpg", f.files.at("tl/orientation 1.JPG"));
  add("../../escape.jpg", f.files.at("tl/orientation 1.JPG"));
  add("My Photos/tl/../br/sneaky.jpg", f.files.at("tl/orientation 1.JPG"));
  // Bombs: 8 MB of zeros each, named like photos, refused from their declared size and ratio.
  for (int i = 0; i < 4; ++i)
    add("My Photos/br/zeros " + std::to_string(i) + ".jpg", std::vector<uint8_t>(8u << 20, 0));
  ASSERT_EQ(zip_close(z), 0);

  const tvh::Dataset ds = load(zip_path);
  EXPECT_EQ(ds.classes, (std::vector<std::string>{"br", "tl"}));
  EXPECT_EQ(ds.size(), f.quadrant.size() + 1);
  expect_every_picture_right(ds, f, zip_path + ":My Photos/");
  auto reasons = f.skipped_by_reason;
  reasons["unsafe_zip_entry"] = 3;
  reasons["too_large"] = 4;
  EXPECT_EQ(by_reason(ds), reasons);
  for (const auto& s : ds.skipped) {
    if (s.reason == "too_large") {
      EXPECT_NE(s.message.find("it was not inflated"), std::string::npos) << s.message;
    }
    if (s.reason == "unsafe_zip_entry") {
      EXPECT_NE(s.message.find("outside"), std::string::npos) << s.message;
    }
  }
  EXPECT_EQ(ds.scaled_decodes, 1u);
}

TEST(PhotoDataset, FolderOfOnlyPngsAndAFileWhereAFolderIsExpected) {
  const std::string root = tvtest::temp_dir("pngs");
  for (int i = 0; i < 3; ++i) {
    put(root, "up/" + std::to_string(i) + ".png", oriented_png(30, 30, true, 1 + i));
    put(root, "down/" + std::to_string(i) + ".png", oriented_png(30, 30, false, 6 + i));
  }
  const tvh::Dataset ds = load(root);
  EXPECT_EQ(ds.size(), 6u);
  EXPECT_TRUE(ds.skipped.empty());
  for (size_t i = 0; i < ds.size(); ++i) {
    EXPECT_EQ(tvtest::bright_quadrant(ds.image(i), 32, 32, 3), ds.classes[(size_t)ds.labels[i]] == "up" ? 0 : 3);
  }
  // A text file given as the dataset: said to be neither a folder nor a zip.
  put(root, "list.txt", {'a'});
  try {
    load(root + "/list.txt");
    FAIL() << "a text file loaded as a dataset";
  } catch (const tvh::Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("is a file but not a zip archive"), std::string::npos) << msg;
    EXPECT_NE(msg.find("give a folder"), std::string::npos) << msg;
  }
  // Images directly in the dataset folder: told to make class folders.
  const std::string flat = tvtest::temp_dir("flat");
  put(flat, "a.png", oriented_png(30, 30, true, 1));
  try {
    load(flat);
    FAIL() << "a folder without class folders loaded";
  } catch (const tvh::Error& e) {
    EXPECT_NE(std::string(e.what()).find("sub-folder named after the class"), std::string::npos) << e.what();
  }
}
