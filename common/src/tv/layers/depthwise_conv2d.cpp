// DepthwiseConv2D (channel multiplier 1): one kernel_h x kernel_w filter per channel, with a bias per channel.
#include "tv/int8/q8_model.h"
#include "tv/layers/weighted_window.h"
#include "tv/model/layer_unit.h"
#include "tv/model/model.h"

namespace tv {
namespace units {
namespace depthwise_conv2d {

// [k_h][k_w][c]
int weight_dims(const LayerDesc& d, const Shape& in, const Shape&, uint32_t dims[4]) {
  dims[0] = d.kernel_h;
  dims[1] = d.kernel_w;
  dims[2] = (uint32_t)in.c;
  return 3;
}

Status q8_run(const Q8Model& m, int i, const int8_t* in, int8_t* out) {
  return depthwise_conv2d_s8(m.plan->layers[i].geom, in, m.weights[i], m.biases[i], q8_layer(m, i), out);
}

}  // namespace depthwise_conv2d

extern const LayerUnit kDepthwiseConv2D;
constexpr LayerUnit kDepthwiseConv2D = {
    {LayerType::DepthwiseConv2D, "depthwise_conv2d", true, false, ShapeRule::SlidingWindow, Int8Exponent::WithWeights,
     false, true, false, DetailText::WindowPadding, "Conv"},
    {no_checks, depthwise_conv2d::weight_dims},
    {forward_weighted_window<depthwise_conv2d_forward>,
     backward_weighted_window<depthwise_conv2d_backward_params, depthwise_conv2d_backward_data,
                              depthwise_conv2d_backward_data_relu>},
    {q8_no_checks, depthwise_conv2d::q8_run, interval_from_weights}};

}  // namespace units
}  // namespace tv
