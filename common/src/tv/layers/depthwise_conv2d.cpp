// DepthwiseConv2D (channel multiplier 1): one kernel_h x kernel_w filter per channel, with a bias per channel.
#include "tv/int8/q8_model.h"
#include "tv/layers/layer_unit.h"
#include "tv/model.h"

namespace tv {
namespace units {
namespace depthwise_conv2d {

// [k_h][k_w][c]
int weight_dims(const LayerDesc& d, const Shape& in, const Shape&, uint32_t dims[4]) {
  dims[0] = d.kernel_h;
  dims[1] = d.kernel_w;
  dims[2] = (uint32_t)in.c;
  return 3;
}

void forward(const ModelPlan& plan, int i, const float* params, const float* in, float* out) {
  const LayerPlan& lp = plan.layers[i];
  const float* w = params + lp.param_offset;
  depthwise_conv2d_forward(lp.geom, in, w, w + lp.weight_count, out);
}

BackwardEnd backward(const BackwardStep& s) {
  const LayerPlan& lp = s.plan->layers[s.i];
  depthwise_conv2d_backward_params(lp.geom, s.x, s.dy, s.g, s.g + lp.weight_count);
  if (!s.need_dx) return BackwardEnd::Layer;
  if (is_relu(*s.plan, s.i - 1)) {
    depthwise_conv2d_backward_data_relu(lp.geom, s.w, s.dy, s.dx, s.x);
    return BackwardEnd::WithReluBelow;
  }
  depthwise_conv2d_backward_data(lp.geom, s.w, s.dy, s.dx);
  return BackwardEnd::Layer;
}

Status q8_run(const Q8Model& m, int i, const int8_t* in, int8_t* out) {
  return depthwise_conv2d_s8(m.plan->layers[i].geom, in, m.weights[i], m.biases[i], q8_layer(m, i), out);
}

}  // namespace depthwise_conv2d

extern const LayerUnit kDepthwiseConv2D;
constexpr LayerUnit kDepthwiseConv2D = {
    {LayerType::DepthwiseConv2D, "depthwise_conv2d", true, false, ShapeRule::SlidingWindow, Int8Exponent::WithWeights,
     false, true, false, DetailText::WindowPadding, "Conv"},
    no_checks,
    depthwise_conv2d::weight_dims,
    depthwise_conv2d::forward,
    depthwise_conv2d::backward,
    q8_no_checks,
    depthwise_conv2d::q8_run,
    interval_from_weights};

}  // namespace units
}  // namespace tv
