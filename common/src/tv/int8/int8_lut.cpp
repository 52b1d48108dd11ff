// Int8 lookup-table activations (ESP-DL's LUT op) and the tables esp-ppq would build for them.
#include <math.h>

#include "tv/float_math.h"
#include "tv/int8/int8_ops.h"

namespace tv {

void lut_s8(const int8_t* table, const int8_t* in, size_t n, int8_t* out) {
  for (size_t i = 0; i < n; ++i) out[i] = table[(int)in[i] + 128];
}

void leaky_relu_table_s8(float alpha, int e_in, int e_out, int8_t table[256]) {
  for (int q = -128; q <= 127; ++q) {
    const float x = ldexpf((float)q, e_in);  // exact
    // The product is rounded to float32 (torch's leaky_relu does the same in a float tensor).
    const float y = x > 0.0f ? x : alpha * x;
    table[q + 128] = quantize_one_s8(y, e_out);
  }
}

void sigmoid_table_s8(int e_in, int e_out, int8_t table[256]) {
  for (int q = -128; q <= 127; ++q) {
    const float x = ldexpf((float)q, e_in);
    const float y = 1.0f / (1.0f + math::exp(-x));
    table[q + 128] = quantize_one_s8(y, e_out);
  }
}

void relu_s8(int8_t* x, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (x[i] < 0) x[i] = 0;
}

}  // namespace tv
