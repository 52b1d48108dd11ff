// ReLU: max(x, 0), in place. Runs fused with a Conv2D / DepthwiseConv2D before it (net.cpp) and with
// the backward of a Conv2D / DepthwiseConv2D / MaxPool2D after it (their units).
#include "tv/int8/q8_model.h"
#include "tv/model/layer_unit.h"
#include "tv/model/model.h"

namespace tv {
namespace units {
namespace relu {

void forward(const ModelPlan& plan, int i, const float*, const float*, float* out) {
  relu_forward(out, plan.layers[i].out.size());
}

BackwardEnd backward(const BackwardStep& s) {
  relu_backward(s.y, s.dy, s.plan->layers[s.i].out.size());
  return BackwardEnd::Layer;
}

Status q8_run(const Q8Model& m, int i, const int8_t*, int8_t* out) {
  relu_s8(out, m.plan->layers[i].out.size());
  return ok_status();
}

bool interval(const LayerDesc&, int, int, const Int8Range& in, Int8Range* out) {
  out->lo = in.lo > 0 ? in.lo : 0;
  out->hi = in.hi > 0 ? in.hi : 0;
  return true;
}

}  // namespace relu

extern const LayerUnit kReLU;
constexpr LayerUnit kReLU = {{LayerType::ReLU, "relu", false, true, ShapeRule::Unchanged, Int8Exponent::KeepsInput,
                              true, true, false, DetailText::None, "Relu"},
                             {no_checks, no_weights},
                             {relu::forward, relu::backward},
                             {q8_no_checks, relu::q8_run, relu::interval}};

}  // namespace units
}  // namespace tv
