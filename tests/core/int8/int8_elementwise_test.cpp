// Int8 kernel tests (tv/int8/int8_ops.h, int8_elementwise.cpp): rescale, Add and Mul rounding half up and saturating.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "tv/int8/int8_ops.h"

namespace {

TEST(Int8Elementwise, AddSameAndDifferentExponents) {
  const int8_t a[4] = {100, -100, 3, -3};
  const int8_t b[4] = {100, -100, 0, 0};
  int8_t out[4];
  tv::add_s8(a, -6, b, -6, 4, -6, out);
  EXPECT_EQ(out[0], 127);
  EXPECT_EQ(out[1], -128);
  EXPECT_EQ(out[2], 3);
  // a at -6, b at -5 to e_out -5: a/2 + b -> 3 * 2^-6 = 1.5 * 2^-5 -> 2; -1.5 -> -1.
  tv::add_s8(a, -6, b, -5, 4, -5, out);
  EXPECT_EQ(out[2], 2);
  EXPECT_EQ(out[3], -1);
  EXPECT_EQ(out[0], 127);  // 50 + 100 = 150
  // Scaling up to a finer output exponent.
  const int8_t c[1] = {5}, d[1] = {-3};
  tv::add_s8(c, -2, d, -3, 1, -4, out);  // (10 - 3) * 2^-3 = 14 * 2^-4
  EXPECT_EQ(out[0], 14);
}

TEST(Int8Elementwise, AddWithFarApartExponentsStillRoundsCorrectly) {
  // 1 * 2^0 + tiny: e_out = 1 puts the coarse value exactly at a tie (0.5); the tiny term decides.
  const int8_t one[2] = {1, 1};
  const int8_t tiny[2] = {1, -1};
  int8_t out[2];
  tv::add_s8(one, 0, tiny, -60, 2, 1, out);
  EXPECT_EQ(out[0], 1);  // 0.5 + eps -> 1
  EXPECT_EQ(out[1], 0);  // 0.5 - eps -> 0
  const int8_t zero[1] = {0}, small[1] = {64};
  tv::add_s8(zero, 0, small, -60, 1, -66, out);  // 64 * 2^-60 = 2^-54 = 4096 * 2^-66 -> saturates
  EXPECT_EQ(out[0], 127);
  tv::add_s8(tiny, -60, one, 0, 2, 1, out);  // operands swapped
  EXPECT_EQ(out[0], 1);
  EXPECT_EQ(out[1], 0);
}

TEST(Int8Elementwise, MulRoundsHalfUpAndSaturates) {
  const int8_t a[4] = {64, -64, 127, -128};
  const int8_t b[4] = {3, 3, 127, 127};
  int8_t out[4];
  // e_a = -7, e_b = -8 -> product at -15, e_out = -8: shift 7. 192 / 128 = 1.5 -> 2; -1.5 -> -1.
  tv::mul_s8(a, -7, b, -8, 4, -8, out);
  EXPECT_EQ(out[0], 2);
  EXPECT_EQ(out[1], -1);
  EXPECT_EQ(out[2], 126);                // 16129 / 128 = 126.01
  EXPECT_EQ(out[3], -127);               // -16256 / 128 = -127
  tv::mul_s8(a, -2, b, -2, 4, -5, out);  // shift -1: scaled up, saturated
  EXPECT_EQ(out[0], 127);
  EXPECT_EQ(out[3], -128);
}

TEST(Int8Elementwise, Rescale) {
  const int8_t in[5] = {3, -3, 1, -1, 100};
  int8_t out[5];
  tv::rescale_s8(in, 5, -6, -5, out);  // halve, half up
  EXPECT_EQ(out[0], 2);
  EXPECT_EQ(out[1], -1);
  EXPECT_EQ(out[2], 1);
  EXPECT_EQ(out[3], 0);
  EXPECT_EQ(out[4], 50);
  tv::rescale_s8(in, 5, -5, -6, out);  // double
  EXPECT_EQ(out[0], 6);
  EXPECT_EQ(out[4], 127);
  tv::rescale_s8(in, 5, -5, -5, out);
  EXPECT_EQ(out[1], -3);
}

}  // namespace
