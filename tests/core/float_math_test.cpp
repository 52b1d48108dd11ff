// tv::math (common/src/tv/float_math.cpp) against the C library's double functions, over sweeps of
// every binade of each function's domain, with the stated ulp bounds; the special values; and one
// checksum of all results pinned, so the 64-bit and 32-bit (-m32) builds prove the same bits.
#include "tv/float_math.h"

#include <gtest/gtest.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include <limits>

#include "test_support.h"

namespace {

using tv::math::bits_of;
using tv::math::float_of;

// Distance in units in the last place between two finite floats (0 for +0 and -0).
int64_t ulps(float a, float b) {
  auto ordered = [](float x) {
    const int32_t i = (int32_t)bits_of(x);
    return i < 0 ? (int64_t)INT32_MIN - i : (int64_t)i;
  };
  const int64_t d = ordered(a) - ordered(b);
  return d < 0 ? -d : d;
}

// How much thinner the sweeps below are: 1, or TV_SWEEP_THIN (2..64) where the 32-bit tests run under
// user-mode emulation (tests/m32/CMakeLists.txt sets 4 under qemu-i386, where the C library's double
// maths is emulated instruction by instruction and the full sweeps took 100 of the suite's 210 s). The
// pinned checksum (every_nth) and the special values are never thinned.
uint32_t sweep_thinning() {
  const char* s = getenv("TV_SWEEP_THIN");
  const long k = s ? strtol(s, nullptr, 10) : 1;
  return k >= 2 && k <= 64 ? (uint32_t)k : 1u;
}

// Every `stride`-th float bit pattern from lo to hi (both non-negative patterns or both negative).
template <typename F>
void every_nth(uint32_t lo, uint32_t hi, uint64_t stride, F f) {
  for (uint64_t u = lo; u <= hi; u += stride) f(float_of((uint32_t)u));
}
// The same with the stride times sweep_thinning(): the accuracy sweeps.
template <typename F>
void sweep(uint32_t lo, uint32_t hi, uint32_t stride, F f) {
  every_nth(lo, hi, (uint64_t)stride * sweep_thinning(), f);
}

struct Worst {
  int64_t ulps = 0;
  float at = 0.0f;
  uint64_t count = 0;
  void see(int64_t u, float x) {
    ++count;
    if (u > ulps) {
      ulps = u;
      at = x;
    }
  }
};

const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kDenormMin = std::numeric_limits<float>::denorm_min();

}  // namespace

TEST(FloatMath, ExpWithinOneUlpOfTheCLibrary) {
  Worst w;
  auto check = [&](float x) { w.see(ulps(tv::math::exp(x), (float)exp((double)x)), x); };
  sweep(0x00000000u, bits_of(88.7228394f), 97, check);  // +0 .. the overflow threshold
  sweep(0x80000000u, bits_of(-104.0f), 97, check);      // -0 .. deep into the subnormal results
  printf("exp: %llu inputs, max %lld ulp (at %.9g)\n", (unsigned long long)w.count, (long long)w.ulps, (double)w.at);
  EXPECT_LE(w.ulps, 1) << "at x = " << w.at;
  EXPECT_GT(w.count, 20000000u / sweep_thinning());
}

TEST(FloatMath, ExpSpecialValues) {
  EXPECT_EQ(tv::math::exp(0.0f), 1.0f);
  EXPECT_EQ(tv::math::exp(-0.0f), 1.0f);
  EXPECT_EQ(tv::math::exp(kInf), kInf);
  EXPECT_EQ(tv::math::exp(-kInf), 0.0f);
  EXPECT_TRUE(isnan(tv::math::exp(kNaN)));
  EXPECT_EQ(tv::math::exp(88.7228394f), (float)exp(88.7228394));  // the largest finite result
  EXPECT_EQ(tv::math::exp(88.7228470f), kInf);                    // the next float overflows
  EXPECT_EQ(tv::math::exp(-200.0f), 0.0f);
  EXPECT_EQ(tv::math::exp(kDenormMin), 1.0f);
  EXPECT_EQ(tv::math::exp(-103.0f), (float)exp(-103.0));  // a subnormal result
}

TEST(FloatMath, LogWithinOneUlpOfTheCLibrary) {
  Worst w;
  sweep(0x00000001u, 0x7f7fffffu, 97,
        [&](float x) { w.see(ulps(tv::math::log(x), (float)log((double)x)), x); });  // subnormals .. FLT_MAX
  printf("log: %llu inputs, max %lld ulp (at %.9g)\n", (unsigned long long)w.count, (long long)w.ulps, (double)w.at);
  EXPECT_LE(w.ulps, 1) << "at x = " << w.at;
  // Near 1, where the result is small and the relative accuracy is hardest: every float in [0.5, 2].
  Worst near_one;
  sweep(bits_of(0.5f), bits_of(2.0f), 1,
        [&](float x) { near_one.see(ulps(tv::math::log(x), (float)log((double)x)), x); });
  printf("log on [0.5, 2]: %llu inputs, max %lld ulp (at %.9g)\n", (unsigned long long)near_one.count,
         (long long)near_one.ulps, (double)near_one.at);
  EXPECT_LE(near_one.ulps, 1) << "at x = " << near_one.at;
}

TEST(FloatMath, LogSpecialValues) {
  EXPECT_EQ(bits_of(tv::math::log(1.0f)), bits_of(0.0f));
  EXPECT_EQ(tv::math::log(0.0f), -kInf);
  EXPECT_EQ(tv::math::log(-0.0f), -kInf);
  EXPECT_TRUE(isnan(tv::math::log(-1.0f)));
  EXPECT_TRUE(isnan(tv::math::log(-kDenormMin)));
  EXPECT_TRUE(isnan(tv::math::log(-kInf)));
  EXPECT_TRUE(isnan(tv::math::log(kNaN)));
  EXPECT_EQ(tv::math::log(kInf), kInf);
  EXPECT_EQ(tv::math::log(kDenormMin), (float)log((double)kDenormMin));
  EXPECT_EQ(tv::math::log(1e-30f), (float)log(1e-30));  // the loss's floor
}

// cos(pi x) in double with the argument reduced exactly first (x = j/2 + r), so the reference is not
// spoiled by rounding pi * x.
static float reference_cospi(float x) {
  double a = fabs((double)x);
  const double j = floor(2.0 * a + 0.5);
  const double r = a - 0.5 * j;
  const double pi = 3.14159265358979323846;
  switch ((int64_t)fmod(j, 4.0)) {
    case 0: return (float)cos(pi * r);
    case 1: return (float)-sin(pi * r);
    case 2: return (float)-cos(pi * r);
    default: return (float)sin(pi * r);
  }
}

TEST(FloatMath, CospiWithinOneUlpOfTheCLibrary) {
  Worst w;
  auto check = [&](float x) { w.see(ulps(tv::math::cospi(x), reference_cospi(x)), x); };
  sweep(0x00000000u, bits_of(16777216.0f), 97, check);
  sweep(0x80000000u, bits_of(-16777216.0f), 997, check);
  printf("cospi: %llu inputs, max %lld ulp (at %.9g)\n", (unsigned long long)w.count, (long long)w.ulps, (double)w.at);
  EXPECT_LE(w.ulps, 1) << "at x = " << w.at;
  // Every 61st float in [0, 2], the range training uses (the cosine schedule and Box-Muller).
  Worst used;
  sweep(0u, bits_of(2.0f), 61, [&](float x) { used.see(ulps(tv::math::cospi(x), reference_cospi(x)), x); });
  EXPECT_LE(used.ulps, 1) << "at x = " << used.at;
}

TEST(FloatMath, CospiSpecialValues) {
  EXPECT_EQ(tv::math::cospi(0.0f), 1.0f);
  EXPECT_EQ(tv::math::cospi(-0.0f), 1.0f);
  EXPECT_EQ(tv::math::cospi(1.0f), -1.0f);
  EXPECT_EQ(tv::math::cospi(2.0f), 1.0f);
  EXPECT_EQ(tv::math::cospi(0.5f), 0.0f);
  EXPECT_EQ(tv::math::cospi(1.5f), 0.0f);
  EXPECT_EQ(tv::math::cospi(-3.0f), -1.0f);
  EXPECT_EQ(tv::math::cospi(8388609.0f), -1.0f);  // odd integer above 2^23
  EXPECT_EQ(tv::math::cospi(16777216.0f), 1.0f);
  EXPECT_EQ(tv::math::cospi(3e38f), 1.0f);
  EXPECT_EQ(tv::math::cospi(kDenormMin), 1.0f);
  EXPECT_EQ(tv::math::cospi(0.25f), (float)cos(3.14159265358979323846 / 4));
  EXPECT_TRUE(isnan(tv::math::cospi(kInf)));
  EXPECT_TRUE(isnan(tv::math::cospi(-kInf)));
  EXPECT_TRUE(isnan(tv::math::cospi(kNaN)));
}

TEST(FloatMath, PowiWithinOneUlpOfTheCLibrary) {
  // Adam's bias corrections: beta^t for beta in [0.5, 1) and t up to millions of steps.
  Worst w;
  uint32_t state = 12345;
  for (int k = 0; k < 200000; ++k) {
    state = state * 1664525u + 1013904223u;
    const float base = 0.5f + (float)(state >> 9) * (0.5f / 8388608.0f);
    state = state * 1664525u + 1013904223u;
    const uint32_t n = (k % 4 == 0) ? (state >> 12) : (state >> 22);  // up to 2^20, and up to 1023
    const double ref = pow((double)base, (double)n);
    if (ref < 1e-30) continue;  // intermediate squares would leave the normal range
    w.see(ulps(tv::math::powi(base, n), (float)ref), base);
  }
  for (float beta : {0.9f, 0.99f, 0.999f, 0.9999f})
    for (uint32_t t = 0; t <= 100000; ++t) {
      const double ref = pow((double)beta, (double)t);
      if (ref < 1e-30) break;
      w.see(ulps(tv::math::powi(beta, t), (float)ref), beta);
    }
  printf("powi: %llu inputs, max %lld ulp (at base %.9g)\n", (unsigned long long)w.count, (long long)w.ulps,
         (double)w.at);
  EXPECT_LE(w.ulps, 1) << "at base " << w.at;
  EXPECT_EQ(tv::math::powi(0.3f, 0), 1.0f);
  EXPECT_EQ(tv::math::powi(0.3f, 1), 0.3f);
  EXPECT_EQ(tv::math::powi(2.0f, 10), 1024.0f);
  EXPECT_EQ(tv::math::powi(-2.0f, 3), -8.0f);
}

TEST(FloatMath, CLibrarySqrtfIsCorrectlyRounded) {
  // The core keeps the C library's sqrtf because IEEE 754 requires it correctly rounded, so glibc and
  // newlib agree; this checks this library does (the square root in double, rounded once to float, is
  // the correctly rounded float result).
  Worst w;
  sweep(0x00000000u, 0x7f7fffffu, 97, [&](float x) { w.see(ulps(sqrtf(x), (float)sqrt((double)x)), x); });
  EXPECT_EQ(w.ulps, 0) << "at x = " << w.at;
}

TEST(FloatMath, SameBitsOnEveryBuild) {
  // A checksum of results over the ranges training uses, pinned: the 64-bit host build and the 32-bit
  // (-m32) build run this same test, so both compute these functions to the same bits.
  tvtest::Fnv1a sum;
  auto mix = [&](float y) { sum.add(y); };
  every_nth(0u, bits_of(90.0f), 4099, [&](float x) { mix(tv::math::exp(x)); });
  every_nth(0x80000000u, bits_of(-104.0f), 4099, [&](float x) { mix(tv::math::exp(x)); });
  every_nth(1u, 0x7f7fffffu, 4099, [&](float x) { mix(tv::math::log(x)); });
  every_nth(0u, bits_of(4.0f), 4099, [&](float x) { mix(tv::math::cospi(x)); });
  for (uint32_t t = 1; t < 5000; ++t) mix(tv::math::powi(0.999f, t));
  printf("checksum 0x%08x\n", sum.h);
  EXPECT_EQ(sum.h, 0x0d5f1a69u);
}
