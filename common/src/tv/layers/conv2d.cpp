// Conv2D: `units` filters of kernel_h x kernel_w over every input channel, with a bias per filter.
#include "tv/int8/q8_model.h"
#include "tv/layers/weighted_window.h"
#include "tv/model/layer_unit.h"
#include "tv/model/model.h"

namespace tv {
namespace units {
namespace conv2d {

Status check(const LayerDesc& d, int layer) {
  if (d.units == 0) return status_plain(StatusCode::ZeroDimension, layer);
  return ok_status();
}

// [out_c][k_h][k_w][in_c]
int weight_dims(const LayerDesc& d, const Shape& in, const Shape& out, uint32_t dims[4]) {
  dims[0] = (uint32_t)out.c;
  dims[1] = d.kernel_h;
  dims[2] = d.kernel_w;
  dims[3] = (uint32_t)in.c;
  return 4;
}

Status q8_bind(const BlobView&, const ModelPlan& plan, int i, Q8Model*) {
  const LayerPlan& lp = plan.layers[i];
  const int64_t fan_in = (int64_t)lp.geom.k_h * lp.geom.k_w * lp.in.c;
  if (fan_in > kInt8MaxFanIn) return status_over_limit(StatusCode::NotSupported, i, (int32_t)fan_in, kInt8MaxFanIn);
  return ok_status();
}

// Per-output-channel weight exponents (not an S3 feature): plain loops, each channel requantized
// with its own shift.
void conv2d_s8_per_channel(const Geom2D& g, const int8_t* in, const int8_t* w, const int32_t* b, int e_in,
                           const int8_t* e_w, int e_out, int8_t* out) {
  const int taps = g.k_h * g.k_w * g.in_c;
  for (int oy = 0; oy < g.out_h; ++oy)
    for (int ox = 0; ox < g.out_w; ++ox)
      for (int o = 0; o < g.out_c; ++o) {
        int64_t acc = b ? b[o] : 0;
        const int8_t* wf = w + (size_t)o * taps;
        for (int ky = 0; ky < g.k_h; ++ky) {
          int iy = oy * g.stride_h - g.pad_top + ky;
          if (iy < 0 || iy >= g.in_h) continue;
          for (int kx = 0; kx < g.k_w; ++kx) {
            int ix = ox * g.stride_w - g.pad_left + kx;
            if (ix < 0 || ix >= g.in_w) continue;
            const int8_t* px = in + ((size_t)iy * g.in_w + ix) * g.in_c;
            const int8_t* wk = wf + (ky * g.k_w + kx) * g.in_c;
            for (int i = 0; i < g.in_c; ++i) acc += (int32_t)px[i] * wk[i];
          }
        }
        out[((size_t)oy * g.out_w + ox) * g.out_c + o] = requantize_s8(acc, e_out - e_in - e_w[o]);
      }
}

Status q8_run(const Q8Model& m, int i, const int8_t* in, int8_t* out) {
  const LayerPlan& lp = m.plan->layers[i];
  const int e_in = m.act_exps[i], e_out = m.act_exps[i + 1];
  if (m.channel_exps[i]) {
    conv2d_s8_per_channel(lp.geom, in, m.weights[i], m.biases[i], e_in, m.channel_exps[i], e_out, out);
    return ok_status();
  }
  return conv2d_s8(lp.geom, in, m.weights[i], m.biases[i], q8_layer(m, i), out);
}

}  // namespace conv2d

extern const LayerUnit kConv2D;
constexpr LayerUnit kConv2D = {
    {LayerType::Conv2D, "conv2d", true, false, ShapeRule::SlidingWindow, Int8Exponent::WithWeights, false, false, true,
     DetailText::FiltersWindowPadding, "Conv"},
    {conv2d::check, conv2d::weight_dims},
    {forward_weighted_window<conv2d_forward>,
     backward_weighted_window<conv2d_backward_params, conv2d_backward_data, conv2d_backward_data_relu>},
    {conv2d::q8_bind, conv2d::q8_run, interval_from_weights}};

}  // namespace units
}  // namespace tv
