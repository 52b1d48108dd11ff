// tvh::decode_jpeg / encode_jpeg / read_jpeg_header on real JPEGs encoded at test time.
#include "host/photos/jpeg.h"

#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "host/base/error.h"
#include "tv/image/image.h"
#include "tv/image/jpeg_markers.h"

namespace {

// A photo-ish test pattern: gradients plus a little deterministic noise.
std::vector<uint8_t> pattern(int w, int h, int c, uint32_t seed = 1) {
  std::vector<uint8_t> img((size_t)w * h * c);
  uint32_t s = seed * 2654435761u + 1;
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      for (int ch = 0; ch < c; ++ch) {
        s = s * 1664525u + 1013904223u;
        const int v = (x * 255) / (w > 1 ? w - 1 : 1) / (ch + 1) + (y * 200) / (h > 1 ? h - 1 : 1) / 2 + (int)(s >> 29);
        img[((size_t)y * w + x) * c + ch] = (uint8_t)(v > 255 ? 255 : v);
      }
    }
  }
  return img;
}

// Offset of the SOFn segment's marker (0xFF 0xC0..0xC2) by walking the JPEG segments; -1 if absent.
long find_sof(const std::vector<uint8_t>& jpeg) {
  size_t pos = 2;
  while (pos + 4 <= jpeg.size()) {
    if (jpeg[pos] != 0xFF) return -1;
    const uint8_t marker = jpeg[pos + 1];
    if (marker >= 0xC0 && marker <= 0xC2) return (long)pos;
    const size_t len = ((size_t)jpeg[pos + 2] << 8) | jpeg[pos + 3];
    pos += 2 + len;
  }
  return -1;
}

// Rewrites the size a JPEG's SOF header claims.
std::vector<uint8_t> patch_size(std::vector<uint8_t> jpeg, int width, int height) {
  const long sof = find_sof(jpeg);
  EXPECT_GT(sof, 0);
  jpeg[(size_t)sof + 5] = (uint8_t)(height >> 8);
  jpeg[(size_t)sof + 6] = (uint8_t)height;
  jpeg[(size_t)sof + 7] = (uint8_t)(width >> 8);
  jpeg[(size_t)sof + 8] = (uint8_t)width;
  return jpeg;
}

int max_abs_diff(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  int m = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) m = std::max(m, std::abs((int)a[i] - (int)b[i]));
  return m;
}

double mean_abs_diff(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += std::abs((int)a[i] - (int)b[i]);
  return s / (double)a.size();
}

}  // namespace

TEST(Jpeg, BaselineRoundTripRgb) {
  const auto px = pattern(64, 48, 3);
  const auto jpeg = tvh::encode_jpeg(px.data(), 64, 48, 3, 95);
  ASSERT_GT(jpeg.size(), 100u);
  EXPECT_EQ(jpeg[0], 0xFF);
  EXPECT_EQ(jpeg[1], 0xD8);
  const tvh::JpegHeader header = tvh::read_jpeg_header(jpeg.data(), jpeg.size(), "a.jpg");
  EXPECT_EQ(header.width, 64);
  EXPECT_EQ(header.height, 48);
  EXPECT_EQ(header.channels, 3);
  const tvh::Image img = tvh::decode_jpeg(jpeg, "a.jpg", 3);
  EXPECT_EQ(img.width, 64);
  EXPECT_EQ(img.height, 48);
  EXPECT_EQ(img.channels, 3);
  ASSERT_EQ(img.pixels.size(), px.size());
  EXPECT_LT(mean_abs_diff(img.pixels, px), 4.0);
}

TEST(Jpeg, ProgressiveDecodesLikeBaseline) {
  const auto px = pattern(50, 70, 3, 7);
  const auto base = tvh::encode_jpeg(px.data(), 50, 70, 3, 90, false);
  const auto prog = tvh::encode_jpeg(px.data(), 50, 70, 3, 90, true);
  ASSERT_NE(base, prog);
  const long sof = find_sof(prog);
  ASSERT_GT(sof, 0);
  EXPECT_EQ(prog[(size_t)sof + 1], 0xC2);  // SOF2: progressive
  const tvh::Image a = tvh::decode_jpeg(base, "base.jpg", 3);
  const tvh::Image b = tvh::decode_jpeg(prog, "prog.jpg", 3);
  EXPECT_EQ(a.width, b.width);
  EXPECT_EQ(a.height, b.height);
  EXPECT_LE(max_abs_diff(a.pixels, b.pixels), 2);  // same coefficients, different scan order
}

TEST(Jpeg, GrayscaleNativeAndConversions) {
  const auto px = pattern(33, 21, 1, 3);
  const auto jpeg = tvh::encode_jpeg(px.data(), 33, 21, 1, 95);
  EXPECT_EQ(tvh::read_jpeg_header(jpeg.data(), jpeg.size(), "g.jpg").channels, 1);
  const tvh::Image native = tvh::decode_jpeg(jpeg, "g.jpg", 0);
  EXPECT_EQ(native.channels, 1);
  const tvh::Image rgb = tvh::decode_jpeg(jpeg, "g.jpg", 3);
  ASSERT_EQ(rgb.channels, 3);
  for (size_t i = 0; i < native.pixels.size(); ++i) {
    ASSERT_EQ(rgb.pixels[3 * i], native.pixels[i]);
    ASSERT_EQ(rgb.pixels[3 * i + 1], native.pixels[i]);
    ASSERT_EQ(rgb.pixels[3 * i + 2], native.pixels[i]);
  }
}

TEST(Jpeg, RgbToGrayUsesIntegerLuma) {
  const auto px = pattern(40, 40, 3, 5);
  const auto jpeg = tvh::encode_jpeg(px.data(), 40, 40, 3, 90);
  const tvh::Image rgb = tvh::decode_jpeg(jpeg, "c.jpg", 0);
  ASSERT_EQ(rgb.channels, 3);
  const tvh::Image gray = tvh::decode_jpeg(jpeg, "c.jpg", 1);
  ASSERT_EQ(gray.channels, 1);
  for (size_t i = 0; i < gray.pixels.size(); ++i) {
    ASSERT_EQ(gray.pixels[i], tv::luma_u8(rgb.pixels[3 * i], rgb.pixels[3 * i + 1], rgb.pixels[3 * i + 2]));
  }
}

TEST(Jpeg, OddSizesDecode) {
  for (int w : {1, 7, 97, 241}) {
    for (int h : {1, 5, 53}) {
      const auto px = pattern(w, h, 3, (uint32_t)(w * h));
      const auto jpeg = tvh::encode_jpeg(px.data(), w, h, 3, 85);
      const tvh::Image img = tvh::decode_jpeg(jpeg, "odd.jpg", 3);
      EXPECT_EQ(img.width, w);
      EXPECT_EQ(img.height, h);
      EXPECT_EQ(img.pixels.size(), (size_t)w * h * 3);
    }
  }
}

TEST(Jpeg, RandomBytesAreRefusedByName) {
  std::vector<uint8_t> junk(2000);
  uint32_t s = 99;
  for (auto& b : junk) b = (uint8_t)((s = s * 1103515245u + 12345u) >> 24);
  try {
    tvh::decode_jpeg(junk, "junk.jpg", 3);
    FAIL() << "random bytes decoded";
  } catch (const tvh::Error& e) {
    EXPECT_NE(std::string(e.what()).find("'junk.jpg'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(tvh::decode_jpeg(nullptr, 0, "empty.jpg", 3), tvh::Error);
}

TEST(Jpeg, TruncatedFileIsAnError) {
  const auto px = pattern(240, 240, 3, 11);
  const auto jpeg = tvh::encode_jpeg(px.data(), 240, 240, 3, 85);
  for (bool progressive : {false, true}) {
    const auto full = progressive ? tvh::encode_jpeg(px.data(), 240, 240, 3, 85, true) : jpeg;
    const std::vector<uint8_t> half(full.begin(), full.begin() + (long)full.size() / 2);
    // The header survives, so this is caught by the decoder, not by read_jpeg_header.
    EXPECT_NO_THROW(tvh::read_jpeg_header(half.data(), half.size(), "half.jpg"));
    try {
      tvh::decode_jpeg(half, "half.jpg", 3);
      FAIL() << "truncated JPEG decoded (progressive=" << progressive << ")";
    } catch (const tvh::Error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("'half.jpg'"), std::string::npos) << msg;
      EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
    }
  }
}

TEST(Jpeg, AbsurdDimensionsRefusedBeforeDecoding) {
  const auto px = pattern(16, 16, 3);
  const auto jpeg = tvh::encode_jpeg(px.data(), 16, 16, 3, 85);
  const auto huge = patch_size(jpeg, 60000, 60000);
  try {
    tvh::read_jpeg_header(huge.data(), huge.size(), "huge.jpg");
    FAIL() << "60000x60000 header accepted";
  } catch (const tvh::Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'huge.jpg'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("60000x60000"), std::string::npos) << msg;
  }
  EXPECT_THROW(tvh::decode_jpeg(huge, "huge.jpg", 3), tvh::Error);
  // One side too long, and a pixel count over the limit with both sides allowed.
  EXPECT_THROW(tvh::decode_jpeg(patch_size(jpeg, 8193, 16), "wide.jpg", 3), tvh::Error);
  EXPECT_THROW(tvh::decode_jpeg(patch_size(jpeg, 8000, 8000), "big.jpg", 3), tvh::Error);
  EXPECT_THROW(tvh::decode_jpeg(patch_size(jpeg, 0, 16), "zero.jpg", 3), tvh::Error);
}

// CMYK/YCCK JPEGs are decoded: see photos_test.cpp (PhotoDecode.CmykAndYcckJpegs).

TEST(Jpeg, EncodeRejectsBadArguments) {
  const auto px = pattern(4, 4, 3);
  EXPECT_THROW(tvh::encode_jpeg(px.data(), 0, 4, 3, 85), tvh::Error);
  EXPECT_THROW(tvh::encode_jpeg(px.data(), 4, 4, 2, 85), tvh::Error);
  EXPECT_THROW(tvh::encode_jpeg(px.data(), 4, 4, 3, 0), tvh::Error);
  EXPECT_THROW(tvh::encode_jpeg(px.data(), 4, 4, 3, 101), tvh::Error);
  EXPECT_THROW(tvh::decode_jpeg(tvh::encode_jpeg(px.data(), 4, 4, 3, 85), "x.jpg", 2), tvh::Error);
}

// The core's marker walk (what the board reads a card photo's size with, and the host finds EXIF
// with) on a real JPEG: every segment up to the scan, the frame header's size; truncation and
// garbage end the walk instead of reading past the data.
TEST(JpegSegments, WalksARealJpegAndStopsAtBadBytes) {
  const std::vector<uint8_t> px = pattern(37, 21, 3);
  const std::vector<uint8_t> jpg = tvh::encode_jpeg(px.data(), 37, 21, 3, 90);
  std::vector<uint8_t> markers;
  int w = 0, h = 0;
  {
    tv::JpegSegments segments(jpg.data(), jpg.size());
    tv::JpegSegment s;
    while (segments.next(&s)) {
      markers.push_back(s.marker);
      ASSERT_LE(s.payload + s.size, jpg.data() + jpg.size());
      if (tv::jpeg_is_frame_header(s.marker)) {
        ASSERT_GE(s.size, 5u);
        h = (s.payload[1] << 8) | s.payload[2];
        w = (s.payload[3] << 8) | s.payload[4];
      }
    }
  }
  EXPECT_EQ(w, 37);
  EXPECT_EQ(h, 21);
  EXPECT_NE(std::find(markers.begin(), markers.end(), 0xDB), markers.end());  // quantization tables
  EXPECT_NE(std::find(markers.begin(), markers.end(), 0xC4), markers.end());  // Huffman tables
  EXPECT_FALSE(tv::jpeg_is_frame_header(0xC4));
  EXPECT_TRUE(tv::jpeg_is_frame_header(0xC2));
  // Cut inside the frame header: the walk ends before it, never past the data.
  size_t sof = 2;
  while (!(jpg[sof] == 0xFF && jpg[sof + 1] == 0xC0)) ++sof;
  tv::JpegSegments cut(jpg.data(), sof + 6);
  tv::JpegSegment s;
  size_t seen = 0;
  while (cut.next(&s)) {
    EXPECT_NE(s.marker, 0xC0);
    ++seen;
  }
  EXPECT_GT(seen, 0u);
  EXPECT_FALSE(cut.next(&s));
  // Not a JPEG, empty, or a stray byte where a marker belongs.
  const uint8_t png_sig[8] = {0x89, 'P', 'N', 'G', 13, 10, 26, 10};
  EXPECT_FALSE(tv::JpegSegments(png_sig, 8).next(&s));
  EXPECT_FALSE(tv::JpegSegments(nullptr, 0).next(&s));
  std::vector<uint8_t> stray(jpg.begin(), jpg.begin() + 2);
  stray.insert(stray.end(), {0x12, 0x34, 0x00, 0x10});
  EXPECT_FALSE(tv::JpegSegments(stray.data(), stray.size()).next(&s));
}
