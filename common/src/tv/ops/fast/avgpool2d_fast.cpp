// AvgPool2D and AdaptiveAvgPool2D, fast variants: the sums of avgpool2d.cpp and adaptive_avgpool2d.cpp
// in the same order, eight channels per vector with the running sums in registers.
//
// forward (any geometry): per output pixel and channel, +0 plus the window's cells in row-major order,
// then one division by the divisor.
// backward, when no input cell lies in two windows (e.g. stride == kernel, or an adaptive pool whose
// input divides by its output): every cell receives at most one term, so it is written once as
// +0 + d / divisor (the reference's zeroed buffer plus its one addition) and cells no window covers
// are zeroed. Overlapping windows run the reference kernel.
#include "tv/ops/kernel_variants.h"
#include "tv/ops/simd.h"
#include "tv/ops/window.h"

namespace tv {
namespace fast {
namespace {

// A rectangle of input cells [y0, y1) x [x0, x1).
struct Window {
  int y0, y1, x0, x1;
};

// out_px[c] = (+0 + sum of the window's cells) / divisor, for every channel.
TV_INLINE void average_window(const float* in, int in_w, int c_n, Window r, float divisor, float* out_px) {
  const int c8 = c_n / 8 * 8;
  const f8 div = splat8(divisor);
  int c0 = 0;
  for (; c0 + 32 <= c8; c0 += 32) {
    f8 a0 = splat8(0.0f), a1 = a0, a2 = a0, a3 = a0;
    for (int y = r.y0; y < r.y1; ++y)
      for (int x = r.x0; x < r.x1; ++x) {
        const float* px = in + ((size_t)y * in_w + x) * c_n + c0;
        a0 += load8(px);
        a1 += load8(px + 8);
        a2 += load8(px + 16);
        a3 += load8(px + 24);
      }
    store8(out_px + c0, a0 / div);
    store8(out_px + c0 + 8, a1 / div);
    store8(out_px + c0 + 16, a2 / div);
    store8(out_px + c0 + 24, a3 / div);
  }
  for (; c0 < c8; c0 += 8) {
    f8 a = splat8(0.0f);
    for (int y = r.y0; y < r.y1; ++y)
      for (int x = r.x0; x < r.x1; ++x) a += load8(in + ((size_t)y * in_w + x) * c_n + c0);
    store8(out_px + c0, a / div);
  }
  for (int c = c8; c < c_n; ++c) {
    float a = 0.0f;
    for (int y = r.y0; y < r.y1; ++y)
      for (int x = r.x0; x < r.x1; ++x) a += in[((size_t)y * in_w + x) * c_n + c];
    out_px[c] = a / divisor;
  }
}

// din cells of the window = +0 + d_px / divisor (the window's only term).
TV_INLINE void spread_window(const float* d_px, int in_w, int c_n, Window r, float divisor, float* din) {
  const int c8 = c_n / 8 * 8;
  const f8 div = splat8(divisor), zero = splat8(0.0f);
  for (int y = r.y0; y < r.y1; ++y)
    for (int x = r.x0; x < r.x1; ++x) {
      float* px = din + ((size_t)y * in_w + x) * c_n;
      int c0 = 0;
      for (; c0 < c8; c0 += 8) store8(px + c0, zero + load8(d_px + c0) / div);
      for (int c = c8; c < c_n; ++c) px[c] = 0.0f + d_px[c] / divisor;
    }
}

// First input index of adaptive bin o (floor(o * in / out)) and one past its last (ceil((o+1) * in / out)).
int bin_begin(int o, int in_size, int out_size) {
  return (o * in_size) / out_size;
}
int bin_end(int o, int in_size, int out_size) {
  return ((o + 1) * in_size + out_size - 1) / out_size;
}

void zero(float* p, size_t n) {
  for (size_t i = 0; i < n; ++i) p[i] = 0.0f;
}

// The input cells of output pixel (oy, ox)'s window that lie inside the input.
TV_INLINE Window window_at(const Geom2D& g, int oy, int ox) {
  const TapRange ry = valid_taps(oy, g.stride_h, g.pad_top, g.k_h, g.in_h);
  const TapRange rx = valid_taps(ox, g.stride_w, g.pad_left, g.k_w, g.in_w);
  const int iy0 = oy * g.stride_h - g.pad_top, ix0 = ox * g.stride_w - g.pad_left;
  return Window{iy0 + ry.begin, iy0 + ry.end, ix0 + rx.begin, ix0 + rx.end};
}

}  // namespace

TV_TARGET_CLONES void avgpool2d_forward(const Geom2D& g, const float* in, float* out) {
  const float area = (float)(g.k_h * g.k_w);
  for (int oy = 0; oy < g.out_h; ++oy)
    for (int ox = 0; ox < g.out_w; ++ox)
      average_window(in, g.in_w, g.in_c, window_at(g, oy, ox), area, out + ((size_t)oy * g.out_w + ox) * g.in_c);
}

TV_TARGET_CLONES void avgpool2d_backward(const Geom2D& g, const float* dout, float* din) {
  if (g.stride_h < g.k_h || g.stride_w < g.k_w) return ref::avgpool2d_backward(g, dout, din);
  const float area = (float)(g.k_h * g.k_w);
  zero(din, (size_t)g.in_h * g.in_w * g.in_c);  // cells between or after the windows
  for (int oy = 0; oy < g.out_h; ++oy)
    for (int ox = 0; ox < g.out_w; ++ox)
      spread_window(dout + ((size_t)oy * g.out_w + ox) * g.in_c, g.in_w, g.in_c, window_at(g, oy, ox), area, din);
}

TV_TARGET_CLONES void adaptive_avgpool2d_forward(int in_h, int in_w, int c, int out_h, int out_w, const float* in,
                                                 float* out) {
  for (int oy = 0; oy < out_h; ++oy) {
    const int y0 = bin_begin(oy, in_h, out_h), y1 = bin_end(oy, in_h, out_h);
    for (int ox = 0; ox < out_w; ++ox) {
      const int x0 = bin_begin(ox, in_w, out_w), x1 = bin_end(ox, in_w, out_w);
      const Window r = {y0, y1, x0, x1};
      average_window(in, in_w, c, r, (float)((y1 - y0) * (x1 - x0)), out + ((size_t)oy * out_w + ox) * c);
    }
  }
}

TV_TARGET_CLONES void adaptive_avgpool2d_backward(int in_h, int in_w, int c, int out_h, int out_w, const float* dout,
                                                  float* din) {
  // Bins overlap unless the input divides by the output along both axes.
  if (in_h % out_h != 0 || in_w % out_w != 0)
    return ref::adaptive_avgpool2d_backward(in_h, in_w, c, out_h, out_w, dout, din);
  for (int oy = 0; oy < out_h; ++oy) {
    const int y0 = bin_begin(oy, in_h, out_h), y1 = bin_end(oy, in_h, out_h);
    for (int ox = 0; ox < out_w; ++ox) {
      const int x0 = bin_begin(ox, in_w, out_w), x1 = bin_end(ox, in_w, out_w);
      const Window r = {y0, y1, x0, x1};
      spread_window(dout + ((size_t)oy * out_w + ox) * c, in_w, c, r, (float)((y1 - y0) * (x1 - x0)), din);
    }
  }
}

}  // namespace fast
}  // namespace tv
