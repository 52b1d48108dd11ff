// Int8 kernel tests (tv/int8/int8_ops.h, int8_quantize.cpp): requantisation (rounding ties of both signs, saturation,
// shifts) and quantise / dequantise.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "tv/int8/int8_ops.h"

namespace {

TEST(Int8Requantize, RoundsHalfUpIncludingNegativeTies) {
  // s = 1: x / 2 with ties towards +inf.
  EXPECT_EQ(tv::requantize_s8(3, 1), 2);    // 1.5 -> 2
  EXPECT_EQ(tv::requantize_s8(1, 1), 1);    // 0.5 -> 1
  EXPECT_EQ(tv::requantize_s8(-1, 1), 0);   // -0.5 -> 0 (half UP, not away from zero)
  EXPECT_EQ(tv::requantize_s8(-3, 1), -1);  // -1.5 -> -1
  EXPECT_EQ(tv::requantize_s8(-5, 1), -2);  // -2.5 -> -2
  // s = 4: ties at 8/16.
  EXPECT_EQ(tv::requantize_s8(24, 4), 2);    // 1.5
  EXPECT_EQ(tv::requantize_s8(-24, 4), -1);  // -1.5
  EXPECT_EQ(tv::requantize_s8(23, 4), 1);    // 1.4375
  EXPECT_EQ(tv::requantize_s8(-25, 4), -2);  // -1.5625
  EXPECT_EQ(tv::requantize_s8(-8, 4), 0);    // -0.5
  EXPECT_EQ(tv::requantize_s8(-9, 4), -1);   // -0.5625
}

TEST(Int8Requantize, ShiftZeroHasNoRoundingTerm) {
  EXPECT_EQ(tv::requantize_s8(5, 0), 5);
  EXPECT_EQ(tv::requantize_s8(-7, 0), -7);
  EXPECT_EQ(tv::requantize_s8(200, 0), 127);
  EXPECT_EQ(tv::requantize_s8(-200, 0), -128);
}

TEST(Int8Requantize, Saturates) {
  EXPECT_EQ(tv::requantize_s8(127 * 16 + 7, 4), 127);    // 127.44 -> 127
  EXPECT_EQ(tv::requantize_s8(127 * 16 + 8, 4), 127);    // 127.5 -> 128 -> 127
  EXPECT_EQ(tv::requantize_s8(-128 * 16 - 8, 4), -128);  // -128.5 -> -128
  EXPECT_EQ(tv::requantize_s8(-128 * 16 - 9, 4), -128);  // -128.56 -> -129 -> -128
  EXPECT_EQ(tv::requantize_s8(int64_t(1) << 40, 3), 127);
  EXPECT_EQ(tv::requantize_s8(-(int64_t(1) << 40), 3), -128);
}

TEST(Int8Requantize, HugeShiftsGiveZero) {
  EXPECT_EQ(tv::requantize_s8(1000000, 40), 0);
  EXPECT_EQ(tv::requantize_s8(-1000000, 63), 0);
  EXPECT_EQ(tv::requantize_s8(int64_t(1) << 39, 40), 1);  // exactly 0.5 -> 1
}

// ---------------------------------------------------------------- quantise / dequantise

TEST(Int8Quantize, FloorOfXPlusHalf) {
  EXPECT_EQ(tv::quantize_one_s8(0.5f, 0), 1);
  EXPECT_EQ(tv::quantize_one_s8(-0.5f, 0), 0);
  EXPECT_EQ(tv::quantize_one_s8(1.5f, 0), 2);
  EXPECT_EQ(tv::quantize_one_s8(-1.5f, 0), -1);
  EXPECT_EQ(tv::quantize_one_s8(-2.5f, 0), -2);
  EXPECT_EQ(tv::quantize_one_s8(0.375f, -3), 3);     // 3.0
  EXPECT_EQ(tv::quantize_one_s8(-0.4375f, -3), -3);  // -3.5 -> -3
  EXPECT_EQ(tv::quantize_one_s8(-0.4376f, -3), -4);
  EXPECT_EQ(tv::quantize_one_s8(12.0f, 2), 3);    // 12 / 4
  EXPECT_EQ(tv::quantize_one_s8(-10.0f, 2), -2);  // -2.5 -> -2
  // The float just below one half rounds down: the sum is formed exactly, not in float32.
  EXPECT_EQ(tv::quantize_one_s8(std::nextafter(0.5f, 0.0f), 0), 0);
}

TEST(Int8Quantize, FloatComputationEqualsTheExactRounding) {
  // The core computes in float (the S3 has no double FPU); the reference here is exact in double:
  // floor(x * 2^-e + 1/2), clamped. Every 4099th float of both signs, at exponents -20..20, plus the
  // floats on either side of each half-way point (0.49999997, -0.50000006 ...).
  auto exact = [](float x, int e) {
    const double y = std::floor(std::ldexp((double)x, -e) + 0.5);
    return (int)(y > 127 ? 127 : (y < -128 ? -128 : y));
  };
  long checked = 0;
  for (int e = -20; e <= 20; e += 5)
    for (uint64_t u = 0; u < 0x7f800000u; u += 4099)
      for (float sign : {1.0f, -1.0f}) {
        uint32_t bits = (uint32_t)u;
        float x;
        std::memcpy(&x, &bits, sizeof x);
        x *= sign;
        ASSERT_EQ(tv::quantize_one_s8(x, e), exact(x, e)) << "x = " << x << ", e = " << e;
        ++checked;
      }
  for (int k = -129; k <= 128; ++k)
    for (float x : {std::nextafter(k + 0.5f, -1000.0f), k + 0.5f, std::nextafter(k + 0.5f, 1000.0f)})
      for (int e : {0, -3, 4}) {
        const float xe = std::ldexp(x, e);
        ASSERT_EQ(tv::quantize_one_s8(xe, e), exact(xe, e)) << "x = " << xe << ", e = " << e;
      }
  EXPECT_GT(checked, 5000000);
}

TEST(Int8Quantize, SaturatesAndHandlesNonFinite) {
  EXPECT_EQ(tv::quantize_one_s8(127.49f, 0), 127);
  EXPECT_EQ(tv::quantize_one_s8(127.5f, 0), 127);
  EXPECT_EQ(tv::quantize_one_s8(-128.5f, 0), -128);
  EXPECT_EQ(tv::quantize_one_s8(-1e30f, -7), -128);
  EXPECT_EQ(tv::quantize_one_s8(1e30f, -7), 127);
  EXPECT_EQ(tv::quantize_one_s8(std::numeric_limits<float>::infinity(), 0), 127);
  EXPECT_EQ(tv::quantize_one_s8(-std::numeric_limits<float>::infinity(), 0), -128);
  EXPECT_EQ(tv::quantize_one_s8(std::numeric_limits<float>::quiet_NaN(), 0), 0);
}

TEST(Int8Quantize, DequantizeIsExactAndRoundTrips) {
  for (int e = -12; e <= 4; ++e)
    for (int q = -128; q <= 127; ++q) {
      const float x = tv::dequantize_one_s8(int8_t(q), e);
      EXPECT_EQ(x, std::ldexp(float(q), e));
      EXPECT_EQ(tv::quantize_one_s8(x, e), q);
    }
  const float xs[3] = {0.25f, -0.3f, 1.0f};
  int8_t q[3];
  float back[3];
  tv::quantize_s8(xs, 3, -4, q);
  EXPECT_EQ(q[0], 4);
  EXPECT_EQ(q[1], -5);  // -4.8
  EXPECT_EQ(q[2], 16);
  tv::dequantize_s8(q, 3, -4, back);
  EXPECT_EQ(back[1], -0.3125f);
}

}  // namespace
