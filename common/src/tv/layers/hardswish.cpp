// HardSwish (MobileNetV3): x * relu6(x + 3) / 6. Not in place: its derivative needs its input, which
// its output does not give back (y is not monotonic on [-3, -1.5]). Int8 as a 256-entry table
// (ESP-DL's HardSwish module runs the node's "lut" table as its LUT module).
#include <math.h>

#include "tv/layers/table_activation.h"
#include "tv/model/model.h"

namespace tv {
namespace units {
namespace hardswish {

// As torch computes it in float32: x * min(max(x + 3, 0), 6) / 6.
inline float value(float x) {
  const float t = x + 3.0f;
  return x * (t < 0.0f ? 0.0f : (t > 6.0f ? 6.0f : t)) / 6.0f;
}

void forward(const ModelPlan& plan, int i, const float*, const float* in, float* out) {
  const size_t n = plan.layers[i].out.size();
  for (size_t k = 0; k < n; ++k) out[k] = value(in[k]);
}

// dy/dx: 0 below -3, x / 3 + 1/2 on [-3, 3], 1 above (torch's hardswish_backward).
BackwardEnd backward(const BackwardStep& s) {
  const size_t n = s.plan->layers[s.i].out.size();
  for (size_t k = 0; k < n; ++k) {
    const float x = s.x[k];
    s.dx[k] = x < -3.0f ? 0.0f : (x <= 3.0f ? s.dy[k] * (x / 3.0f + 0.5f) : s.dy[k]);
  }
  return BackwardEnd::Layer;
}

// The table as esp-ppq builds one: y of x = q * 2^e_in in float32, quantized at e_out.
void table(const LayerDesc&, int e_in, int e_out, int8_t out[256]) {
  for (int q = -128; q <= 127; ++q) out[q + 128] = quantize_one_s8(value(ldexpf((float)q, e_in)), e_out);
}

}  // namespace hardswish

extern const LayerUnit kHardswish;
constexpr LayerUnit kHardswish = {
    {LayerType::Hardswish, "hardswish", false, false, ShapeRule::Unchanged, Int8Exponent::OwnRange, false, true, false,
     DetailText::None, "HardSwish"},
    {no_checks, no_weights},
    {hardswish::forward, hardswish::backward},
    {q8_bind_table<hardswish::table>, q8_run_table, interval_of_activation<hardswish::table>}};

}  // namespace units
}  // namespace tv
