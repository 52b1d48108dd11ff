// Clip: x clamped to [lo, hi], in place. Its backward passes the gradient straight through.
#include "tv/int8/q8_model.h"
#include "tv/model/layer_unit.h"
#include "tv/model/model.h"

namespace tv {
namespace units {
namespace clip {

Status check(const LayerDesc& d, int layer) {
  // Zero must stay inside the range so that a clipped activation keeps its sign.
  if (!(d.lo < d.hi && d.lo <= 0.f && d.hi > 0.f)) return status_plain(StatusCode::BadParameter, layer);
  return ok_status();
}

void forward(const ModelPlan& plan, int i, const float*, const float*, float* out) {
  const LayerDesc& d = plan.desc.layers[i];
  clip_forward(out, plan.layers[i].out.size(), d.lo, d.hi);
}

// The clamp at [quantize(lo), quantize(hi)] at the input's exponent.
Status q8_run(const Q8Model& m, int i, const int8_t* in, int8_t* out) {
  const LayerDesc& d = m.plan->desc.layers[i];
  const int e_in = m.act_exps[i];
  const int8_t lo = quantize_one_s8(d.lo, e_in), hi = quantize_one_s8(d.hi, e_in);
  const size_t n = m.plan->layers[i].out.size();
  for (size_t k = 0; k < n; ++k) out[k] = in[k] < lo ? lo : (in[k] > hi ? hi : in[k]);
  return ok_status();
}

bool interval(const LayerDesc& d, int e_in, int, const Int8Range& in, Int8Range* out) {
  const int32_t lo = quantize_one_s8(d.lo, e_in), hi = quantize_one_s8(d.hi, e_in);
  out->lo = in.lo < lo ? lo : (in.lo > hi ? hi : in.lo);
  out->hi = in.hi < lo ? lo : (in.hi > hi ? hi : in.hi);
  return true;
}

}  // namespace clip

extern const LayerUnit kClip;
constexpr LayerUnit kClip = {{LayerType::Clip, "clip", false, true, ShapeRule::Unchanged, Int8Exponent::KeepsInput,
                              true, true, false, DetailText::Range, "Clip"},
                             {clip::check, no_weights},
                             {clip::forward, backward_passes_through},
                             {q8_no_checks, clip::q8_run, clip::interval}};

}  // namespace units
}  // namespace tv
