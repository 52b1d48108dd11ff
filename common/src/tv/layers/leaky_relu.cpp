// LeakyReLU: x > 0 ? x : alpha * x, in place; int8 as a 256-entry table (ESP-DL's LUT).
#include "tv/int8/q8_model.h"
#include "tv/layers/layer_unit.h"
#include "tv/model.h"

namespace tv {
namespace units {
namespace leaky_relu {

Status check(const LayerDesc& d, int layer) {
  if (!(d.alpha >= 0.f && d.alpha < 1.f)) return make_status(StatusCode::BadParameter, layer);
  return ok_status();
}

void forward(const ModelPlan& plan, int i, const float*, const float*, float* out) {
  leaky_relu_forward(out, plan.layers[i].out.size(), plan.desc.layers[i].alpha);
}

BackwardEnd backward(const BackwardStep& s) {
  leaky_relu_backward(s.y, s.dy, s.plan->layers[s.i].out.size(), s.plan->desc.layers[s.i].alpha);
  return BackwardEnd::Layer;
}

Status q8_bind(const BlobView&, const ModelPlan& plan, int i, Q8Model* m) {
  leaky_relu_table_s8(plan.desc.layers[i].alpha, m->act_exps[i], m->act_exps[i + 1], m->luts[i]);
  return ok_status();
}

Status q8_run(const Q8Model& m, int i, const int8_t* in, int8_t* out) {
  lut_s8(m.luts[i], in, m.plan->layers[i].out.size(), out);
  return ok_status();
}

bool interval(const LayerDesc& d, int e_in, int e_out, const Int8Range& in, Int8Range* out) {
  int8_t table[256];
  leaky_relu_table_s8(d.alpha, e_in, e_out, table);
  interval_of_table(table, in, out);
  return true;
}

}  // namespace leaky_relu

extern const LayerUnit kLeakyReLU;
constexpr LayerUnit kLeakyReLU = {{LayerType::LeakyReLU, "leaky_relu", false, true, ShapeRule::Unchanged,
                                   Int8Exponent::OwnRange, false, true, false, DetailText::Alpha, "LeakyRelu"},
                                  leaky_relu::check,
                                  no_weights,
                                  leaky_relu::forward,
                                  leaky_relu::backward,
                                  leaky_relu::q8_bind,
                                  leaky_relu::q8_run,
                                  leaky_relu::interval};

}  // namespace units
}  // namespace tv
