// Int8 kernel tests (tv/int8/int8_ops.h, int8_pool.cpp): max pooling, average pooling (round half up over the full
// area, exponent changes, padded cells) and global average pooling.
#include "core/int8/int8_check.h"

namespace {

using namespace tvtest::int8;

TEST(Int8Pool, MaxPoolKeepsValuesAndSkipsPadding) {
  // 1 x 4 x 1 input, window 1x2 stride 1, pad left 1: outputs max of (pad, a), (a, b), (b, c), (c, d).
  const tv::Geom2D g = make_geom(1, 4, 1, 1, 1, 2, 1, 1, 0, 1, 0, 0);
  const int8_t in[4] = {-100, -128, 5, -3};
  int8_t out[4];
  ASSERT_TRUE(tv::maxpool2d_s8(g, in, out).ok());
  EXPECT_EQ(out[0], -100);  // the padded cell is skipped, not a zero
  EXPECT_EQ(out[1], -100);
  EXPECT_EQ(out[2], 5);
  EXPECT_EQ(out[3], 5);
}

TEST(Int8Pool, AvgPoolRoundsHalfUpOverTheFullArea) {
  // 2x2 window on a 2x2 input, e_in == e_out: (sum / 4) rounded half up.
  const tv::Geom2D g = make_geom(2, 2, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0);
  struct Case {
    int8_t a, b, c, d, want;
  } cases[] = {
      {1, 1, 0, 0, 1},      // 0.5 -> 1
      {-1, -1, 0, 0, 0},    // -0.5 -> 0
      {3, 3, 0, 0, 2},      // 1.5 -> 2
      {-3, -3, 0, 0, -1},   // -1.5 -> -1
      {-3, -3, -1, 0, -2},  // -1.75 -> -2
      {127, 127, 127, 127, 127}, {-128, -128, -128, -128, -128},
  };
  for (const Case& c : cases) {
    const int8_t in[4] = {c.a, c.b, c.c, c.d};
    int8_t out[1];
    ASSERT_TRUE(tv::avgpool2d_s8(g, in, -5, -5, out).ok());
    EXPECT_EQ(out[0], c.want) << int(c.a) << "," << int(c.b) << "," << int(c.c) << "," << int(c.d);
  }
}

TEST(Int8Pool, AvgPoolExponentChangeAndSaturation) {
  const tv::Geom2D g = make_geom(1, 3, 1, 1, 1, 3, 1, 1, 0, 0, 0, 0);
  int8_t out[1];
  // sum 3 over area 3 at e_in = -6, e_out = -5: 1 * 2^-6 / 2^-5 = 0.5 -> 1; sum -3 -> -0.5 -> 0.
  const int8_t pos[3] = {1, 1, 1}, neg[3] = {-1, -1, -1};
  ASSERT_TRUE(tv::avgpool2d_s8(g, pos, -6, -5, out).ok());
  EXPECT_EQ(out[0], 1);
  ASSERT_TRUE(tv::avgpool2d_s8(g, neg, -6, -5, out).ok());
  EXPECT_EQ(out[0], 0);
  // sum 100 / 3 = 33.33 scaled up by 2^3 = 266.7 -> saturates.
  const int8_t big[3] = {40, 30, 30};
  ASSERT_TRUE(tv::avgpool2d_s8(g, big, -4, -7, out).ok());
  EXPECT_EQ(out[0], 127);
  // 100 / 3 * 2^-2 = 8.33 -> 8
  ASSERT_TRUE(tv::avgpool2d_s8(g, big, -4, -2, out).ok());
  EXPECT_EQ(out[0], 8);
  // Extreme exponent gaps stay exact: tiny -> 0, huge -> saturated.
  ASSERT_TRUE(tv::avgpool2d_s8(g, big, -60, 0, out).ok());
  EXPECT_EQ(out[0], 0);
  ASSERT_TRUE(tv::avgpool2d_s8(g, neg, 10, -40, out).ok());
  EXPECT_EQ(out[0], -128);
}

TEST(Int8Pool, AvgPoolPaddedCellsCountAsZero) {
  // Window 3 with left pad 2 at the first output: only one real cell, divisor still 3 (ONNX
  // count_include_pad = 1, the rule Espressif's golden vectors follow).
  const tv::Geom2D g = make_geom(1, 3, 1, 1, 1, 3, 1, 1, 0, 2, 0, 0);
  const int8_t in[3] = {9, 0, 0};
  int8_t out[3];
  ASSERT_TRUE(tv::avgpool2d_s8(g, in, -3, -3, out).ok());
  EXPECT_EQ(out[0], 3);
  EXPECT_EQ(out[1], 3);
  EXPECT_EQ(out[2], 3);
}

TEST(Int8Pool, GlobalAvgPool) {
  // 2 x 2 x 2 input; channel 0 sums to 6 (1.5 -> 2), channel 1 sums to -6 (-1.5 -> -1).
  const int8_t in[8] = {1, -1, 2, -2, 3, -3, 0, 0};
  int8_t out[2];
  ASSERT_TRUE(tv::global_avgpool_s8(2, 2, 2, in, -4, -4, out).ok());
  EXPECT_EQ(out[0], 2);
  EXPECT_EQ(out[1], -1);
  ASSERT_TRUE(tv::global_avgpool_s8(2, 2, 2, in, -4, -6, out).ok());  // x4: 6 and -6
  EXPECT_EQ(out[0], 6);
  EXPECT_EQ(out[1], -6);
  EXPECT_EQ(tv::global_avgpool_s8(0, 2, 2, in, 0, 0, out).code, tv::StatusCode::ZeroDimension);
}

}  // namespace
