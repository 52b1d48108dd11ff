// The toy training problem the core's training tests share: a tiny model and a synthetic two-class
// problem, an aligned arena, and a small constant-rate recipe.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "tv/model.h"
#include "tv/presets.h"
#include "tv/rng.h"
#include "tv/train_loop.h"

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

}  // namespace tvtest
