// DepthwiseConv2D float reference kernel (channel multiplier 1): weights [k_h][k_w][c].
#include "tv/ops/kernel_variants.h"
#include "tv/ops/window.h"

namespace tv {
namespace ref {
void depthwise_conv2d_forward(const Geom2D& g, const float* in, const float* w, const float* b, float* out) {
  const int c_n = g.in_c;
  for_each_window(g, [&](TapRange ry, TapRange rx, int iy0, int ix0, size_t px) {
    float* o_px = out + px * c_n;
    for (int c = 0; c < c_n; ++c) o_px[c] = b[c];
    // Each channel sums bias + taps in (ky, kx) order.
    for_each_tap(g, ry, rx, iy0, ix0, [&](int ky, int kx, size_t at) {
      const float* k = w + ((size_t)ky * g.k_w + kx) * c_n;
      for (int c = 0; c < c_n; ++c) o_px[c] += in[at + c] * k[c];
    });
  });
}

void depthwise_conv2d_backward_data(const Geom2D& g, const float* w, const float* dout, float* din) {
  const int c_n = g.in_c;
  for (size_t i = 0, n = (size_t)g.in_h * g.in_w * c_n; i < n; ++i) din[i] = 0.0f;
  for_each_window(g, [&](TapRange ry, TapRange rx, int iy0, int ix0, size_t px) {
    const float* d_px = dout + px * c_n;
    for_each_tap(g, ry, rx, iy0, ix0, [&](int ky, int kx, size_t at) {
      const float* k = w + ((size_t)ky * g.k_w + kx) * c_n;
      for (int c = 0; c < c_n; ++c) din[at + c] += d_px[c] * k[c];
    });
  });
}

void depthwise_conv2d_backward_params(const Geom2D& g, const float* in, const float* dout, float* dw, float* db) {
  const int c_n = g.in_c;
  for_each_window(g, [&](TapRange ry, TapRange rx, int iy0, int ix0, size_t px) {
    const float* d_px = dout + px * c_n;
    for (int c = 0; c < c_n; ++c) db[c] += d_px[c];
    for_each_tap(g, ry, rx, iy0, ix0, [&](int ky, int kx, size_t at) {
      float* dk = dw + ((size_t)ky * g.k_w + kx) * c_n;
      for (int c = 0; c < c_n; ++c) dk[c] += d_px[c] * in[at + c];
    });
  });
}

}  // namespace ref
}  // namespace tv
