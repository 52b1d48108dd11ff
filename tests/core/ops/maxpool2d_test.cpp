// Float kernel tests (tv/ops/ops.h), MaxPool2D: golden windows, ties, padding and overlap; the naive reference and the
// gradient, on both kernel sets. The method and tolerance of the gradient checks: op_check.h.
#include "core/ops/op_check.h"

namespace {

using namespace tvtest::ops;

class MaxPool2dGolden : public KernelTest {};

TEST_P(MaxPool2dGolden, FourByFourToTwoByTwo) {
  const tv::Geom2D g = make_geom({4, 4, 1, 1, 2, 2, 2, 2, false});
  const Vec in = {1, 5, 2,  0,   //
                  3, 4, 8,  1,   //
                  0, 0, -1, -2,  //
                  9, 1, -3, -4};
  Vec out(4, kSentinel);
  k().maxpool2d_forward(g, in.data(), out.data());
  EXPECT_EQ(out, (Vec{5, 8, 9, -1}));

  const Vec dout = {10, 20, 30, 40};
  Vec din(16, kSentinel);
  k().maxpool2d_backward(g, in.data(), dout.data(), din.data());
  EXPECT_EQ(din, (Vec{0, 10, 0, 0,  //
                      0, 0, 20, 0,  //
                      0, 0, 40, 0,  //
                      30, 0, 0, 0}));
}

TEST_P(MaxPool2dGolden, TiesGoToFirstMaximumInRowMajorOrder) {
  // One 2x2 window of equal values: the whole gradient goes to (0,0); a tie between (0,1) and (1,0)
  // goes to (0,1).
  const tv::Geom2D g = make_geom({2, 2, 2, 2, 2, 2, 2, 2, false});
  const Vec in = {3, 0, 3, 7, 3, 7, 3, 1};  // channel 0 all 3; channel 1 = [[0,7],[7,1]]
  Vec out(2, kSentinel);
  k().maxpool2d_forward(g, in.data(), out.data());
  EXPECT_EQ(out, (Vec{3, 7}));
  const Vec dout = {1.5f, -2.0f};
  Vec din(8, kSentinel);
  k().maxpool2d_backward(g, in.data(), dout.data(), din.data());
  EXPECT_EQ(din, (Vec{1.5f, 0, 0, -2.0f, 0, 0, 0, 0}));
}

TEST_P(MaxPool2dGolden, PaddedCellsAreSkippedNotZero) {
  // All-negative 3x3 input, 2x2 windows at stride 2 with the last row/column in padding: a padded
  // cell must not win with a zero.
  const tv::Geom2D g = make_geom({3, 3, 1, 1, 2, 2, 2, 2, true});
  ASSERT_EQ(g.out_h, 2);
  const Vec in = {-1, -2, -3, -4, -5, -6, -7, -8, -9};
  Vec out(4, kSentinel);
  k().maxpool2d_forward(g, in.data(), out.data());
  EXPECT_EQ(out, (Vec{-1, -3, -7, -9}));
}

TEST_P(MaxPool2dGolden, OverlappingWindowsAddUp) {
  // 1x3 input, 1x2 windows at stride 1: the middle value is the max of both windows.
  const tv::Geom2D g = make_geom({1, 3, 1, 1, 1, 2, 1, 1, false});
  const Vec in = {1, 5, 2}, dout = {0.25f, 0.5f};
  Vec din(3, kSentinel);
  k().maxpool2d_backward(g, in.data(), dout.data(), din.data());
  EXPECT_EQ(din, (Vec{0, 0.75f, 0}));
}

INSTANTIATE_TEST_SUITE_P(Kernels, MaxPool2dGolden, testing::ValuesIn(kKernelSets), kernel_name);

class MaxPool2dCase : public WindowKernelTest {};

TEST_P(MaxPool2dCase, ForwardMatchesNaiveReference) {
  const tv::Geom2D g = make_geom(window());
  std::mt19937 rng(31);
  const Vec in = random_vec(rng, in_size(g));
  Vec out(out_size(g), kSentinel);
  k().maxpool2d_forward(g, in.data(), out.data());
  expect_all_near(out, pool_reference(g, in, true), 0.0);
}

TEST_P(MaxPool2dCase, GradientMatchesFiniteDifferences) {
  const tv::Geom2D g = make_geom(window());
  std::mt19937 rng(32);
  Vec in = distinct_values(rng, in_size(g));
  const Vec r = random_vec(rng, out_size(g));
  auto loss = [&] {
    Vec out(out_size(g));
    k().maxpool2d_forward(g, in.data(), out.data());
    return weighted_sum(out, r);
  };
  Vec din(in.size(), kSentinel);
  k().maxpool2d_backward(g, in.data(), r.data(), din.data());
  expect_gradient("din", in, din, loss);
}

INSTANTIATE_TEST_SUITE_P(Geometries, MaxPool2dCase,
                         testing::Combine(testing::ValuesIn(kPoolCases), testing::ValuesIn(kKernelSets)),
                         window_kernel_name);

}  // namespace
