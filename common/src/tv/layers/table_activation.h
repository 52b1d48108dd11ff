// The int8 hooks of an activation that runs as a 256-entry table (ESP-DL's LUT: LeakyReLU, HardSwish). The
// unit gives its table as
//   void table(const LayerDesc& d, int e_in, int e_out, int8_t out[256])
// (y of x = q * 2^e_in, quantized at e_out), and these build it when the model is bound, run it, and
// bound its output.
#pragma once
#include "tv/int8/int8_ops.h"
#include "tv/int8/q8_model.h"
#include "tv/model/layer_unit.h"
#include "tv/model/model.h"

namespace tv {
namespace units {

using ActivationTable = void(const LayerDesc& d, int e_in, int e_out, int8_t table[256]);

template <ActivationTable* table>
Status q8_bind_table(const BlobView&, const ModelPlan& plan, int i, Q8Model* m) {
  table(plan.desc.layers[i], m->act_exps[i], m->act_exps[i + 1], m->luts[i]);
  return ok_status();
}

inline Status q8_run_table(const Q8Model& m, int i, const int8_t* in, int8_t* out) {
  lut_s8(m.luts[i], in, m.plan->layers[i].out.size(), out);
  return ok_status();
}

template <ActivationTable* table>
bool interval_of_activation(const LayerDesc& d, int e_in, int e_out, const Int8Range& in, Int8Range* out) {
  int8_t values[256];
  table(d, e_in, e_out, values);
  *out = Int8Range{127, -128};  // the table's values over the reachable inputs
  for (int32_t v = in.lo; v <= in.hi; ++v) {
    if (values[v + 128] < out->lo) out->lo = values[v + 128];
    if (values[v + 128] > out->hi) out->hi = values[v + 128];
  }
  return true;
}

}  // namespace units
}  // namespace tv
