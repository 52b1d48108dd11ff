// Training discipline: He init, lanes, Adam/SGD steps, clipping, the NaN/Inf guard, best weights,
// and that nothing is allocated inside a training or inference step.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "core/toy_training.h"
#include "test_support.h"
#include "tv/rng.h"
#include "tv/train/net.h"
#include "tv/train/optim.h"
#include "tv/train/presets.h"
#include "tv/train/train_session.h"

// Counts every operator new in this test binary, to prove the core's steps allocate nothing.
static std::atomic<long> g_allocations{0};
void* operator new(std::size_t n) {
  g_allocations++;
  void* p = std::malloc(n ? n : 1);
  if (!p) throw std::bad_alloc();
  return p;
}
// The replacements allocate with malloc, so free is the matching release (GCC cannot see that).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
#pragma GCC diagnostic pop

using namespace tv;
using tvtest::Arena;
using tvtest::Toy;
using tvtest::toy_recipe;
using tvtest::toy_source;

namespace {

// Trains the toy for `epochs` with the session (every image trains, none validates) and returns the
// final parameters.
std::vector<float> train_toy(Toy& toy, TrainRecipe r, uint64_t seed, const LaneRunner* runner, double* first_loss,
                             double* last_loss) {
  tvtest::ToySession t(toy, r, Toy::kN, seed);
  t.init(seed);
  struct Losses {
    double* first;
    double* last;
  } losses{first_loss, last_loss};
  SessionHooks hooks;
  hooks.ctx = &losses;
  hooks.runner = runner;
  hooks.on_epoch = [](void* ctx, const EpochReport& e) {
    Losses& l = *(Losses*)ctx;
    if (e.epoch == 1 && l.first) *l.first = e.train.mean_loss();
    if (l.last) *l.last = e.train.mean_loss();
  };
  EXPECT_TRUE(session_run(&t.s, hooks).status.ok());
  return t.weights();
}

// Runs lanes in reverse order: a different schedule that must not change any bit.
void reverse_runner(void*, int lanes, LaneFn fn, void* arg) {
  for (int l = lanes - 1; l >= 0; --l) fn(arg, l);
}

}  // namespace

TEST(Train, HeInitIsSeededAndScaledByFanIn) {
  Toy toy;
  std::vector<float> a(toy.plan.param_count), b(toy.plan.param_count), c(toy.plan.param_count);
  he_init(toy.plan, a.data(), 11);
  he_init(toy.plan, b.data(), 11);
  he_init(toy.plan, c.data(), 12);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  // The webmcu model's dense layer (layer 8): fan_in = 29*29*8 = 6728 inputs, sd = sqrt(2/6728).
  ModelDesc d;
  ModelPlan p;
  webmcu_model(3, &d);
  ASSERT_TRUE(plan_model(d, &p).ok());
  std::vector<float> w(p.param_count);
  he_init(p, w.data(), 5);
  const LayerPlan& dense = p.layers[8];
  double s2 = 0;
  for (size_t i = 0; i < dense.weight_count; ++i) s2 += (double)w[dense.param_offset + i] * w[dense.param_offset + i];
  double sd = std::sqrt(s2 / dense.weight_count);
  EXPECT_NEAR(sd, std::sqrt(2.0 / 6728), 0.05 * std::sqrt(2.0 / 6728));
  for (size_t i = 0; i < dense.bias_count; ++i) EXPECT_EQ(w[dense.param_offset + dense.weight_count + i], 0.f);
}

TEST(Train, LossFallsAndTheToyIsLearned) {
  Toy toy;
  double first = 0, last = 0;
  std::vector<float> p = train_toy(toy, toy_recipe(), 1, nullptr, &first, &last);
  EXPECT_LT(last, first * 0.5) << first << " -> " << last;
}

TEST(Train, LaneScheduleNeverChangesABit) {
  Toy toy;
  LaneRunner rev;
  rev.run = reverse_runner;
  TrainRecipe r = toy_recipe();
  r.epochs = 3;
  for (int lanes : {1, 2, 3}) {
    r.opt.lanes = lanes;
    std::vector<float> a = train_toy(toy, r, 9, nullptr, nullptr, nullptr);
    std::vector<float> b = train_toy(toy, r, 9, &rev, nullptr, nullptr);
    EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * 4)) << lanes << " lanes";
  }
}

TEST(Train, AugmentationIsSeededPerSample) {
  TrainRecipe r;
  r.aug_flip = true;
  r.aug_shift = 2;
  r.aug_brightness = 0.3f;
  std::vector<uint8_t> src(8 * 8 * 3), a(src.size()), b(src.size()), c(src.size());
  for (size_t i = 0; i < src.size(); ++i) src[i] = (uint8_t)(i * 5);
  augment_image(r, src.data(), a.data(), 8, 8, 3, 42, 3, 7);
  augment_image(r, src.data(), b.data(), 8, 8, 3, 42, 3, 7);
  EXPECT_EQ(a, b);
  bool differs = false;
  for (int e = 0; e < 8 && !differs; ++e) {
    augment_image(r, src.data(), c.data(), 8, 8, 3, 42, e, 8);
    differs = c != a;
  }
  EXPECT_TRUE(differs);
}

// One pixel of an augmented image by the rule, read straight: source column (flipped first) and
// row shifted and clamped to the edge, then (v * gain + 128) >> 8 capped at 255.
static std::vector<uint8_t> augment_by_rule(const std::vector<uint8_t>& src, int h, int w, int c, bool flip, int dx,
                                            int dy, int gain) {
  std::vector<uint8_t> out(src.size());
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int k = 0; k < c; ++k) {
        const int sy = std::min(std::max(y + dy, 0), h - 1);
        const int sx = std::min(std::max((flip ? w - 1 - x : x) + dx, 0), w - 1);
        const int v = (src[((size_t)sy * w + sx) * c + k] * gain + 128) >> 8;
        out[((size_t)y * w + x) * c + k] = (uint8_t)std::min(v, 255);
      }
  return out;
}

TEST(Train, AugmentationIsAFlipShiftAndGainOfTheImage) {
  // Every augmented image equals the straightforward per-pixel rule for some flip, shift within
  // +-aug_shift and gain within the brightness range (odd sizes, shifts wider than the image, 1 and
  // 3 channels), and all of them occur.
  TrainRecipe r;
  r.aug_flip = true;
  r.aug_brightness = 0.25f;
  int flips = 0, shifted = 0, tried = 0;
  for (int shape = 0; shape < 6; ++shape) {
    const int h = 3 + shape * 2, w = 9 - shape, c = shape % 2 ? 1 : 3;
    r.aug_shift = 1 + shape;
    std::vector<uint8_t> src((size_t)h * w * c), got(src.size());
    Rng rng(100 + shape);
    for (auto& v : src) v = (uint8_t)(rng.next() & 255);
    for (int index = 0; index < 12; ++index, ++tried) {
      augment_image(r, src.data(), got.data(), h, w, c, 7, shape, index);
      bool found = false;
      for (int flip = 0; flip < 2 && !found; ++flip)
        for (int dy = -r.aug_shift; dy <= r.aug_shift && !found; ++dy)
          for (int dx = -r.aug_shift; dx <= r.aug_shift && !found; ++dx)
            for (int gain = 191; gain <= 321 && !found; ++gain)
              if (augment_by_rule(src, h, w, c, flip, dx, dy, gain) == got) {
                found = true;
                flips += flip;
                shifted += dx != 0 || dy != 0;
              }
      EXPECT_TRUE(found) << h << "x" << w << "x" << c << " image " << index;
    }
  }
  EXPECT_GT(flips, tried / 4);
  EXPECT_GT(shifted, tried / 2);
}

TEST(Optim, AdamFirstStepMatchesTheFormula) {
  // With m = v = 0, step 1: m = (1-b1) g, v = (1-b2) g^2, alpha = lr sqrt(1-b2)/(1-b1),
  // p -= alpha * m / (sqrt(v) + eps).
  float p[3] = {0.5f, -0.25f, 2.f}, g[3] = {0.1f, -2.f, 0.f}, m[3] = {0, 0, 0}, v[3] = {0, 0, 0};
  adam_step(p, g, m, v, 3, 1e-2f, 0.9f, 0.999f, 1e-6f, 1, 0.f, 0.f);
  for (int i = 0; i < 3; ++i) {
    float mi = 0.1f * g[i], vi = 0.001f * g[i] * g[i];
    float alpha = (float)(1e-2 * std::sqrt(1.0 - 0.999) / (1.0 - 0.9));
    float expect = (i == 0 ? 0.5f : i == 1 ? -0.25f : 2.f) - alpha * mi / (std::sqrt(vi) + 1e-6f);
    EXPECT_FLOAT_EQ(p[i], expect) << i;
  }
  // Weight clip.
  float q[1] = {9.99f}, gq[1] = {-1.f}, mq[1] = {0}, vq[1] = {0};
  adam_step(q, gq, mq, vq, 1, 1.f, 0.9f, 0.999f, 1e-6f, 1, 0.f, 10.f);
  EXPECT_EQ(q[0], 10.f);
}

TEST(Optim, SgdMomentumAccumulatesVelocity) {
  float p[1] = {1.f}, g[1] = {0.5f}, vel[1] = {0.f};
  sgd_step(p, g, vel, 1, 0.1f, 0.9f, 0.f, 0.f);
  EXPECT_FLOAT_EQ(vel[0], 0.5f);
  EXPECT_FLOAT_EQ(p[0], 1.f - 0.05f);
  sgd_step(p, g, vel, 1, 0.1f, 0.9f, 0.f, 0.f);
  EXPECT_FLOAT_EQ(vel[0], 0.9f * 0.5f + 0.5f);
  EXPECT_FLOAT_EQ(p[0], 0.95f - 0.1f * 0.95f);
}

TEST(Train, GradientClippingAndTheNanGuard) {
  Toy toy;
  TrainOptions opt;
  opt.lanes = 1;
  opt.grad_clip_norm = 1e-3f;
  opt.keep_best = true;
  Arena arena(training_memory(toy.plan, opt).total_bytes);
  Trainer tr;
  ASSERT_TRUE(trainer_init(&tr, &toy.plan, opt, arena.p, arena.raw.size() - 64).ok());
  he_init(toy.plan, tr.params, 1);
  std::vector<float> before(tr.params, tr.params + toy.plan.param_count);
  trainer_begin_batch(&tr);
  trainer_sample(&tr, 0, toy.image(0), 0, nullptr);
  trainer_sample(&tr, 0, toy.image(1), 1, nullptr);
  // Keep the gradient to check the clipped step direction.
  std::vector<float> g(tr.lanes[0].grad, tr.lanes[0].grad + toy.plan.param_count);
  ASSERT_TRUE(trainer_end_batch(&tr));
  EXPECT_GT(tr.last_grad_norm, 1e-3f);
  double norm = 0;
  for (float x : g) norm += (double)x * x;
  norm = std::sqrt(norm);
  // After clipping, the gradient that reached Adam is g * (1e-3 / norm).
  for (size_t i = 0; i < g.size(); i += 37) EXPECT_NEAR(tr.lanes[0].grad[i], g[i] * 1e-3 / norm, 1e-9);

  // Best-weights snapshot: save, change, restore.
  trainer_save_best(&tr);
  std::vector<float> saved(tr.params, tr.params + toy.plan.param_count);
  trainer_begin_batch(&tr);
  trainer_sample(&tr, 0, toy.image(2), 0, nullptr);
  ASSERT_TRUE(trainer_end_batch(&tr));
  EXPECT_NE(0, std::memcmp(saved.data(), tr.params, saved.size() * 4));
  trainer_restore_best(&tr);
  EXPECT_EQ(0, std::memcmp(saved.data(), tr.params, saved.size() * 4));

  // A NaN in the gradient: the step is dropped and the weights stay as they were.
  trainer_begin_batch(&tr);
  trainer_sample(&tr, 0, toy.image(3), 1, nullptr);
  tr.lanes[0].grad[5] = std::nanf("");
  uint32_t steps = tr.step;
  EXPECT_FALSE(trainer_end_batch(&tr));
  EXPECT_EQ(tr.step, steps);
  EXPECT_EQ(tr.skipped_steps, 1u);
  EXPECT_EQ(0, std::memcmp(saved.data(), tr.params, saved.size() * 4));
  trainer_begin_batch(&tr);
  trainer_sample(&tr, 0, toy.image(3), 1, nullptr);
  tr.lanes[0].grad[7] = INFINITY;
  EXPECT_FALSE(trainer_end_batch(&tr));
}

TEST(Train, MseLossTrainsToo) {
  Toy toy;
  TrainRecipe r = toy_recipe();
  r.opt.loss = LossKind::MSE;
  r.opt.optimizer = OptimizerKind::SGD;
  r.opt.lr = 0.02f;
  r.opt.batch_mean = true;
  double first = 0, last = 0;
  train_toy(toy, r, 2, nullptr, &first, &last);
  EXPECT_LT(last, first);
}

TEST(Train, StepsAllocateNothing) {
  Toy toy;
  TrainOptions opt;
  opt.lanes = 2;
  Arena arena(training_memory(toy.plan, opt).total_bytes);
  Arena iarena(inference_memory(toy.plan).work_bytes);
  Trainer tr;
  ASSERT_TRUE(trainer_init(&tr, &toy.plan, opt, arena.p, arena.raw.size() - 64).ok());
  he_init(toy.plan, tr.params, 1);
  Inference inf;
  ASSERT_TRUE(inference_init(&inf, &toy.plan, tr.params, iarena.p, iarena.raw.size() - 64).ok());
  float probs[2];
  long before = g_allocations.load();
  for (int b = 0; b < 3; ++b) {
    trainer_begin_batch(&tr);
    for (int i = 0; i < 6; ++i) trainer_sample(&tr, i % 2, toy.image(i), toy.labels[i], nullptr);
    trainer_end_batch(&tr);
    infer_u8(inf, toy.image(b), probs);
  }
  EXPECT_EQ(g_allocations.load(), before);
}

TEST(TrainBits, PinnedOnEveryBuild) {
  // The whole training path — He init (Box-Muller with tv::math::log / cospi), shuffles, augmentation
  // (flip, shift, brightness), forward and backward, the loss (tv::math::exp / log), gradient clipping,
  // Adam's bias corrections (tv::math::powi), the cosine schedule (tv::math::cospi), two lanes — in
  // single precision only, pinned by a checksum of the final weights. The 64-bit host build (fast
  // kernels) and the 32-bit build (-m32, reference kernels as on the board; scripts/test.sh) both run
  // this test, so they train the same bits; the board's newlib cannot change them, as the core calls
  // no C-library transcendental (DeviceSafety test).
  Toy toy;
  TrainRecipe r = toy_recipe();
  r.epochs = 6;
  r.cosine = true;
  r.warmup_epochs = 1;
  r.lr_min_factor = 0.05f;
  r.aug_flip = true;
  r.aug_shift = 2;
  r.aug_brightness = 0.2f;
  r.opt.grad_clip_norm = 5.0f;
  r.opt.weight_clip = 0.f;
  r.opt.batch_mean = true;
  const std::vector<float> w = train_toy(toy, r, 12345, nullptr, nullptr, nullptr);
  tvtest::Fnv1a sum;
  for (float x : w) sum.add(x);
  std::printf("%zu weights, checksum 0x%08x\n", w.size(), sum.h);
  EXPECT_EQ(sum.h, 0x104a4acbu);
}
