// MaxPool2D, fast variant for non-overlapping windows without padding (stride == kernel, e.g. the
// usual 2x2 pool): channels are handled eight or four at a time with vector selects, the 2x2 window
// is unrolled, and the backward writes every input gradient once instead of zeroing the buffer and
// searching each window again per channel. Same comparisons in the same order (only a strictly
// greater value replaces the running maximum, so the first maximum in row-major order wins), same
// bits as maxpool2d.cpp, which handles every other geometry. maxpool2d_backward_relu also applies the
// backward of the ReLU before the pool to the one gradient each window passes on.
#include "tv/ops/kernel_variants.h"
#include "tv/ops/simd.h"

namespace tv {
namespace fast {
namespace {

typedef int i8v __attribute__((vector_size(32)));
typedef int i4v __attribute__((vector_size(16)));

// Lane access for the three widths: V is simd::f8, simd::f4 or float; I the matching mask type.
template <class V>
struct Lanes;
template <>
struct Lanes<simd::f8> : simd::Vec<8> {
  typedef i8v I;
  static TV_INLINE I index(int t) { return I{t, t, t, t, t, t, t, t}; }
};
template <>
struct Lanes<simd::f4> : simd::Vec<4> {
  typedef i4v I;
  static TV_INLINE I index(int t) { return I{t, t, t, t}; }
};
template <>
struct Lanes<float> {
  typedef int I;
  static TV_INLINE float load(const float* p) { return *p; }
  static TV_INLINE void store(float* p, float v) { *p = v; }
  static TV_INLINE float splat(float x) { return x; }
  static TV_INLINE I index(int t) { return t; }
};

bool fast_geometry(const Geom2D& g) {
  return g.stride_h == g.k_h && g.stride_w == g.k_w && g.pad_top == 0 && g.pad_left == 0 && g.k_h > 0 && g.k_w > 0 &&
         g.out_h * g.k_h <= g.in_h && g.out_w * g.k_w <= g.in_w;
}

// One window (oy, ox), channels [c, c + lanes of V). KH, KW: the window when known at compile time
// (0 = read it from g).
template <class V, int KH, int KW>
TV_INLINE void forward_window(const Geom2D& g, const float* in, float* out, int oy, int ox, int c) {
  typedef Lanes<V> L;
  const int k_h = KH ? KH : g.k_h, k_w = KW ? KW : g.k_w;
  const float* base = in + ((size_t)(oy * k_h) * g.in_w + (size_t)ox * k_w) * g.in_c + c;
  V m = L::load(base);
  for (int ky = 0; ky < k_h; ++ky)
    for (int kx = 0; kx < k_w; ++kx) {
      const V x = L::load(base + ((size_t)ky * g.in_w + kx) * g.in_c);
      m = x > m ? x : m;
    }
  L::store(out + ((size_t)oy * g.out_w + ox) * g.in_c + c, m);
}

// RELU: the ReLU before the pool too: relu_backward(in, din) keeps din where in > 0, which for the
// one non-zero element of a window is the maximum m.
template <class V, int KH, int KW, bool RELU>
TV_INLINE void backward_window(const Geom2D& g, const float* in, const float* dout, float* din, int oy, int ox, int c) {
  typedef Lanes<V> L;
  typedef typename L::I I;
  const int k_h = KH ? KH : g.k_h, k_w = KW ? KW : g.k_w;
  const size_t origin = ((size_t)(oy * k_h) * g.in_w + (size_t)ox * k_w) * g.in_c + c;
  V m = L::load(in + origin);
  // Tap indices as vectors counted up by adding one (no per-tap lane inserts).
  const I one = L::index(1);
  I best = L::index(0), t = best;  // tap index of the first maximum; the current tap
  for (int ky = 0; ky < k_h; ++ky)
    for (int kx = 0; kx < k_w; ++kx, t += one) {
      const V x = L::load(in + origin + ((size_t)ky * g.in_w + kx) * g.in_c);
      const auto greater = x > m;
      m = greater ? x : m;
      best = greater ? t : best;
    }
  const V zero = L::splat(0.0f);
  V d = zero + L::load(dout + ((size_t)oy * g.out_w + ox) * g.in_c + c);  // din starts at 0, += d
  if (RELU) d = m > zero ? d : zero;
  t = L::index(0);
  for (int ky = 0; ky < k_h; ++ky)
    for (int kx = 0; kx < k_w; ++kx, t += one)
      L::store(din + origin + ((size_t)ky * g.in_w + kx) * g.in_c, best == t ? d : zero);
}

template <int KH, int KW>
TV_INLINE void forward_all(const Geom2D& g, const float* in, float* out) {
  for (int oy = 0; oy < g.out_h; ++oy)
    for (int ox = 0; ox < g.out_w; ++ox) {
      int c = 0;
      for (; c + 8 <= g.in_c; c += 8) forward_window<simd::f8, KH, KW>(g, in, out, oy, ox, c);
      for (; c + 4 <= g.in_c; c += 4) forward_window<simd::f4, KH, KW>(g, in, out, oy, ox, c);
      for (; c < g.in_c; ++c) forward_window<float, KH, KW>(g, in, out, oy, ox, c);
    }
}

template <int KH, int KW, bool RELU>
TV_INLINE void backward_all(const Geom2D& g, const float* in, const float* dout, float* din) {
  for (int oy = 0; oy < g.out_h; ++oy)
    for (int ox = 0; ox < g.out_w; ++ox) {
      int c = 0;
      for (; c + 8 <= g.in_c; c += 8) backward_window<simd::f8, KH, KW, RELU>(g, in, dout, din, oy, ox, c);
      for (; c + 4 <= g.in_c; c += 4) backward_window<simd::f4, KH, KW, RELU>(g, in, dout, din, oy, ox, c);
      for (; c < g.in_c; ++c) backward_window<float, KH, KW, RELU>(g, in, dout, din, oy, ox, c);
    }
}

template <bool RELU>
TV_INLINE void backward(const Geom2D& g, const float* in, const float* dout, float* din) {
  if (!fast_geometry(g)) {
    ref::maxpool2d_backward(g, in, dout, din);
    if (RELU) relu_backward(in, din, (size_t)g.in_h * g.in_w * g.in_c);
    return;
  }
  // Inputs no window covers (the last rows / columns when the size is not a multiple) get zero.
  const int covered_h = g.out_h * g.k_h, covered_w = g.out_w * g.k_w;
  for (int y = 0; y < g.in_h; ++y) {
    const int x0 = y < covered_h ? covered_w : 0;
    float* row = din + (size_t)y * g.in_w * g.in_c;
    for (size_t i = (size_t)x0 * g.in_c, n = (size_t)g.in_w * g.in_c; i < n; ++i) row[i] = 0.0f;
  }
  if (g.k_h == 2 && g.k_w == 2) return backward_all<2, 2, RELU>(g, in, dout, din);
  backward_all<0, 0, RELU>(g, in, dout, din);
}

}  // namespace

TV_TARGET_CLONES void maxpool2d_forward(const Geom2D& g, const float* in, float* out) {
  if (!fast_geometry(g)) return ref::maxpool2d_forward(g, in, out);
  if (g.k_h == 2 && g.k_w == 2) return forward_all<2, 2>(g, in, out);
  forward_all<0, 0>(g, in, out);
}

TV_TARGET_CLONES void maxpool2d_backward(const Geom2D& g, const float* in, const float* dout, float* din) {
  backward<false>(g, in, dout, din);
}

TV_TARGET_CLONES void maxpool2d_backward_relu(const Geom2D& g, const float* in, const float* dout, float* din) {
  backward<true>(g, in, dout, din);
}

}  // namespace fast
}  // namespace tv
