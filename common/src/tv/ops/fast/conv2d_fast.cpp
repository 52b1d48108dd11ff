// Conv2D, fast variant: the sums of conv2d.cpp in the same order, several outputs at a time.
//
// forward (any stride): the k_h input rows one output row reads are copied into planar scratch rows
// (one row per input channel and column phase: with stride s, columns p, p + s, ... for p < s), so
// eight neighbouring output pixels read eight consecutive floats per tap. Each lane sums bias + taps
// in (ky, kx, ic) order exactly like the reference; pixels whose window leaves the input (padding)
// add their valid taps in the same order, eight output channels per vector.
//
// backward_data (stride 1): gathers instead of scattering. Input pixel (iy, ix) receives
// dout[oy][ox][o] * w[o][ky][kx][i] from oy = iy + pad_top - ky, ox = ix + pad_left - kx; the
// reference adds these in (oy, ox, o) order, i.e. ky and kx descending, o ascending, and so does each
// lane here, eight input pixels at a time, reading planar copies of the dout rows. Output columns
// outside the tensor read zeros: adding 0 * w to a sum that starts at +0 changes no bit (such a sum
// is never -0) as long as w is finite, which is also what makes the reference's skip of zero dout
// invisible.
//
// conv2d_forward_relu / conv2d_backward_data_relu (a ReLU fused in, kernel_variants.h): each output
// row gets the ReLU's expression as soon as it is complete, while it is in L1; the 1x1 path applies it
// to each stored vector.
//
// Weight gradients: conv2d_params_fast.cpp. 1x1 layers first try the matrix-product paths of
// pointwise_fast.cpp.
//
// Scratch lives on the stack (at most kScratchFloats floats); a layer that needs more, or a geometry
// without a fast path, runs the reference kernel.
#include "tv/ops/fast/pointwise.h"
#include "tv/ops/kernel_variants.h"
#include "tv/ops/simd.h"
#include "tv/ops/window.h"

namespace tv {
namespace fast {
namespace {

using simd::load4;
using simd::store4;

constexpr int kScratchFloats = 8192;  // 32 KB of stack per call
constexpr int kMaxKernelRows = 64;
constexpr int kMaxStride = 8;  // forward: planar phases per input row

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

// Copies input columns [0, avail) of one HWC row to in_c * sw planar rows of pw floats: plane
// (i * sw + p) holds channel i of columns p, p + sw, p + 2 sw, ... (zeros past avail), so that tap kx
// of eight neighbouring output pixels reads eight consecutive floats of plane kx % sw at kx / sw.
template <int C>
TV_INLINE void to_planar_strided_c(const float* src, int avail, int c_runtime, int sw, int pw, float* dst) {
  const int c = C ? C : c_runtime;
  int t0 = 0;
  if constexpr (C == 3 || C == 4 || C == 8) {
    if (sw == 2)  // 16 pixels -> eight of each phase per plane
      for (; t0 + 8 <= pw && 2 * (t0 + 8) <= avail; t0 += 8) {
        f8 a[C], b[C];
        planar8<C>(src + (size_t)(2 * t0) * C, a);
        planar8<C>(src + (size_t)(2 * t0 + 8) * C, b);
        for (int i = 0; i < C; ++i) {
          store8(dst + (size_t)(2 * i) * pw + t0, TV_SHUFFLE8(a[i], b[i], 0, 2, 4, 6, 8, 10, 12, 14));
          store8(dst + (size_t)(2 * i + 1) * pw + t0, TV_SHUFFLE8(a[i], b[i], 1, 3, 5, 7, 9, 11, 13, 15));
        }
      }
  }
  for (int p = 0; p < sw; ++p)
    for (int t = t0; t < pw; ++t) {
      const int col = p + sw * t;
      for (int i = 0; i < c; ++i) dst[((size_t)i * sw + p) * pw + t] = col < avail ? src[(size_t)col * c + i] : 0.0f;
    }
}

TV_INLINE void to_planar_strided(const float* src, int avail, int c, int sw, int pw, float* dst) {
  if (sw == 1) return to_planar_any(src, avail < pw ? avail : pw, 0, c, pw, dst);
  switch (c) {
    case 3: return to_planar_strided_c<3>(src, avail, c, sw, pw, dst);
    case 4: return to_planar_strided_c<4>(src, avail, c, sw, pw, dst);
    case 8: return to_planar_strided_c<8>(src, avail, c, sw, pw, dst);
    default: return to_planar_strided_c<0>(src, avail, c, sw, pw, dst);
  }
}

// One output pixel whose window leaves the input (the border of a padded conv), with the valid taps
// in (ky, kx, ic) order as ref::conv2d_forward adds them. wt: the weights as forward_block reads them
// (per block of ob output channels, [ky][kx][ic][ob]); a block of 8 runs as one vector.
TV_INLINE void border_pixel(const Geom2D& g, const float* in, const float* wt, const float* b, float* out, int oy,
                            int ox) {
  const int filter = g.k_h * g.k_w * g.in_c;
  const TapRange ry = valid_taps(oy, g.stride_h, g.pad_top, g.k_h, g.in_h);
  const TapRange rx = valid_taps(ox, g.stride_w, g.pad_left, g.k_w, g.in_w);
  const int iy0 = oy * g.stride_h - g.pad_top, ix0 = ox * g.stride_w - g.pad_left;
  const int span = (rx.end - rx.begin) * g.in_c;
  float* o_px = out + ((size_t)oy * g.out_w + ox) * g.out_c;
  for (int o0 = 0, ob; o0 < g.out_c; o0 += ob) {
    ob = block_size(g.out_c - o0);
    const float* wb = wt + (size_t)o0 * filter;
    if (ob == 8) {
      f8 acc = load8(b + o0);
      for (int ky = ry.begin; ky < ry.end; ++ky) {
        const float* x = in + tap_at(g, iy0, ix0, ky, rx.begin);
        const float* k = wb + ((size_t)ky * g.k_w + rx.begin) * g.in_c * 8;
        for (int j = 0; j < span; ++j) acc += splat8(x[j]) * load8(k + 8 * j);
      }
      store8(o_px + o0, acc);
      continue;
    }
    for (int o = 0; o < ob; ++o) {
      float acc = b[o0 + o];
      for (int ky = ry.begin; ky < ry.end; ++ky) {
        const float* x = in + tap_at(g, iy0, ix0, ky, rx.begin);
        const float* k = wb + ((size_t)ky * g.k_w + rx.begin) * g.in_c * ob + o;
        for (int j = 0; j < span; ++j) acc += x[j] * k[(size_t)j * ob];
      }
      o_px[o0 + o] = acc;
    }
  }
}

// Output channels [o0, o0 + OB) of nx interior pixels of one row, NV vectors of 8 pixels per step.
// rows[ky]: the planar input row kernel row ky reads (in_c * sw planes of pw floats, from the first
// pixel's first tap, see to_planar_strided; pw >= nx rounded up to pixels_per_step, plus (k_w - 1) / sw). wt: the
// block's weights as [ky][kx][ic][OB]. out: the first pixel's channel o0.
template <int OB, int NV, int SW>
TV_INLINE void forward_block(const Geom2D& g, const float* const* rows, int pw, int nx, const float* wt,
                             const float* bias, float* out) {
  const int sw = SW ? SW : g.stride_w;
  const int nv = (nx + 7) / 8;
  for (int v = 0; v < nv; v += NV) {
    f8 acc[NV][OB];
    for (int u = 0; u < NV; ++u)
      for (int j = 0; j < OB; ++j) acc[u][j] = splat8(bias[j]);
    const float* t = wt;
    for (int ky = 0; ky < g.k_h; ++ky) {
      const float* r = rows[ky] + v * 8;
      for (int kx = 0; kx < g.k_w; ++kx) {
        const float* rk = r + (size_t)(kx % sw) * pw + kx / sw;
        for (int i = 0; i < g.in_c; ++i, t += OB) {
          f8 x[NV];
          for (int u = 0; u < NV; ++u) x[u] = load8(rk + (size_t)i * sw * pw + 8 * u);
          for (int j = 0; j < OB; ++j) {
            const f8 wj = splat8(t[j]);
            for (int u = 0; u < NV; ++u) acc[u][j] += x[u] * wj;
          }
        }
      }
    }
    for (int u = 0; u < NV && (v + u) * 8 < nx; ++u) {
      const int first = (v + u) * 8;
      store_pixels<OB>(acc[u], nx - first < 8 ? nx - first : 8, g.out_c, out + (size_t)first * g.out_c);
    }
  }
}

// forward_block for a block of ob output channels; SW: the column stride (0: read it from g). wide: 32
// vector registers, so the 8- and 4-channel blocks take twice the pixels per step (kPixelsPerStep).
template <int SW>
TV_INLINE void forward_blocks(bool wide, int ob, const Geom2D& g, const float* const* rows, int pw, int nx,
                              const float* wb, const float* bias, float* out) {
  switch (ob) {
    case 8:
      if (wide) return forward_block<8, 2, SW>(g, rows, pw, nx, wb, bias, out);
      return forward_block<8, 1, SW>(g, rows, pw, nx, wb, bias, out);
    case 4:
      if (wide) return forward_block<4, 4, SW>(g, rows, pw, nx, wb, bias, out);
      return forward_block<4, 2, SW>(g, rows, pw, nx, wb, bias, out);
    case 3: return forward_block<3, 2, SW>(g, rows, pw, nx, wb, bias, out);
    case 2: return forward_block<2, 2, SW>(g, rows, pw, nx, wb, bias, out);
    default: return forward_block<1, 2, SW>(g, rows, pw, nx, wb, bias, out);
  }
}

// The most pixels a block step reads (every vector of the step, past the row's end too): planar rows
// are padded to a multiple of it.
TV_INLINE int pixels_per_step(bool wide) {
  return wide ? 32 : 16;
}

// The scratch of a fast pass: a ring of k_h planar rows of `row_channels` planes of pw floats (pw: `columns`
// rounded up to whole steps, plus `extra`), then the reordered weights. fits is false when both together
// exceed kScratchFloats; the reference kernel runs instead.
struct ScratchPlan {
  bool wide;
  int pw;
  size_t ring;
  bool fits;
};

TV_INLINE ScratchPlan plan_scratch(const Geom2D& g, int columns, int extra, int row_channels) {
  ScratchPlan s;
  s.wide = simd::wide_registers();
  const int per_step = pixels_per_step(s.wide);
  s.pw = (columns + per_step - 1) / per_step * per_step + extra;
  s.ring = (size_t)g.k_h * row_channels * s.pw;
  s.fits = s.ring + (size_t)g.out_c * (g.k_h * g.k_w * g.in_c) <= (size_t)kScratchFloats;
  return s;
}

// forward's weights per block of output channels, as [ky][kx][ic][o in block] (what forward_block reads),
// written to dst; returns dst.
TV_INLINE const float* forward_weights_by_block(const Geom2D& g, const float* w, float* dst) {
  const int filter = g.k_h * g.k_w * g.in_c;
  for (int o0 = 0, ob; o0 < g.out_c; o0 += ob) {
    ob = block_size(g.out_c - o0);
    float* block = dst + (size_t)o0 * filter;
    for (int t = 0; t < filter; ++t)
      for (int j = 0; j < ob; ++j) block[t * ob + j] = w[(size_t)(o0 + j) * filter + t];
  }
  return dst;
}

// backward_data's weights per block of input channels, as [ky][kx][o][ic in block] (what data_block reads),
// written to dst; returns dst.
TV_INLINE const float* data_weights_by_block(const Geom2D& g, const float* w, float* dst) {
  const int filter = g.k_h * g.k_w * g.in_c;
  for (int i0 = 0, ib; i0 < g.in_c; i0 += ib) {
    ib = block_size(g.in_c - i0);
    float* block = dst + (size_t)i0 * g.k_h * g.k_w * g.out_c;
    for (int ky = 0; ky < g.k_h; ++ky)
      for (int kx = 0; kx < g.k_w; ++kx)
        for (int o = 0; o < g.out_c; ++o)
          for (int j = 0; j < ib; ++j)
            block[(((size_t)ky * g.k_w + kx) * g.out_c + o) * ib + j] =
                w[(size_t)o * filter + ((size_t)ky * g.k_w + kx) * g.in_c + i0 + j];
  }
  return dst;
}

// The reference kernels, then the epilogue over the whole result: the geometries without a fast path.
TV_INLINE void reference_forward(const Geom2D& g, const float* in, const float* w, const float* b, float* out,
                                 const Epilogue& e) {
  ref::conv2d_forward(g, in, w, b, out);
  apply_epilogue(e, out, 0, (size_t)g.out_h * g.out_w * g.out_c);
}

TV_INLINE void reference_data(const Geom2D& g, const float* w, const float* dout, float* din, const Epilogue& e) {
  ref::conv2d_backward_data(g, w, dout, din);
  apply_epilogue(e, din, 0, (size_t)g.in_h * g.in_w * g.in_c);
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

// data_block for a block of ib input channels; wide as in forward_blocks.
TV_INLINE void data_blocks(bool wide, int ib, const Geom2D& g, const float* const* drow, int ky_hi, int ky_lo, int pw,
                           const float* wd, float* din) {
  switch (ib) {
    case 8:
      if (wide) return data_block<8, 2>(g, drow, ky_hi, ky_lo, pw, wd, din);
      return data_block<8, 1>(g, drow, ky_hi, ky_lo, pw, wd, din);
    case 4:
      if (wide) return data_block<4, 4>(g, drow, ky_hi, ky_lo, pw, wd, din);
      return data_block<4, 2>(g, drow, ky_hi, ky_lo, pw, wd, din);
    case 3: return data_block<3, 2>(g, drow, ky_hi, ky_lo, pw, wd, din);
    case 2: return data_block<2, 2>(g, drow, ky_hi, ky_lo, pw, wd, din);
    default: return data_block<1, 2>(g, drow, ky_hi, ky_lo, pw, wd, din);
  }
}

TV_INLINE void forward(const Geom2D& g, const float* in, const float* w, const float* b, float* out,
                       const Epilogue& e) {
  if (pointwise_forward(g, in, w, b, out, e)) return;
  const int sh = g.stride_h, sw = g.stride_w;
  if (sh < 1 || sw < 1 || sw > kMaxStride || g.k_h > kMaxKernelRows) return reference_forward(g, in, w, b, out, e);
  // Interior: output pixels whose whole window lies inside the input.
  int oy_lo, oy_hi, ox_lo, ox_hi;
  inside_range(g.in_h, g.k_h, sh, g.pad_top, g.out_h, &oy_lo, &oy_hi);
  inside_range(g.in_w, g.k_w, sw, g.pad_left, g.out_w, &ox_lo, &ox_hi);
  const bool interior = ox_hi > ox_lo && oy_hi > oy_lo;
  const int nx = interior ? ox_hi - ox_lo : 0;
  const int filter = g.k_h * g.k_w * g.in_c;
  const ScratchPlan plan = plan_scratch(g, nx, (g.k_w - 1) / sw, g.in_c * sw);  // room for a whole last step
  if (!plan.fits) return reference_forward(g, in, w, b, out, e);
  float scratch[kScratchFloats] __attribute__((aligned(32)));  // the ring of planar rows, then the weights
  const float* wt = forward_weights_by_block(g, w, scratch + plan.ring);
  const int pw = plan.pw;
  // Border rows and columns, pixel by pixel.
  for (int oy = 0; oy < g.out_h; ++oy) {
    if (interior && oy >= oy_lo && oy < oy_hi) {
      for (int ox = 0; ox < ox_lo; ++ox) border_pixel(g, in, wt, b, out, oy, ox);
      for (int ox = ox_hi; ox < g.out_w; ++ox) border_pixel(g, in, wt, b, out, oy, ox);
    } else {
      for (int ox = 0; ox < g.out_w; ++ox) border_pixel(g, in, wt, b, out, oy, ox);
      apply_epilogue_row(e, out, oy, g.out_w, g.out_c);  // complete: no interior pixel
    }
  }
  if (!interior) return;

  const int x0 = ox_lo * sw - g.pad_left;  // input column of the first interior pixel's first tap
  int next_row = 0;                        // next input row to copy into the ring
  const float* rows[kMaxKernelRows];
  for (int oy = oy_lo; oy < oy_hi; ++oy) {
    const int iy0 = oy * sh - g.pad_top;
    if (next_row < iy0) next_row = iy0;  // rows a stride larger than the kernel skips
    for (; next_row < iy0 + g.k_h; ++next_row)
      to_planar_strided(in + ((size_t)next_row * g.in_w + x0) * g.in_c, g.in_w - x0, g.in_c, sw, pw,
                        scratch + (size_t)(next_row % g.k_h) * g.in_c * sw * pw);
    for (int ky = 0; ky < g.k_h; ++ky) rows[ky] = scratch + (size_t)((iy0 + ky) % g.k_h) * g.in_c * sw * pw;
    float* out_row = out + ((size_t)oy * g.out_w + ox_lo) * g.out_c;
    for (int o0 = 0, ob; o0 < g.out_c; o0 += ob) {
      ob = block_size(g.out_c - o0);
      const float* wb = wt + (size_t)o0 * filter;
      if (sw == 1)
        forward_blocks<1>(plan.wide, ob, g, rows, pw, nx, wb, b + o0, out_row + o0);
      else if (sw == 2)
        forward_blocks<2>(plan.wide, ob, g, rows, pw, nx, wb, b + o0, out_row + o0);
      else
        forward_blocks<0>(plan.wide, ob, g, rows, pw, nx, wb, b + o0, out_row + o0);
    }
    apply_epilogue_row(e, out, oy, g.out_w, g.out_c);
  }
}

TV_INLINE void backward_data(const Geom2D& g, const float* w, const float* dout, float* din, const Epilogue& e) {
  if (pointwise_backward_data(g, w, dout, din, e)) return;
  if (g.stride_h != 1 || g.stride_w != 1 || g.k_h > kMaxKernelRows) return reference_data(g, w, dout, din, e);
  const ScratchPlan plan = plan_scratch(g, g.in_w, g.k_w - 1, g.out_c);
  if (!plan.fits) return reference_data(g, w, dout, din, e);

  float scratch[kScratchFloats] __attribute__((aligned(32)));  // the ring of planar rows, then the weights
  const float* wd = data_weights_by_block(g, w, scratch + plan.ring);
  const int pw = plan.pw;
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
    if (ky_hi < ky_lo) {  // +0, which a ReLU's backward leaves as it is
      for (size_t i = 0, n = (size_t)g.in_w * g.in_c; i < n; ++i) din_row[i] = 0.0f;
      continue;
    }
    for (; next_row <= iy + g.pad_top - ky_lo; ++next_row)
      to_planar_any(dout + ((size_t)next_row * g.out_w + first_col) * g.out_c, cols > 0 ? cols : 0, lead > 0 ? lead : 0,
                    g.out_c, pw, scratch + (size_t)(next_row % g.k_h) * g.out_c * pw);
    for (int ky = ky_hi; ky >= ky_lo; --ky)
      drow[ky_hi - ky] = scratch + (size_t)((iy + g.pad_top - ky) % g.k_h) * g.out_c * pw;
    for (int i0 = 0, ib; i0 < g.in_c; i0 += ib) {
      ib = block_size(g.in_c - i0);
      const float* wb = wd + (size_t)i0 * g.k_h * g.k_w * g.out_c;
      data_blocks(plan.wide, ib, g, drow, ky_hi, ky_lo, pw, wb, din_row + i0);
    }
    apply_epilogue_row(e, din, iy, g.in_w, g.in_c);
  }
}

}  // namespace

TV_TARGET_CLONES void conv2d_forward(const Geom2D& g, const float* in, const float* w, const float* b, float* out) {
  forward(g, in, w, b, out, kNoEpilogue);
}

TV_TARGET_CLONES void conv2d_forward_relu(const Geom2D& g, const float* in, const float* w, const float* b,
                                          float* out) {
  forward(g, in, w, b, out, Epilogue{true, nullptr});
}

TV_TARGET_CLONES void conv2d_backward_data(const Geom2D& g, const float* w, const float* dout, float* din) {
  backward_data(g, w, dout, din, kNoEpilogue);
}

TV_TARGET_CLONES void conv2d_backward_data_relu(const Geom2D& g, const float* w, const float* dout, float* din,
                                                const float* y) {
  backward_data(g, w, dout, din, Epilogue{false, y});
}

}  // namespace fast
}  // namespace tv
