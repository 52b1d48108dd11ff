// Float kernel tests (tv/ops/ops.h), ReLU, LeakyReLU and Clip: golden values and the gradients, on both kernel sets.
// The method and tolerance of the gradient checks: op_check.h.
#include "core/ops/op_check.h"

namespace {

using namespace tvtest::ops;

class ActivationsGolden : public KernelTest {};

TEST_P(ActivationsGolden, ReluLeakyReluClip) {
  Vec x = {-2, -0.5f, 0, 0.5f, 3};
  k().relu_forward(x.data(), x.size());
  EXPECT_EQ(x, (Vec{0, 0, 0, 0.5f, 3}));
  Vec dy = {1, 2, 3, 4, 5};
  k().relu_backward(x.data(), dy.data(), dy.size());
  EXPECT_EQ(dy, (Vec{0, 0, 0, 4, 5}));

  Vec lx = {-2, -0.5f, 0, 0.5f, 3};
  k().leaky_relu_forward(lx.data(), lx.size(), 0.25f);
  EXPECT_EQ(lx, (Vec{-0.5f, -0.125f, 0, 0.5f, 3}));
  Vec ldy = {4, 4, 4, 4, 4};
  k().leaky_relu_backward(lx.data(), ldy.data(), ldy.size(), 0.25f);
  EXPECT_EQ(ldy, (Vec{1, 1, 1, 4, 4}));

  Vec cx = {-2, -0.5f, 0, 0.5f, 3};
  k().clip_forward(cx.data(), cx.size(), -1.0f, 1.0f);
  EXPECT_EQ(cx, (Vec{-1, -0.5f, 0, 0.5f, 1}));
}

INSTANTIATE_TEST_SUITE_P(Kernels, ActivationsGolden, testing::ValuesIn(kKernelSets), kernel_name);

// Gradient of an in-place activation: forward(x) into y, backward(y, dy = r) gives dL/dx.
void check_activation(const char* what, const std::function<void(float*, size_t)>& forward,
                      const std::function<void(const float*, float*, size_t)>& backward) {
  std::mt19937 rng(71);
  Vec x = away_from_zero(rng, 43, 5 * kEps, 2.0f);  // kinks at 0 stay out of the +-kEps steps
  const Vec r = random_vec(rng, x.size());
  auto loss = [&] {
    Vec y = x;
    forward(y.data(), y.size());
    return weighted_sum(y, r);
  };
  Vec y = x;
  forward(y.data(), y.size());
  Vec dx = r;
  backward(y.data(), dx.data(), dx.size());
  expect_gradient(what, x, dx, loss);
}

class Activations : public KernelTest {};

TEST_P(Activations, ReluGradientMatchesFiniteDifferences) {
  check_activation("relu", k().relu_forward, k().relu_backward);
}

TEST_P(Activations, LeakyReluGradientMatchesFiniteDifferences) {
  const float alpha = 0.1f;
  check_activation(
      "leaky_relu", [&](float* x, size_t n) { k().leaky_relu_forward(x, n, alpha); },
      [&](const float* y, float* dy, size_t n) { k().leaky_relu_backward(y, dy, n, alpha); });
}

INSTANTIATE_TEST_SUITE_P(Kernels, Activations, testing::ValuesIn(kKernelSets), kernel_name);

}  // namespace
