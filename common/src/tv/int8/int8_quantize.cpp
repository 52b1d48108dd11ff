// Float <-> int8 conversion at a power-of-two exponent (round half up, saturating).
#include <math.h>

#include "tv/int8/int8_ops.h"

namespace tv {

int8_t quantize_one_s8(float x, int e) {
  if (x != x) return 0;  // NaN
  // x * 2^-e is exact in double for every float x and |e| < 900; +0.5 is exact too below 2^52.
  const double y = ldexp((double)x, -e);
  if (y >= 127.0) return 127;
  if (y <= -128.0) return -128;
  return (int8_t)(int)floor(y + 0.5);
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
