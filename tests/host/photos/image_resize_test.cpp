// tv::resize_nearest_crop and friends: the one resize the tools and the firmware share.
#include <gtest/gtest.h>

#include <vector>

#include "tv/image/image.h"

namespace {

// A src_w x src_h x c image whose pixel (x, y) encodes its own coordinates.
std::vector<uint8_t> coordinate_image(int w, int h, int c) {
  std::vector<uint8_t> img((size_t)w * h * c);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      for (int ch = 0; ch < c; ++ch) img[((size_t)y * w + x) * c + ch] = (uint8_t)(x + 3 * y + 50 * ch);
    }
  }
  return img;
}

}  // namespace

TEST(ImageResize, LutMatchesReferenceFormula240To64) {
  std::vector<uint16_t> lut(64);
  ASSERT_TRUE(tv::make_resize_lut(240, 64, 0, lut.data()));
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(lut[i], (int)((i + 0.5) * 240 / 64)) << "i=" << i;
    EXPECT_EQ(tv::nearest_source_index(i, 240, 64), (int)((i + 0.5) * 240 / 64));
  }
  EXPECT_EQ(lut[0], 1);
  EXPECT_EQ(lut[63], 238);
}

TEST(ImageResize, LutMatchesDoubleFormulaForManySizes) {
  for (int src = 1; src <= 300; src += 7) {
    for (int dst = 1; dst <= 130; dst += 3) {
      for (int i = 0; i < dst; ++i) {
        ASSERT_EQ(tv::nearest_source_index(i, src, dst), (int)((i + 0.5) * src / dst)) << src << "->" << dst;
      }
    }
  }
}

TEST(ImageResize, LutRejectsBadSizes) {
  uint16_t lut[4];
  EXPECT_FALSE(tv::make_resize_lut(0, 4, 0, lut));
  EXPECT_FALSE(tv::make_resize_lut(4, 0, 0, lut));
  EXPECT_FALSE(tv::make_resize_lut(65535, 4, 1, lut));
  EXPECT_FALSE(tv::make_resize_lut(4, 4, -1, lut));
  EXPECT_FALSE(tv::make_resize_lut(4, 4, 0, nullptr));
}

// 97x53 -> 8x8: crop side 53 at x offset (97-53)/2 = 22, y offset 0; the LUT by hand is
// floor((2i+1)*53/16) = 3, 9, 16, 23, 29, 36, 43, 49.
TEST(ImageResize, NonSquareCentreCropByHand) {
  const int w = 97, h = 53;
  const std::vector<uint8_t> src = coordinate_image(w, h, 3);
  const int lut_y[8] = {3, 9, 16, 23, 29, 36, 43, 49};
  const int lut_x[8] = {25, 31, 38, 45, 51, 58, 65, 71};
  std::vector<uint8_t> dst(8 * 8 * 3);
  std::vector<uint16_t> scratch(16);
  ASSERT_TRUE(
      tv::resize_nearest_crop(src.data(), w, h, 3, dst.data(), 8, 8, tv::ChannelOrder::RGB, false, scratch.data()));
  for (int y = 0; y < 8; ++y) {
    for (int x = 0; x < 8; ++x) {
      for (int c = 0; c < 3; ++c) {
        EXPECT_EQ(dst[(y * 8 + x) * 3 + c], src[((size_t)lut_y[y] * w + lut_x[x]) * 3 + c]) << y << "," << x;
      }
    }
  }
}

TEST(ImageResize, TallImageCropsVertically) {
  const int w = 10, h = 30;  // side 10, y offset 10
  const std::vector<uint8_t> src = coordinate_image(w, h, 1);
  std::vector<uint8_t> dst(10 * 10);
  std::vector<uint16_t> scratch(20);
  ASSERT_TRUE(
      tv::resize_nearest_crop(src.data(), w, h, 1, dst.data(), 10, 10, tv::ChannelOrder::GRAY, false, scratch.data()));
  for (int y = 0; y < 10; ++y) {
    for (int x = 0; x < 10; ++x) EXPECT_EQ(dst[y * 10 + x], src[(size_t)(y + 10) * w + x]);
  }
}

TEST(ImageResize, NonSquareDestination) {
  const std::vector<uint8_t> src = coordinate_image(40, 40, 3);
  std::vector<uint8_t> dst(5 * 3 * 3);
  std::vector<uint16_t> scratch(8);
  ASSERT_TRUE(
      tv::resize_nearest_crop(src.data(), 40, 40, 3, dst.data(), 5, 3, tv::ChannelOrder::RGB, false, scratch.data()));
  for (int y = 0; y < 3; ++y) {
    for (int x = 0; x < 5; ++x) {
      const int sy = (int)((y + 0.5) * 40 / 3), sx = (int)((x + 0.5) * 40 / 5);
      EXPECT_EQ(dst[(y * 5 + x) * 3], src[((size_t)sy * 40 + sx) * 3]);
    }
  }
}

TEST(ImageResize, ChannelOrdersAndMirror) {
  // A 2x2 RGB image resized 1:1.
  uint16_t scratch[4];
  const uint8_t src2[12] = {10, 20, 30, 200, 100, 50, 1, 2, 3, 4, 5, 6};
  uint8_t out[12];
  ASSERT_TRUE(tv::resize_nearest_crop(src2, 2, 2, 3, out, 2, 2, tv::ChannelOrder::RGB, false, scratch));
  EXPECT_EQ(std::vector<uint8_t>(out, out + 12), std::vector<uint8_t>(src2, src2 + 12));
  ASSERT_TRUE(tv::resize_nearest_crop(src2, 2, 2, 3, out, 2, 2, tv::ChannelOrder::BGR, false, scratch));
  EXPECT_EQ(out[0], 30);
  EXPECT_EQ(out[1], 20);
  EXPECT_EQ(out[2], 10);
  EXPECT_EQ(out[3], 50);
  ASSERT_TRUE(tv::resize_nearest_crop(src2, 2, 2, 3, out, 2, 2, tv::ChannelOrder::RGB, true, scratch));
  EXPECT_EQ(out[0], 200);  // mirrored: first output pixel is the row's last
  EXPECT_EQ(out[3], 10);
  EXPECT_EQ(out[6], 4);
  ASSERT_TRUE(tv::resize_nearest_crop(src2, 2, 2, 3, out, 2, 2, tv::ChannelOrder::GRAY, false, scratch));
  EXPECT_EQ(out[0], (77 * 10 + 150 * 20 + 29 * 30 + 128) >> 8);
  EXPECT_EQ(out[1], (77 * 200 + 150 * 100 + 29 * 50 + 128) >> 8);

  const uint8_t gray[4] = {7, 9, 11, 13};
  ASSERT_TRUE(tv::resize_nearest_crop(gray, 2, 2, 1, out, 2, 2, tv::ChannelOrder::BGR, false, scratch));
  EXPECT_EQ(out[0], 7);
  EXPECT_EQ(out[1], 7);
  EXPECT_EQ(out[2], 7);
  EXPECT_EQ(out[3], 9);
  EXPECT_EQ(tv::luma_u8(255, 255, 255), 255);
  EXPECT_EQ(tv::luma_u8(0, 0, 0), 0);
}

TEST(ImageResize, RejectsBadArguments) {
  const uint8_t src[12] = {};
  uint8_t dst[12];
  uint16_t scratch[8];
  EXPECT_FALSE(tv::resize_nearest_crop(nullptr, 2, 2, 3, dst, 2, 2, tv::ChannelOrder::RGB, false, scratch));
  EXPECT_FALSE(tv::resize_nearest_crop(src, 2, 2, 2, dst, 2, 2, tv::ChannelOrder::RGB, false, scratch));
  EXPECT_FALSE(tv::resize_nearest_crop(src, 0, 2, 3, dst, 2, 2, tv::ChannelOrder::RGB, false, scratch));
  EXPECT_FALSE(tv::resize_nearest_crop(src, 2, 2, 3, dst, 0, 2, tv::ChannelOrder::RGB, false, scratch));
  EXPECT_FALSE(tv::resize_nearest_crop(src, 2, 2, 3, dst, 2, 2, (tv::ChannelOrder)7, false, scratch));
  EXPECT_FALSE(tv::resize_nearest_crop(src, 2, 2, 3, dst, 2, 2, tv::ChannelOrder::RGB, false, nullptr));
}

TEST(ImageResize, NormalizeMultipliesByScale) {
  const uint8_t src[4] = {0, 1, 128, 255};
  float dst[4];
  tv::normalize_u8(src, 4, 1.0f / 255.f, dst);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(dst[i], (float)src[i] * (1.0f / 255.f));
  EXPECT_EQ(dst[3], 255.0f * (1.0f / 255.f));
}

TEST(ImageResize, WholeImageStretchedByHandWithoutCrop) {
  const int w = 97, h = 53;
  const std::vector<uint8_t> src = coordinate_image(w, h, 3);
  // floor((2i + 1) * 97 / 16) and floor((2j + 1) * 53 / 8): the whole width and height, no crop
  const int lut_x[8] = {6, 18, 30, 42, 54, 66, 78, 90};
  const int lut_y[4] = {6, 19, 33, 46};
  std::vector<uint8_t> dst(8 * 4 * 3);
  std::vector<uint16_t> scratch(12);
  ASSERT_TRUE(tv::resize_nearest(src.data(), w, h, 3, dst.data(), 8, 4, tv::ChannelOrder::BGR, scratch.data()));
  for (int y = 0; y < 4; ++y) {
    for (int x = 0; x < 8; ++x) {
      for (int c = 0; c < 3; ++c) {
        EXPECT_EQ(dst[(y * 8 + x) * 3 + c], src[((size_t)lut_y[y] * w + lut_x[x]) * 3 + (2 - c)]) << y << "," << x;
      }
    }
  }
  const uint8_t tiny[12] = {};
  uint8_t out[12];
  uint16_t lut[8];
  EXPECT_FALSE(tv::resize_nearest(nullptr, 2, 2, 3, out, 2, 2, tv::ChannelOrder::RGB, lut));
  EXPECT_FALSE(tv::resize_nearest(tiny, 2, 2, 2, out, 2, 2, tv::ChannelOrder::RGB, lut));
  EXPECT_FALSE(tv::resize_nearest(tiny, 2, 2, 3, out, 0, 2, tv::ChannelOrder::RGB, lut));
  EXPECT_FALSE(tv::resize_nearest(tiny, 2, 2, 3, out, 2, 2, tv::ChannelOrder::RGB, nullptr));
}
