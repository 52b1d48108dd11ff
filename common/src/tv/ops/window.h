// The one sliding-window helper the float and int8 window kernels share.
#pragma once
#include <stddef.h>

#include "tv/ops/ops.h"

namespace tv {

// The kernel taps [begin, end) of one axis that land inside the input for output coordinate `o`
// (empty when the window lies wholly in the padding).
struct TapRange {
  int begin, end;
};

inline TapRange valid_taps(int o, int stride, int pad, int k, int in_size) {
  const int origin = o * stride - pad;  // input coordinate of tap 0
  TapRange r;
  r.begin = origin < 0 ? -origin : 0;
  r.end = in_size - origin < k ? in_size - origin : k;
  if (r.end < r.begin) r.end = r.begin;
  if (r.begin > k) r.begin = r.end = k;
  return r;
}

// The output coordinates [lo, hi) of one axis whose every tap lies inside the input (hi >= lo; the
// range is empty when no window fits).
inline void inside_range(int in_size, int k, int stride, int pad, int out_size, int* lo, int* hi) {
  *lo = (pad + stride - 1) / stride;
  const int room = in_size + pad - k;
  *hi = room < 0 ? 0 : room / stride + 1;
  if (*hi > out_size) *hi = out_size;
  if (*hi < *lo) *hi = *lo;
}

// Visits every output pixel of the window op g, row by row, as
//   f(ry, rx, iy0, ix0, px)
// with the taps of each axis that land inside the input (ry, rx), the input coordinates of tap
// (0, 0) (iy0, ix0; negative in the padding) and the pixel's index in the output (oy * out_w + ox).
template <class F>
inline void for_each_window(const Geom2D& g, F&& f) {
  for (int oy = 0; oy < g.out_h; ++oy) {
    const TapRange ry = valid_taps(oy, g.stride_h, g.pad_top, g.k_h, g.in_h);
    const int iy0 = oy * g.stride_h - g.pad_top;
    for (int ox = 0; ox < g.out_w; ++ox) {
      const TapRange rx = valid_taps(ox, g.stride_w, g.pad_left, g.k_w, g.in_w);
      f(ry, rx, iy0, ox * g.stride_w - g.pad_left, (size_t)oy * g.out_w + ox);
    }
  }
}

// The index of tap (ky, kx)'s input pixel (its channel 0) in the HWC input, for the window whose tap
// (0, 0) sits at input coordinates (iy0, ix0).
inline size_t tap_at(const Geom2D& g, int iy0, int ix0, int ky, int kx) {
  return ((size_t)(iy0 + ky) * g.in_w + (ix0 + kx)) * g.in_c;
}

// Visits the taps of one window that land inside the input, in row-major order, as f(ky, kx, at) with
// at = tap_at(g, iy0, ix0, ky, kx).
template <class F>
inline void for_each_tap(const Geom2D& g, TapRange ry, TapRange rx, int iy0, int ix0, F&& f) {
  for (int ky = ry.begin; ky < ry.end; ++ky) {
    for (int kx = rx.begin; kx < rx.end; ++kx) f(ky, kx, tap_at(g, iy0, ix0, ky, kx));
  }
}

// Max pooling (float and int8 alike): every output pixel takes, channel by channel, the largest of
// the window's taps inside the input (the first tap, then each larger one in row-major order); a
// window wholly in the padding gives 0.
template <class T>
inline void maxpool_windows(const Geom2D& g, const T* in, T* out) {
  const int c_n = g.in_c;
  for_each_window(g, [&](TapRange ry, TapRange rx, int iy0, int ix0, size_t px) {
    T* o_px = out + px * c_n;
    if (ry.begin == ry.end || rx.begin == rx.end) {
      for (int c = 0; c < c_n; ++c) o_px[c] = 0;
      return;
    }
    const T* first = in + tap_at(g, iy0, ix0, ry.begin, rx.begin);
    for (int c = 0; c < c_n; ++c) o_px[c] = first[c];
    for_each_tap(g, ry, rx, iy0, ix0, [&](int, int, size_t at) {
      const T* x = in + at;
      for (int c = 0; c < c_n; ++c) o_px[c] = x[c] > o_px[c] ? x[c] : o_px[c];
    });
  });
}

}  // namespace tv
