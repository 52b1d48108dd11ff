// The few elementary functions training and inference need, computed by the core itself in single
// precision, so that the host tools and the board (glibc and newlib, x86-64, i386 and Xtensa) get the
// same bits from the same inputs: only float +, -, *, / and integer bit operations, in a fixed order
// (the core is compiled with -ffp-contract=off, see build_config.h). The C library's expf, logf, powf
// and cosf are free to differ between libraries; these are not.
//
// Accuracy, measured against the C library's double functions rounded to float, over sweeps of every
// binade (tests/core/float_math_test.cpp, about 60 million inputs): exp, log, cospi and powi all within
// 1 ulp (powi while base^n stays above 1e-30).
//
// sqrtf, ldexpf and lroundf stay the C library's: IEEE 754 defines them exactly (sqrt correctly
// rounded, the others exact), so every conforming library returns the same bits (the test checks
// sqrtf against the correctly rounded square root).
#pragma once
#include <stdint.h>
#include <string.h>

#include "tv/build_config.h"

namespace tv {
namespace math {

// The IEEE 754 bit pattern of a float, and the float of a bit pattern.
inline uint32_t bits_of(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}
inline float float_of(uint32_t u) {
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}

// e^x. exp(NaN) = NaN, exp(+inf) = +inf, exp(-inf) = 0; overflows to +inf above 88.7228394 and
// underflows through the subnormals to 0 below about -103.97.
float exp(float x);

// Natural logarithm. log(1) = 0, log(+-0) = -inf, log(x < 0) = NaN, log(+inf) = +inf,
// log(NaN) = NaN; subnormal inputs are exact inputs like any other.
float log(float x);

// cos(pi * x), with the argument reduced exactly (no rounding of pi * x): cospi(n + 1/2) = 0 and
// cospi(n) = +-1 exactly for integers n. cospi(+-inf) = cospi(NaN) = NaN.
float cospi(float x);

// base^n for an integer n >= 0 by repeated squaring in doubled-float products (always the same
// operations in the same order). powi(x, 0) = 1. Within 1 ulp while the result stays above 1e-30;
// below, the low halves of the squares reach the subnormals and the result may lose bits.
float powi(float base, uint32_t n);

}  // namespace math
}  // namespace tv
