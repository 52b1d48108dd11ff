// Memory estimates before decoding (issue 20): per format, from the header, so a 40-megapixel RGBA PNG
// (about 390 MB at its peak) is not taken for 48 MB; an image that needs more than a decoding thread may
// have is refused unread with the figures and what to do, never called corrupt.
#include <gtest/gtest.h>
#include <png.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "host/base/error.h"
#include "host/photos/dataset.h"
#include "host/photos/image.h"
#include "host/photos/jpeg.h"
#include "test_support.h"
#include "tv/crc32.h"

namespace fs = std::filesystem;

namespace {

// A width x height PNG of `color_type` (libpng's PNG_COLOR_TYPE_*) at bit_depth whose rows are all zero:
// large dimensions, a few kilobytes, made in a moment.
std::vector<uint8_t> blank_png(int width, int height, int color_type, int bit_depth) {
  std::vector<uint8_t> out;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    return {};
  }
  png_set_write_fn(
      png, &out,
      [](png_structp p, png_bytep d, size_t n) {
        auto* v = (std::vector<uint8_t>*)png_get_io_ptr(p);
        v->insert(v->end(), d, d + n);
      },
      nullptr);
  png_set_IHDR(png, info, (png_uint_32)width, (png_uint_32)height, bit_depth, color_type, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  const int channels = color_type == PNG_COLOR_TYPE_RGBA ? 4 : color_type == PNG_COLOR_TYPE_RGB ? 3 : 1;
  std::vector<uint8_t> row((size_t)width * (size_t)channels * (size_t)bit_depth / 8 + 1, 0);
  for (int y = 0; y < height; ++y) png_write_row(png, row.data());
  png_write_end(png, info);
  png_destroy_write_struct(&png, &info);
  return out;
}

// `png` with its IHDR saying width x height (CRC recomputed): what a header of that size reads as, at once.
std::vector<uint8_t> with_size(std::vector<uint8_t> png, uint32_t width, uint32_t height) {
  for (int i = 0; i < 4; ++i) {
    png[16 + i] = (uint8_t)(width >> (24 - 8 * i));
    png[20 + i] = (uint8_t)(height >> (24 - 8 * i));
  }
  const uint32_t crc = tv::crc32(0, png.data() + 12, 17);
  for (int i = 0; i < 4; ++i) png[29 + i] = (uint8_t)(crc >> (24 - 8 * i));
  return png;
}

}  // namespace

TEST(DecodeMemory, EstimatesFollowTheFormatFromTheHeader) {
  // 40 megapixels of RGBA: libpng's rows (4 bytes a pixel), the composited and the upright picture (3 each).
  const std::vector<uint8_t> rgba = with_size(blank_png(8, 8, PNG_COLOR_TYPE_RGBA, 8), 8000, 5000);
  ASSERT_FALSE(rgba.empty());
  const uint64_t px = 8000ull * 5000ull;
  const uint64_t est = tvh::decode_memory_estimate(rgba.data(), rgba.size(), 64, 64);
  EXPECT_GE(est, px * 10) << "a 40-megapixel RGBA PNG takes about 390 MB at its peak";
  EXPECT_LT(est, px * 11);
  // A gray PNG needs less, a 1-bit one is expanded to 8 bits all the same.
  const std::vector<uint8_t> bits = with_size(blank_png(8, 8, PNG_COLOR_TYPE_GRAY, 1), 8000, 5000);
  EXPECT_GE(tvh::decode_memory_estimate(bits.data(), bits.size(), 64, 64), px * 4);
  // A progressive JPEG holds its coefficients: more than the same baseline JPEG.
  std::vector<uint8_t> pixels(640 * 480 * 3, 90);
  const std::vector<uint8_t> base = tvh::encode_jpeg(pixels.data(), 640, 480, 3, 90, false);
  const std::vector<uint8_t> prog = tvh::encode_jpeg(pixels.data(), 640, 480, 3, 90, true);
  const uint64_t eb = tvh::decode_memory_estimate(base.data(), base.size(), 64, 64);
  const uint64_t ep = tvh::decode_memory_estimate(prog.data(), prog.size(), 64, 64);
  EXPECT_GE(eb, 640ull * 480 * 6);
  EXPECT_GE(ep, eb + 640ull * 480 * 3 * 2);
  // Not an image: 0 (the decoder says why).
  const uint8_t junk[] = {1, 2, 3, 4};
  EXPECT_EQ(tvh::decode_memory_estimate(junk, sizeof junk, 64, 64), 0u);
}

TEST(DecodeMemory, AnImageOverTheThreadsShareIsSkippedWithTheFiguresNotCalledCorrupt) {
  const std::string dir = tvtest::temp_dir("decode-mem");
  for (const char* c : {"a", "b"}) {
    fs::create_directories(dir + "/" + c);
    std::vector<uint8_t> pixels(32 * 32 * 3, c[0] == 'a' ? 40 : 200);
    for (int i = 0; i < 3; ++i) {
      const std::vector<uint8_t> j = tvh::encode_jpeg(pixels.data(), 32, 32, 3, 90);
      std::ofstream(dir + "/" + c + "/img" + std::to_string(i) + ".jpg", std::ios::binary)
          .write((const char*)j.data(), (std::streamsize)j.size());
    }
  }
  const std::vector<uint8_t> big = blank_png(8000, 5000, PNG_COLOR_TYPE_GRAY, 1);  // 40 megapixels, 5 MB of rows
  std::ofstream(dir + "/a/huge.png", std::ios::binary).write((const char*)big.data(), (std::streamsize)big.size());
  tvh::DatasetOptions o;
  o.path = dir;
  o.height = o.width = 16;
  o.threads = 1;
  o.decode_budget_bytes = 64ull << 20;
  const tvh::Dataset ds = tvh::load_dataset(o);
  EXPECT_EQ(ds.size(), 6u);
  ASSERT_EQ(ds.skipped.size(), 1u);
  const tvh::SkippedFile& s = ds.skipped[0];
  EXPECT_EQ(s.reason, "too_large");
  EXPECT_NE(s.message.find("huge.png' needs about 152.6 MB"), std::string::npos) << s.message;
  EXPECT_NE(s.message.find("more than the 64.0 MB each decoding thread can have"), std::string::npos) << s.message;
  EXPECT_NE(s.message.find("save it as JPEG"), std::string::npos) << s.message;
  EXPECT_EQ(s.message.find("corrupt"), std::string::npos) << s.message;
  // Above the accepted size: the size, the limit and what to do, not "corrupt".
  const std::vector<uint8_t> wide = blank_png(9000, 10, PNG_COLOR_TYPE_GRAY, 1);
  try {
    tvh::decode_image(wide, "wide.png");
    ADD_FAILURE() << "a 9000-pixel-wide PNG was decoded";
  } catch (const tvh::Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("9000x10"), std::string::npos) << m;
    EXPECT_NE(m.find("scale it down"), std::string::npos) << m;
    EXPECT_EQ(m.find("corrupt"), std::string::npos) << m;
  }
}
