// LeakyReLU: x > 0 ? x : alpha * x, in place; int8 as a 256-entry table (ESP-DL's LUT).
#include "tv/layers/table_activation.h"
#include "tv/model/model.h"

namespace tv {
namespace units {
namespace leaky_relu {

Status check(const LayerDesc& d, int layer) {
  if (!(d.alpha >= 0.f && d.alpha < 1.f)) return status_plain(StatusCode::BadParameter, layer);
  return ok_status();
}

void forward(const ModelPlan& plan, int i, const float*, const float*, float* out) {
  leaky_relu_forward(out, plan.layers[i].out.size(), plan.desc.layers[i].alpha);
}

BackwardEnd backward(const BackwardStep& s) {
  leaky_relu_backward(s.y, s.dy, s.plan->layers[s.i].out.size(), s.plan->desc.layers[s.i].alpha);
  return BackwardEnd::Layer;
}

void table(const LayerDesc& d, int e_in, int e_out, int8_t out[256]) {
  leaky_relu_table_s8(d.alpha, e_in, e_out, out);
}

}  // namespace leaky_relu

extern const LayerUnit kLeakyReLU;
constexpr LayerUnit kLeakyReLU = {
    {LayerType::LeakyReLU, "leaky_relu", false, true, ShapeRule::Unchanged, Int8Exponent::OwnRange, false, true, false,
     DetailText::Alpha, "LeakyRelu"},
    {leaky_relu::check, no_weights},
    {leaky_relu::forward, leaky_relu::backward},
    {q8_bind_table<leaky_relu::table>, q8_run_table, interval_of_activation<leaky_relu::table>}};

}  // namespace units
}  // namespace tv
