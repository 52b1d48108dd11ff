// Float kernel tests (tv/ops/ops.h), AvgPool2D: golden windows (the full-area divisor), the naive reference and the
// gradient. The method and tolerance of the gradient checks: op_check.h.
#include "core/ops/op_check.h"

namespace {

using namespace tvtest::ops;

TEST(AvgPool2dGolden, FourByFourToTwoByTwo) {
  const tv::Geom2D g = make_geom({4, 4, 1, 1, 2, 2, 2, 2, false});
  const Vec in = {1, 5, 2,  0,   //
                  3, 4, 8,  1,   //
                  0, 0, -1, -2,  //
                  9, 1, -3, -4};
  Vec out(4, kSentinel);
  tv::avgpool2d_forward(g, in.data(), out.data());
  EXPECT_EQ(out, (Vec{13.0f / 4, 11.0f / 4, 10.0f / 4, -10.0f / 4}));

  const Vec dout = {4, 8, -4, 2};
  Vec din(16, kSentinel);
  tv::avgpool2d_backward(g, dout.data(), din.data());
  EXPECT_EQ(din, (Vec{1, 1, 2, 2,          //
                      1, 1, 2, 2,          //
                      -1, -1, 0.5f, 0.5f,  //
                      -1, -1, 0.5f, 0.5f}));
}

TEST(AvgPool2dGolden, PaddedWindowDividesByFullArea) {
  // All-ones 3x3 input, 2x2 windows at stride 2, last row/column in padding: the divisor stays 4.
  const tv::Geom2D g = make_geom({3, 3, 1, 1, 2, 2, 2, 2, true});
  const Vec in(9, 1.0f);
  Vec out(4, kSentinel);
  tv::avgpool2d_forward(g, in.data(), out.data());
  EXPECT_EQ(out, (Vec{1, 0.5f, 0.5f, 0.25f}));
}

class AvgPool2dCase : public testing::TestWithParam<WindowCase> {};

TEST_P(AvgPool2dCase, ForwardMatchesNaiveReference) {
  const tv::Geom2D g = make_geom(GetParam());
  std::mt19937 rng(41);
  const Vec in = random_vec(rng, in_size(g));
  Vec out(out_size(g), kSentinel);
  tv::avgpool2d_forward(g, in.data(), out.data());
  expect_all_near(out, pool_reference(g, in, false), 1e-6);
}

TEST_P(AvgPool2dCase, GradientMatchesFiniteDifferences) {
  const tv::Geom2D g = make_geom(GetParam());
  std::mt19937 rng(42);
  Vec in = random_vec(rng, in_size(g));
  const Vec r = random_vec(rng, out_size(g));
  auto loss = [&] {
    Vec out(out_size(g));
    tv::avgpool2d_forward(g, in.data(), out.data());
    return weighted_sum(out, r);
  };
  Vec din(in.size(), kSentinel);
  tv::avgpool2d_backward(g, r.data(), din.data());
  expect_gradient("din", in, din, loss);
}

INSTANTIATE_TEST_SUITE_P(Geometries, AvgPool2dCase, testing::ValuesIn(kPoolCases), param_name);

}  // namespace
