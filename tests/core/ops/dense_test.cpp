// Float kernel tests (tv/ops/ops.h), Dense: golden products (summed in double) and the finite-difference gradients, on both
// kernel sets. The method and tolerance of the gradient checks: op_check.h.
#include "core/ops/op_check.h"

namespace {

using namespace tvtest::ops;

class DenseGolden : public KernelTest {};

TEST_P(DenseGolden, ThreeToTwo) {
  // w = [[1,2,3],[4,5,6]], in = (1,-1,2), b = (0.5,-1): out = (1-2+6+0.5, 4-5+12-1) = (5.5, 10).
  const Vec in = {1, -1, 2}, w = {1, 2, 3, 4, 5, 6}, b = {0.5f, -1};
  Vec out(2, kSentinel);
  k().dense_forward(3, 2, in.data(), w.data(), b.data(), out.data());
  EXPECT_EQ(out, (Vec{5.5f, 10}));

  // dout = (1, 2): din = w^T dout = (9, 12, 15); dw = dout in^T; db = dout.
  const Vec dout = {1, 2};
  Vec din(3, kSentinel);
  k().dense_backward_data(3, 2, w.data(), dout.data(), din.data());
  EXPECT_EQ(din, (Vec{9, 12, 15}));
  Vec dw(6, 0.0f), db(2, 0.0f);
  k().dense_backward_params(3, 2, in.data(), dout.data(), dw.data(), db.data());
  EXPECT_EQ(dw, (Vec{1, -1, 2, 2, -2, 4}));
  EXPECT_EQ(db, (Vec{1, 2}));
}

TEST_P(DenseGolden, ProductsAreSummedInFloatInInputOrder) {
  // In float, as the board's single-precision FPU sums: 1e8 + 1 rounds back to 1e8, so the order of
  // the sum shows in the result (b + in[0] w[0] + in[1] w[1] + ..., left to right).
  const Vec w = {1, 1, 1}, b = {0};
  Vec out(1, kSentinel);
  const Vec big_first = {1e8f, 1, -1e8f};
  k().dense_forward(3, 1, big_first.data(), w.data(), b.data(), out.data());
  EXPECT_EQ(out[0], 0.0f);
  const Vec cancel_first = {1e8f, -1e8f, 1};
  k().dense_forward(3, 1, cancel_first.data(), w.data(), b.data(), out.data());
  EXPECT_EQ(out[0], 1.0f);
}

INSTANTIATE_TEST_SUITE_P(Kernels, DenseGolden, testing::ValuesIn(kKernelSets), kernel_name);

class Dense : public KernelTest {};

TEST_P(Dense, GradientsMatchFiniteDifferences) {
  const int in_n = 12, out_n = 5;
  std::mt19937 rng(61);
  Vec in = random_vec(rng, in_n), w = random_vec(rng, (size_t)in_n * out_n), b = random_vec(rng, out_n);
  const Vec r = random_vec(rng, out_n);
  auto loss = [&] {
    Vec out(out_n);
    k().dense_forward(in_n, out_n, in.data(), w.data(), b.data(), out.data());
    return weighted_sum(out, r);
  };
  Vec din(in_n, kSentinel), dw(w.size(), 0.0f), db(out_n, 0.0f);
  k().dense_backward_data(in_n, out_n, w.data(), r.data(), din.data());
  k().dense_backward_params(in_n, out_n, in.data(), r.data(), dw.data(), db.data());
  expect_gradient("din", in, din, loss);
  expect_gradient("dw", w, dw, loss);
  expect_gradient("db", b, db, loss);

  Vec dw2 = dw, db2 = db;
  k().dense_backward_params(in_n, out_n, in.data(), r.data(), dw2.data(), db2.data());
  expect_doubled("dw", dw, dw2);
  expect_doubled("db", db, db2);
}

INSTANTIATE_TEST_SUITE_P(Kernels, Dense, testing::ValuesIn(kKernelSets), kernel_name);

}  // namespace
