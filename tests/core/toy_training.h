// The toy training problem the core's training tests share: a tiny model and a synthetic two-class
// problem, an aligned arena, a small constant-rate recipe, and a session over them.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "tv/model/model.h"
#include "tv/rng.h"
#include "tv/train/presets.h"
#include "tv/train/train_session.h"

namespace tvtest {

using namespace tv;

// A tiny model and a synthetic two-class problem: bright left half vs bright right half.
struct Toy {
  ModelDesc desc;
  ModelPlan plan;
  std::vector<uint8_t> images;
  std::vector<int> labels;
  static constexpr int kN = 24, kS = 12;
  Toy() {
    desc.input.height = desc.input.width = kS;
    desc.input.channels = 1;
    desc.input.order = ChannelOrder::GRAY;
    desc.num_classes = 2;
    add_layer(&desc, conv2d_layer(4, 3, 1, Padding::Same));
    add_layer(&desc, relu_layer());
    add_layer(&desc, maxpool_layer(2));
    add_layer(&desc, depthwise_layer(3));
    add_layer(&desc, leaky_relu_layer(0.1f));
    add_layer(&desc, flatten_layer());
    add_layer(&desc, dense_layer());
    EXPECT_TRUE(plan_model(desc, &plan).ok());
    Rng r(3);
    images.resize((size_t)kN * kS * kS);
    for (int n = 0; n < kN; ++n) {
      labels.push_back(n % 2);
      for (int y = 0; y < kS; ++y)
        for (int x = 0; x < kS; ++x) {
          bool bright = (n % 2 == 0) ? x < kS / 2 : x >= kS / 2;
          images[((size_t)n * kS + y) * kS + x] = (uint8_t)((bright ? 180 : 40) + r.below(40));
        }
    }
  }
  const uint8_t* image(int i) const { return images.data() + (size_t)i * kS * kS; }
};

struct Arena {
  std::vector<uint8_t> raw;
  uint8_t* p;
  explicit Arena(size_t n) : raw(n + 64) { p = (uint8_t*)(((uintptr_t)raw.data() + 63) & ~(uintptr_t)63); }
};

inline const uint8_t* toy_image(void* ctx, int i) {
  return ((Toy*)ctx)->image(i);
}
inline int toy_label(void* ctx, int i) {
  return ((Toy*)ctx)->labels[(size_t)i];
}

// The toy's images as a session's sample source.
inline SampleSource toy_source(Toy& toy) {
  SampleSource s;
  s.ctx = &toy;
  s.image = toy_image;
  s.label = toy_label;
  return s;
}

inline TrainRecipe toy_recipe() {
  TrainRecipe r = webmcu_recipe();
  r.opt.lr = 3e-3f;
  r.epochs = 15;
  r.batch_size = 6;
  return r;
}

// A session over the toy: images 0..n_train-1 train, the rest validate (or the samples given); the memory
// its own (with the recipe's distillation, its soft targets for every image).
struct ToySession {
  Toy& toy;
  TrainRecipe recipe;
  std::vector<int> train, val, order;
  std::vector<float> probs;
  SessionMemory mem;
  Arena arena, eval;
  std::vector<float> soft;  // the soft-target table (distillation)
  TrainSession s;
  uint64_t seed;  // shuffling and augmentation
  ToySession(Toy& t, const TrainRecipe& r, int n_train = 16, uint64_t shuffle_seed = 7)
      : ToySession(t, r, range(0, n_train), range(n_train, Toy::kN), shuffle_seed) {}
  ToySession(Toy& t, const TrainRecipe& r, std::vector<int> train_idx, std::vector<int> val_idx,
             uint64_t shuffle_seed = 7)
      : toy(t),
        recipe(r),
        train(std::move(train_idx)),
        val(std::move(val_idx)),
        order(train.size()),
        probs((size_t)t.plan.desc.num_classes),
        mem(session_memory(toy.plan, recipe, (int)train.size(), (int)val.size(), false, (int)toy.labels.size())),
        arena(mem.trainer.total_bytes),
        eval(mem.eval_work_bytes),
        soft(mem.soft_target_bytes / sizeof(float), 777.f),
        seed(shuffle_seed) {}
  static std::vector<int> range(int from, int to) {
    std::vector<int> v;
    for (int i = from; i < to; ++i) v.push_back(i);
    return v;
  }
  SessionSetup setup() {
    SessionSetup u;
    u.plan = &toy.plan;
    u.recipe = &recipe;
    u.source = toy_source(toy);
    u.train = train.data();
    u.n_train = (int)train.size();
    u.val = val.data();
    u.n_val = (int)val.size();
    u.seed = seed;
    u.train_arena = arena.p;
    u.train_arena_bytes = mem.trainer.total_bytes;
    u.eval_arena = eval.p;
    u.eval_arena_bytes = mem.eval_work_bytes;
    u.order = order.data();
    u.probs = probs.data();
    u.soft_targets = soft.empty() ? nullptr : soft.data();
    u.n_indices = (int)toy.labels.size();
    return u;
  }
  // Binds the session and He-initialises its weights.
  void init(uint64_t init_seed = 3) {
    ASSERT_TRUE(session_init(&s, setup()).ok());
    he_init(toy.plan, s.trainer.params, init_seed);
  }
  std::vector<float> weights() const { return {s.trainer.params, s.trainer.params + toy.plan.param_count}; }
};

}  // namespace tvtest
