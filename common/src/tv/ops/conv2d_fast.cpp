// Conv2D, fast variant: the sums of conv2d.cpp in the same order, several outputs at a time.
//
// forward (stride 1): the k_h input rows one output row reads are copied into planar scratch rows
// (one row per input channel), so eight neighbouring output pixels read eight consecutive floats per
// tap. Each lane sums bias + taps in (ky, kx, ic) order exactly like the reference; pixels whose
// window leaves the input (padding) are computed by the reference loop.
//
// backward_data (stride 1): gathers instead of scattering. Input pixel (iy, ix) receives
// dout[oy][ox][o] * w[o][ky][kx][i] from oy = iy + pad_top - ky, ox = ix + pad_left - kx; the
// reference adds these in (oy, ox, o) order, i.e. ky and kx descending, o ascending, and so does each
// lane here, eight input pixels at a time, reading planar copies of the dout rows. Output columns
// outside the tensor read zeros: adding 0 * w to a sum that starts at +0 changes no bit (such a sum
// is never -0) as long as w is finite, which is also what makes the reference's skip of zero dout
// invisible.
//
// backward_params (any stride; a padded conv works on a zero-padded copy of its input, see
// padded_backward_params): each weight's gradient sums d * x over the output pixels in row-major
// order, skipping d == 0, as in the reference.
//  - Output channels in groups of 8 (one vector lane per channel): for a run of up to 12 taps the
//    gradients stay in registers while all pixels stream by. When dout holds a zero anywhere, each
//    update is a select that keeps the old sum in the lanes whose d is zero: the reference's skip.
//  - The remaining channels (fewer than 8, e.g. the 4 filters of the webmcu preset's first layer), or
//    all of at most 8 channels when half of dout or more is zero: per output row, the pixels with
//    d != 0 are listed without branches (after a 2x2 max-pool three of every four are zero, and a
//    branch per pixel would mispredict), then one filter's gradient is updated in registers, one
//    vector per kernel row, for each listed pixel in order.
//
// conv2d_pool_backward_params (kernel_variants.h): the same listed update, with the lists made
// straight from the pooled gradient: per pool window and channel the first maximum (the pool's
// rule), the activations' backward at that one element, and the window's conv output pixel, kept in
// the conv output's row-major order (all windows' top rows, then their next rows, ...).
//
// Scratch lives on the stack (at most kScratchFloats floats); a layer that needs more, or a geometry
// without a fast path, runs the reference kernel.
#include <stdint.h>

#include "tv/ops/kernel_variants.h"
#include "tv/ops/simd.h"
#include "tv/ops/window.h"

#define TV_INLINE inline __attribute__((always_inline))

namespace tv {
namespace fast {
namespace {

using simd::f4;
using simd::f8;
using simd::load4;
using simd::load8;
using simd::splat4;
using simd::splat8;
using simd::store4;
using simd::store8;

constexpr int kScratchFloats = 8192;  // 32 KB of stack per call
constexpr int kMaxRowPixels = 512;    // backward_params: pixels of one output row
constexpr int kMaxKernelRows = 64;

// The channel blocks of the vector loops: 8 at a time, then 4, then what is left (1..3).
int block_size(int left) {
  return left >= 8 ? 8 : (left >= 4 ? 4 : left);
}

// Writes lane l of acc[j] to out[l * stride + j] for the first n lanes (vectors of pixels -> HWC).
template <int B>
TV_INLINE void store_pixels(const f8* acc, int n, int stride, float* out) {
  if constexpr (B == 8) {
    f8 r[8];
    for (int j = 0; j < 8; ++j) r[j] = acc[j];
    simd::transpose8(r);  // r[l]: pixel l's 8 channels
    for (int l = 0; l < n; ++l) store8(out + (size_t)l * stride, r[l]);
  } else if constexpr (B == 4) {
    f8 r0 = acc[0], r1 = acc[1], r2 = acc[2], r3 = acc[3];
    simd::transpose4_halves(r0, r1, r2, r3);  // r_k: pixel k's 4 channels, then pixel k + 4's
    const f8 r[4] = {r0, r1, r2, r3};
    for (int l = 0; l < n; ++l) store4(out + (size_t)l * stride, l < 4 ? simd::low4(r[l]) : simd::high4(r[l - 4]));
  } else {
    float tile[B][8];
    for (int j = 0; j < B; ++j) store8(tile[j], acc[j]);
    for (int l = 0; l < n; ++l)
      for (int j = 0; j < B; ++j) out[(size_t)l * stride + j] = tile[j][l];
  }
}

// Eight pixels of C channels (HWC) -> C planar vectors of eight.
template <int C>
TV_INLINE void planar8(const float* src, f8* planes) {
  if constexpr (C == 8) {
    for (int l = 0; l < 8; ++l) planes[l] = load8(src + 8 * l);
    simd::transpose8(planes);
  } else if constexpr (C == 4) {
    const f8 a = load8(src), b = load8(src + 8), c = load8(src + 16), d = load8(src + 24);  // pixel pairs
    planes[0] = TV_SHUFFLE8(a, c, 0, 1, 2, 3, 8, 9, 10, 11);                                // pixels 0 | 4
    planes[1] = TV_SHUFFLE8(a, c, 4, 5, 6, 7, 12, 13, 14, 15);                              // pixels 1 | 5
    planes[2] = TV_SHUFFLE8(b, d, 0, 1, 2, 3, 8, 9, 10, 11);                                // pixels 2 | 6
    planes[3] = TV_SHUFFLE8(b, d, 4, 5, 6, 7, 12, 13, 14, 15);                              // pixels 3 | 7
    simd::transpose4_halves(planes[0], planes[1], planes[2], planes[3]);
  } else {
    static_assert(C == 3, "planar8: 3, 4 or 8 channels");
    const f8 a = load8(src), b = load8(src + 8), c = load8(src + 16);
    const f8 p0 = TV_SHUFFLE8(a, b, 0, 3, 6, 9, 12, 15, 0, 0);
    const f8 p1 = TV_SHUFFLE8(a, b, 1, 4, 7, 10, 13, 0, 0, 0);
    const f8 p2 = TV_SHUFFLE8(a, b, 2, 5, 8, 11, 14, 0, 0, 0);
    planes[0] = TV_SHUFFLE8(p0, c, 0, 1, 2, 3, 4, 5, 10, 13);
    planes[1] = TV_SHUFFLE8(p1, c, 0, 1, 2, 3, 4, 8, 11, 14);
    planes[2] = TV_SHUFFLE8(p2, c, 0, 1, 2, 3, 4, 9, 12, 15);
  }
}

// Copies pixels [0, n) of one HWC row (C channels) to C planar rows of pw floats at dst + lead,
// zero-filling planar positions [0, lead) and [lead + n, pw).
template <int C>
TV_INLINE void to_planar(const float* src, int n, int lead, int c_runtime, int pw, float* dst) {
  const int c = C ? C : c_runtime;
  for (int i = 0; i < c; ++i) {
    float* d = dst + (size_t)i * pw;
    for (int t = 0; t < lead; ++t) d[t] = 0.0f;
    for (int t = lead + n; t < pw; ++t) d[t] = 0.0f;
  }
  int t = 0;
  if constexpr (C == 3 || C == 4 || C == 8) {
    for (; t + 8 <= n; t += 8) {
      f8 planes[C];
      planar8<C>(src + (size_t)t * C, planes);
      for (int i = 0; i < C; ++i) store8(dst + (size_t)i * pw + lead + t, planes[i]);
    }
  }
  for (; t < n; ++t)
    for (int i = 0; i < c; ++i) dst[(size_t)i * pw + lead + t] = src[(size_t)t * c + i];
}

TV_INLINE void to_planar_any(const float* src, int n, int lead, int c, int pw, float* dst) {
  switch (c) {
    case 3: return to_planar<3>(src, n, lead, c, pw, dst);
    case 4: return to_planar<4>(src, n, lead, c, pw, dst);
    case 8: return to_planar<8>(src, n, lead, c, pw, dst);
    default: return to_planar<0>(src, n, lead, c, pw, dst);
  }
}

// ---- forward ----

// One output pixel exactly as ref::conv2d_forward computes it (the border of a padded conv).
void forward_pixel(const Geom2D& g, const float* in, const float* w, const float* b, float* out, int oy, int ox) {
  const int w_row = g.k_w * g.in_c, w_filter = g.k_h * w_row;
  const TapRange ry = valid_taps(oy, g.stride_h, g.pad_top, g.k_h, g.in_h);
  const TapRange rx = valid_taps(ox, g.stride_w, g.pad_left, g.k_w, g.in_w);
  const int iy0 = oy * g.stride_h - g.pad_top, ix0 = ox * g.stride_w - g.pad_left;
  const int span = (rx.end - rx.begin) * g.in_c;
  float* o_px = out + ((size_t)oy * g.out_w + ox) * g.out_c;
  for (int o = 0; o < g.out_c; ++o) {
    float acc = b[o];
    for (int ky = ry.begin; ky < ry.end; ++ky) {
      const float* x = in + ((size_t)(iy0 + ky) * g.in_w + (ix0 + rx.begin)) * g.in_c;
      const float* k = w + (size_t)o * w_filter + ky * w_row + rx.begin * g.in_c;
      for (int j = 0; j < span; ++j) acc += x[j] * k[j];
    }
    o_px[o] = acc;
  }
}

// Output channels [o0, o0 + OB) of nx interior pixels of one row, NV vectors of 8 pixels per step.
// rows[ky]: the planar input row kernel row ky reads (in_c planes of pw floats, from the first
// pixel's first tap; pw >= nx rounded up to 16, plus k_w - 1). wt: the block's weights as
// [ky][kx][ic][OB]. out: the first pixel's channel o0.
template <int OB, int NV>
TV_INLINE void forward_block(const Geom2D& g, const float* const* rows, int pw, int nx, const float* wt,
                             const float* bias, float* out) {
  const int nv = (nx + 7) / 8;
  for (int v = 0; v < nv; v += NV) {
    f8 acc[NV][OB];
    for (int u = 0; u < NV; ++u)
      for (int j = 0; j < OB; ++j) acc[u][j] = splat8(bias[j]);
    const float* t = wt;
    for (int ky = 0; ky < g.k_h; ++ky) {
      const float* r = rows[ky] + v * 8;
      for (int kx = 0; kx < g.k_w; ++kx)
        for (int i = 0; i < g.in_c; ++i, t += OB) {
          f8 x[NV];
          for (int u = 0; u < NV; ++u) x[u] = load8(r + (size_t)i * pw + kx + 8 * u);
          for (int j = 0; j < OB; ++j) {
            const f8 wj = splat8(t[j]);
            for (int u = 0; u < NV; ++u) acc[u][j] += x[u] * wj;
          }
        }
    }
    for (int u = 0; u < NV && (v + u) * 8 < nx; ++u) {
      const int first = (v + u) * 8;
      store_pixels<OB>(acc[u], nx - first < 8 ? nx - first : 8, g.out_c, out + (size_t)first * g.out_c);
    }
  }
}

// ---- backward_data ----

// Input channels [i0, i0 + IB) of one row of din, NV vectors of 8 pixels per step. drow[k]: the
// planar dout row of kernel row ky_hi - k (out_c planes of pw floats; plane index s holds output
// column s + pad_left - (k_w - 1)). wd: the block's weights as [ky][kx][o][IB]. din: the row's first
// pixel, channel i0.
template <int IB, int NV>
TV_INLINE void data_block(const Geom2D& g, const float* const* drow, int ky_hi, int ky_lo, int pw, const float* wd,
                          float* din) {
  const int nv = (g.in_w + 7) / 8;
  for (int v = 0; v < nv; v += NV) {
    f8 acc[NV][IB];
    for (int u = 0; u < NV; ++u)
      for (int j = 0; j < IB; ++j) acc[u][j] = splat8(0.0f);
    for (int ky = ky_hi; ky >= ky_lo; --ky) {
      const float* r = drow[ky_hi - ky] + v * 8;
      for (int kx = g.k_w - 1; kx >= 0; --kx) {
        const float* rr = r + (g.k_w - 1 - kx);
        const float* wk = wd + (size_t)(ky * g.k_w + kx) * g.out_c * IB;
        for (int o = 0; o < g.out_c; ++o, wk += IB) {
          f8 d[NV];
          for (int u = 0; u < NV; ++u) d[u] = load8(rr + (size_t)o * pw + 8 * u);
          for (int j = 0; j < IB; ++j) {
            const f8 wj = splat8(wk[j]);
            for (int u = 0; u < NV; ++u) acc[u][j] += d[u] * wj;
          }
        }
      }
    }
    for (int u = 0; u < NV && (v + u) * 8 < g.in_w; ++u) {
      const int first = (v + u) * 8;
      store_pixels<IB>(acc[u], g.in_w - first < 8 ? g.in_w - first : 8, g.in_c, din + (size_t)first * g.in_c);
    }
  }
}

// ---- backward_params ----

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

TV_TARGET_CLONES void conv2d_forward(const Geom2D& g, const float* in, const float* w, const float* b, float* out) {
  if (g.stride_h != 1 || g.stride_w != 1 || g.k_h > kMaxKernelRows) return ref::conv2d_forward(g, in, w, b, out);
  // Interior: output pixels whose whole window lies inside the input.
  const int oy_lo = g.pad_top, oy_hi_raw = g.in_h + g.pad_top - g.k_h + 1;
  const int ox_lo = g.pad_left, ox_hi_raw = g.in_w + g.pad_left - g.k_w + 1;
  const int oy_hi = oy_hi_raw < g.out_h ? oy_hi_raw : g.out_h;
  const int ox_hi = ox_hi_raw < g.out_w ? ox_hi_raw : g.out_w;
  const bool interior = ox_hi > ox_lo && oy_hi > oy_lo;
  const int nx = interior ? ox_hi - ox_lo : 0;
  const int filter = g.k_h * g.k_w * g.in_c;
  const int pw = (nx + 15) / 16 * 16 + g.k_w - 1;  // room for two vectors per step
  const size_t ring = (size_t)g.k_h * g.in_c * pw, weights = (size_t)g.out_c * filter;
  if (interior && ring + weights > (size_t)kScratchFloats) return ref::conv2d_forward(g, in, w, b, out);

  // Border rows and columns: the reference loop, pixel by pixel.
  for (int oy = 0; oy < g.out_h; ++oy) {
    if (interior && oy >= oy_lo && oy < oy_hi) {
      for (int ox = 0; ox < ox_lo; ++ox) forward_pixel(g, in, w, b, out, oy, ox);
      for (int ox = ox_hi; ox < g.out_w; ++ox) forward_pixel(g, in, w, b, out, oy, ox);
    } else {
      for (int ox = 0; ox < g.out_w; ++ox) forward_pixel(g, in, w, b, out, oy, ox);
    }
  }
  if (!interior) return;

  float scratch[kScratchFloats] __attribute__((aligned(32)));
  float* ring_rows = scratch;
  float* wt = scratch + ring;
  for (int o0 = 0, ob; o0 < g.out_c; o0 += ob) {  // weights per block as [ky][kx][ic][o in block]
    ob = block_size(g.out_c - o0);
    float* dst = wt + (size_t)o0 * filter;
    for (int t = 0; t < filter; ++t)
      for (int j = 0; j < ob; ++j) dst[t * ob + j] = w[(size_t)(o0 + j) * filter + t];
  }
  const int x0 = ox_lo - g.pad_left;  // input column of the first interior pixel's first tap
  int next_row = oy_lo - g.pad_top;   // next input row to copy into the ring
  const float* rows[kMaxKernelRows];
  for (int oy = oy_lo; oy < oy_hi; ++oy) {
    const int iy0 = oy - g.pad_top;
    for (; next_row < iy0 + g.k_h; ++next_row)
      to_planar_any(in + ((size_t)next_row * g.in_w + x0) * g.in_c, nx + g.k_w - 1, 0, g.in_c, pw,
                    ring_rows + (size_t)(next_row % g.k_h) * g.in_c * pw);
    for (int ky = 0; ky < g.k_h; ++ky) rows[ky] = ring_rows + (size_t)((iy0 + ky) % g.k_h) * g.in_c * pw;
    float* out_row = out + ((size_t)oy * g.out_w + ox_lo) * g.out_c;
    for (int o0 = 0, ob; o0 < g.out_c; o0 += ob) {
      ob = block_size(g.out_c - o0);
      const float* wb = wt + (size_t)o0 * filter;
      switch (ob) {
        case 8: forward_block<8, 1>(g, rows, pw, nx, wb, b + o0, out_row + o0); break;
        case 4: forward_block<4, 2>(g, rows, pw, nx, wb, b + o0, out_row + o0); break;
        case 3: forward_block<3, 2>(g, rows, pw, nx, wb, b + o0, out_row + o0); break;
        case 2: forward_block<2, 2>(g, rows, pw, nx, wb, b + o0, out_row + o0); break;
        default: forward_block<1, 2>(g, rows, pw, nx, wb, b + o0, out_row + o0); break;
      }
    }
  }
}

TV_TARGET_CLONES void conv2d_backward_data(const Geom2D& g, const float* w, const float* dout, float* din) {
  if (g.stride_h != 1 || g.stride_w != 1 || g.k_h > kMaxKernelRows) return ref::conv2d_backward_data(g, w, dout, din);
  const int filter = g.k_h * g.k_w * g.in_c;
  const int pw = (g.in_w + 15) / 16 * 16 + g.k_w - 1;
  const size_t ring = (size_t)g.k_h * g.out_c * pw, weights = (size_t)g.out_c * filter;
  if (ring + weights > (size_t)kScratchFloats) return ref::conv2d_backward_data(g, w, dout, din);

  float scratch[kScratchFloats] __attribute__((aligned(32)));
  float* ring_rows = scratch;
  float* wd = scratch + ring;
  for (int i0 = 0, ib; i0 < g.in_c; i0 += ib) {  // weights per block as [ky][kx][o][ic in block]
    ib = block_size(g.in_c - i0);
    float* dst = wd + (size_t)i0 * g.k_h * g.k_w * g.out_c;
    for (int ky = 0; ky < g.k_h; ++ky)
      for (int kx = 0; kx < g.k_w; ++kx)
        for (int o = 0; o < g.out_c; ++o)
          for (int j = 0; j < ib; ++j)
            dst[(((size_t)ky * g.k_w + kx) * g.out_c + o) * ib + j] =
                w[(size_t)o * filter + ((size_t)ky * g.k_w + kx) * g.in_c + i0 + j];
  }
  // Planar dout rows: index s holds output column s - lead, lead = k_w - 1 - pad_left (columns
  // outside [0, out_w) are zero).
  const int lead = g.k_w - 1 - g.pad_left;
  int first_col = lead < 0 ? -lead : 0;  // first output column that lands in the planar row
  int cols = g.out_w - first_col;
  if (cols > pw - (lead > 0 ? lead : 0)) cols = pw - (lead > 0 ? lead : 0);
  int next_row = 0;  // next dout row to copy into the ring
  const float* drow[kMaxKernelRows];
  for (int iy = 0; iy < g.in_h; ++iy) {
    // Kernel rows whose output row oy = iy + pad_top - ky exists, oy ascending = ky descending.
    int ky_hi = iy + g.pad_top, ky_lo = iy + g.pad_top - g.out_h + 1;
    if (ky_hi > g.k_h - 1) ky_hi = g.k_h - 1;
    if (ky_lo < 0) ky_lo = 0;
    float* din_row = din + (size_t)iy * g.in_w * g.in_c;
    if (ky_hi < ky_lo) {
      for (size_t i = 0, n = (size_t)g.in_w * g.in_c; i < n; ++i) din_row[i] = 0.0f;
      continue;
    }
    for (; next_row <= iy + g.pad_top - ky_lo; ++next_row)
      to_planar_any(dout + ((size_t)next_row * g.out_w + first_col) * g.out_c, cols > 0 ? cols : 0, lead > 0 ? lead : 0,
                    g.out_c, pw, ring_rows + (size_t)(next_row % g.k_h) * g.out_c * pw);
    for (int ky = ky_hi; ky >= ky_lo; --ky)
      drow[ky_hi - ky] = ring_rows + (size_t)((iy + g.pad_top - ky) % g.k_h) * g.out_c * pw;
    for (int i0 = 0, ib; i0 < g.in_c; i0 += ib) {
      ib = block_size(g.in_c - i0);
      const float* wb = wd + (size_t)i0 * g.k_h * g.k_w * g.out_c;
      switch (ib) {
        case 8: data_block<8, 1>(g, drow, ky_hi, ky_lo, pw, wb, din_row + i0); break;
        case 4: data_block<4, 2>(g, drow, ky_hi, ky_lo, pw, wb, din_row + i0); break;
        case 3: data_block<3, 2>(g, drow, ky_hi, ky_lo, pw, wb, din_row + i0); break;
        case 2: data_block<2, 2>(g, drow, ky_hi, ky_lo, pw, wb, din_row + i0); break;
        default: data_block<1, 2>(g, drow, ky_hi, ky_lo, pw, wb, din_row + i0); break;
      }
    }
  }
}

// A padded conv's weight gradient: the unpadded fast path on a zero-padded copy of the input. Each
// tap in the padding adds d * 0 = +-0 to a sum that the reference leaves alone; for finite d that
// changes no bit (a running sum that starts at +0 or at any non-zero value never becomes -0, and x +
// +-0 = x otherwise). A non-finite d (d * 0 = NaN), or an input too large for the stack copy, runs
// the reference.
static constexpr int kPaddedFloats = 32768;  // 128 KB of stack
static void padded_backward_params(const Geom2D& g, const float* in, const float* dout, float* dw, float* db) {
  const int ph = (g.out_h - 1) * g.stride_h + g.k_h, pw = (g.out_w - 1) * g.stride_w + g.k_w;
  const size_t n_out = (size_t)g.out_h * g.out_w * g.out_c;
  bool finite = (size_t)ph * pw * g.in_c <= (size_t)kPaddedFloats;
  for (size_t i = 0; finite && i < n_out; ++i) finite = dout[i] - dout[i] == 0.0f;
  if (!finite) return ref::conv2d_backward_params(g, in, dout, dw, db);
  float padded[kPaddedFloats] __attribute__((aligned(32)));
  for (int y = 0; y < ph; ++y) {
    const int iy = y - g.pad_top;
    float* row = padded + (size_t)y * pw * g.in_c;
    for (int x = 0; x < pw; ++x) {
      const int ix = x - g.pad_left;
      const bool valid = iy >= 0 && iy < g.in_h && ix >= 0 && ix < g.in_w;
      const float* src = valid ? in + ((size_t)iy * g.in_w + ix) * g.in_c : nullptr;
      for (int c = 0; c < g.in_c; ++c) row[(size_t)x * g.in_c + c] = valid ? src[c] : 0.0f;
    }
  }
  Geom2D inner = g;
  inner.in_h = ph;
  inner.in_w = pw;
  inner.pad_top = inner.pad_left = 0;
  fast::conv2d_backward_params(inner, padded, dout, dw, db);
}

TV_TARGET_CLONES void conv2d_backward_params(const Geom2D& g, const float* in, const float* dout, float* dw,
                                             float* db) {
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
  const int grouped = 2 * zeros >= total && g.out_c <= 8 ? 0 : g.out_c / 8 * 8;
  for (int o0 = 0; o0 < grouped; o0 += 8)
    for (int ky = 0; ky < g.k_h; ++ky)
      for (int t0 = 0; t0 < span; t0 += 12) {
        const int n = span - t0 < 12 ? span - t0 : 12;
        float* bias = ky == 0 && t0 == 0 ? db : nullptr;
        if (zeros)
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
