// AdaptiveAvgPool2D: the input split into out_h x out_w bins, the mean of each. Also the float
// kernels of GlobalAvgPool (1 x 1 bins) and the "equal bins" rule the int8 engine, tvquant and the
// .espdl exporter share.
#include "tv/int8/q8_model.h"
#include "tv/model/layer_unit.h"
#include "tv/model/model.h"

namespace tv {

bool equal_bins(const LayerPlan& lp) {
  return lp.out.h > 0 && lp.out.w > 0 && lp.in.h % lp.out.h == 0 && lp.in.w % lp.out.w == 0;
}

namespace units {

void forward_adaptive_avgpool(const ModelPlan& plan, int i, const float*, const float* in, float* out) {
  const LayerPlan& lp = plan.layers[i];
  adaptive_avgpool2d_forward(lp.in.h, lp.in.w, lp.in.c, lp.out.h, lp.out.w, in, out);
}

BackwardEnd backward_adaptive_avgpool(const BackwardStep& s) {
  const LayerPlan& lp = s.plan->layers[s.i];
  adaptive_avgpool2d_backward(lp.in.h, lp.in.w, lp.in.c, lp.out.h, lp.out.w, s.dy, s.dx);
  return BackwardEnd::Layer;
}

Status q8_bind_plane_average(const BlobView&, const ModelPlan& plan, int i, Q8Model*) {
  const LayerPlan& lp = plan.layers[i];
  if ((int64_t)lp.in.h * lp.in.w > kInt8MaxPoolArea)
    return status_over_limit(StatusCode::NotSupported, i, (int32_t)((int64_t)lp.in.h * lp.in.w),
                             (int32_t)kInt8MaxPoolArea);
  return ok_status();
}

namespace adaptive_avgpool2d {

Status q8_bind(const BlobView& v, const ModelPlan& plan, int i, Q8Model* m) {
  if (!equal_bins(plan.layers[i])) return status_plain(StatusCode::NotSupported, i);
  return q8_bind_plane_average(v, plan, i, m);  // a window of equal bins is at most the whole plane
}

// Equal bins: an AvgPool with the bin as window and stride (a GlobalAvgPool for 1 x 1 bins).
Status q8_run(const Q8Model& m, int i, const int8_t* in, int8_t* out) {
  const LayerPlan& lp = m.plan->layers[i];
  const int e_in = m.act_exps[i], e_out = m.act_exps[i + 1];
  if (lp.out.h == 1 && lp.out.w == 1) return global_avgpool_s8(lp.in.h, lp.in.w, lp.in.c, in, e_in, e_out, out);
  const int kh = lp.in.h / lp.out.h, kw = lp.in.w / lp.out.w;
  const Geom2D g{lp.in.h, lp.in.w, lp.in.c, lp.out.h, lp.out.w, lp.out.c, kh, kw, kh, kw, 0, 0};
  return avgpool2d_s8(g, in, e_in, e_out, out);
}

}  // namespace adaptive_avgpool2d

extern const LayerUnit kAdaptiveAvgPool2D;
constexpr LayerUnit kAdaptiveAvgPool2D = {
    {LayerType::AdaptiveAvgPool2D, "adaptive_avgpool2d", false, false, ShapeRule::AdaptiveBins, Int8Exponent::OwnRange,
     false, true, false, DetailText::None, "AveragePool"},
    {no_checks, no_weights},
    {forward_adaptive_avgpool, backward_adaptive_avgpool},
    {adaptive_avgpool2d::q8_bind, adaptive_avgpool2d::q8_run, interval_rescaled}};

}  // namespace units
}  // namespace tv
