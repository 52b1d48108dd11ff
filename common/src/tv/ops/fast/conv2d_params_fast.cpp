// Conv2D weight gradients, fast variant: the sums of conv2d.cpp's backward_params in the same order.
//
// backward_params (any stride; a padded conv works on a zero-padded copy of its input, see
// padded_backward_params): each weight's gradient sums d * x over the output pixels in row-major
// order, skipping d == 0, as in the reference.
//  - Output channels in groups of 8 (one vector lane per channel): for a run of up to 12 taps the
//    gradients stay in registers while all pixels stream by. When dout holds a zero anywhere and the
//    input is not all finite or a gradient holds -0, each update is a select that keeps the old sum
//    in the lanes whose d is zero: the reference's skip.
//  - The remaining channels (fewer than 8, e.g. the 4 filters of the webmcu preset's first layer), or
//    all of at most 8 channels when three quarters of dout or more are zero: per output row, the pixels with
//    d != 0 are listed without branches (after a 2x2 max-pool three of every four are zero, and a
//    branch per pixel would mispredict), then one filter's gradient is updated in registers, one
//    vector per kernel row, for each listed pixel in order.
//
// conv2d_pool_backward_params (kernel_variants.h): the same listed update, with the lists made
// straight from the pooled gradient: per pool window and channel the first maximum (the pool's
// rule), the activations' backward at that one element, and the window's conv output pixel, kept in
// the conv output's row-major order (all windows' top rows, then their next rows, ...).
//
// 1x1 layers first try the matrix-product path of pointwise_fast.cpp. Scratch lives on the stack; a
// layer that needs more, or a geometry without a fast path, runs the reference kernel.
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "tv/ops/fast/pointwise.h"
#include "tv/ops/kernel_variants.h"
#include "tv/ops/simd.h"

namespace tv {
namespace fast {
namespace {

using simd::f4;
using simd::load4;
using simd::splat4;
using simd::store4;

constexpr int kMaxRowPixels = 512;  // pixels of one output row

// True when f != 0.0f (NaN included), from the bits: no floating-point compare, no branch.
TV_INLINE int nonzero(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return (u << 1) != 0;
}

// Output channels [o0, o0 + 8) as vector lanes; taps [t0, t0 + N) of kernel row ky (t = kx * in_c +
// ic). MASKED: dout holds zeros, so lanes with d == 0 keep their sums (the reference's skip). db is
// null except in the one pass that also sums the bias gradient.
template <int N, bool MASKED>
TV_INLINE void params_by_channel(const Geom2D& g, const float* in, const float* dout, int o0, int ky, int t0, float* dw,
                                 float* db) {
  const int span = g.k_w * g.in_c, filter = g.k_h * span;
  float* dk = dw + (size_t)o0 * filter + (size_t)ky * span + t0;  // lane l at dk + l * filter
  f8 acc[N];
  float tile[8];
  for (int t = 0; t < N; ++t) {
    for (int l = 0; l < 8; ++l) tile[l] = dk[(size_t)l * filter + t];
    acc[t] = load8(tile);
  }
  f8 bias = db ? load8(db + o0) : splat8(0.0f);
  const size_t row_stride = (size_t)g.in_w * g.in_c;
  for (int oy = 0; oy < g.out_h; ++oy) {
    const float* d_row = dout + (size_t)oy * g.out_w * g.out_c + o0;
    const float* x_row = in + ((size_t)oy * g.stride_h + ky) * row_stride + t0;
    for (int ox = 0; ox < g.out_w; ++ox) {
      const f8 d = load8(d_row + (size_t)ox * g.out_c);
      const float* x = x_row + (size_t)ox * g.stride_w * g.in_c;
      if (MASKED) {
        const auto keep = d != splat8(0.0f);
        for (int t = 0; t < N; ++t) acc[t] = keep ? acc[t] + d * splat8(x[t]) : acc[t];
        if (db) bias = keep ? bias + d : bias;
      } else {
        for (int t = 0; t < N; ++t) acc[t] += d * splat8(x[t]);
        if (db) bias += d;
      }
    }
  }
  for (int t = 0; t < N; ++t) {
    store8(tile, acc[t]);
    for (int l = 0; l < 8; ++l) dk[(size_t)l * filter + t] = tile[l];
  }
  if (db) store8(db + o0, bias);
}

template <bool MASKED>
TV_INLINE void params_by_channel_any(int n, const Geom2D& g, const float* in, const float* dout, int o0, int ky, int t0,
                                     float* dw, float* db) {
  switch (n) {
    case 12: return params_by_channel<12, MASKED>(g, in, dout, o0, ky, t0, dw, db);
    case 11: return params_by_channel<11, MASKED>(g, in, dout, o0, ky, t0, dw, db);
    case 10: return params_by_channel<10, MASKED>(g, in, dout, o0, ky, t0, dw, db);
    case 9: return params_by_channel<9, MASKED>(g, in, dout, o0, ky, t0, dw, db);
    case 8: return params_by_channel<8, MASKED>(g, in, dout, o0, ky, t0, dw, db);
    case 7: return params_by_channel<7, MASKED>(g, in, dout, o0, ky, t0, dw, db);
    case 6: return params_by_channel<6, MASKED>(g, in, dout, o0, ky, t0, dw, db);
    case 5: return params_by_channel<5, MASKED>(g, in, dout, o0, ky, t0, dw, db);
    case 4: return params_by_channel<4, MASKED>(g, in, dout, o0, ky, t0, dw, db);
    case 3: return params_by_channel<3, MASKED>(g, in, dout, o0, ky, t0, dw, db);
    case 2: return params_by_channel<2, MASKED>(g, in, dout, o0, ky, t0, dw, db);
    default: return params_by_channel<1, MASKED>(g, in, dout, o0, ky, t0, dw, db);
  }
}

// Marks the non-zero entries of n floats with 1 / 0 (NaN counts as non-zero), eight at a time.
TV_INLINE void mark_nonzero(const float* d, size_t n, int* marks) {
  typedef int i8v __attribute__((vector_size(32)));
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const i8v nz = (load8(d + i) != splat8(0.0f)) & 1;
    memcpy(marks + i, &nz, sizeof nz);
  }
  for (; i < n; ++i) marks[i] = nonzero(d[i]);
}

// For each of the R channels [o0, o0 + R) (R = 0: r_runtime channels, at most 8), lists the pixels
// of one dout row whose gradient is non-zero, in order: lists[k * kMaxRowPixels + m]. No branch:
// every pixel is written and the count only advances past the non-zero ones. marks: mark_nonzero()
// of the row.
template <int R>
TV_INLINE void list_nonzero(const int* marks, int out_w, int out_c, int o0, int r_runtime, int* lists, int* counts) {
  const int r = R ? R : r_runtime;
  int n[R ? R : 8] = {};
  for (int ox = 0; ox < out_w; ++ox) {
    const int* nz = marks + (size_t)ox * out_c + o0;
    for (int k = 0; k < r; ++k) {
      lists[k * kMaxRowPixels + n[k]] = ox;
      n[k] += nz[k];
    }
  }
  for (int k = 0; k < r; ++k) counts[k] = n[k];
}

// The listed pixels of one output row, in order: their columns and, when taken from a list rather than
// from the dout row, their gradients.
struct RowList {
  const int* ox;       // output columns
  const float* d;      // gradients, one per listed pixel (null: d_row[ox * out_c])
  const float* d_row;  // the dout row at the filter's channel
  int out_c;
  int n;
  float at(int m) const { return d ? d[m] : d_row[(size_t)ox[m] * out_c]; }
};

// One filter's gradient (KH kernel rows of SPAN floats) in registers while the listed pixels of one
// output row are added in order. x_row: the row's first window; step: floats between windows.
template <int KH, int SPAN>
TV_INLINE void params_listed(const float* x_row, size_t row_stride, size_t step, const RowList& list, float* dk,
                             float* db) {
  constexpr int N8 = SPAN / 8, N4 = (SPAN % 8) / 4, N1 = SPAN % 4;
  constexpr int kOff4 = 8 * N8, kOff1 = 8 * N8 + 4 * N4;
  f8 a8[KH][N8 > 0 ? N8 : 1];
  f4 a4[KH];
  float a1[KH][N1 > 0 ? N1 : 1];
  for (int ky = 0; ky < KH; ++ky) {
    for (int c = 0; c < N8; ++c) a8[ky][c] = load8(dk + ky * SPAN + 8 * c);
    if constexpr (N4 > 0) a4[ky] = load4(dk + ky * SPAN + kOff4);
    for (int c = 0; c < N1; ++c) a1[ky][c] = dk[ky * SPAN + kOff1 + c];
  }
  float bias = *db;
  for (int m = 0; m < list.n; ++m) {
    const float d = list.at(m);
    bias += d;
    const f8 d8 = splat8(d);
    const f4 d4 = splat4(d);
    const float* x = x_row + (size_t)list.ox[m] * step;
    for (int ky = 0; ky < KH; ++ky) {
      const float* xk = x + ky * row_stride;
      for (int c = 0; c < N8; ++c) a8[ky][c] += d8 * load8(xk + 8 * c);
      if constexpr (N4 > 0) a4[ky] += d4 * load4(xk + kOff4);
      for (int c = 0; c < N1; ++c) a1[ky][c] += d * xk[kOff1 + c];
    }
  }
  for (int ky = 0; ky < KH; ++ky) {
    for (int c = 0; c < N8; ++c) store8(dk + ky * SPAN + 8 * c, a8[ky][c]);
    if constexpr (N4 > 0) store4(dk + ky * SPAN + kOff4, a4[ky]);
    for (int c = 0; c < N1; ++c) dk[ky * SPAN + kOff1 + c] = a1[ky][c];
  }
  *db = bias;
}

// Any kernel: the common sizes with the gradient in registers, others with it in memory.
TV_INLINE void params_listed_any(int k_h, int span, const float* x_row, size_t row_stride, size_t step,
                                 const RowList& list, float* dk, float* db) {
  if (k_h == 3 && span == 9) return params_listed<3, 9>(x_row, row_stride, step, list, dk, db);
  if (k_h == 3 && span == 12) return params_listed<3, 12>(x_row, row_stride, step, list, dk, db);
  if (k_h == 3 && span == 3) return params_listed<3, 3>(x_row, row_stride, step, list, dk, db);
  if (k_h == 3 && span == 6) return params_listed<3, 6>(x_row, row_stride, step, list, dk, db);
  if (k_h == 3 && span == 24) return params_listed<3, 24>(x_row, row_stride, step, list, dk, db);
  for (int m = 0; m < list.n; ++m) {
    const float d = list.at(m);
    *db += d;
    const float* x = x_row + (size_t)list.ox[m] * step;
    for (int ky = 0; ky < k_h; ++ky)
      for (int j = 0; j < span; ++j) dk[ky * span + j] += d * x[ky * row_stride + j];
  }
}

}  // namespace

// A padded conv's weight gradient: the unpadded fast path on a zero-padded copy of the input. Each
// tap in the padding adds d * 0 = +-0 to a sum that the reference leaves alone; for finite d that
// changes no bit (a running sum that starts at +0 or at any non-zero value never becomes -0, and x +
// +-0 = x otherwise). A non-finite d (d * 0 = NaN), or an input too large for the stack copy, runs
// the reference.
static constexpr int kPaddedFloats = 32768;  // 128 KB of stack
TV_INLINE void padded_backward_params(const Geom2D& g, const float* in, const float* dout, float* dw, float* db) {
  const int ph = (g.out_h - 1) * g.stride_h + g.k_h, pw = (g.out_w - 1) * g.stride_w + g.k_w;
  const size_t n_out = (size_t)g.out_h * g.out_w * g.out_c;
  if ((size_t)ph * pw * g.in_c > (size_t)kPaddedFloats || !simd::all_finite(dout, n_out))
    return ref::conv2d_backward_params(g, in, dout, dw, db);
  float padded[kPaddedFloats] __attribute__((aligned(32)));
  const int x_lo = g.pad_left < pw ? g.pad_left : pw;
  const int x_hi = g.pad_left + g.in_w < pw ? g.pad_left + g.in_w : pw;  // columns [x_lo, x_hi) are inside
  for (int y = 0; y < ph; ++y) {
    const int iy = y - g.pad_top;
    float* row = padded + (size_t)y * pw * g.in_c;
    const bool inside_row = iy >= 0 && iy < g.in_h && x_hi > x_lo;
    const size_t lead = inside_row ? (size_t)x_lo * g.in_c : (size_t)pw * g.in_c;
    for (size_t i = 0; i < lead; ++i) row[i] = 0.0f;
    if (!inside_row) continue;
    const size_t n = (size_t)(x_hi - x_lo) * g.in_c;
    memcpy(row + lead, in + ((size_t)iy * g.in_w + (x_lo - g.pad_left)) * g.in_c, n * sizeof(float));
    for (size_t i = lead + n; i < (size_t)pw * g.in_c; ++i) row[i] = 0.0f;
  }
  Geom2D inner = g;
  inner.in_h = ph;
  inner.in_w = pw;
  inner.pad_top = inner.pad_left = 0;
  fast::conv2d_backward_params(inner, padded, dout, dw, db);
}

TV_TARGET_CLONES void conv2d_backward_params(const Geom2D& g, const float* in, const float* dout, float* dw,
                                             float* db) {
  if (pointwise_backward_params(g, in, dout, dw, db)) return;
  // Fast paths only when every window lies inside the input (no padding on any side).
  const bool inside = g.pad_top == 0 && g.pad_left == 0 && (g.out_h - 1) * g.stride_h + g.k_h <= g.in_h &&
                      (g.out_w - 1) * g.stride_w + g.k_w <= g.in_w;
  if (g.out_w > kMaxRowPixels || g.out_w * g.out_c > 8 * kMaxRowPixels)
    return ref::conv2d_backward_params(g, in, dout, dw, db);
  if (!inside) return padded_backward_params(g, in, dout, dw, db);
  const int span = g.k_w * g.in_c;

  // Mostly-zero dout (e.g. behind a max-pool): every channel through lists of its non-zero pixels.
  // Otherwise channels in groups of 8 (one vector lane each), the remaining ones through lists.
  const size_t total = (size_t)g.out_h * g.out_w * g.out_c;
  size_t zeros = 0;
  for (size_t i = 0; i < total; ++i) zeros += dout[i] == 0.0f;
  const int grouped = 4 * zeros >= 3 * total && g.out_c <= 8 ? 0 : g.out_c / 8 * 8;
  // Adding d * x for a zero d instead of skipping it adds +-0, which changes no sum when x is
  // finite and no sum is -0 to begin with (a float sum only becomes -0 from -0 + -0): then the
  // grouped path needs no per-lane select.
  bool masked = zeros > 0;
  if (masked && grouped > 0 && simd::all_finite(in, (size_t)g.in_h * g.in_w * g.in_c)) {
    bool negative_zero = false;
    for (size_t i = 0, n = (size_t)grouped * g.k_h * span; i < n; ++i) negative_zero |= dw[i] == 0.0f && signbit(dw[i]);
    for (int o = 0; o < grouped; ++o) negative_zero |= db[o] == 0.0f && signbit(db[o]);
    masked = negative_zero;
  }
  for (int o0 = 0; o0 < grouped; o0 += 8)
    for (int ky = 0; ky < g.k_h; ++ky)
      for (int t0 = 0; t0 < span; t0 += 12) {
        const int n = span - t0 < 12 ? span - t0 : 12;
        float* bias = ky == 0 && t0 == 0 ? db : nullptr;
        if (masked)
          params_by_channel_any<true>(n, g, in, dout, o0, ky, t0, dw, bias);
        else
          params_by_channel_any<false>(n, g, in, dout, o0, ky, t0, dw, bias);
      }
  if (grouped == g.out_c) return;

  // The other channels (at most 7, or all when dout is mostly zero, at most 8): row by row, list the
  // pixels with d != 0, then add them to one filter's gradient after the other.
  int lists[8 * kMaxRowPixels];
  int counts[8];
  int marks[8 * kMaxRowPixels];
  const size_t row_stride = (size_t)g.in_w * g.in_c, step = (size_t)g.stride_w * g.in_c;
  const int filter = g.k_h * span, rest = g.out_c - grouped;
  for (int oy = 0; oy < g.out_h; ++oy) {
    const float* d_row = dout + (size_t)oy * g.out_w * g.out_c;
    mark_nonzero(d_row, (size_t)g.out_w * g.out_c, marks);
    switch (rest) {
      case 4: list_nonzero<4>(marks, g.out_w, g.out_c, grouped, rest, lists, counts); break;
      case 1: list_nonzero<1>(marks, g.out_w, g.out_c, grouped, rest, lists, counts); break;
      case 2: list_nonzero<2>(marks, g.out_w, g.out_c, grouped, rest, lists, counts); break;
      case 3: list_nonzero<3>(marks, g.out_w, g.out_c, grouped, rest, lists, counts); break;
      case 8: list_nonzero<8>(marks, g.out_w, g.out_c, grouped, rest, lists, counts); break;
      default: list_nonzero<0>(marks, g.out_w, g.out_c, grouped, rest, lists, counts); break;
    }
    const float* x_row = in + (size_t)oy * g.stride_h * row_stride;
    for (int k = 0; k < rest; ++k) {
      const int o = grouped + k;
      const RowList list = {lists + k * kMaxRowPixels, nullptr, d_row + o, g.out_c, counts[k]};
      params_listed_any(g.k_h, span, x_row, row_stride, step, list, dw + (size_t)o * filter, db + o);
    }
  }
}

namespace {

typedef int i4v __attribute__((vector_size(16)));

// Lists of the fused backward, per pool row: for channel o and window row ky (slot o * kh + ky), the
// windows whose first maximum lies in row ky, as (conv output column, gradient), in window order.
struct PoolLists {
  int* ox;
  float* d;
  int* counts;
  int cap;  // entries per slot
  int kh;
};

// The pool's backward at one window and channel: the first maximum (only a strictly greater value
// replaces it, maxpool2d_backward's rule), din = 0 + d there, then each activation's backward at that
// element (y there is the maximum itself).
TV_INLINE float activations_backward(float d, float y, const ActivationStep* acts, int n_acts) {
  for (int a = 0; a < n_acts; ++a) d = y > 0.0f ? d : (acts[a].leaky ? acts[a].alpha * d : 0.0f);
  return d;
}

// One pool row, any geometry: the counts live in memory.
void pool_row_lists_any(const Geom2D& pool, const float* y, const float* dpool, const ActivationStep* acts, int n_acts,
                        int py, PoolLists& lists) {
  const int c_n = pool.in_c;
  const size_t y_row = (size_t)pool.in_w * c_n;
  for (int s = 0; s < c_n * lists.kh; ++s) lists.counts[s] = 0;
  for (int px = 0; px < pool.out_w; ++px) {
    const float* window = y + (size_t)py * pool.k_h * y_row + (size_t)px * pool.k_w * c_n;
    const float* d_px = dpool + ((size_t)py * pool.out_w + px) * c_n;
    for (int c = 0; c < c_n; ++c) {
      float m = window[c];
      int best_ky = 0, best_kx = 0;
      for (int ky = 0; ky < pool.k_h; ++ky)
        for (int kx = 0; kx < pool.k_w; ++kx) {
          const float v = window[ky * y_row + (size_t)kx * c_n + c];
          if (v > m) {
            m = v;
            best_ky = ky;
            best_kx = kx;
          }
        }
      const float d = activations_backward(0.0f + d_px[c], m, acts, n_acts);
      const int slot = c * lists.kh + best_ky;
      int& n = lists.counts[slot];
      lists.ox[slot * lists.cap + n] = px * pool.k_w + best_kx;
      lists.d[slot * lists.cap + n] = d;
      n += nonzero(d);
    }
  }
}

// One pool row of 2x2 windows over C channels (C a multiple of 4): the argmax four channels at a
// time with vector selects, the counts in registers, and every item written to both row lists with
// only the right count advancing, so nothing branches on the data.
template <int C>
TV_INLINE void pool_row_lists_2x2(const Geom2D& pool, const float* y, const float* dpool, const ActivationStep* acts,
                                  int n_acts, int py, PoolLists& lists) {
  const size_t y_row = (size_t)pool.in_w * C;
  int n[C][2] = {};
  for (int px = 0; px < pool.out_w; ++px) {
    const float* window = y + (size_t)py * 2 * y_row + (size_t)px * 2 * C;
    const float* d_px = dpool + ((size_t)py * pool.out_w + px) * C;
    for (int c = 0; c < C; c += 4) {
      const f4 v0 = load4(window + c), v1 = load4(window + C + c);
      const f4 v2 = load4(window + y_row + c), v3 = load4(window + y_row + C + c);
      f4 m = v0;
      i4v best = i4v{0, 0, 0, 0};
      i4v gt = v1 > m;
      m = gt ? v1 : m;
      best = gt ? i4v{1, 1, 1, 1} : best;
      gt = v2 > m;
      m = gt ? v2 : m;
      best = gt ? i4v{2, 2, 2, 2} : best;
      gt = v3 > m;
      m = gt ? v3 : m;
      best = gt ? i4v{3, 3, 3, 3} : best;
      const f4 zero = splat4(0.0f);
      f4 d = zero + load4(d_px + c);
      for (int a = 0; a < n_acts; ++a) d = m > zero ? d : (acts[a].leaky ? splat4(acts[a].alpha) * d : zero);
      for (int l = 0; l < 4; ++l) {
        const int o = c + l, b = best[l], ox = px * 2 + (b & 1), bottom = b >> 1;
        const float dl = d[l];
        const int nz = nonzero(dl);
        int* ox0 = lists.ox + (o * 2) * lists.cap;
        float* d0 = lists.d + (o * 2) * lists.cap;
        ox0[n[o][0]] = ox;
        d0[n[o][0]] = dl;
        ox0[lists.cap + n[o][1]] = ox;
        d0[lists.cap + n[o][1]] = dl;
        n[o][0] += nz & (bottom ^ 1);
        n[o][1] += nz & bottom;
      }
    }
  }
  for (int o = 0; o < C; ++o) {
    lists.counts[o * 2] = n[o][0];
    lists.counts[o * 2 + 1] = n[o][1];
  }
}

}  // namespace

TV_TARGET_CLONES bool conv2d_pool_backward_params(const Geom2D& conv, const Geom2D& pool, const ActivationStep* acts,
                                                  int n_acts, const float* in, const float* y, const float* dpool,
                                                  float* dw, float* db) {
  constexpr int kMaxItems = 2048;
  const bool pool_ok = pool.stride_h == pool.k_h && pool.stride_w == pool.k_w && pool.pad_top == 0 &&
                       pool.pad_left == 0 && pool.k_h >= 1 && pool.k_w >= 1 && pool.in_h == conv.out_h &&
                       pool.in_w == conv.out_w && pool.in_c == conv.out_c && pool.out_h * pool.k_h <= pool.in_h &&
                       pool.out_w * pool.k_w <= pool.in_w;
  const bool conv_ok = conv.pad_top == 0 && conv.pad_left == 0 &&
                       (conv.out_h - 1) * conv.stride_h + conv.k_h <= conv.in_h &&
                       (conv.out_w - 1) * conv.stride_w + conv.k_w <= conv.in_w;
  const int c_n = conv.out_c, kh = pool.k_h, cap = pool.out_w;
  if (!pool_ok || !conv_ok || (size_t)c_n * kh * cap > (size_t)kMaxItems) return false;

  int list_ox[kMaxItems], counts[kMaxItems];
  float list_d[kMaxItems];
  PoolLists lists = {list_ox, list_d, counts, cap, kh};
  const int span = conv.k_w * conv.in_c, filter = conv.k_h * span;
  const size_t row_stride = (size_t)conv.in_w * conv.in_c, step = (size_t)conv.stride_w * conv.in_c;
  for (int py = 0; py < pool.out_h; ++py) {
    if (pool.k_h == 2 && pool.k_w == 2 && c_n == 4)
      pool_row_lists_2x2<4>(pool, y, dpool, acts, n_acts, py, lists);
    else if (pool.k_h == 2 && pool.k_w == 2 && c_n == 8)
      pool_row_lists_2x2<8>(pool, y, dpool, acts, n_acts, py, lists);
    else
      pool_row_lists_any(pool, y, dpool, acts, n_acts, py, lists);
    // Conv output rows py * kh + ky in order; within each, the windows in order: row-major.
    for (int o = 0; o < c_n; ++o)
      for (int ky = 0; ky < kh; ++ky) {
        const int slot = o * kh + ky;
        const RowList list = {list_ox + slot * cap, list_d + slot * cap, nullptr, c_n, counts[slot]};
        const float* x_row = in + (size_t)(py * kh + ky) * conv.stride_h * row_stride;
        params_listed_any(conv.k_h, span, x_row, row_stride, step, list, dw + (size_t)o * filter, db + o);
      }
  }
  return true;
}

}  // namespace fast
}  // namespace tv
