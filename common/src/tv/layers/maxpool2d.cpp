// MaxPool2D: the largest value of each kernel_h x kernel_w window (valid padding only).
#include "tv/int8/q8_model.h"
#include "tv/model/layer_unit.h"
#include "tv/model/model.h"
#include "tv/ops/kernel_variants.h"

namespace tv {
namespace units {
namespace maxpool2d {

void forward(const ModelPlan& plan, int i, const float*, const float* in, float* out) {
  maxpool2d_forward(plan.layers[i].geom, in, out);
}

// With the fast kernels: the backward of [Conv2D, in-place activations, MaxPool2D] in one fused
// kernel when the conv is the first layer with weights (its input gradient is never needed). Adds to
// the conv's gradient the same bits as running the layers one by one; returns false when the layers
// do not form that chain or the kernel has no fused path for their geometry. Without TV_FAST_KERNELS (the
// board's build) it is not even compiled in: its fast kernel keeps 25 KB of lists on the stack, more
// than a board task has (scripts/check-stack.py).
bool fused_conv_pool_backward(const ModelPlan& plan, int pool_layer, const float* acts, const float* dpool,
                              float* grad) {
#if !(defined(TV_FAST_KERNELS) && TV_FAST_KERNELS)
  (void)plan, (void)pool_layer, (void)acts, (void)dpool, (void)grad;
  return false;
#else
  const int conv_layer = plan.first_param_layer;
  if (conv_layer < 0 || conv_layer >= pool_layer || plan.desc.layers[conv_layer].type != LayerType::Conv2D)
    return false;
  fast::ActivationStep steps[kMaxLayers];
  int n = 0;
  for (int j = pool_layer - 1; j > conv_layer; --j) {  // backward order
    const LayerDesc& d = plan.desc.layers[j];
    if (d.type == LayerType::LeakyReLU)
      steps[n++] = fast::ActivationStep{true, d.alpha};
    else if (d.type == LayerType::ReLU)
      steps[n++] = fast::ActivationStep{false, 0.f};
    else if (d.type != LayerType::Clip)
      return false;  // Clip passes the gradient straight through
  }
  const LayerPlan& cp = plan.layers[conv_layer];
  const float* x = conv_layer == 0 ? acts : acts + plan.layers[conv_layer - 1].act_offset;
  float* g = grad + cp.param_offset;
  return fast::conv2d_pool_backward_params(cp.geom, plan.layers[pool_layer].geom, steps, n, x, acts + cp.act_offset,
                                           dpool, g, g + cp.weight_count);
#endif
}

BackwardEnd backward(const BackwardStep& s) {
  // The first layer with weights done in one fused kernel: nothing below needs a gradient.
  if (fused_conv_pool_backward(*s.plan, s.i, s.acts, s.dy, s.grad)) return BackwardEnd::Everything;
  const Geom2D& g = s.plan->layers[s.i].geom;
  if (is_relu(*s.plan, s.i - 1)) {
    maxpool2d_backward_relu(g, s.x, s.dy, s.dx);
    return BackwardEnd::WithReluBelow;
  }
  maxpool2d_backward(g, s.x, s.dy, s.dx);
  return BackwardEnd::Layer;
}

Status q8_run(const Q8Model& m, int i, const int8_t* in, int8_t* out) {
  return maxpool2d_s8(m.plan->layers[i].geom, in, out);
}

}  // namespace maxpool2d

extern const LayerUnit kMaxPool2D;
constexpr LayerUnit kMaxPool2D = {{LayerType::MaxPool2D, "maxpool2d", false, false, ShapeRule::SlidingWindow,
                                   Int8Exponent::KeepsInput, false, true, false, DetailText::Window, "MaxPool"},
                                  {valid_padding_only, no_weights},
                                  {maxpool2d::forward, maxpool2d::backward},
                                  {q8_no_checks, maxpool2d::q8_run, interval_unchanged}};

}  // namespace units
}  // namespace tv
