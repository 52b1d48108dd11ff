// Pointwise convolution (Conv2D 1x1, stride 1, no padding) as a matrix product, fast variant: the
// sums of conv2d.cpp in the same order, with the running sums of a block of pixels x channels in
// registers. With P pixels, x = in as P x in_c, W = w as out_c x in_c, d = dout as P x out_c (HWC is
// row-major in pixels):
//
// forward:          out[p][o] = b[o] + sum_i x[p][i] * W[o][i], i ascending (per lane: one o).
// backward_data:    dx[p][i] = +0 + sum_o d[p][o] * W[o][i], o ascending. The reference skips
//                   d == 0; adding 0 * W = +-0 to a sum that starts at +0 changes no bit (such a sum
//                   is never -0) as long as W is finite, which is checked first.
// backward_params:  dW[o][i] += d[p][o] * x[p][i] and db[o] += d[p][o], p ascending. The skipped
//                   d == 0 terms are +-0 here too, which leave a finite running sum unchanged unless
//                   it is exactly -0 (a gradient buffer that starts at +0 never is); x is checked to
//                   be finite first.
//
// Used by conv2d_fast.cpp and conv2d_params_fast.cpp for 1x1 layers whose channel counts are
// multiples of 8 and whose transposed weights fit the stack; it returns false (doing nothing) otherwise.
#include "tv/ops/fast/pointwise.h"
#include "tv/ops/simd.h"

namespace tv {
namespace fast {
namespace {

constexpr int kMaxWeights = 16384;  // in_c * out_c: 64 KB of stack for the transposed weights

bool fits(const Geom2D& g) {
  return g.k_h == 1 && g.k_w == 1 && g.stride_h == 1 && g.stride_w == 1 && g.pad_top == 0 && g.pad_left == 0 &&
         g.out_h == g.in_h && g.out_w == g.in_w && g.in_c % 8 == 0 && g.out_c % 8 == 0 &&
         (size_t)g.in_c * g.out_c <= (size_t)kMaxWeights;
}

// rows x cols row-major -> cols x rows, both multiples of 8: 8x8 tiles through registers.
TV_INLINE void transpose(const float* src, int rows, int cols, float* dst) {
  for (int r0 = 0; r0 < rows; r0 += 8)
    for (int c0 = 0; c0 < cols; c0 += 8) {
      f8 t[8];
      for (int i = 0; i < 8; ++i) t[i] = load8(src + (size_t)(r0 + i) * cols + c0);
      simd::transpose8(t);
      for (int i = 0; i < 8; ++i) store8(dst + (size_t)(c0 + i) * rows + r0, t[i]);
    }
}

// C[p][j..] for NP rows of A (P x K) times B (K x N, row-major), NV vectors of columns starting at
// column j: acc = init; acc += A[p][k] * B[k][j..] for k ascending. init: a row of N values to start
// from (bias), or null for +0. e: applied to each sum as it is stored (e.mask indexed like c).
template <int NP, int NV>
TV_INLINE void rows_times(const float* a, int k_n, const float* b, int n, int j, const float* init, float* c,
                          const Epilogue& e) {
  f8 acc[NP][NV];
  for (int p = 0; p < NP; ++p)
    for (int v = 0; v < NV; ++v) acc[p][v] = init ? load8(init + j + 8 * v) : splat8(0.0f);
  for (int k = 0; k < k_n; ++k) {
    f8 bv[NV];
    for (int v = 0; v < NV; ++v) bv[v] = load8(b + (size_t)k * n + j + 8 * v);
    for (int p = 0; p < NP; ++p) {
      const f8 av = splat8(a[(size_t)p * k_n + k]);
      for (int v = 0; v < NV; ++v) acc[p][v] += av * bv[v];
    }
  }
  // The fused ReLU on the vectors as they are stored: relu_forward's and relu_backward's expressions
  // in registers (applying them to the stored block afterwards measured 2 % slower in training).
  const f8 zero = splat8(0.0f);
  for (int p = 0; p < NP; ++p)
    for (int v = 0; v < NV; ++v) {
      const size_t at = (size_t)p * n + j + 8 * v;
      f8 r = acc[p][v];
      if (e.relu) r = r > zero ? r : zero;
      if (e.mask) r = load8(e.mask + at) > zero ? r : zero;
      store8(c + at, r);
    }
}

template <int NP>
TV_INLINE void rows_times_all(const float* a, int k_n, const float* b, int n, const float* init, float* c,
                              const Epilogue& e) {
  int j = 0;  // at most 4 x 2 vector sums: with 16 vector registers, more would spill
  for (; j + 16 <= n; j += 16) rows_times<NP, 2>(a, k_n, b, n, j, init, c, e);
  for (; j < n; j += 8) rows_times<NP, 1>(a, k_n, b, n, j, init, c, e);
}

// C (P x N) = init + A (P x K) * B (K x N), every sum in k order, then e (e.mask indexed like c).
TV_INLINE void matmul(const float* a, int p_n, int k_n, const float* b, int n, const float* init, float* c,
                      const Epilogue& e) {
  int p = 0;
  auto rows = [&](int at) { return Epilogue{e.relu, e.mask ? e.mask + (size_t)at * n : nullptr}; };
  if (n < 16)  // one vector of columns: eight rows at a time for eight independent sums
    for (; p + 8 <= p_n; p += 8) rows_times_all<8>(a + (size_t)p * k_n, k_n, b, n, init, c + (size_t)p * n, rows(p));
  for (; p + 4 <= p_n; p += 4) rows_times_all<4>(a + (size_t)p * k_n, k_n, b, n, init, c + (size_t)p * n, rows(p));
  for (; p < p_n; ++p) rows_times_all<1>(a + (size_t)p * k_n, k_n, b, n, init, c + (size_t)p * n, rows(p));
}

// dW[o][i..] += d[p][o] * x[p][i..] for p ascending, NO rows of dW, NV vectors of i from column j.
// BIAS: also db[o] += d[p][o] for the NO channels (NO = 4 or 8: one vector), only where d != 0 (the
// reference's skip), in the same pass over the pixels.
template <int NO, int NV, bool BIAS>
TV_INLINE void params_block(const float* x, const float* d, int p_n, int in_c, int out_c, int o0, int j, float* dw,
                            float* db) {
  typedef typename simd::Vec<NO>::type VB;
  f8 acc[NO][NV];
  for (int o = 0; o < NO; ++o)
    for (int v = 0; v < NV; ++v) acc[o][v] = load8(dw + (size_t)(o0 + o) * in_c + j + 8 * v);
  VB bias = simd::Vec<NO>::load(db + o0);
  const VB zero = simd::Vec<NO>::splat(0.0f);
  for (int p = 0; p < p_n; ++p) {
    f8 xv[NV];
    for (int v = 0; v < NV; ++v) xv[v] = load8(x + (size_t)p * in_c + j + 8 * v);
    const float* dp = d + (size_t)p * out_c + o0;
    if (BIAS) {
      const VB dv = simd::Vec<NO>::load(dp);
      bias = dv != zero ? bias + dv : bias;
    }
    for (int o = 0; o < NO; ++o) {
      const f8 dv = splat8(dp[o]);
      for (int v = 0; v < NV; ++v) acc[o][v] += dv * xv[v];
    }
  }
  for (int o = 0; o < NO; ++o)
    for (int v = 0; v < NV; ++v) store8(dw + (size_t)(o0 + o) * in_c + j + 8 * v, acc[o][v]);
  if (BIAS) simd::Vec<NO>::store(db + o0, bias);
}

// All of dW for NO channels from o0 (NV vectors of i per pass), the bias in the first pass.
template <int NO, int NV>
TV_INLINE void params_rows(const float* x, const float* d, int p_n, int in_c, int out_c, int o0, float* dw, float* db) {
  params_block<NO, NV, true>(x, d, p_n, in_c, out_c, o0, 0, dw, db);
  for (int j = 8 * NV; j < in_c; j += 8 * NV) params_block<NO, NV, false>(x, d, p_n, in_c, out_c, o0, j, dw, db);
}

}  // namespace

TV_TARGET_CLONES bool pointwise_forward(const Geom2D& g, const float* in, const float* w, const float* b, float* out,
                                        const Epilogue& e) {
  if (!fits(g)) return false;
  float wt[kMaxWeights] __attribute__((aligned(32)));
  transpose(w, g.out_c, g.in_c, wt);  // in_c x out_c
  matmul(in, g.in_h * g.in_w, g.in_c, wt, g.out_c, b, out, e);
  return true;
}

TV_TARGET_CLONES bool pointwise_backward_data(const Geom2D& g, const float* w, const float* dout, float* din,
                                              const Epilogue& e) {
  if (!fits(g) || !simd::all_finite(w, (size_t)g.out_c * g.in_c)) return false;
  matmul(dout, g.in_h * g.in_w, g.out_c, w, g.in_c, nullptr, din, e);
  return true;
}

TV_TARGET_CLONES bool pointwise_backward_params(const Geom2D& g, const float* in, const float* dout, float* dw,
                                                float* db) {
  const int p_n = g.in_h * g.in_w;
  if (!fits(g) || !simd::all_finite(in, (size_t)p_n * g.in_c)) return false;
  // Blocks of 4 channels x 16 inputs, or 8 channels x 8 inputs: eight sums in registers.
  if (g.in_c % 16 == 0)
    for (int o0 = 0; o0 < g.out_c; o0 += 4) params_rows<4, 2>(in, dout, p_n, g.in_c, g.out_c, o0, dw, db);
  else
    for (int o0 = 0; o0 < g.out_c; o0 += 8) params_rows<8, 1>(in, dout, p_n, g.in_c, g.out_c, o0, dw, db);
  return true;
}

}  // namespace fast
}  // namespace tv
