// AvgPool2D: the mean of each kernel_h x kernel_w window (valid padding only).
#include "tv/int8/q8_model.h"
#include "tv/model/layer_unit.h"
#include "tv/model/model.h"

namespace tv {
namespace units {
namespace avgpool2d {

void forward(const ModelPlan& plan, int i, const float*, const float* in, float* out) {
  avgpool2d_forward(plan.layers[i].geom, in, out);
}

BackwardEnd backward(const BackwardStep& s) {
  avgpool2d_backward(s.plan->layers[s.i].geom, s.dy, s.dx);
  return BackwardEnd::Layer;
}

Status q8_bind(const BlobView&, const ModelPlan& plan, int i, Q8Model*) {
  const Geom2D& g = plan.layers[i].geom;
  if ((int64_t)g.k_h * g.k_w > kInt8MaxPoolArea)
    return status_over_limit(StatusCode::NotSupported, i, g.k_h * g.k_w, (int32_t)kInt8MaxPoolArea);
  return ok_status();
}

Status q8_run(const Q8Model& m, int i, const int8_t* in, int8_t* out) {
  return avgpool2d_s8(m.plan->layers[i].geom, in, m.act_exps[i], m.act_exps[i + 1], out);
}

}  // namespace avgpool2d

extern const LayerUnit kAvgPool2D;
constexpr LayerUnit kAvgPool2D = {{LayerType::AvgPool2D, "avgpool2d", false, false, ShapeRule::SlidingWindow,
                                   Int8Exponent::OwnRange, false, true, false, DetailText::Window, "AveragePool"},
                                  {valid_padding_only, no_weights},
                                  {avgpool2d::forward, avgpool2d::backward},
                                  {avgpool2d::q8_bind, avgpool2d::q8_run, interval_rescaled}};

}  // namespace units
}  // namespace tv
