// The fast kernels fused with a ReLU (tv/ops/kernel_variants.h: conv2d_forward_relu,
// depthwise_conv2d_forward_relu, conv2d_backward_data_relu, depthwise_conv2d_backward_data_relu,
// maxpool2d_backward_relu) give, bit for bit, what the reference kernels give run one by one: the
// layer, then relu_forward on its output; or the layer's backward_data, then relu_backward with the
// ReLU's output. Geometries: random convs (borders, strides, any channel count), the matrix-product
// path of 1x1 layers, the presets' layers, and sizes whose fast kernel hands over to the reference.
// The ReLU outputs used as masks hold exact zeros, -0, tiny values and NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "core/ops/kernel_compare.h"
#include "tv/ops/kernel_variants.h"

namespace {

using kernel_compare::describe;
using kernel_compare::expect_same_bits;
using kernel_compare::sparse_random_vec;
using kernel_compare::Vec;

// A ReLU's output: mostly >= 0 with exact zeros, plus the values a mask must treat like the
// reference does: -0 (not > 0), NaN (not > 0) and the smallest positive float.
Vec relu_output(std::mt19937& rng, size_t n) {
  Vec y = sparse_random_vec(rng, n, 0.4f, 0.0f, 2.0f);
  for (size_t i = 0; i < n; i += 7) y[i] = -0.0f;
  for (size_t i = 3; i < n; i += 29) y[i] = NAN;
  for (size_t i = 5; i < n; i += 31) y[i] = 1e-45f;
  return y;
}

// Layer forward (in, w, b -> out) and backward_data (w, dout -> din) of the reference, and the fused
// fast kernels, compared on random data with n_w weights and n_b biases.
template <class RefForward, class FusedForward, class RefData, class FusedData>
void compare_layer(const tv::Geom2D& g, size_t n_w, size_t n_b, std::mt19937& rng, const char* name,
                   RefForward ref_forward, FusedForward fused_forward, RefData ref_data, FusedData fused_data) {
  const std::string where = std::string(name) + " " + describe(g);
  const size_t n_in = (size_t)g.in_h * g.in_w * g.in_c, n_out = (size_t)g.out_h * g.out_w * g.out_c;
  const Vec in = sparse_random_vec(rng, n_in), w = sparse_random_vec(rng, n_w), b = sparse_random_vec(rng, n_b);
  Vec ref(n_out, 777.0f), fused(n_out, -777.0f);
  ref_forward(g, in.data(), w.data(), b.data(), ref.data());
  tv::ref::relu_forward(ref.data(), n_out);
  fused_forward(g, in.data(), w.data(), b.data(), fused.data());
  expect_same_bits("forward + relu", ref, fused, where);

  const Vec dout = sparse_random_vec(rng, n_out, 0.3f), y = relu_output(rng, n_in);
  Vec dref(n_in, 777.0f), dfused(n_in, -777.0f);
  ref_data(g, w.data(), dout.data(), dref.data());
  tv::ref::relu_backward(y.data(), dref.data(), n_in);
  fused_data(g, w.data(), dout.data(), dfused.data(), y.data());
  expect_same_bits("backward_data + relu_backward", dref, dfused, where);
}

void compare_conv(const tv::Geom2D& g, std::mt19937& rng) {
  compare_layer(g, (size_t)g.out_c * g.k_h * g.k_w * g.in_c, (size_t)g.out_c, rng, "conv2d", tv::ref::conv2d_forward,
                tv::fast::conv2d_forward_relu, tv::ref::conv2d_backward_data, tv::fast::conv2d_backward_data_relu);
}

void compare_depthwise(const tv::Geom2D& g, std::mt19937& rng) {
  compare_layer(g, (size_t)g.k_h * g.k_w * g.in_c, (size_t)g.in_c, rng, "depthwise", tv::ref::depthwise_conv2d_forward,
                tv::fast::depthwise_conv2d_forward_relu, tv::ref::depthwise_conv2d_backward_data,
                tv::fast::depthwise_conv2d_backward_data_relu);
}

void compare_maxpool(const tv::Geom2D& g, std::mt19937& rng) {
  const std::string where = describe(g);
  const size_t n_in = (size_t)g.in_h * g.in_w * g.in_c, n_out = (size_t)g.out_h * g.out_w * g.out_c;
  const Vec y = relu_output(rng, n_in), dout = sparse_random_vec(rng, n_out, 0.2f);
  Vec dref(n_in, 777.0f), dfused(n_in, -777.0f);
  tv::ref::maxpool2d_backward(g, y.data(), dout.data(), dref.data());
  tv::ref::relu_backward(y.data(), dref.data(), n_in);
  tv::fast::maxpool2d_backward_relu(g, y.data(), dout.data(), dfused.data());
  expect_same_bits("maxpool2d_backward_relu", dref, dfused, where);
}

tv::Geom2D square(int in, int c_in, int c_out, int k, int stride, int pad, int out) {
  return tv::Geom2D{in, in, c_in, out, out, c_out, k, k, stride, stride, pad, pad};
}

}  // namespace

TEST(FusedRelu, ConvRandomGeometries) {
  std::mt19937 rng(401);
  int n = 0;
  for (int t = 0; t < 600 && n < 300; ++t) {
    tv::Geom2D g;
    if (!kernel_compare::random_conv(rng, &g)) continue;
    compare_conv(g, rng);
    ++n;
  }
  EXPECT_EQ(n, 300);
}

TEST(FusedRelu, ConvPresetLayersAndReferenceHandOver) {
  std::mt19937 rng(402);
  const tv::Geom2D layers[] = {
      square(64, 3, 8, 3, 2, 0, 32),    // the default preset's stem (same padding: none before, one after)
      square(28, 1, 12, 3, 1, 1, 28),   // the stem at 28x28x1, 1.5x wide
      square(32, 8, 16, 1, 1, 0, 32),   // pointwise: the matrix-product path
      square(16, 16, 32, 1, 1, 0, 16),  //
      square(4, 64, 64, 1, 1, 0, 4),    //
      square(64, 3, 4, 3, 1, 0, 62),    // webmcu's first layer
      square(20, 2, 3, 3, 9, 0, 2),     // a stride beyond the fast kernel's planar phases: the reference
      square(40, 64, 64, 3, 1, 1, 40),  // scratch beyond the fast kernel's stack: the reference
  };
  for (const tv::Geom2D& g : layers) compare_conv(g, rng);
}

TEST(FusedRelu, DepthwiseGeometries) {
  std::mt19937 rng(403);
  const int channels[] = {1, 3, 8, 13, 16, 32, 40, 64};
  for (int t = 0; t < 200; ++t) {
    const int c = channels[t % 8];
    const int k = t % 5 == 0 ? 5 : 3, stride = 1 + t % 2, h = 2 + (int)(rng() % 20), w = h + 3;
    const bool same = rng() % 2 || h < k;
    tv::Geom2D g{h, w, c, 0, 0, c, k, k, stride, stride, 0, 0};
    kernel_compare::same_or_valid(h, k, stride, same, &g.out_h, &g.pad_top);
    kernel_compare::same_or_valid(w, k, stride, same, &g.out_w, &g.pad_left);
    compare_depthwise(g, rng);
  }
  compare_depthwise(square(32, 8, 8, 3, 1, 1, 32), rng);     // the default preset's first block
  compare_depthwise(square(24, 16, 16, 17, 1, 8, 24), rng);  // a kernel beyond 16: the reference backward
}

TEST(FusedRelu, MaxPoolGeometries) {
  std::mt19937 rng(404);
  const tv::Geom2D pools[] = {
      square(32, 16, 16, 2, 2, 0, 16), square(16, 32, 32, 2, 2, 0, 8), square(62, 4, 4, 2, 2, 0, 31),
      square(9, 5, 5, 3, 3, 0, 3),     square(7, 13, 13, 2, 2, 0, 3),  // an uncovered last row and column
      square(8, 3, 3, 3, 1, 0, 6),                                     // overlapping windows: the reference
  };
  for (const tv::Geom2D& g : pools) compare_maxpool(g, rng);
}
