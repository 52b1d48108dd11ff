// In-place activations; backward passes read the stored output y. Also the layers with the ReLU beside
// them (tv/ops/ops.h), which the reference runs one after the other.
#include "tv/ops/kernel_variants.h"

namespace tv {
namespace ref {

void relu_forward(float* x, size_t n) {
  for (size_t i = 0; i < n; ++i) x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

void relu_backward(const float* y, float* dy, size_t n) {
  for (size_t i = 0; i < n; ++i) dy[i] = y[i] > 0.0f ? dy[i] : 0.0f;
}

void leaky_relu_forward(float* x, size_t n, float alpha) {
  for (size_t i = 0; i < n; ++i) x[i] = x[i] > 0.0f ? x[i] : alpha * x[i];
}

void leaky_relu_backward(const float* y, float* dy, size_t n, float alpha) {
  for (size_t i = 0; i < n; ++i) dy[i] = y[i] > 0.0f ? dy[i] : alpha * dy[i];
}

void clip_forward(float* x, size_t n, float lo, float hi) {
  for (size_t i = 0; i < n; ++i) x[i] = x[i] < lo ? lo : (x[i] > hi ? hi : x[i]);
}

void conv2d_forward_relu(const Geom2D& g, const float* in, const float* w, const float* b, float* out) {
  ref::conv2d_forward(g, in, w, b, out);
  relu_forward(out, (size_t)g.out_h * g.out_w * g.out_c);
}

void depthwise_conv2d_forward_relu(const Geom2D& g, const float* in, const float* w, const float* b, float* out) {
  ref::depthwise_conv2d_forward(g, in, w, b, out);
  relu_forward(out, (size_t)g.out_h * g.out_w * g.out_c);
}

void conv2d_backward_data_relu(const Geom2D& g, const float* w, const float* dout, float* din, const float* y) {
  ref::conv2d_backward_data(g, w, dout, din);
  relu_backward(y, din, (size_t)g.in_h * g.in_w * g.in_c);
}

void depthwise_conv2d_backward_data_relu(const Geom2D& g, const float* w, const float* dout, float* din,
                                         const float* y) {
  ref::depthwise_conv2d_backward_data(g, w, dout, din);
  relu_backward(y, din, (size_t)g.in_h * g.in_w * g.in_c);
}

void maxpool2d_backward_relu(const Geom2D& g, const float* in, const float* dout, float* din) {
  ref::maxpool2d_backward(g, in, dout, din);
  relu_backward(in, din, (size_t)g.in_h * g.in_w * g.in_c);
}

}  // namespace ref
}  // namespace tv
