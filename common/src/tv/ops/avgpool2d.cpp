// AvgPool2D float reference kernel; padded cells are skipped but still count in the k_h*k_w divisor.
#include "tv/ops/kernel_variants.h"
#include "tv/ops/window.h"

namespace tv {
namespace ref {
void avgpool2d_forward(const Geom2D& g, const float* in, float* out) {
  const int c_n = g.in_c;
  const float area = (float)(g.k_h * g.k_w);
  for_each_window(g, [&](TapRange ry, TapRange rx, int iy0, int ix0, size_t px) {
    float* o_px = out + px * c_n;
    for (int c = 0; c < c_n; ++c) o_px[c] = 0.0f;
    for_each_tap(g, ry, rx, iy0, ix0, [&](int, int, size_t at) {
      for (int c = 0; c < c_n; ++c) o_px[c] += in[at + c];
    });
    for (int c = 0; c < c_n; ++c) o_px[c] /= area;
  });
}

void avgpool2d_backward(const Geom2D& g, const float* dout, float* din) {
  const int c_n = g.in_c;
  const float area = (float)(g.k_h * g.k_w);
  for (size_t i = 0, n = (size_t)g.in_h * g.in_w * c_n; i < n; ++i) din[i] = 0.0f;
  for_each_window(g, [&](TapRange ry, TapRange rx, int iy0, int ix0, size_t px) {
    const float* d_px = dout + px * c_n;
    for_each_tap(g, ry, rx, iy0, ix0, [&](int, int, size_t at) {
      for (int c = 0; c < c_n; ++c) din[at + c] += d_px[c] / area;
    });
  });
}

}  // namespace ref
}  // namespace tv
