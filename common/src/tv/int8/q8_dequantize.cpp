#include "tv/int8/q8_dequantize.h"

#include <math.h>

namespace tv {

void q8_dequantize_params(const Q8Model& m, float* params) {
  const ModelPlan& plan = *m.plan;
  for (int i = 0; i < plan.num_layers; ++i) {
    const LayerPlan& lp = plan.layers[i];
    if (!layer_has_params(plan.desc.layers[i].type) || !m.weights[i]) continue;
    float* w = params + lp.param_offset;
    float* b = w + lp.weight_count;
    const size_t per_out = lp.bias_count ? lp.weight_count / lp.bias_count : lp.weight_count;
    for (size_t o = 0; o < lp.bias_count; ++o) {
      const int e_w = m.channel_exps[i] ? m.channel_exps[i][o] : m.weight_exp[i];
      for (size_t k = 0; k < per_out; ++k) w[o * per_out + k] = ldexpf((float)m.weights[i][o * per_out + k], e_w);
      b[o] = ldexpf((float)m.biases[i][o], m.act_exps[i] + e_w);
    }
  }
}

}  // namespace tv
