// Dense: `units` outputs (0 = the class count), each a weighted sum of every input value plus a bias.
#include "tv/int8/q8_model.h"
#include "tv/model/layer_unit.h"
#include "tv/model/model.h"

namespace tv {
namespace units {
namespace dense {

// [units][in_h * in_w * in_c]
int weight_dims(const LayerDesc&, const Shape& in, const Shape& out, uint32_t dims[4]) {
  dims[0] = (uint32_t)out.c;
  dims[1] = (uint32_t)in.size();
  return 2;
}

void forward(const ModelPlan& plan, int i, const float* params, const float* in, float* out) {
  const LayerPlan& lp = plan.layers[i];
  const float* w = params + lp.param_offset;
  dense_forward((int)lp.in.size(), lp.out.c, in, w, w + lp.weight_count, out);
}

BackwardEnd backward(const BackwardStep& s) {
  const LayerPlan& lp = s.plan->layers[s.i];
  dense_backward_params((int)lp.in.size(), lp.out.c, s.x, s.dy, s.g, s.g + lp.weight_count);
  if (s.need_dx) dense_backward_data((int)lp.in.size(), lp.out.c, s.w, s.dy, s.dx);
  return BackwardEnd::Layer;
}

Status q8_bind(const BlobView&, const ModelPlan& plan, int i, Q8Model*) {
  const LayerPlan& lp = plan.layers[i];
  if ((int64_t)lp.in.size() > kInt8MaxFanIn)
    return status_over_limit(StatusCode::NotSupported, i, (int32_t)lp.in.size(), kInt8MaxFanIn);
  return ok_status();
}

// Per-output-channel weight exponents (not an S3 feature): each output requantized with its own shift.
void dense_s8_per_channel(int in_n, int out_n, const int8_t* in, const int8_t* w, const int32_t* b, int e_in,
                          const int8_t* e_w, int e_out, int8_t* out) {
  for (int o = 0; o < out_n; ++o) {
    int64_t acc = b ? b[o] : 0;
    const int8_t* row = w + (size_t)o * in_n;
    for (int i = 0; i < in_n; ++i) acc += (int32_t)in[i] * row[i];
    out[o] = requantize_s8(acc, e_out - e_in - e_w[o]);
  }
}

Status q8_run(const Q8Model& m, int i, const int8_t* in, int8_t* out) {
  const LayerPlan& lp = m.plan->layers[i];
  const int in_n = (int)lp.in.size();
  if (m.channel_exps[i]) {
    dense_s8_per_channel(in_n, lp.out.c, in, m.weights[i], m.biases[i], m.act_exps[i], m.channel_exps[i],
                         m.act_exps[i + 1], out);
    return ok_status();
  }
  return dense_s8(in_n, lp.out.c, in, m.weights[i], m.biases[i], q8_layer(m, i), out);
}

}  // namespace dense

extern const LayerUnit kDense;
constexpr LayerUnit kDense = {{LayerType::Dense, "dense", true, false, ShapeRule::FullyConnected,
                               Int8Exponent::WithWeights, false, false, true, DetailText::Units, "Gemm"},
                              {no_checks, dense::weight_dims},
                              {dense::forward, dense::backward},
                              {dense::q8_bind, dense::q8_run, interval_from_weights}};

}  // namespace units
}  // namespace tv
