// Conv2D float reference kernel: HWC activations, weights [out_c][k_h][k_w][in_c].
#include "tv/ops/kernel_variants.h"
#include "tv/ops/window.h"

namespace tv {
namespace ref {

void conv2d_forward(const Geom2D& g, const float* in, const float* w, const float* b, float* out) {
  const int w_row = g.k_w * g.in_c;  // floats in one kernel row of one filter
  const int w_filter = g.k_h * w_row;
  for_each_window(g, [&](TapRange ry, TapRange rx, int iy0, int ix0, size_t px) {
    // Taps kx in [rx.begin, rx.end) times all channels are contiguous in both input and weights.
    const int span = (rx.end - rx.begin) * g.in_c;
    float* o_px = out + px * g.out_c;
    int o = 0;
    // Four filters at a time: independent sums hide the float-add latency, and each sum still
    // runs in the same order as the one-filter loop below, so the results are identical.
    for (; o + 4 <= g.out_c; o += 4) {
      float acc0 = b[o], acc1 = b[o + 1], acc2 = b[o + 2], acc3 = b[o + 3];
      for (int ky = ry.begin; ky < ry.end; ++ky) {
        const float* x = in + ((size_t)(iy0 + ky) * g.in_w + (ix0 + rx.begin)) * g.in_c;
        const float* k0 = w + (size_t)o * w_filter + ky * w_row + rx.begin * g.in_c;
        const float* k1 = k0 + w_filter;
        const float* k2 = k1 + w_filter;
        const float* k3 = k2 + w_filter;
        for (int j = 0; j < span; ++j) {
          acc0 += x[j] * k0[j];
          acc1 += x[j] * k1[j];
          acc2 += x[j] * k2[j];
          acc3 += x[j] * k3[j];
        }
      }
      o_px[o] = acc0;
      o_px[o + 1] = acc1;
      o_px[o + 2] = acc2;
      o_px[o + 3] = acc3;
    }
    for (; o < g.out_c; ++o) {
      float acc = b[o];
      for (int ky = ry.begin; ky < ry.end; ++ky) {
        const float* x = in + ((size_t)(iy0 + ky) * g.in_w + (ix0 + rx.begin)) * g.in_c;
        const float* k = w + (size_t)o * w_filter + ky * w_row + rx.begin * g.in_c;
        for (int j = 0; j < span; ++j) acc += x[j] * k[j];
      }
      o_px[o] = acc;
    }
  });
}

void conv2d_backward_data(const Geom2D& g, const float* w, const float* dout, float* din) {
  const int w_row = g.k_w * g.in_c;
  const int w_filter = g.k_h * w_row;
  for (size_t i = 0, n = (size_t)g.in_h * g.in_w * g.in_c; i < n; ++i) din[i] = 0.0f;
  for_each_window(g, [&](TapRange ry, TapRange rx, int iy0, int ix0, size_t px) {
    const int span = (rx.end - rx.begin) * g.in_c;
    const float* d_px = dout + px * g.out_c;
    for (int o = 0; o < g.out_c; ++o) {
      const float d = d_px[o];
      if (d == 0.0f) continue;  // common after ReLU
      for (int ky = ry.begin; ky < ry.end; ++ky) {
        float* dx = din + ((size_t)(iy0 + ky) * g.in_w + (ix0 + rx.begin)) * g.in_c;
        const float* k = w + (size_t)o * w_filter + ky * w_row + rx.begin * g.in_c;
        for (int j = 0; j < span; ++j) dx[j] += d * k[j];
      }
    }
  });
}

void conv2d_backward_params(const Geom2D& g, const float* in, const float* dout, float* dw, float* db) {
  const int w_row = g.k_w * g.in_c;
  const int w_filter = g.k_h * w_row;
  for_each_window(g, [&](TapRange ry, TapRange rx, int iy0, int ix0, size_t px) {
    const int span = (rx.end - rx.begin) * g.in_c;
    const float* d_px = dout + px * g.out_c;
    for (int o = 0; o < g.out_c; ++o) {
      const float d = d_px[o];
      if (d == 0.0f) continue;  // common after ReLU
      db[o] += d;
      for (int ky = ry.begin; ky < ry.end; ++ky) {
        const float* x = in + ((size_t)(iy0 + ky) * g.in_w + (ix0 + rx.begin)) * g.in_c;
        float* dk = dw + (size_t)o * w_filter + ky * w_row + rx.begin * g.in_c;
        for (int j = 0; j < span; ++j) dk[j] += d * x[j];
      }
    }
  });
}

}  // namespace ref
}  // namespace tv
