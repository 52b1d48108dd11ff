// Float <-> int8 conversion at a power-of-two exponent (round half up, saturating).
#include <math.h>

#include "tv/int8/int8_ops.h"

namespace tv {

int8_t quantize_one_s8(float x, int e) {
  if (x != x) return 0;  // NaN
  // x * 2^-e is exact in float unless it leaves the normal range (then it is either beyond the
  // clamp or below 2^-126, where it rounds to 0 either way).
  const float y = ldexpf(x, -e);
  if (y >= 127.0f) return 127;
  if (y <= -128.0f) return -128;
  // floor(y + 1/2) without rounding y + 1/2: the floor of y, then its exact fraction.
  int f = (int)y;         // toward zero
  if ((float)f > y) --f;  // the floor, for negative y
  // y - f: exact for |y| >= 1 (Sterbenz) and for y >= 0; for -1 < y < 0 it may round, never across 1/2.
  const float frac = y - (float)f;
  return (int8_t)(f + (frac >= 0.5f ? 1 : 0));
}

void quantize_s8(const float* x, size_t n, int e, int8_t* q) {
  for (size_t i = 0; i < n; ++i) q[i] = quantize_one_s8(x[i], e);
}

float dequantize_one_s8(int8_t q, int e) {
  return ldexpf((float)q, e);
}

void dequantize_s8(const int8_t* q, size_t n, int e, float* x) {
  for (size_t i = 0; i < n; ++i) x[i] = dequantize_one_s8(q[i], e);
}

}  // namespace tv
