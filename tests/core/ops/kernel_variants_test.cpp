// The fast kernel variants give the reference kernels' bits (tv/ops/kernel_variants.h): every output
// compared with memcmp on random geometries and data, with zero, sparse and mostly-zero gradients,
// ties and NaN; and the fused conv + activations + max-pool backward against the layers run one by
// one with the reference kernels. (the per-kernel files tests/core/ops/<kernel>_test.cpp run the golden and gradient
// tests on both sets.)
#include "tv/ops/kernel_variants.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/ops/kernel_compare.h"

namespace {

using kernel_compare::describe;
using kernel_compare::expect_same_bits;
using kernel_compare::sparse_random_vec;
using kernel_compare::Vec;

void compare_conv(const tv::Geom2D& g, std::mt19937& rng, float dout_zero_fraction) {
  const std::string where = describe(g);
  const size_t n_in = (size_t)g.in_h * g.in_w * g.in_c, n_out = (size_t)g.out_h * g.out_w * g.out_c;
  const size_t n_w = (size_t)g.out_c * g.k_h * g.k_w * g.in_c;
  const Vec in = sparse_random_vec(rng, n_in), w = sparse_random_vec(rng, n_w), b = sparse_random_vec(rng, g.out_c);
  const Vec dout = sparse_random_vec(rng, n_out, dout_zero_fraction);

  Vec out_ref(n_out, 777.0f), out_fast(n_out, -777.0f);
  tv::ref::conv2d_forward(g, in.data(), w.data(), b.data(), out_ref.data());
  tv::fast::conv2d_forward(g, in.data(), w.data(), b.data(), out_fast.data());
  expect_same_bits("conv2d_forward", out_ref, out_fast, where);

  Vec din_ref(n_in, 777.0f), din_fast(n_in, -777.0f);
  tv::ref::conv2d_backward_data(g, w.data(), dout.data(), din_ref.data());
  tv::fast::conv2d_backward_data(g, w.data(), dout.data(), din_fast.data());
  expect_same_bits("conv2d_backward_data", din_ref, din_fast, where);

  // Accumulates into gradients that already hold values.
  Vec dw_ref = sparse_random_vec(rng, n_w), db_ref = sparse_random_vec(rng, g.out_c);
  Vec dw_fast = dw_ref, db_fast = db_ref;
  tv::ref::conv2d_backward_params(g, in.data(), dout.data(), dw_ref.data(), db_ref.data());
  tv::fast::conv2d_backward_params(g, in.data(), dout.data(), dw_fast.data(), db_fast.data());
  expect_same_bits("conv2d_backward_params dw", dw_ref, dw_fast, where);
  expect_same_bits("conv2d_backward_params db", db_ref, db_fast, where);
}

TEST(FastKernels, Conv2dRandomGeometries) {
  std::mt19937 rng(101);
  int tested = 0;
  while (tested < 400) {
    tv::Geom2D g;
    if (!kernel_compare::random_conv(rng, &g)) continue;
    // Dense gradients, after-a-pool sparse ones, and mostly zero ones.
    const float zeros[] = {0.0f, 0.75f, 0.97f};
    compare_conv(g, rng, zeros[tested % 3]);
    ++tested;
  }
}

TEST(FastKernels, Conv2dWebmcuLayers) {
  std::mt19937 rng(102);
  const tv::Geom2D conv1{64, 64, 3, 62, 62, 4, 3, 3, 1, 1, 0, 0};
  const tv::Geom2D conv2{31, 31, 4, 29, 29, 8, 3, 3, 1, 1, 0, 0};
  compare_conv(conv1, rng, 0.75f);
  compare_conv(conv2, rng, 0.0f);
  compare_conv(conv2, rng, 0.1f);  // zeros here and there: the masked path
}

TEST(FastKernels, Conv2dTinyvisionStems) {
  // The default preset's 3x3 "same" stem at the inputs its rule sees: stride 2 (bottom/right padding
  // only, or both sides when odd), stride 1 on small inputs, 1 and 3 channels, wider than 16 pixels
  // (the vector copy of the planar phases), and 8 or 12 filters (a block of 8 plus one of 4).
  std::mt19937 rng(104);
  struct Stem {
    int h, w, c, stride, filters;
  };
  for (const Stem& s : {Stem{64, 64, 3, 2, 8}, Stem{63, 65, 3, 2, 8}, Stem{96, 96, 3, 2, 12}, Stem{160, 120, 3, 2, 8},
                        Stem{28, 28, 1, 1, 8}, Stem{17, 40, 1, 2, 8}, Stem{33, 48, 4, 2, 8}}) {
    tv::Geom2D g{};
    g.in_h = s.h;
    g.in_w = s.w;
    g.in_c = s.c;
    g.out_c = s.filters;
    g.k_h = g.k_w = 3;
    g.stride_h = g.stride_w = s.stride;
    kernel_compare::same_or_valid(s.h, 3, s.stride, true, &g.out_h, &g.pad_top);
    kernel_compare::same_or_valid(s.w, 3, s.stride, true, &g.out_w, &g.pad_left);
    compare_conv(g, rng, 0.0f);
    compare_conv(g, rng, 0.5f);
  }
}

TEST(FastKernels, Conv2dWeightGradientWithZerosAndNegativeZeroSums) {
  // Gradients with zeros (a ReLU's) over finite inputs: the grouped path adds d * x without a select
  // unless a running sum starts at -0, which the reference's skip of d == 0 keeps at -0.
  std::mt19937 rng(105);
  for (const tv::Geom2D& g :
       {tv::Geom2D{9, 20, 3, 7, 18, 8, 3, 3, 1, 1, 0, 0}, tv::Geom2D{12, 12, 3, 6, 6, 16, 3, 3, 2, 2, 0, 0},
        tv::Geom2D{16, 16, 3, 8, 8, 8, 3, 3, 2, 2, 0, 0}}) {
    const size_t n_in = (size_t)g.in_h * g.in_w * g.in_c, n_out = (size_t)g.out_h * g.out_w * g.out_c;
    const size_t n_w = (size_t)g.out_c * g.k_h * g.k_w * g.in_c;
    const Vec in = sparse_random_vec(rng, n_in, 0.3f);
    Vec dout = sparse_random_vec(rng, n_out, 0.5f);
    for (size_t i = 2; i < n_out; i += g.out_c) dout[i] = 0.0f;  // a dead channel: its sums stay as they start
    for (int start : {0, 1}) {                                   // sums from +0, or from values with some -0 among them
      Vec dw_ref(n_w, 0.0f), db_ref(g.out_c, 0.0f);
      if (start == 1) {
        dw_ref = sparse_random_vec(rng, n_w, 0.2f);
        db_ref = sparse_random_vec(rng, g.out_c, 0.3f);
        for (size_t i = 0; i < n_w; i += 7) dw_ref[i] = -0.0f;
        db_ref[2] = -0.0f;
      }
      Vec dw_fast = dw_ref, db_fast = db_ref;
      tv::ref::conv2d_backward_params(g, in.data(), dout.data(), dw_ref.data(), db_ref.data());
      tv::fast::conv2d_backward_params(g, in.data(), dout.data(), dw_fast.data(), db_fast.data());
      expect_same_bits("conv2d_backward_params dw", dw_ref, dw_fast, describe(g));
      expect_same_bits("conv2d_backward_params db", db_ref, db_fast, describe(g));
    }
  }
}

TEST(FastKernels, Conv2dSpecialValues) {
  // NaN and infinities in the input and the gradient: the reference's skip of zero gradients is
  // reproduced exactly, so a zero gradient at a NaN input adds nothing.
  std::mt19937 rng(103);
  for (const tv::Geom2D& g :
       {tv::Geom2D{9, 20, 3, 7, 18, 4, 3, 3, 1, 1, 0, 0}, tv::Geom2D{9, 20, 4, 7, 18, 8, 3, 3, 1, 1, 0, 0}}) {
    const size_t n_in = (size_t)g.in_h * g.in_w * g.in_c, n_out = (size_t)g.out_h * g.out_w * g.out_c;
    const size_t n_w = (size_t)g.out_c * g.k_h * g.k_w * g.in_c;
    Vec in = sparse_random_vec(rng, n_in), dout = sparse_random_vec(rng, n_out, 0.5f);
    in[5] = NAN;
    in[40] = INFINITY;
    dout[3] = -0.0f;
    dout[9] = NAN;
    Vec dw_ref(n_w, 0.0f), db_ref(g.out_c, 0.0f), dw_fast = dw_ref, db_fast = db_ref;
    tv::ref::conv2d_backward_params(g, in.data(), dout.data(), dw_ref.data(), db_ref.data());
    tv::fast::conv2d_backward_params(g, in.data(), dout.data(), dw_fast.data(), db_fast.data());
    expect_same_bits("conv2d_backward_params dw", dw_ref, dw_fast, describe(g));
    expect_same_bits("conv2d_backward_params db", db_ref, db_fast, describe(g));
    const Vec w = sparse_random_vec(rng, n_w), b = sparse_random_vec(rng, g.out_c);
    Vec out_ref(n_out), out_fast(n_out);
    tv::ref::conv2d_forward(g, in.data(), w.data(), b.data(), out_ref.data());
    tv::fast::conv2d_forward(g, in.data(), w.data(), b.data(), out_fast.data());
    expect_same_bits("conv2d_forward", out_ref, out_fast, describe(g));
  }
}

TEST(FastKernels, MaxPoolWithTiesAndNaN) {
  std::mt19937 rng(104);
  for (int it = 0; it < 300; ++it) {
    tv::Geom2D g{};
    g.k_h = 1 + (int)(rng() % 3);
    g.k_w = 1 + (int)(rng() % 3);
    g.stride_h = it % 5 ? g.k_h : 1;  // mostly non-overlapping (the fast path), sometimes not
    g.stride_w = g.k_w;
    g.in_h = g.k_h + (int)(rng() % 12);
    g.in_w = g.k_w + (int)(rng() % 30);
    g.in_c = g.out_c = 1 + (int)(rng() % 12);
    g.out_h = (g.in_h - g.k_h) / g.stride_h + 1;
    g.out_w = (g.in_w - g.k_w) / g.stride_w + 1;
    const size_t n_in = (size_t)g.in_h * g.in_w * g.in_c, n_out = (size_t)g.out_h * g.out_w * g.in_c;
    Vec in = sparse_random_vec(rng, n_in);
    for (size_t i = 0; i < n_in; i += 3) in[i] = 0.5f;  // ties
    if (it % 7 == 0) in[rng() % n_in] = NAN;
    const Vec dout = sparse_random_vec(rng, n_out, 0.2f);
    Vec out_ref(n_out, 777.0f), out_fast(n_out, -777.0f);
    tv::ref::maxpool2d_forward(g, in.data(), out_ref.data());
    tv::fast::maxpool2d_forward(g, in.data(), out_fast.data());
    expect_same_bits("maxpool2d_forward", out_ref, out_fast, describe(g));
    Vec din_ref(n_in, 777.0f), din_fast(n_in, -777.0f);
    tv::ref::maxpool2d_backward(g, in.data(), dout.data(), din_ref.data());
    tv::fast::maxpool2d_backward(g, in.data(), dout.data(), din_fast.data());
    expect_same_bits("maxpool2d_backward", din_ref, din_fast, describe(g));
  }
}

TEST(FastKernels, DenseRandomSizes) {
  std::mt19937 rng(105);
  for (int it = 0; it < 100; ++it) {
    const int in_n = 1 + (int)(rng() % 700), out_n = 1 + (int)(rng() % 11);
    const std::string where = std::to_string(in_n) + " -> " + std::to_string(out_n);
    const Vec in = sparse_random_vec(rng, in_n, 0.1f, -3.0f, 3.0f), w = sparse_random_vec(rng, (size_t)in_n * out_n);
    const Vec b = sparse_random_vec(rng, out_n), dout = sparse_random_vec(rng, out_n);
    Vec out_ref(out_n), out_fast(out_n);
    tv::ref::dense_forward(in_n, out_n, in.data(), w.data(), b.data(), out_ref.data());
    tv::fast::dense_forward(in_n, out_n, in.data(), w.data(), b.data(), out_fast.data());
    expect_same_bits("dense_forward", out_ref, out_fast, where);
    Vec din_ref(in_n, 777.0f), din_fast(in_n, -777.0f);
    tv::ref::dense_backward_data(in_n, out_n, w.data(), dout.data(), din_ref.data());
    tv::fast::dense_backward_data(in_n, out_n, w.data(), dout.data(), din_fast.data());
    expect_same_bits("dense_backward_data", din_ref, din_fast, where);
    Vec dw_ref = sparse_random_vec(rng, (size_t)in_n * out_n), db_ref = sparse_random_vec(rng, out_n);
    Vec dw_fast = dw_ref, db_fast = db_ref;
    tv::ref::dense_backward_params(in_n, out_n, in.data(), dout.data(), dw_ref.data(), db_ref.data());
    tv::fast::dense_backward_params(in_n, out_n, in.data(), dout.data(), dw_fast.data(), db_fast.data());
    expect_same_bits("dense_backward_params dw", dw_ref, dw_fast, where);
    expect_same_bits("dense_backward_params db", db_ref, db_fast, where);
  }
}

TEST(FastKernels, ActivationsWithSpecialValues) {
  std::mt19937 rng(106);
  for (size_t n : {1, 7, 8, 9, 64, 103}) {
    Vec x = sparse_random_vec(rng, n, 0.1f, -200.0f, 200.0f);
    x[0] = -0.0f;
    if (n > 3) {
      x[1] = NAN;
      x[2] = INFINITY;
      x[3] = -INFINITY;
    }
    const Vec dy = sparse_random_vec(rng, n);
    const std::string where = std::to_string(n) + " elements";
    Vec a = x, b = x;
    tv::ref::relu_forward(a.data(), n);
    tv::fast::relu_forward(b.data(), n);
    expect_same_bits("relu_forward", a, b, where);
    a = dy, b = dy;
    tv::ref::relu_backward(x.data(), a.data(), n);
    tv::fast::relu_backward(x.data(), b.data(), n);
    expect_same_bits("relu_backward", a, b, where);
    a = x, b = x;
    tv::ref::leaky_relu_forward(a.data(), n, 0.1f);
    tv::fast::leaky_relu_forward(b.data(), n, 0.1f);
    expect_same_bits("leaky_relu_forward", a, b, where);
    a = dy, b = dy;
    tv::ref::leaky_relu_backward(x.data(), a.data(), n, 0.1f);
    tv::fast::leaky_relu_backward(x.data(), b.data(), n, 0.1f);
    expect_same_bits("leaky_relu_backward", a, b, where);
    a = x, b = x;
    tv::ref::clip_forward(a.data(), n, -100.0f, 100.0f);
    tv::fast::clip_forward(b.data(), n, -100.0f, 100.0f);
    expect_same_bits("clip_forward", a, b, where);
  }
}

// ---- the fused backward of conv -> activations -> max-pool ----

struct FusedCase {
  tv::Geom2D conv, pool;
};

// A valid conv (any stride) followed by a non-overlapping pool over its output.
bool random_fused(std::mt19937& rng, FusedCase* c) {
  tv::Geom2D& g = c->conv;
  g = tv::Geom2D{};
  g.in_c = 1 + (int)(rng() % 5);
  g.out_c = rng() % 3 == 0 ? 4 * (1 + (int)(rng() % 2)) : 1 + (int)(rng() % 9);  // often 4 or 8
  g.k_h = 1 + (int)(rng() % 3);
  g.k_w = 1 + (int)(rng() % 3);
  g.stride_h = rng() % 4 ? 1 : 2;
  g.stride_w = rng() % 4 ? 1 : 2;
  g.in_h = g.k_h + (int)(rng() % 20);
  g.in_w = g.k_w + (int)(rng() % 40);
  g.out_h = (g.in_h - g.k_h) / g.stride_h + 1;
  g.out_w = (g.in_w - g.k_w) / g.stride_w + 1;
  tv::Geom2D& p = c->pool;
  p = tv::Geom2D{};
  p.k_h = rng() % 2 ? 2 : 1 + (int)(rng() % 3);
  p.k_w = rng() % 2 ? 2 : 1 + (int)(rng() % 3);
  p.stride_h = p.k_h;
  p.stride_w = p.k_w;
  p.in_h = g.out_h;
  p.in_w = g.out_w;
  p.in_c = p.out_c = g.out_c;
  if (p.in_h < p.k_h || p.in_w < p.k_w) return false;
  p.out_h = (p.in_h - p.k_h) / p.stride_h + 1;
  p.out_w = (p.in_w - p.k_w) / p.stride_w + 1;
  return true;
}

// The layers one by one with the reference kernels: pool backward, each activation's backward, the
// conv's weight gradient.
void reference_chain(const FusedCase& c, const std::vector<tv::fast::ActivationStep>& acts, const Vec& in, const Vec& y,
                     const Vec& dpool, Vec* dw, Vec* db) {
  Vec dy(y.size(), 777.0f);
  tv::ref::maxpool2d_backward(c.pool, y.data(), dpool.data(), dy.data());
  for (const auto& a : acts) {
    if (a.leaky)
      tv::ref::leaky_relu_backward(y.data(), dy.data(), dy.size(), a.alpha);
    else
      tv::ref::relu_backward(y.data(), dy.data(), dy.size());
  }
  tv::ref::conv2d_backward_params(c.conv, in.data(), dy.data(), dw->data(), db->data());
}

TEST(FusedConvPoolBackward, EqualsTheLayersOneByOne) {
  std::mt19937 rng(107);
  int tested = 0;
  while (tested < 300) {
    FusedCase c;
    if (!random_fused(rng, &c)) continue;
    const tv::Geom2D& g = c.conv;
    const size_t n_in = (size_t)g.in_h * g.in_w * g.in_c, n_y = (size_t)g.out_h * g.out_w * g.out_c;
    const size_t n_pool = (size_t)c.pool.out_h * c.pool.out_w * g.out_c;
    const size_t n_w = (size_t)g.out_c * g.k_h * g.k_w * g.in_c;
    const Vec in = sparse_random_vec(rng, n_in);
    Vec y = sparse_random_vec(rng, n_y, 0.05f, -2.0f, 2.0f);
    for (size_t i = 0; i < n_y; i += 5) y[i] = 0.25f;  // ties inside windows
    Vec dpool = sparse_random_vec(rng, n_pool, 0.1f);
    if (tested % 10 == 0) dpool[0] = -0.0f;
    if (tested % 13 == 0) dpool[n_pool - 1] = NAN;
    std::vector<tv::fast::ActivationStep> acts;
    for (int a = (int)(rng() % 3); a > 0; --a) acts.push_back({rng() % 3 != 0, 0.1f});
    Vec dw_ref = sparse_random_vec(rng, n_w), db_ref = sparse_random_vec(rng, g.out_c);
    Vec dw_fast = dw_ref, db_fast = db_ref;
    reference_chain(c, acts, in, y, dpool, &dw_ref, &db_ref);
    ASSERT_TRUE(tv::fast::conv2d_pool_backward_params(g, c.pool, acts.data(), (int)acts.size(), in.data(), y.data(),
                                                      dpool.data(), dw_fast.data(), db_fast.data()))
        << describe(g);
    const std::string where = describe(g) + ", pool " + describe(c.pool);
    expect_same_bits("dw", dw_ref, dw_fast, where);
    expect_same_bits("db", db_ref, db_fast, where);
    ++tested;
  }
}

TEST(FusedConvPoolBackward, WebmcuFirstLayer) {
  std::mt19937 rng(108);
  FusedCase c;
  c.conv = tv::Geom2D{64, 64, 3, 62, 62, 4, 3, 3, 1, 1, 0, 0};
  c.pool = tv::Geom2D{62, 62, 4, 31, 31, 4, 2, 2, 2, 2, 0, 0};
  const Vec in = sparse_random_vec(rng, 64 * 64 * 3), dpool = sparse_random_vec(rng, 31 * 31 * 4);
  Vec y = sparse_random_vec(rng, 62 * 62 * 4, 0.0f, -3.0f, 3.0f);
  const std::vector<tv::fast::ActivationStep> acts = {{true, 0.1f}};
  Vec dw_ref(108, 0.0f), db_ref(4, 0.0f), dw_fast = dw_ref, db_fast = db_ref;
  reference_chain(c, acts, in, y, dpool, &dw_ref, &db_ref);
  ASSERT_TRUE(tv::fast::conv2d_pool_backward_params(c.conv, c.pool, acts.data(), 1, in.data(), y.data(), dpool.data(),
                                                    dw_fast.data(), db_fast.data()));
  expect_same_bits("dw", dw_ref, dw_fast, "webmcu conv1");
  expect_same_bits("db", db_ref, db_fast, "webmcu conv1");
}

TEST(FusedConvPoolBackward, DeclinesOtherGeometries) {
  const tv::Geom2D conv{10, 10, 3, 8, 8, 4, 3, 3, 1, 1, 0, 0};
  const tv::Geom2D overlapping{8, 8, 4, 7, 7, 4, 2, 2, 1, 1, 0, 0};
  const tv::Geom2D padded_conv{8, 8, 3, 8, 8, 4, 3, 3, 1, 1, 1, 1};
  const tv::Geom2D pool{8, 8, 4, 4, 4, 4, 2, 2, 2, 2, 0, 0};
  Vec in(300, 1.0f), y(256, 1.0f), dpool(64, 1.0f), dw(108, 0.0f), db(4, 0.0f);
  EXPECT_FALSE(tv::fast::conv2d_pool_backward_params(conv, overlapping, nullptr, 0, in.data(), y.data(), dpool.data(),
                                                     dw.data(), db.data()));
  EXPECT_FALSE(tv::fast::conv2d_pool_backward_params(padded_conv, pool, nullptr, 0, in.data(), y.data(), dpool.data(),
                                                     dw.data(), db.data()));
  EXPECT_EQ(dw, Vec(108, 0.0f));  // declined means untouched
}

}  // namespace
