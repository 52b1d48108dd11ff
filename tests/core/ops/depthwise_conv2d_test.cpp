// Float kernel tests (tv/ops/ops.h), DepthwiseConv2D: channels independent, the naive reference and the finite-difference
// gradients. The method and tolerance of the gradient checks: op_check.h.
#include "core/ops/op_check.h"

namespace {

using namespace tvtest::ops;

TEST(DepthwiseConv2dGolden, TwoChannelsAreIndependent) {
  // Channel 0: in = 1..9, w = [[1,2],[3,4]], b = 1 -> 38 48 68 78 (see the Conv2D golden case).
  // Channel 1: in = -(1..9), w = all ones, b = 0 -> minus the window sums 12 16 24 28.
  const tv::Geom2D g = make_geom({3, 3, 2, 2, 2, 2, 1, 1, false});
  Vec in(18);
  for (int i = 0; i < 9; ++i) {
    in[2 * i] = (float)(i + 1);
    in[2 * i + 1] = -(float)(i + 1);
  }
  const Vec w = {1, 1, 2, 1, 3, 1, 4, 1}, b = {1, 0};
  Vec out(8, kSentinel);
  tv::depthwise_conv2d_forward(g, in.data(), w.data(), b.data(), out.data());
  EXPECT_EQ(out, (Vec{38, -12, 48, -16, 68, -24, 78, -28}));
}

class DepthwiseConv2dCase : public testing::TestWithParam<WindowCase> {};

WindowCase depthwise_case(WindowCase c) {
  c.out_c = c.in_c;
  return c;
}

TEST_P(DepthwiseConv2dCase, ForwardMatchesNaiveReference) {
  const tv::Geom2D g = make_geom(depthwise_case(GetParam()));
  std::mt19937 rng(21);
  const Vec in = random_vec(rng, in_size(g));
  const Vec w = random_vec(rng, (size_t)g.k_h * g.k_w * g.in_c);
  const Vec b = random_vec(rng, g.in_c);
  Vec out(out_size(g), kSentinel);
  tv::depthwise_conv2d_forward(g, in.data(), w.data(), b.data(), out.data());
  expect_all_near(out, depthwise_reference(g, in, w, b), 1e-5);
}

TEST_P(DepthwiseConv2dCase, GradientsMatchFiniteDifferences) {
  const tv::Geom2D g = make_geom(depthwise_case(GetParam()));
  std::mt19937 rng(22);
  Vec in = random_vec(rng, in_size(g));
  Vec w = random_vec(rng, (size_t)g.k_h * g.k_w * g.in_c);
  Vec b = random_vec(rng, g.in_c);
  const Vec r = random_vec(rng, out_size(g));
  auto loss = [&] {
    Vec out(out_size(g));
    tv::depthwise_conv2d_forward(g, in.data(), w.data(), b.data(), out.data());
    return weighted_sum(out, r);
  };
  Vec din(in.size(), kSentinel), dw(w.size(), 0.0f), db(b.size(), 0.0f);
  tv::depthwise_conv2d_backward_data(g, w.data(), r.data(), din.data());
  tv::depthwise_conv2d_backward_params(g, in.data(), r.data(), dw.data(), db.data());
  expect_gradient("din", in, din, loss);
  expect_gradient("dw", w, dw, loss);
  expect_gradient("db", b, db, loss);

  Vec dw2 = dw, db2 = db;
  tv::depthwise_conv2d_backward_params(g, in.data(), r.data(), dw2.data(), db2.data());
  expect_doubled("dw", dw, dw2);
  expect_doubled("db", db, db2);
}

INSTANTIATE_TEST_SUITE_P(Geometries, DepthwiseConv2dCase, testing::ValuesIn(kConvCases), param_name);

}  // namespace
