// Int8 kernel tests (tv/int8/int8_ops.h, int8_lut.cpp): the 256-entry lookup tables (LeakyReLU from float32 products,
// Sigmoid) and ReLU in place.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "tv/int8/int8_ops.h"

namespace {

TEST(Int8Lut, TableIsIndexedFromMinus128) {
  int8_t table[256];
  for (int i = 0; i < 256; ++i) table[i] = int8_t(127 - i);  // q -> -1 - q
  const int8_t in[4] = {-128, 0, 127, -1};
  int8_t out[4];
  tv::lut_s8(table, in, 4, out);
  EXPECT_EQ(out[0], 127);
  EXPECT_EQ(out[1], -1);
  EXPECT_EQ(out[2], -128);
  EXPECT_EQ(out[3], 0);
  tv::lut_s8(table, out, 4, out);  // in place
  EXPECT_EQ(out[0], -128);
}

TEST(Int8Lut, LeakyReluTableFollowsFloat32Products) {
  int8_t t[256];
  // alpha = 0.25 (exact), e_in = e_out: negative q map to q/4 rounded half up; positive kept.
  tv::leaky_relu_table_s8(0.25f, -5, -5, t);
  EXPECT_EQ(t[127 + 128], 127);
  EXPECT_EQ(t[0 + 128], 0);
  EXPECT_EQ(t[-2 + 128], 0);   // -0.5 -> 0
  EXPECT_EQ(t[-6 + 128], -1);  // -1.5 -> -1
  EXPECT_EQ(t[-7 + 128], -2);  // -1.75 -> -2
  EXPECT_EQ(t[-128 + 128], -32);
  // alpha is the float32 the model stores: 0.3f = 0.30000001192..., so q = -105 gives
  // -31.5000012 -> -32, where the decimal 0.3 would give -31.5 -> -31.
  tv::leaky_relu_table_s8(0.3f, 0, 0, t);
  EXPECT_EQ(t[-105 + 128], -32);
  EXPECT_EQ(t[-128 + 128], -38);  // -38.4
  // The product is rounded to float32, as torch rounds it: 0.004f * -125 = -0.50000002375 exactly,
  // -0.5 in float32, so q = -125 maps to 0 where the exact product would give -1.
  tv::leaky_relu_table_s8(0.004f, 0, 0, t);
  EXPECT_EQ(t[-125 + 128], 0);
  EXPECT_EQ(t[-126 + 128], -1);  // -0.504
  // Positive part rescaled: e_in = -4, e_out = -3 -> q / 2 rounded half up; saturation impossible.
  tv::leaky_relu_table_s8(0.01f, -4, -3, t);
  EXPECT_EQ(t[3 + 128], 2);
  EXPECT_EQ(t[127 + 128], 64);
  // Scaled up: e_in = -3, e_out = -5 -> 4q saturates.
  tv::leaky_relu_table_s8(0.5f, -3, -5, t);
  EXPECT_EQ(t[40 + 128], 127);
  EXPECT_EQ(t[-128 + 128], -128);  // 0.5 * -128 * 4 = -256
}

TEST(Int8Lut, SigmoidTable) {
  int8_t t[256];
  tv::sigmoid_table_s8(-7, -8, t);
  EXPECT_EQ(t[0 + 128], 127);    // 0.5 * 256 = 128 saturates
  EXPECT_EQ(t[-128 + 128], 69);  // sigmoid(-1) * 256 = 68.8
}

TEST(Int8Relu, InPlace) {
  int8_t x[4] = {-128, -1, 0, 127};
  tv::relu_s8(x, 4);
  EXPECT_EQ(x[0], 0);
  EXPECT_EQ(x[1], 0);
  EXPECT_EQ(x[3], 127);
}

}  // namespace
