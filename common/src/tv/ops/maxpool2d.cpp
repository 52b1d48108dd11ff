// MaxPool2D float reference kernel; padded cells are skipped.
#include "tv/ops/kernel_variants.h"
#include "tv/ops/window.h"

namespace tv {
namespace ref {

void maxpool2d_forward(const Geom2D& g, const float* in, float* out) {
  maxpool_windows(g, in, out);
}

void maxpool2d_backward(const Geom2D& g, const float* in, const float* dout, float* din) {
  const int c_n = g.in_c;
  for (size_t i = 0, n = (size_t)g.in_h * g.in_w * c_n; i < n; ++i) din[i] = 0.0f;
  for_each_window(g, [&](TapRange ry, TapRange rx, int iy0, int ix0, size_t px) {
    if (ry.begin == ry.end || rx.begin == rx.end) return;
    const float* d_px = dout + px * c_n;
    for (int c = 0; c < c_n; ++c) {
      // First maximum in row-major (ky, kx) order: only a strictly greater value replaces it.
      size_t best = ((size_t)(iy0 + ry.begin) * g.in_w + (ix0 + rx.begin)) * c_n + c;
      for (int ky = ry.begin; ky < ry.end; ++ky) {
        for (int kx = rx.begin; kx < rx.end; ++kx) {
          const size_t idx = tap_at(g, iy0, ix0, ky, kx) + c;
          if (in[idx] > in[best]) best = idx;
        }
      }
      din[best] += d_px[c];
    }
  });
}

}  // namespace ref
}  // namespace tv
