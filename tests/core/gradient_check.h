// The whole network's gradient against central finite differences of trainer_sample's own loss, for
// every parameter (net_gradient_test.cpp, layer_units_test.cpp).
//
// Tolerance: |analytic - numeric| <= 1e-3 + 1e-2 * max(|analytic|, |numeric|) with a step of 5e-4.
// The loss is computed in float (about 1e-7 relative), so the numeric derivative carries ~2e-4 of
// rounding noise. The models are piecewise smooth (ReLU, LeakyReLU, max, clip): the image is chosen
// so that no step changes which cell of a max-pool window wins (a swap changes the slope of a whole
// filter); a step that crosses the kink of one unit's activation moves the loss by far less than the
// tolerance. An error in how the layers are chained (a wrong buffer, offset or cut-off) gives errors
// of the gradient's own size.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "host/model/model_io.h"
#include "tv/model/model.h"
#include "tv/train/net.h"
#include "tv/train/train_session.h"

namespace gradient_check {

constexpr float kStep = 5e-4f;
constexpr double kAbsTol = 1e-3, kRelTol = 1e-2;

struct Net {
  tv::ModelPlan plan;
  tv::TrainOptions opt;
  tvh::AlignedBuffer arena;
  tv::Trainer tr;
  Net(const tv::ModelDesc& d, tv::LossKind loss) {
    EXPECT_TRUE(tv::plan_model(d, &plan).ok());
    opt.lanes = 1;
    opt.loss = loss;
    arena = tvh::AlignedBuffer(tv::training_memory(plan, opt).total_bytes);
    EXPECT_TRUE(tv::trainer_init(&tr, &plan, opt, arena.data(), arena.size()).ok());
    tv::he_init(plan, tr.params, 7);
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> bias(-0.2f, 0.2f);
    for (int i = 0; i < plan.num_layers; ++i) {  // non-zero biases, so that they matter
      const tv::LayerPlan& lp = plan.layers[i];
      float* b = tr.params + lp.param_offset + lp.weight_count;
      for (size_t k = 0; k < lp.bias_count; ++k) b[k] = bias(rng);
    }
  }
  const float* soft_target = nullptr;     // with distillation (distill_soft_targets): the sample's soft targets
  const uint8_t* cell_targets = nullptr;  // a detector's: one per grid cell
  float loss(const std::vector<uint8_t>& image, int label) {
    tv::trainer_begin_batch(&tr);
    return tv::trainer_sample(&tr, 0, image.data(), label, nullptr, soft_target, cell_targets);
  }
};

// The smallest gap between the largest and the second largest value of any max-pool window in the
// last forward pass: a finite-difference step must not swap them.
inline double max_pool_margin(const Net& net) {
  double margin = 1e9;
  for (int i = 0; i < net.plan.num_layers; ++i) {
    if (net.plan.desc.layers[i].type != tv::LayerType::MaxPool2D) continue;
    const tv::Geom2D& g = net.plan.layers[i].geom;
    const float* x = net.tr.lanes[0].acts + (i == 0 ? 0 : net.plan.layers[i - 1].act_offset);
    for (int oy = 0; oy < g.out_h; ++oy)
      for (int ox = 0; ox < g.out_w; ++ox)
        for (int c = 0; c < g.in_c; ++c) {
          double top = -1e30, second = -1e30;
          for (int ky = 0; ky < g.k_h; ++ky)
            for (int kx = 0; kx < g.k_w; ++kx) {
              const double v = x[((size_t)(oy * g.stride_h + ky) * g.in_w + ox * g.stride_w + kx) * g.in_c + c];
              if (v > top) {
                second = top;
                top = v;
              } else if (v > second) {
                second = v;
              }
            }
          margin = std::min(margin, top - second);
        }
  }
  return margin;
}

// Distillation on top of the loss: the first num_classes - 1 outputs are the old classes, with these soft
// targets (T 2, weight 1: the values tvtrain and the board use).
struct Distill {
  std::vector<float> targets;  // num_classes - 1 probabilities
};

inline void check_network(const tv::ModelDesc& d, tv::LossKind kind, const char* what, const Distill* distill = nullptr,
                          const uint8_t* cell_targets = nullptr) {
  Net net(d, kind);
  net.cell_targets = cell_targets;
  if (distill) {
    net.tr.opt.distill_weight = tv::kDistillWeight;
    net.tr.opt.distill_temperature = tv::kDistillTemperature;
    net.tr.opt.distill_old_classes = d.num_classes - 1;
    ASSERT_EQ(tv::distill_outputs(net.plan, net.tr.opt), (int)distill->targets.size()) << what;
    net.soft_target = distill->targets.data();
  }
  // An image whose max-pool windows have clear winners: a step moves a first-layer pre-activation by
  // at most kStep (pixels are at most 1), two cells' gap by at most 2 kStep; the first seed whose
  // windows all lead by 4 kStep.
  std::vector<uint8_t> image(net.plan.input.size());
  const int label = 1;
  for (int seed = 1;; ++seed) {
    ASSERT_LT(seed, 200) << what << ": no image with well-separated max-pool windows";
    std::mt19937 rng(seed);
    for (auto& p : image) p = (uint8_t)(rng() % 256);
    net.loss(image, label);
    if (max_pool_margin(net) >= 4 * kStep) break;
  }
  const std::vector<float> analytic(net.tr.lanes[0].grad, net.tr.lanes[0].grad + net.plan.param_count);
  int checked = 0, nonzero = 0;
  double worst = 0;
  for (int i = 0; i < net.plan.num_layers; ++i) {
    const tv::LayerPlan& lp = net.plan.layers[i];
    const size_t n = lp.weight_count + lp.bias_count;
    for (size_t k = 0; k < n; ++k) {
      const size_t at = lp.param_offset + k;
      float& p = net.tr.params[at];
      const float saved = p, up = saved + kStep, down = saved - kStep;
      p = up;
      const double l_up = net.loss(image, label);
      p = down;
      const double l_down = net.loss(image, label);
      p = saved;
      const double numeric = (l_up - l_down) / ((double)up - (double)down);
      const double a = analytic[at];
      const double err = std::fabs(a - numeric), bound = kAbsTol + kRelTol * std::max(std::fabs(a), std::fabs(numeric));
      worst = std::max(worst, err / bound);
      EXPECT_LE(err, bound) << what << ": layer " << i << " (" << tv::layer_type_name(d.layers[i].type)
                            << ") parameter " << k << ": analytic " << a << ", numeric " << numeric;
      ++checked;
      nonzero += std::fabs(a) > 1e-3;
    }
  }
  EXPECT_EQ((size_t)checked, net.plan.param_count) << what;
  EXPECT_GT(nonzero, checked / 4) << what << ": the gradient is mostly zero, the check proves little";
  testing::Test::RecordProperty(std::string(what) + "_worst_error_over_bound", std::to_string(worst));
}

}  // namespace gradient_check
