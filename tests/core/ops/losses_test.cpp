// Float kernel tests (tv/ops/ops.h), Softmax, softmax cross-entropy, mean squared error and distillation: golden
// values and the gradients. The method and tolerance of the gradient checks: op_check.h.
#include "core/ops/op_check.h"

namespace {

using namespace tvtest::ops;

TEST(LossesGolden, SoftmaxOfZeroAndLn2) {
  const Vec logits = {0.0f, std::log(2.0f)};
  Vec p(2, kSentinel);
  tv::softmax(logits.data(), 2, p.data());
  EXPECT_NEAR(p[0], 1.0f / 3, 1e-7f);
  EXPECT_NEAR(p[1], 2.0f / 3, 1e-7f);

  // Shifting all logits changes nothing, even far beyond exp's float range.
  const Vec big = {1000.0f, 1000.0f + std::log(2.0f)};
  tv::softmax(big.data(), 2, p.data());
  EXPECT_NEAR(p[0], 1.0f / 3, 1e-4f);
  EXPECT_NEAR(p[1], 2.0f / 3, 1e-4f);

  // In place (probs aliasing logits) is allowed.
  Vec inplace = logits;
  tv::softmax(inplace.data(), 2, inplace.data());
  EXPECT_NEAR(inplace[1], 2.0f / 3, 1e-7f);
}

TEST(LossesGolden, SoftmaxCrossEntropy) {
  // softmax(0, ln2) = (1/3, 2/3); label 1: loss = ln(3/2); dlogits = (1/3, -1/3).
  const Vec logits = {0.0f, std::log(2.0f)};
  Vec p(2, kSentinel), d(2, kSentinel);
  const float loss = tv::softmax_cross_entropy(logits.data(), 2, 1, p.data(), d.data());
  EXPECT_NEAR(loss, std::log(1.5f), 1e-6f);
  EXPECT_NEAR(p[1], 2.0f / 3, 1e-7f);
  EXPECT_NEAR(d[0], 1.0f / 3, 1e-7f);
  EXPECT_NEAR(d[1], -1.0f / 3, 1e-7f);
}

TEST(LossesGolden, SoftmaxCrossEntropyClampsTinyProbability) {
  // p[label] = e^-200 underflows to 0 in float; the loss is capped at -ln(1e-30) ~ 69.08.
  const Vec logits = {0.0f, -200.0f};
  Vec p(2), d(2);
  const float loss = tv::softmax_cross_entropy(logits.data(), 2, 1, p.data(), d.data());
  EXPECT_TRUE(std::isfinite(loss));
  EXPECT_NEAR(loss, -std::log(1e-30f), 1e-3f);
  EXPECT_NEAR(d[1], -1.0f, 1e-7f);
}

TEST(LossesGolden, MeanSquaredError) {
  // out = (1, 2, 0), target = (0, 0, 0): L = (1 + 4 + 0) / 3; dout = (2/3) * (1, 2, 0).
  const Vec out = {1, 2, 0}, target = {0, 0, 0};
  Vec d(3, kSentinel);
  const float loss = tv::mse_loss(out.data(), target.data(), 3, d.data());
  EXPECT_NEAR(loss, 5.0f / 3, 1e-6f);
  EXPECT_NEAR(d[0], 2.0f / 3, 1e-7f);
  EXPECT_NEAR(d[1], 4.0f / 3, 1e-7f);
  EXPECT_EQ(d[2], 0.0f);
}

TEST(LossesGolden, DistillationLoss) {
  // Logits (0, ln 2) at T = 2: q = softmax(0, ln2 / 2) = (1, sqrt2) / (1 + sqrt2); target (1/2, 1/2).
  // L = w T^2 sum t (ln t - ln q); dlogits += w T (q - t), on top of what is there.
  const Vec logits = {0.0f, std::log(2.0f)}, target = {0.5f, 0.5f};
  const double r2 = std::sqrt(2.0), q0 = 1 / (1 + r2), q1 = r2 / (1 + r2);
  const double w = 0.5, t = 2;
  const double kl = 0.5 * (std::log(0.5 / q0) + std::log(0.5 / q1));
  Vec d = {1.0f, -1.0f};
  const float loss = tv::distillation_loss(logits.data(), 2, target.data(), 2.0f, 0.5f, d.data());
  EXPECT_NEAR(loss, w * t * t * kl, 1e-6);
  EXPECT_NEAR(d[0], 1.0 + w * t * (q0 - 0.5), 1e-6);
  EXPECT_NEAR(d[1], -1.0 + w * t * (q1 - 0.5), 1e-6);

  // The teacher's own logits give no loss and no gradient, at any shift and temperature.
  const Vec z = {1000.0f, 1001.0f, 999.0f};
  Vec p(3), zero(3, 0.0f);
  const Vec scaled = {0.0f, 1.0f / 3, -1.0f / 3};  // (z - 1000) / 3
  tv::softmax(scaled.data(), 3, p.data());
  EXPECT_NEAR(tv::distillation_loss(z.data(), 3, p.data(), 3.0f, 1.0f, zero.data()), 0.0f, 1e-5f);
  for (float g : zero) EXPECT_NEAR(g, 0.0f, 1e-5f);

  // A target of 0 adds nothing to the loss (0 ln 0 = 0) but still pulls its logit down.
  const Vec one_hot = {1.0f, 0.0f};
  Vec g(2, 0.0f);
  const float l = tv::distillation_loss(logits.data(), 2, one_hot.data(), 1.0f, 1.0f, g.data());
  EXPECT_NEAR(l, std::log(3.0f), 1e-6f);  // -ln(1/3)
  EXPECT_NEAR(g[1], 2.0f / 3, 1e-6f);
}

TEST(Losses, DistillationGradientMatchesFiniteDifferences) {
  std::mt19937 rng(83);
  for (float t : {1.0f, 2.0f, 4.0f}) {
    for (float w : {0.5f, 1.0f}) {
      SCOPED_TRACE(testing::Message() << "T " << t << " weight " << w);
      Vec logits = random_vec(rng, 6, -3.0f, 3.0f);
      Vec target = random_vec(rng, 6, -2.0f, 2.0f);
      tv::softmax(target.data(), 6, target.data());
      auto loss = [&] {
        Vec dd(6, 0.0f);
        return (double)tv::distillation_loss(logits.data(), 6, target.data(), t, w, dd.data());
      };
      Vec d(6, 0.0f);
      tv::distillation_loss(logits.data(), 6, target.data(), t, w, d.data());
      expect_gradient("dlogits", logits, d, loss);
    }
  }
}

TEST(Losses, SoftmaxCrossEntropyGradientMatchesFiniteDifferences) {
  std::mt19937 rng(81);
  for (int label : {0, 3, 6}) {
    SCOPED_TRACE(label);
    Vec logits = random_vec(rng, 7, -3.0f, 3.0f);
    Vec p(7), d(7);
    auto loss = [&] {
      Vec pp(7), dd(7);
      return (double)tv::softmax_cross_entropy(logits.data(), 7, label, pp.data(), dd.data());
    };
    tv::softmax_cross_entropy(logits.data(), 7, label, p.data(), d.data());
    expect_gradient("dlogits", logits, d, loss);
  }
}

TEST(Losses, MeanSquaredErrorGradientMatchesFiniteDifferences) {
  std::mt19937 rng(82);
  Vec out = random_vec(rng, 9, -2.0f, 2.0f);
  const Vec target = random_vec(rng, 9, -2.0f, 2.0f);
  auto loss = [&] {
    Vec dd(9);
    return (double)tv::mse_loss(out.data(), target.data(), 9, dd.data());
  };
  Vec d(9, kSentinel);
  tv::mse_loss(out.data(), target.data(), 9, d.data());
  expect_gradient("dout", out, d, loss);
}

TEST(LossesGolden, GridCrossEntropyWeighsObjectCells) {
  // Two cells of (background, a, b) logits (0, ln 2, 0): p = (1/4, 1/2, 1/4) in each. Cell 0 background
  // (weight 1): -ln(1/4); cell 1 class a (weight 3): 3 * -ln(1/2). L = (ln 4 + 3 ln 2) / 2.
  const Vec logits = {0.0f, std::log(2.0f), 0.0f, 0.0f, std::log(2.0f), 0.0f};
  const uint8_t target[2] = {0, 1};
  Vec p(6, kSentinel), d(6, kSentinel);
  const float loss = tv::grid_cross_entropy(logits.data(), 2, 3, target, 3.0f, p.data(), d.data());
  EXPECT_NEAR(loss, (std::log(4.0) + 3 * std::log(2.0)) / 2, 1e-6);
  EXPECT_NEAR(p[4], 0.5f, 1e-7f);
  EXPECT_NEAR(d[0], (0.25f - 1.0f) / 2, 1e-7f);  // (w / cells) (p - onehot)
  EXPECT_NEAR(d[1], 0.5f / 2, 1e-7f);
  EXPECT_NEAR(d[4], 3.0f * (0.5f - 1.0f) / 2, 1e-7f);
  EXPECT_NEAR(d[5], 3.0f * 0.25f / 2, 1e-7f);
  // a target past the channels is background, and in place works
  const uint8_t wild[2] = {0, 200};
  Vec inplace = logits;
  const float l2 = tv::grid_cross_entropy(inplace.data(), 2, 3, wild, 3.0f, inplace.data(), d.data());
  EXPECT_NEAR(l2, std::log(4.0), 1e-6);
  EXPECT_NEAR(inplace[3], 0.25f, 1e-7f);
}

TEST(Losses, GridCrossEntropyGradientMatchesFiniteDifferences) {
  std::mt19937 rng(84);
  const int cells = 6, n = 4;
  const uint8_t target[cells] = {0, 2, 0, 3, 1, 0};
  for (float w : {1.0f, 5.0f}) {
    SCOPED_TRACE(w);
    Vec logits = random_vec(rng, cells * n, -3.0f, 3.0f);
    auto loss = [&] {
      Vec pp(cells * n), dd(cells * n);
      return (double)tv::grid_cross_entropy(logits.data(), cells, n, target, w, pp.data(), dd.data());
    };
    Vec p(cells * n), d(cells * n);
    tv::grid_cross_entropy(logits.data(), cells, n, target, w, p.data(), d.data());
    expect_gradient("dlogits", logits, d, loss);
  }
}

}  // namespace
