// Float kernel tests (tv/ops/ops.h), Conv2D: golden forwards and backward by hand, the naive reference, the fixed float
// summation order and the finite-difference gradients, on both kernel sets. The method and tolerance of the gradient
// checks: op_check.h.
#include "core/ops/op_check.h"

namespace {

using namespace tvtest::ops;

class Conv2dGolden : public KernelTest {};

TEST_P(Conv2dGolden, ThreeByThreeWithTwoByTwoKernel) {
  // in = [[1,2,3],[4,5,6],[7,8,9]], w = [[1,2],[3,4]], b = 1:
  // out(0,0) = 1*1 + 2*2 + 4*3 + 5*4 + 1 = 38, (0,1) = 2+6+15+24+1 = 48,
  // (1,0) = 4+10+21+32+1 = 68, (1,1) = 5+12+24+36+1 = 78.
  const tv::Geom2D g = make_geom({3, 3, 1, 1, 2, 2, 1, 1, false});
  const Vec in = {1, 2, 3, 4, 5, 6, 7, 8, 9}, w = {1, 2, 3, 4}, b = {1};
  Vec out(4, kSentinel);
  k().conv2d_forward(g, in.data(), w.data(), b.data(), out.data());
  EXPECT_EQ(out, (Vec{38, 48, 68, 78}));
}

TEST_P(Conv2dGolden, SamePaddingSeesZeros) {
  // All-ones 3x3 input and 3x3 kernel with padding 1: each output counts its in-bounds taps.
  const tv::Geom2D g = make_geom({3, 3, 1, 1, 3, 3, 1, 1, true});
  ASSERT_EQ(g.pad_top, 1);
  ASSERT_EQ(g.pad_left, 1);
  const Vec in(9, 1.0f), w(9, 1.0f), b = {0};
  Vec out(9, kSentinel);
  k().conv2d_forward(g, in.data(), w.data(), b.data(), out.data());
  EXPECT_EQ(out, (Vec{4, 6, 4, 6, 9, 6, 4, 6, 4}));
}

TEST_P(Conv2dGolden, ChannelsLastLayoutAndWeightOrder) {
  // 1x2 pixels, 2 input channels, 3 filters of 1x1: a matrix product per pixel.
  // pixel 0 = (1, 2), pixel 1 = (3, -1); w[o] = (1,0), (0,1), (2,3); b = (0, 10, -1).
  const tv::Geom2D g = make_geom({1, 2, 2, 3, 1, 1, 1, 1, false});
  const Vec in = {1, 2, 3, -1}, w = {1, 0, 0, 1, 2, 3}, b = {0, 10, -1};
  Vec out(6, kSentinel);
  k().conv2d_forward(g, in.data(), w.data(), b.data(), out.data());
  EXPECT_EQ(out, (Vec{1, 12, 7, 3, 9, 2}));
}

TEST_P(Conv2dGolden, StrideTwoPicksEveryOtherPixel) {
  // 4x4 input holding its own index, 1x1 kernel of 1, stride 2: outputs are in[0], in[2], in[8], in[10].
  const tv::Geom2D g = make_geom({4, 4, 1, 1, 1, 1, 2, 2, false});
  Vec in(16);
  std::iota(in.begin(), in.end(), 0.0f);
  const Vec w = {1}, b = {0};
  Vec out(4, kSentinel);
  k().conv2d_forward(g, in.data(), w.data(), b.data(), out.data());
  EXPECT_EQ(out, (Vec{0, 2, 8, 10}));
}

TEST_P(Conv2dGolden, NonSquareKernelWeightIndex) {
  // 2x3 input, one 1x2 kernel (k_h=1, k_w=2) with w = (1, 10): out(y,x) = in(y,x) + 10*in(y,x+1).
  const tv::Geom2D g = make_geom({2, 3, 1, 1, 1, 2, 1, 1, false});
  const Vec in = {1, 2, 3, 4, 5, 6}, w = {1, 10}, b = {0};
  Vec out(4, kSentinel);
  k().conv2d_forward(g, in.data(), w.data(), b.data(), out.data());
  EXPECT_EQ(out, (Vec{21, 32, 54, 65}));
}

TEST_P(Conv2dGolden, BackwardDataAndParamsByHand) {
  // Same setup as ThreeByThreeWithTwoByTwoKernel, dout = [[1,0],[0,2]]:
  // din = 1 * w placed at (0,0) + 2 * w placed at (1,1) = [[1,2,0],[3,4+2,4],[0,6,8]];
  // dw = 1 * in[0:2,0:2] + 2 * in[1:3,1:3] = [1+10, 2+12, 4+16, 5+18]; db = 3.
  const tv::Geom2D g = make_geom({3, 3, 1, 1, 2, 2, 1, 1, false});
  const Vec in = {1, 2, 3, 4, 5, 6, 7, 8, 9}, w = {1, 2, 3, 4}, dout = {1, 0, 0, 2};
  Vec din(9, kSentinel);
  k().conv2d_backward_data(g, w.data(), dout.data(), din.data());
  EXPECT_EQ(din, (Vec{1, 2, 0, 3, 6, 4, 0, 6, 8}));
  Vec dw(4, 0.0f), db(1, 0.0f);
  k().conv2d_backward_params(g, in.data(), dout.data(), dw.data(), db.data());
  EXPECT_EQ(dw, (Vec{11, 14, 20, 23}));
  EXPECT_EQ(db, (Vec{3}));
}

INSTANTIATE_TEST_SUITE_P(Kernels, Conv2dGolden, testing::ValuesIn(kKernelSets), kernel_name);

class Conv2dCase : public WindowKernelTest {};

TEST_P(Conv2dCase, ForwardMatchesNaiveReference) {
  const tv::Geom2D g = make_geom(window());
  std::mt19937 rng(11);
  const Vec in = random_vec(rng, in_size(g));
  const Vec w = random_vec(rng, (size_t)g.out_c * g.k_h * g.k_w * g.in_c);
  const Vec b = random_vec(rng, g.out_c);
  Vec out(out_size(g), kSentinel);
  k().conv2d_forward(g, in.data(), w.data(), b.data(), out.data());
  expect_all_near(out, conv_reference(g, in, w, b), 1e-5);
}

TEST_P(Conv2dCase, ForwardSumsInFixedFloatOrder) {
  // Bit-for-bit: the float sum runs bias + (ky, kx, ic) in order, whatever the loop blocking.
  const tv::Geom2D g = make_geom(window());
  std::mt19937 rng(13);
  const Vec in = random_vec(rng, in_size(g));
  const Vec w = random_vec(rng, (size_t)g.out_c * g.k_h * g.k_w * g.in_c);
  const Vec b = random_vec(rng, g.out_c);
  Vec out(out_size(g), kSentinel);
  k().conv2d_forward(g, in.data(), w.data(), b.data(), out.data());
  EXPECT_EQ(out, conv_in_float_order(g, in, w, b));
}

TEST_P(Conv2dCase, GradientsMatchFiniteDifferences) {
  const tv::Geom2D g = make_geom(window());
  std::mt19937 rng(12);
  Vec in = random_vec(rng, in_size(g));
  Vec w = random_vec(rng, (size_t)g.out_c * g.k_h * g.k_w * g.in_c);
  Vec b = random_vec(rng, g.out_c);
  const Vec r = random_vec(rng, out_size(g));  // dL/dout
  auto loss = [&] {
    Vec out(out_size(g));
    k().conv2d_forward(g, in.data(), w.data(), b.data(), out.data());
    return weighted_sum(out, r);
  };
  Vec din(in.size(), kSentinel), dw(w.size(), 0.0f), db(b.size(), 0.0f);
  k().conv2d_backward_data(g, w.data(), r.data(), din.data());
  k().conv2d_backward_params(g, in.data(), r.data(), dw.data(), db.data());
  expect_gradient("din", in, din, loss);
  expect_gradient("dw", w, dw, loss);
  expect_gradient("db", b, db, loss);

  // backward_params accumulates: a second call doubles the buffers.
  Vec dw2 = dw, db2 = db;
  k().conv2d_backward_params(g, in.data(), r.data(), dw2.data(), db2.data());
  expect_doubled("dw", dw, dw2);
  expect_doubled("db", db, db2);
}

INSTANTIATE_TEST_SUITE_P(Geometries, Conv2dCase,
                         testing::Combine(testing::ValuesIn(kConvCases), testing::ValuesIn(kKernelSets)),
                         window_kernel_name);

}  // namespace
