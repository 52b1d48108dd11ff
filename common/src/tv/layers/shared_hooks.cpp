// The hooks several layer units share, and the named hooks for "does not apply" (tv/model/layer_unit.h).
#include "tv/int8/int8_ops.h"
#include "tv/int8/q8_model.h"
#include "tv/model/layer_unit.h"
#include "tv/model/model.h"

namespace tv {
namespace units {

Status no_checks(const LayerDesc&, int) {
  return ok_status();
}

Status valid_padding_only(const LayerDesc& d, int layer) {
  if (d.padding != Padding::Valid) return status_plain(StatusCode::BadParameter, layer);
  return ok_status();
}

int no_weights(const LayerDesc&, const Shape&, const Shape&, uint32_t*) {
  return 0;
}

void forward_reshape_only(const ModelPlan&, int, const float*, const float*, float*) {}

BackwardEnd backward_passes_through(const BackwardStep&) {
  return BackwardEnd::Layer;
}

Status q8_no_checks(const BlobView&, const ModelPlan&, int, Q8Model*) {
  return ok_status();
}

Status q8_reshape_only(const Q8Model&, int, const int8_t*, int8_t*) {
  return ok_status();
}

bool interval_from_weights(const LayerDesc&, int, int, const Int8Range&, Int8Range*) {
  return false;
}

bool interval_unchanged(const LayerDesc&, int, int, const Int8Range& in, Int8Range* out) {
  *out = in;
  return true;
}

bool interval_rescaled(const LayerDesc&, int e_in, int e_out, const Int8Range& in, Int8Range* out) {
  int8_t v[2] = {int8_t(in.lo), int8_t(in.hi)};
  rescale_s8(v, 2, e_in, e_out, v);
  out->lo = v[0];
  out->hi = v[1];
  return true;
}

bool is_relu(const ModelPlan& plan, int i) {
  return i >= 0 && i < plan.num_layers && plan.desc.layers[i].type == LayerType::ReLU;
}

}  // namespace units
}  // namespace tv
