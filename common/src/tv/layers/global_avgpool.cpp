// GlobalAvgPool: the mean of each channel's whole plane (1 x 1 x channels).
#include "tv/int8/q8_model.h"
#include "tv/model/layer_unit.h"
#include "tv/model/model.h"

namespace tv {
namespace units {
namespace global_avgpool {

Status q8_run(const Q8Model& m, int i, const int8_t* in, int8_t* out) {
  const LayerPlan& lp = m.plan->layers[i];
  return global_avgpool_s8(lp.in.h, lp.in.w, lp.in.c, in, m.act_exps[i], m.act_exps[i + 1], out);
}

}  // namespace global_avgpool

extern const LayerUnit kGlobalAvgPool;
constexpr LayerUnit kGlobalAvgPool = {
    {LayerType::GlobalAvgPool, "global_avgpool", false, false, ShapeRule::GlobalPool, Int8Exponent::OwnRange, false,
     true, false, DetailText::None, "GlobalAveragePool"},
    {no_checks, no_weights},
    {forward_adaptive_avgpool, backward_adaptive_avgpool},  // the float kernels of 1 x 1 bins (adaptive_avgpool2d.cpp)
    {q8_bind_plane_average, global_avgpool::q8_run, interval_rescaled}};

}  // namespace units
}  // namespace tv
