// Dense (fully connected) float reference kernel: weights [out][in].
#include "tv/ops/kernel_variants.h"

namespace tv {
namespace ref {

void dense_forward(int in_n, int out_n, const float* in, const float* w, const float* b, float* out) {
  for (int o = 0; o < out_n; ++o) {
    const float* w_row = w + (size_t)o * in_n;
    // In float, as the board's single-precision FPU computes it: each product and each sum rounds.
    float acc = b[o];
    for (int i = 0; i < in_n; ++i) acc += w_row[i] * in[i];
    out[o] = acc;
  }
}

void dense_backward_data(int in_n, int out_n, const float* w, const float* dout, float* din) {
  for (int i = 0; i < in_n; ++i) din[i] = 0.0f;
  for (int o = 0; o < out_n; ++o) {
    const float d = dout[o];
    const float* w_row = w + (size_t)o * in_n;
    for (int i = 0; i < in_n; ++i) din[i] += d * w_row[i];
  }
}

void dense_backward_params(int in_n, int out_n, const float* in, const float* dout, float* dw, float* db) {
  for (int o = 0; o < out_n; ++o) {
    const float d = dout[o];
    db[o] += d;
    float* dw_row = dw + (size_t)o * in_n;
    for (int i = 0; i < in_n; ++i) dw_row[i] += d * in[i];
  }
}

}  // namespace ref
}  // namespace tv
