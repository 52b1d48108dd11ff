// The float hooks Conv2D and DepthwiseConv2D share: a window layer with weights and a bias per output
// channel, its kernels named as template arguments (tv/ops/ops.h), its data backward fused with a ReLU
// below it.
#pragma once
#include "tv/model/layer_unit.h"
#include "tv/model/model.h"

namespace tv {
namespace units {

using WindowForward = void(const Geom2D& g, const float* in, const float* w, const float* b, float* out);
using WindowParamsBackward = void(const Geom2D& g, const float* in, const float* dout, float* dw, float* db);
using WindowDataBackward = void(const Geom2D& g, const float* w, const float* dout, float* din);
using WindowDataReluBackward = void(const Geom2D& g, const float* w, const float* dout, float* din, const float* y);

template <WindowForward* kernel>
void forward_weighted_window(const ModelPlan& plan, int i, const float* params, const float* in, float* out) {
  const LayerPlan& lp = plan.layers[i];
  const float* w = params + lp.param_offset;
  kernel(lp.geom, in, w, w + lp.weight_count, out);
}

template <WindowParamsBackward* params, WindowDataBackward* data, WindowDataReluBackward* data_relu>
BackwardEnd backward_weighted_window(const BackwardStep& s) {
  const LayerPlan& lp = s.plan->layers[s.i];
  params(lp.geom, s.x, s.dy, s.g, s.g + lp.weight_count);
  if (!s.need_dx) return BackwardEnd::Layer;
  if (is_relu(*s.plan, s.i - 1)) {
    data_relu(lp.geom, s.w, s.dy, s.dx, s.x);
    return BackwardEnd::WithReluBelow;
  }
  data(lp.geom, s.w, s.dy, s.dx);
  return BackwardEnd::Layer;
}

}  // namespace units
}  // namespace tv
