// DepthwiseConv2D, fast variant: the sums of depthwise_conv2d.cpp in the same order, eight channels
// per vector (channels are contiguous in HWC, and a depthwise channel never mixes with another), with
// the running sums in registers instead of in the output buffer.
//
// forward (any geometry): per output pixel and channel, bias + the valid taps in (ky, kx) order.
// Interior pixels run eight or four at a time (independent sums hide the add latency).
//
// backward_data (any geometry): gathers instead of scattering. The reference zeroes din and adds, for
// each output pixel in row-major order, dout * w at every valid tap; so input pixel (iy, ix) receives
// its terms in (oy, ox) order, i.e. ky and kx descending for a fixed stride. Each lane here starts at
// +0 and adds the same terms in that order (outputs a stride does not reach are skipped, as they do
// not exist in the reference either). Stride 1: the input pixels every tap reaches run eight or four
// at a time.
//
// backward_params (3x3 kernels, the presets' depthwise layers): for eight channels, the nine tap
// gradients and the bias gradient stay in registers while the output pixels stream by in row-major
// order, each adding its valid taps, exactly the reference's per-element order. Other kernels run
// the reference.
//
// Channels left over after the vectors (c % 8) run scalar code with the same order.
//
// The _relu variants (kernel_variants.h) apply the ReLU's expression to each output row once it is
// complete (forward), or the mask of the ReLU before the layer to each input-gradient row.
#include "tv/ops/kernel_variants.h"
#include "tv/ops/simd.h"
#include "tv/ops/window.h"

namespace tv {
namespace fast {
namespace {

// The output coordinate tap k of an axis reads input coordinate i from, or -1 when none does.
TV_INLINE int source_of(int i, int k, int stride, int pad, int out_size) {
  const int t = i + pad - k;
  if (t < 0) return -1;
  if (stride == 1) return t < out_size ? t : -1;
  const int o = t / stride;
  if (o * stride != t || o >= out_size) return -1;
  return o;
}

// Forward of one output pixel, channels [c0, c0 + 8 * V).
template <int V>
TV_INLINE void forward_vectors(const Geom2D& g, const float* in, const float* w, const float* b, float* o_px,
                               TapRange ry, TapRange rx, int iy0, int ix0, int c0) {
  const int c_n = g.in_c;
  f8 acc[V];
  for (int v = 0; v < V; ++v) acc[v] = load8(b + c0 + 8 * v);
  for (int ky = ry.begin; ky < ry.end; ++ky)
    for (int kx = rx.begin; kx < rx.end; ++kx) {
      const float* x = in + tap_at(g, iy0, ix0, ky, kx) + c0;
      const float* k = w + ((size_t)ky * g.k_w + kx) * c_n + c0;
      for (int v = 0; v < V; ++v) acc[v] += load8(x + 8 * v) * load8(k + 8 * v);
    }
  for (int v = 0; v < V; ++v) store8(o_px + c0 + 8 * v, acc[v]);
}

// backward_data of one input pixel, channels [c0, c0 + 8 * V); oys/oxs: each kernel row's / column's
// source output coordinate (-1: none), kernel rows and columns taken in descending order.
template <int V>
TV_INLINE void data_vectors(const Geom2D& g, const float* w, const float* dout, float* dx, const int* oys,
                            const int* oxs, int c0) {
  const int c_n = g.in_c;
  f8 acc[V];
  for (int v = 0; v < V; ++v) acc[v] = splat8(0.0f);
  for (int ky = g.k_h - 1; ky >= 0; --ky) {
    if (oys[ky] < 0) continue;
    for (int kx = g.k_w - 1; kx >= 0; --kx) {
      if (oxs[kx] < 0) continue;
      const float* d = dout + ((size_t)oys[ky] * g.out_w + oxs[kx]) * c_n + c0;
      const float* k = w + ((size_t)ky * g.k_w + kx) * c_n + c0;
      for (int v = 0; v < V; ++v) acc[v] += load8(d + 8 * v) * load8(k + 8 * v);
    }
  }
  for (int v = 0; v < V; ++v) store8(dx + c0 + 8 * v, acc[v]);
}

// backward_params of one output pixel of a 3x3 kernel whose window may leave the input: only the valid
// taps (ry, rx) are added. base: the offset of tap (0, 0), which may lie in the padding.
TV_INLINE void params_3x3_border(const Geom2D& g, const float* in, f8 d, ptrdiff_t base, TapRange ry, TapRange rx,
                                 f8* acc) {
  for (int ky = ry.begin; ky < ry.end; ++ky)
    for (int kx = rx.begin; kx < rx.end; ++kx)
      acc[ky * 3 + kx] += d * load8(in + (base + ((ptrdiff_t)ky * g.in_w + kx) * g.in_c));
}

// backward_params of a 3x3 kernel for channels [c0, c0 + 8): every output pixel in row-major order;
// the pixels whose window lies wholly inside run without per-tap checks.
TV_INLINE void params_3x3(const Geom2D& g, const float* in, const float* dout, float* dw, float* db, int c0) {
  const int c_n = g.in_c;
  f8 acc[9];
  for (int t = 0; t < 9; ++t) acc[t] = load8(dw + (size_t)t * c_n + c0);
  f8 bias = load8(db + c0);
  int ox_lo, ox_hi;  // output columns whose kernel columns all lie inside the input
  inside_range(g.in_w, 3, g.stride_w, g.pad_left, g.out_w, &ox_lo, &ox_hi);
  const size_t step = (size_t)g.stride_w * c_n, row = (size_t)g.in_w * c_n;
  for (int oy = 0; oy < g.out_h; ++oy) {
    const TapRange ry = valid_taps(oy, g.stride_h, g.pad_top, 3, g.in_h);
    const int iy0 = oy * g.stride_h - g.pad_top;
    const bool rows_inside = ry.begin == 0 && ry.end == 3;
    const float* d_row = dout + (size_t)oy * g.out_w * c_n + c0;
    auto border = [&](int ox) __attribute__((always_inline)) {
      const f8 d = load8(d_row + (size_t)ox * c_n);
      bias += d;
      const int ix0 = ox * g.stride_w - g.pad_left;
      params_3x3_border(g, in, d, ((ptrdiff_t)iy0 * g.in_w + ix0) * (ptrdiff_t)c_n + c0, ry,
                        valid_taps(ox, g.stride_w, g.pad_left, 3, g.in_w), acc);
    };
    const int lo = rows_inside ? ox_lo : g.out_w, hi = rows_inside ? ox_hi : g.out_w;
    for (int ox = 0; ox < lo; ++ox) border(ox);
    if (hi > lo) {  // then rows_inside: iy0 >= 0
      const float* x = in + ((size_t)iy0 * g.in_w + (size_t)(lo * g.stride_w - g.pad_left)) * c_n + c0;
      for (int ox = lo; ox < hi; ++ox, x += step) {
        const f8 d = load8(d_row + (size_t)ox * c_n);
        bias += d;
        for (int ky = 0; ky < 3; ++ky)
          for (int kx = 0; kx < 3; ++kx) acc[ky * 3 + kx] += d * load8(x + ky * row + (size_t)kx * c_n);
      }
    }
    for (int ox = hi; ox < g.out_w; ++ox) border(ox);
  }
  for (int t = 0; t < 9; ++t) store8(dw + (size_t)t * c_n + c0, acc[t]);
  store8(db + c0, bias);
}

// Forward of P neighbouring output pixels of row oy from column ox0 whose kernel columns all lie
// inside the input, channels [c0, c0 + 8): P independent sums, each bias + the taps of the valid
// kernel rows ry, in (ky, kx) order.
template <int P, int K>
TV_INLINE void forward_run(const Geom2D& g, const float* in, const float* w, const float* b, float* out, int oy,
                           TapRange ry, int ox0, int c0) {
  const int c_n = g.in_c, k_w = K ? K : g.k_w;
  const size_t step = (size_t)g.stride_w * c_n;
  const int iy0 = oy * g.stride_h - g.pad_top, ix0 = ox0 * g.stride_w - g.pad_left;
  f8 acc[P];
  for (int p = 0; p < P; ++p) acc[p] = load8(b + c0);
  for (int ky = ry.begin; ky < ry.end; ++ky)
    for (int kx = 0; kx < k_w; ++kx) {
      const f8 wv = load8(w + ((size_t)ky * k_w + kx) * c_n + c0);
      const float* x = in + tap_at(g, iy0, ix0, ky, kx) + c0;
      for (int p = 0; p < P; ++p) acc[p] += load8(x + p * step) * wv;
    }
  float* o = out + ((size_t)oy * g.out_w + ox0) * c_n + c0;
  for (int p = 0; p < P; ++p) store8(o + (size_t)p * c_n, acc[p]);
}

// backward_data (stride 1) of P neighbouring input pixels of row iy from column ix0 that every
// kernel column reaches, channels [c0, c0 + 8): P independent sums from +0 over the kernel rows
// [ky_lo, ky_hi] whose output row exists, rows and columns descending.
template <int P, int K>
TV_INLINE void data_run(const Geom2D& g, const float* w, const float* dout, float* din, int iy, int ky_lo, int ky_hi,
                        int ix0, int c0) {
  const int c_n = g.in_c, k_w = K ? K : g.k_w;
  f8 acc[P];
  for (int p = 0; p < P; ++p) acc[p] = splat8(0.0f);
  for (int ky = ky_hi; ky >= ky_lo; --ky)
    for (int kx = k_w - 1; kx >= 0; --kx) {
      const f8 wv = load8(w + ((size_t)ky * k_w + kx) * c_n + c0);
      const float* d = dout + ((size_t)(iy + g.pad_top - ky) * g.out_w + (ix0 + g.pad_left - kx)) * c_n + c0;
      for (int p = 0; p < P; ++p) acc[p] += load8(d + (size_t)p * c_n) * wv;
    }
  float* dx = din + ((size_t)iy * g.in_w + ix0) * c_n + c0;
  for (int p = 0; p < P; ++p) store8(dx + (size_t)p * c_n, acc[p]);
}

// Interior runs of one row, channels [c0, c0 + 8): eight, then four, then single pixels. K: the
// kernel side when square and known (0: any).
// forward_run for column stride 1 and a 3-wide kernel: each kernel row's P + 2 input vectors are loaded
// once and serve all three kernel columns (pixel p's tap kx is pixel p + 1's tap kx - 1).
template <int P>
TV_INLINE void forward_run_3wide(const Geom2D& g, const float* in, const float* w, const float* b, float* out, int oy,
                                 TapRange ry, int ox0, int c0) {
  const int c_n = g.in_c;
  const int iy0 = oy * g.stride_h - g.pad_top, ix0 = ox0 - g.pad_left;
  f8 acc[P];
  for (int p = 0; p < P; ++p) acc[p] = load8(b + c0);
  for (int ky = ry.begin; ky < ry.end; ++ky) {
    const float* xr = in + tap_at(g, iy0, ix0, ky, 0) + c0;
    f8 x[P + 2];
    for (int p = 0; p < P + 2; ++p) x[p] = load8(xr + (size_t)p * c_n);
    for (int kx = 0; kx < 3; ++kx) {
      const f8 wv = load8(w + ((size_t)ky * 3 + kx) * c_n + c0);
      for (int p = 0; p < P; ++p) acc[p] += x[p + kx] * wv;
    }
  }
  float* o = out + ((size_t)oy * g.out_w + ox0) * c_n + c0;
  for (int p = 0; p < P; ++p) store8(o + (size_t)p * c_n, acc[p]);
}

template <int K>
TV_INLINE void forward_runs(const Geom2D& g, const float* in, const float* w, const float* b, float* out, int oy,
                            TapRange ry, int lo, int hi, int c0) {
  int ox = lo;
  if (K == 3 && g.stride_w == 1) {
    if (simd::wide_registers())
      for (; ox + 12 <= hi; ox += 12) forward_run_3wide<12>(g, in, w, b, out, oy, ry, ox, c0);
    for (; ox + 6 <= hi; ox += 6) forward_run_3wide<6>(g, in, w, b, out, oy, ry, ox, c0);
  }
  for (; ox + 8 <= hi; ox += 8) forward_run<8, K>(g, in, w, b, out, oy, ry, ox, c0);
  for (; ox + 4 <= hi; ox += 4) forward_run<4, K>(g, in, w, b, out, oy, ry, ox, c0);
  for (; ox < hi; ++ox) forward_run<1, K>(g, in, w, b, out, oy, ry, ox, c0);
}
// data_run for a 3-wide kernel: each kernel row's P + 2 gradient vectors are loaded once and serve
// all three kernel columns.
template <int P>
TV_INLINE void data_run_3wide(const Geom2D& g, const float* w, const float* dout, float* din, int iy, int ky_lo,
                              int ky_hi, int ix0, int c0) {
  const int c_n = g.in_c;
  f8 acc[P];
  for (int p = 0; p < P; ++p) acc[p] = splat8(0.0f);
  for (int ky = ky_hi; ky >= ky_lo; --ky) {
    // d[q]: output column ix0 + pad_left - 2 + q; pixel p's tap kx reads q = p + 2 - kx.
    const float* dr = dout + ((size_t)(iy + g.pad_top - ky) * g.out_w + (ix0 + g.pad_left - 2)) * c_n + c0;
    f8 d[P + 2];
    for (int q = 0; q < P + 2; ++q) d[q] = load8(dr + (size_t)q * c_n);
    for (int kx = 2; kx >= 0; --kx) {
      const f8 wv = load8(w + ((size_t)ky * 3 + kx) * c_n + c0);
      for (int p = 0; p < P; ++p) acc[p] += d[p + 2 - kx] * wv;
    }
  }
  float* dx = din + ((size_t)iy * g.in_w + ix0) * c_n + c0;
  for (int p = 0; p < P; ++p) store8(dx + (size_t)p * c_n, acc[p]);
}

template <int K>
TV_INLINE void data_runs(const Geom2D& g, const float* w, const float* dout, float* din, int iy, int ky_lo, int ky_hi,
                         int lo, int hi, int c0) {
  int ix = lo;
  if (K == 3) {
    if (simd::wide_registers())
      for (; ix + 12 <= hi; ix += 12) data_run_3wide<12>(g, w, dout, din, iy, ky_lo, ky_hi, ix, c0);
    for (; ix + 6 <= hi; ix += 6) data_run_3wide<6>(g, w, dout, din, iy, ky_lo, ky_hi, ix, c0);
  }
  for (; ix + 8 <= hi; ix += 8) data_run<8, K>(g, w, dout, din, iy, ky_lo, ky_hi, ix, c0);
  for (; ix + 4 <= hi; ix += 4) data_run<4, K>(g, w, dout, din, iy, ky_lo, ky_hi, ix, c0);
  for (; ix < hi; ++ix) data_run<1, K>(g, w, dout, din, iy, ky_lo, ky_hi, ix, c0);
}

// Each output row gets e once it is complete, while it is in the cache.
TV_INLINE void forward(const Geom2D& g, const float* in, const float* w, const float* b, float* out,
                       const Epilogue& e) {
  const int c_n = g.in_c, c8 = c_n / 8 * 8;
  int ox_lo, ox_hi;  // output columns whose kernel columns all lie inside the input
  inside_range(g.in_w, g.k_w, g.stride_w, g.pad_left, g.out_w, &ox_lo, &ox_hi);
  const bool runs = c8 > 0 && ox_hi > ox_lo;
  for (int oy = 0; oy < g.out_h; ++oy) {
    const TapRange ry = valid_taps(oy, g.stride_h, g.pad_top, g.k_h, g.in_h);
    const int iy0 = oy * g.stride_h - g.pad_top;
    if (runs)  // several pixels at a time, over the row's valid kernel rows
      for (int c0 = 0; c0 < c8; c0 += 8) {
        if (g.k_w == 3)
          forward_runs<3>(g, in, w, b, out, oy, ry, ox_lo, ox_hi, c0);
        else
          forward_runs<0>(g, in, w, b, out, oy, ry, ox_lo, ox_hi, c0);
      }
    for (int ox = 0; ox < g.out_w; ++ox) {
      const bool done = runs && ox >= ox_lo && ox < ox_hi;  // vectors done above
      if (done && c8 == c_n) continue;
      const TapRange rx = valid_taps(ox, g.stride_w, g.pad_left, g.k_w, g.in_w);
      const int ix0 = ox * g.stride_w - g.pad_left;
      float* o_px = out + ((size_t)oy * g.out_w + ox) * c_n;
      int c0 = done ? c8 : 0;
      for (; c0 + 32 <= c8; c0 += 32) forward_vectors<4>(g, in, w, b, o_px, ry, rx, iy0, ix0, c0);
      for (; c0 < c8; c0 += 8) forward_vectors<1>(g, in, w, b, o_px, ry, rx, iy0, ix0, c0);
      for (int c = c8; c < c_n; ++c) {
        float acc = b[c];
        for (int ky = ry.begin; ky < ry.end; ++ky)
          for (int kx = rx.begin; kx < rx.end; ++kx)
            acc += in[tap_at(g, iy0, ix0, ky, kx) + c] * w[((size_t)ky * g.k_w + kx) * c_n + c];
        o_px[c] = acc;
      }
    }
    apply_epilogue_row(e, out, oy, g.out_w, c_n);
  }
}

// Each input row gets e once it is complete.
TV_INLINE void backward_data(const Geom2D& g, const float* w, const float* dout, float* din, const Epilogue& e) {
  constexpr int kMaxK = 16;
  if (g.k_h > kMaxK || g.k_w > kMaxK) {
    ref::depthwise_conv2d_backward_data(g, w, dout, din);
    apply_epilogue(e, din, 0, (size_t)g.in_h * g.in_w * g.in_c);
    return;
  }
  const int c_n = g.in_c, c8 = c_n / 8 * 8;
  // Stride 1: input columns that every kernel column reaches (ox = ix + pad_left - kx inside for
  // all kx) run several at a time, over the kernel rows whose output row exists.
  const int ix_lo = g.k_w - 1 - g.pad_left > 0 ? g.k_w - 1 - g.pad_left : 0;
  const int ix_hi = g.out_w - g.pad_left < g.in_w ? g.out_w - g.pad_left : g.in_w;
  const bool runs = g.stride_h == 1 && g.stride_w == 1 && c8 > 0 && ix_hi > ix_lo;
  int oys[kMaxK], oxs[kMaxK];
  for (int iy = 0; iy < g.in_h; ++iy) {
    if (runs) {
      const int ky_hi = iy + g.pad_top < g.k_h - 1 ? iy + g.pad_top : g.k_h - 1;
      const int ky_lo = iy + g.pad_top - g.out_h + 1 > 0 ? iy + g.pad_top - g.out_h + 1 : 0;
      for (int c0 = 0; c0 < c8; c0 += 8) {
        if (g.k_w == 3)
          data_runs<3>(g, w, dout, din, iy, ky_lo, ky_hi, ix_lo, ix_hi, c0);
        else
          data_runs<0>(g, w, dout, din, iy, ky_lo, ky_hi, ix_lo, ix_hi, c0);
      }
    }
    for (int ky = 0; ky < g.k_h; ++ky) oys[ky] = source_of(iy, ky, g.stride_h, g.pad_top, g.out_h);
    for (int ix = 0; ix < g.in_w; ++ix) {
      const bool done = runs && ix >= ix_lo && ix < ix_hi;  // vectors done above
      if (done && c8 == c_n) continue;
      for (int kx = 0; kx < g.k_w; ++kx) oxs[kx] = source_of(ix, kx, g.stride_w, g.pad_left, g.out_w);
      float* dx = din + ((size_t)iy * g.in_w + ix) * c_n;
      int c0 = done ? c8 : 0;
      for (; c0 + 32 <= c8; c0 += 32) data_vectors<4>(g, w, dout, dx, oys, oxs, c0);
      for (; c0 < c8; c0 += 8) data_vectors<1>(g, w, dout, dx, oys, oxs, c0);
      for (int c = c8; c < c_n; ++c) {
        float acc = 0.0f;
        for (int ky = g.k_h - 1; ky >= 0; --ky) {
          if (oys[ky] < 0) continue;
          for (int kx = g.k_w - 1; kx >= 0; --kx)
            if (oxs[kx] >= 0)
              acc += dout[((size_t)oys[ky] * g.out_w + oxs[kx]) * c_n + c] * w[((size_t)ky * g.k_w + kx) * c_n + c];
        }
        dx[c] = acc;
      }
    }
    apply_epilogue_row(e, din, iy, g.in_w, c_n);
  }
}

}  // namespace

TV_TARGET_CLONES void depthwise_conv2d_forward(const Geom2D& g, const float* in, const float* w, const float* b,
                                               float* out) {
  forward(g, in, w, b, out, kNoEpilogue);
}

TV_TARGET_CLONES void depthwise_conv2d_forward_relu(const Geom2D& g, const float* in, const float* w, const float* b,
                                                    float* out) {
  forward(g, in, w, b, out, Epilogue{true, nullptr});
}

TV_TARGET_CLONES void depthwise_conv2d_backward_data(const Geom2D& g, const float* w, const float* dout, float* din) {
  backward_data(g, w, dout, din, kNoEpilogue);
}

TV_TARGET_CLONES void depthwise_conv2d_backward_data_relu(const Geom2D& g, const float* w, const float* dout,
                                                          float* din, const float* y) {
  backward_data(g, w, dout, din, Epilogue{false, y});
}

TV_TARGET_CLONES void depthwise_conv2d_backward_params(const Geom2D& g, const float* in, const float* dout, float* dw,
                                                       float* db) {
  if (g.k_h != 3 || g.k_w != 3 || g.in_c < 8) return ref::depthwise_conv2d_backward_params(g, in, dout, dw, db);
  const int c_n = g.in_c, c8 = c_n / 8 * 8;
  for (int c0 = 0; c0 < c8; c0 += 8) params_3x3(g, in, dout, dw, db, c0);
  if (c8 == c_n) return;
  // The remaining channels: the reference loop restricted to them.
  for (int oy = 0; oy < g.out_h; ++oy) {
    const TapRange ry = valid_taps(oy, g.stride_h, g.pad_top, 3, g.in_h);
    const int iy0 = oy * g.stride_h - g.pad_top;
    for (int ox = 0; ox < g.out_w; ++ox) {
      const TapRange rx = valid_taps(ox, g.stride_w, g.pad_left, 3, g.in_w);
      const int ix0 = ox * g.stride_w - g.pad_left;
      const float* d_px = dout + ((size_t)oy * g.out_w + ox) * c_n;
      for (int c = c8; c < c_n; ++c) db[c] += d_px[c];
      for (int ky = ry.begin; ky < ry.end; ++ky)
        for (int kx = rx.begin; kx < rx.end; ++kx) {
          const float* x = in + tap_at(g, iy0, ix0, ky, kx);
          float* dk = dw + ((size_t)ky * 3 + kx) * c_n;
          for (int c = c8; c < c_n; ++c) dk[c] += d_px[c] * x[c];
        }
    }
  }
}

}  // namespace fast
}  // namespace tv
