// The fast depthwise convolution, pointwise (1x1) convolution, average pooling and adaptive average
// pooling give the reference kernels' bits (tv/ops/kernel_variants.h): every output compared bit for bit on random
// geometries (strides 1 and 2, valid and same padding, any channel count, overlapping and disjoint windows) and data,
// with gradients accumulated onto values already present. The golden and gradient tests of these ops (test_ops.cpp) run
// through the tv:: entry points, i.e. the fast variants on the host.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/ops/kernel_compare.h"
#include "tv/ops/kernel_variants.h"

namespace {

using kernel_compare::describe;
using kernel_compare::expect_same_bits;
using kernel_compare::sparse_random_vec;
using kernel_compare::Vec;

// Uniform in [-1, 1) with some exact zeros (as after a ReLU).
Vec random_values(std::mt19937& rng, size_t n) {
  return sparse_random_vec(rng, n, 0.1f);
}

// A random sliding-window geometry along one axis: valid, or TensorFlow "same" padding.
void axis(std::mt19937& rng, int in, int k, int stride, int* out, int* pad) {
  if (rng() % 2 && in >= k) {
    *out = (in - k) / stride + 1;
    *pad = 0;
  } else {
    *out = (in + stride - 1) / stride;
    *pad = std::max((*out - 1) * stride + k - in, 0) / 2;
  }
}

tv::Geom2D random_window(std::mt19937& rng, int channels, int max_k, bool any_stride) {
  tv::Geom2D g{};
  g.in_h = 1 + (int)(rng() % 14);
  g.in_w = 1 + (int)(rng() % 30);
  g.in_c = g.out_c = channels;
  g.k_h = rng() % 2 ? 3 : 1 + (int)(rng() % max_k);
  g.k_w = rng() % 2 ? g.k_h : 1 + (int)(rng() % max_k);
  g.stride_h = any_stride ? 1 + (int)(rng() % 3) : 1 + (int)(rng() % 2);
  g.stride_w = rng() % 3 ? g.stride_h : 1 + (int)(rng() % 2);
  axis(rng, g.in_h, g.k_h, g.stride_h, &g.out_h, &g.pad_top);
  axis(rng, g.in_w, g.k_w, g.stride_w, &g.out_w, &g.pad_left);
  return g;
}

const int kChannelCounts[] = {1, 3, 8, 13, 16, 32, 40, 64, 72};

void compare_depthwise_variants(const tv::Geom2D& g, std::mt19937& rng) {
  const std::string where = describe(g);
  const size_t n_in = (size_t)g.in_h * g.in_w * g.in_c, n_out = (size_t)g.out_h * g.out_w * g.out_c;
  const size_t n_w = (size_t)g.k_h * g.k_w * g.in_c;
  const Vec in = random_values(rng, n_in), w = random_values(rng, n_w), b = random_values(rng, g.in_c);
  const Vec dout = random_values(rng, n_out);
  Vec out_ref(n_out, 777.0f), out_fast(n_out, -777.0f);
  tv::ref::depthwise_conv2d_forward(g, in.data(), w.data(), b.data(), out_ref.data());
  tv::fast::depthwise_conv2d_forward(g, in.data(), w.data(), b.data(), out_fast.data());
  expect_same_bits("depthwise_conv2d_forward", out_ref, out_fast, where);

  Vec din_ref(n_in, 777.0f), din_fast(n_in, -777.0f);
  tv::ref::depthwise_conv2d_backward_data(g, w.data(), dout.data(), din_ref.data());
  tv::fast::depthwise_conv2d_backward_data(g, w.data(), dout.data(), din_fast.data());
  expect_same_bits("depthwise_conv2d_backward_data", din_ref, din_fast, where);

  Vec dw_ref = random_values(rng, n_w), db_ref = random_values(rng, g.in_c);
  Vec dw_fast = dw_ref, db_fast = db_ref;
  tv::ref::depthwise_conv2d_backward_params(g, in.data(), dout.data(), dw_ref.data(), db_ref.data());
  tv::fast::depthwise_conv2d_backward_params(g, in.data(), dout.data(), dw_fast.data(), db_fast.data());
  expect_same_bits("depthwise_conv2d_backward_params dw", dw_ref, dw_fast, where);
  expect_same_bits("depthwise_conv2d_backward_params db", db_ref, db_fast, where);
}

void compare_avgpool(const tv::Geom2D& g, std::mt19937& rng) {
  const std::string where = describe(g);
  const size_t n_in = (size_t)g.in_h * g.in_w * g.in_c, n_out = (size_t)g.out_h * g.out_w * g.out_c;
  const Vec in = random_values(rng, n_in), dout = random_values(rng, n_out);
  Vec out_ref(n_out, 777.0f), out_fast(n_out, -777.0f);
  tv::ref::avgpool2d_forward(g, in.data(), out_ref.data());
  tv::fast::avgpool2d_forward(g, in.data(), out_fast.data());
  expect_same_bits("avgpool2d_forward", out_ref, out_fast, where);
  Vec din_ref(n_in, 777.0f), din_fast(n_in, -777.0f);
  tv::ref::avgpool2d_backward(g, dout.data(), din_ref.data());
  tv::fast::avgpool2d_backward(g, dout.data(), din_fast.data());
  expect_same_bits("avgpool2d_backward", din_ref, din_fast, where);
}

void compare_adaptive(int in_h, int in_w, int c, int out_h, int out_w, std::mt19937& rng) {
  std::ostringstream s;
  s << in_h << "x" << in_w << "x" << c << " -> " << out_h << "x" << out_w;
  const size_t n_in = (size_t)in_h * in_w * c, n_out = (size_t)out_h * out_w * c;
  const Vec in = random_values(rng, n_in), dout = random_values(rng, n_out);
  Vec out_ref(n_out, 777.0f), out_fast(n_out, -777.0f);
  tv::ref::adaptive_avgpool2d_forward(in_h, in_w, c, out_h, out_w, in.data(), out_ref.data());
  tv::fast::adaptive_avgpool2d_forward(in_h, in_w, c, out_h, out_w, in.data(), out_fast.data());
  expect_same_bits("adaptive_avgpool2d_forward", out_ref, out_fast, s.str());
  Vec din_ref(n_in, 777.0f), din_fast(n_in, -777.0f);
  tv::ref::adaptive_avgpool2d_backward(in_h, in_w, c, out_h, out_w, dout.data(), din_ref.data());
  tv::fast::adaptive_avgpool2d_backward(in_h, in_w, c, out_h, out_w, dout.data(), din_fast.data());
  expect_same_bits("adaptive_avgpool2d_backward", din_ref, din_fast, s.str());
}

}  // namespace

TEST(FastKernels, DepthwiseRandomGeometries) {
  std::mt19937 rng(201);
  for (int t = 0; t < 400; ++t) {
    const int c = kChannelCounts[t % (sizeof kChannelCounts / sizeof kChannelCounts[0])];
    compare_depthwise_variants(random_window(rng, c, 5, false), rng);
  }
}

TEST(FastKernels, DepthwisePresetLayers) {
  std::mt19937 rng(202);
  // The default preset's blocks at 64x64 and at 28x28 input, and stride-2 depthwise layers.
  const tv::Geom2D layers[] = {
      {32, 32, 8, 32, 32, 8, 3, 3, 1, 1, 1, 1},   {16, 16, 16, 16, 16, 16, 3, 3, 1, 1, 1, 1},
      {8, 8, 32, 8, 8, 32, 3, 3, 1, 1, 1, 1},     {4, 4, 64, 4, 4, 64, 3, 3, 1, 1, 1, 1},
      {28, 28, 16, 28, 28, 16, 3, 3, 1, 1, 1, 1}, {28, 28, 16, 14, 14, 16, 3, 3, 2, 2, 0, 0},
      {14, 14, 32, 7, 7, 32, 3, 3, 2, 2, 0, 0},   {7, 7, 64, 4, 4, 64, 3, 3, 2, 2, 1, 1},
  };
  for (const tv::Geom2D& g : layers) compare_depthwise_variants(g, rng);
}

TEST(FastKernels, DepthwiseSpecialValues) {
  // Infinities and NaN flow through the same operations in the same order.
  std::mt19937 rng(203);
  const tv::Geom2D g{6, 7, 16, 6, 7, 16, 3, 3, 1, 1, 1, 1};
  const size_t n_in = 6 * 7 * 16, n_w = 9 * 16;
  Vec in = random_values(rng, n_in), w = random_values(rng, n_w), b = random_values(rng, 16);
  Vec dout = random_values(rng, n_in);
  in[5] = INFINITY;
  in[77] = NAN;
  dout[40] = -INFINITY;
  w[3] = NAN;
  Vec o1(n_in), o2(n_in), d1(n_in), d2(n_in), dw1(n_w, 0.0f), dw2(n_w, 0.0f), db1(16, 0.0f), db2(16, 0.0f);
  tv::ref::depthwise_conv2d_forward(g, in.data(), w.data(), b.data(), o1.data());
  tv::fast::depthwise_conv2d_forward(g, in.data(), w.data(), b.data(), o2.data());
  expect_same_bits("forward", o1, o2, describe(g));
  tv::ref::depthwise_conv2d_backward_data(g, w.data(), dout.data(), d1.data());
  tv::fast::depthwise_conv2d_backward_data(g, w.data(), dout.data(), d2.data());
  expect_same_bits("backward_data", d1, d2, describe(g));
  tv::ref::depthwise_conv2d_backward_params(g, in.data(), dout.data(), dw1.data(), db1.data());
  tv::fast::depthwise_conv2d_backward_params(g, in.data(), dout.data(), dw2.data(), db2.data());
  expect_same_bits("backward_params dw", dw1, dw2, describe(g));
  expect_same_bits("backward_params db", db1, db2, describe(g));
}

TEST(FastKernels, AvgPoolRandomGeometries) {
  std::mt19937 rng(204);
  for (int t = 0; t < 300; ++t) {
    const int c = kChannelCounts[t % (sizeof kChannelCounts / sizeof kChannelCounts[0])];
    compare_avgpool(random_window(rng, c, 4, true), rng);  // strides 1-3: overlapping and disjoint windows
  }
}

TEST(FastKernels, AdaptiveAvgPoolRandomSizes) {
  std::mt19937 rng(205);
  for (int t = 0; t < 300; ++t) {
    const int in_h = 1 + (int)(rng() % 12), in_w = 1 + (int)(rng() % 12);
    const int out_h = 1 + (int)(rng() % in_h), out_w = 1 + (int)(rng() % in_w);
    const int c = kChannelCounts[t % (sizeof kChannelCounts / sizeof kChannelCounts[0])];
    compare_adaptive(in_h, in_w, c, out_h, out_w, rng);
  }
  // The presets' heads: 4x4 -> 2x2, 7x7 -> 1x1 (global), 8x6 -> 2x2.
  compare_adaptive(4, 4, 64, 2, 2, rng);
  compare_adaptive(7, 7, 64, 1, 1, rng);
  compare_adaptive(8, 6, 40, 2, 2, rng);
}

namespace {

// A 1x1 conv (pointwise_fast.cpp's matrix products) against the reference, gradients accumulated onto
// values already present.
void compare_pointwise(int h, int w, int in_c, int out_c, float dout_zeros, std::mt19937& rng) {
  const tv::Geom2D g{h, w, in_c, h, w, out_c, 1, 1, 1, 1, 0, 0};
  const std::string where = describe(g);
  const size_t n_in = (size_t)h * w * in_c, n_out = (size_t)h * w * out_c, n_w = (size_t)in_c * out_c;
  const Vec in = random_values(rng, n_in), wt = random_values(rng, n_w), b = random_values(rng, out_c);
  const Vec dout = sparse_random_vec(rng, n_out, dout_zeros);
  Vec out_ref(n_out, 777.0f), out_fast(n_out, -777.0f);
  tv::ref::conv2d_forward(g, in.data(), wt.data(), b.data(), out_ref.data());
  tv::fast::conv2d_forward(g, in.data(), wt.data(), b.data(), out_fast.data());
  expect_same_bits("pointwise forward", out_ref, out_fast, where);
  Vec din_ref(n_in, 777.0f), din_fast(n_in, -777.0f);
  tv::ref::conv2d_backward_data(g, wt.data(), dout.data(), din_ref.data());
  tv::fast::conv2d_backward_data(g, wt.data(), dout.data(), din_fast.data());
  expect_same_bits("pointwise backward_data", din_ref, din_fast, where);
  Vec dw_ref = random_values(rng, n_w), db_ref = random_values(rng, out_c);
  Vec dw_fast = dw_ref, db_fast = db_ref;
  tv::ref::conv2d_backward_params(g, in.data(), dout.data(), dw_ref.data(), db_ref.data());
  tv::fast::conv2d_backward_params(g, in.data(), dout.data(), dw_fast.data(), db_fast.data());
  expect_same_bits("pointwise backward_params dw", dw_ref, dw_fast, where);
  expect_same_bits("pointwise backward_params db", db_ref, db_fast, where);
  // From zeroed gradients, as a training batch starts.
  Vec dw0_ref(n_w, 0.0f), db0_ref(out_c, 0.0f), dw0_fast(n_w, 0.0f), db0_fast(out_c, 0.0f);
  tv::ref::conv2d_backward_params(g, in.data(), dout.data(), dw0_ref.data(), db0_ref.data());
  tv::fast::conv2d_backward_params(g, in.data(), dout.data(), dw0_fast.data(), db0_fast.data());
  expect_same_bits("pointwise backward_params dw from 0", dw0_ref, dw0_fast, where);
  expect_same_bits("pointwise backward_params db from 0", db0_ref, db0_fast, where);
}

}  // namespace

TEST(FastKernels, PointwiseRandomSizes) {
  std::mt19937 rng(206);
  for (int t = 0; t < 120; ++t) {
    const int in_c = 8 * (1 + (int)(rng() % 16)), out_c = 8 * (1 + (int)(rng() % 16));
    const float zeros[] = {0.0f, 0.5f, 0.97f};
    compare_pointwise(1 + (int)(rng() % 9), 1 + (int)(rng() % 11), in_c, out_c, zeros[t % 3], rng);
  }
  // The presets' pointwise layers (1x and 2x width) and channel counts without the matrix path.
  compare_pointwise(28, 28, 8, 16, 0.5f, rng);
  compare_pointwise(7, 7, 128, 128, 0.5f, rng);
  compare_pointwise(4, 4, 64, 64, 0.0f, rng);
  compare_pointwise(5, 6, 12, 20, 0.5f, rng);
  compare_pointwise(3, 3, 136, 128, 0.5f, rng);  // 17,408 weights: more than the stack copy holds
}

TEST(FastKernels, PointwiseNonFiniteValues) {
  // Inf and NaN in the input (the weight gradient then takes the general path), in the gradient and
  // in the weights of the forward pass: the same operations in the same order.
  std::mt19937 rng(207);
  const tv::Geom2D g{3, 4, 16, 3, 4, 8, 1, 1, 1, 1, 0, 0};
  Vec in = random_values(rng, 3 * 4 * 16), wt = random_values(rng, 16 * 8), b = random_values(rng, 8);
  Vec dout = sparse_random_vec(rng, 3 * 4 * 8, 0.5f);
  in[7] = INFINITY;
  dout[3] = NAN;
  dout[20] = -INFINITY;
  Vec d1(in.size()), d2(in.size()), dw1(wt.size(), 0.0f), dw2(wt.size(), 0.0f), db1(8, 0.0f), db2(8, 0.0f);
  tv::ref::conv2d_backward_data(g, wt.data(), dout.data(), d1.data());
  tv::fast::conv2d_backward_data(g, wt.data(), dout.data(), d2.data());
  expect_same_bits("backward_data", d1, d2, describe(g));
  tv::ref::conv2d_backward_params(g, in.data(), dout.data(), dw1.data(), db1.data());
  tv::fast::conv2d_backward_params(g, in.data(), dout.data(), dw2.data(), db2.data());
  expect_same_bits("backward_params dw", dw1, dw2, describe(g));
  expect_same_bits("backward_params db", db1, db2, describe(g));
  wt[9] = NAN;
  wt[30] = INFINITY;
  Vec o1(3 * 4 * 8), o2(3 * 4 * 8);
  tv::ref::conv2d_forward(g, in.data(), wt.data(), b.data(), o1.data());
  tv::fast::conv2d_forward(g, in.data(), wt.data(), b.data(), o2.data());
  expect_same_bits("forward", o1, o2, describe(g));
}
