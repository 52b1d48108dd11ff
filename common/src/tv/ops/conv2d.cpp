// Conv2D float reference kernel: HWC activations, weights [out_c][k_h][k_w][in_c].
#include "tv/ops/kernel_variants.h"
#include "tv/ops/window.h"

namespace tv {
namespace ref {
namespace {

// Visits every output gradient d = dout[px][o] that is not 0 (common after ReLU), kernel row by kernel row,
// as f(d, x_at, w_at, span): the row's taps inside the input are `span` consecutive floats from x_at in the
// input and from w_at in the weights [out_c][k_h][k_w][in_c].
template <class F>
void for_each_gradient_row(const Geom2D& g, const float* dout, F&& f) {
  const int w_row = g.k_w * g.in_c;
  const int w_filter = g.k_h * w_row;
  for_each_window(g, [&](TapRange ry, TapRange rx, int iy0, int ix0, size_t px) {
    const int span = (rx.end - rx.begin) * g.in_c;
    const float* d_px = dout + px * g.out_c;
    for (int o = 0; o < g.out_c; ++o) {
      if (d_px[o] == 0.0f) continue;
      for (int ky = ry.begin; ky < ry.end; ++ky) {
        f(d_px[o], tap_at(g, iy0, ix0, ky, rx.begin), (size_t)o * w_filter + ky * w_row + rx.begin * g.in_c, span);
      }
    }
  });
}

}  // namespace

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
        const float* x = in + tap_at(g, iy0, ix0, ky, rx.begin);
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
        const float* x = in + tap_at(g, iy0, ix0, ky, rx.begin);
        const float* k = w + (size_t)o * w_filter + ky * w_row + rx.begin * g.in_c;
        for (int j = 0; j < span; ++j) acc += x[j] * k[j];
      }
      o_px[o] = acc;
    }
  });
}

void conv2d_backward_data(const Geom2D& g, const float* w, const float* dout, float* din) {
  for (size_t i = 0, n = (size_t)g.in_h * g.in_w * g.in_c; i < n; ++i) din[i] = 0.0f;
  for_each_gradient_row(g, dout, [&](float d, size_t x_at, size_t w_at, int span) {
    float* dx = din + x_at;
    const float* k = w + w_at;
    for (int j = 0; j < span; ++j) dx[j] += d * k[j];
  });
}

void conv2d_backward_params(const Geom2D& g, const float* in, const float* dout, float* dw, float* db) {
  for (size_t px = 0, n = (size_t)g.out_h * g.out_w; px < n; ++px) {
    for (int o = 0; o < g.out_c; ++o) {
      if (dout[px * g.out_c + o] != 0.0f) db[o] += dout[px * g.out_c + o];  // as the weights: a -0 sum stays -0
    }
  }
  for_each_gradient_row(g, dout, [&](float d, size_t x_at, size_t w_at, int span) {
    const float* x = in + x_at;
    float* dk = dw + w_at;
    for (int j = 0; j < span; ++j) dk[j] += d * x[j];
  });
}

}  // namespace ref
}  // namespace tv
