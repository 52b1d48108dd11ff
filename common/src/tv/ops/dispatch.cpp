// The tv:: entry points of tv/ops.h that have two implementations: the build chooses which one runs.
// TV_FAST_KERNELS=1 (the host build's default, CMake option TV_FAST_KERNELS) selects tv::fast::,
// anything else the reference kernels tv::ref::. Both give the same bits (kernel_variants.h).
#include "tv/ops/kernel_variants.h"

#if defined(TV_FAST_KERNELS) && TV_FAST_KERNELS
#define TV_KERNELS fast
#else
#define TV_KERNELS ref
#endif

namespace tv {

bool fast_kernels_enabled() {
#if defined(TV_FAST_KERNELS) && TV_FAST_KERNELS
  return true;
#else
  return false;
#endif
}

void conv2d_forward(const Geom2D& g, const float* in, const float* w, const float* b, float* out) {
  TV_KERNELS::conv2d_forward(g, in, w, b, out);
}
void conv2d_backward_data(const Geom2D& g, const float* w, const float* dout, float* din) {
  TV_KERNELS::conv2d_backward_data(g, w, dout, din);
}
void conv2d_backward_params(const Geom2D& g, const float* in, const float* dout, float* dw, float* db) {
  TV_KERNELS::conv2d_backward_params(g, in, dout, dw, db);
}
void depthwise_conv2d_forward(const Geom2D& g, const float* in, const float* w, const float* b, float* out) {
  TV_KERNELS::depthwise_conv2d_forward(g, in, w, b, out);
}
void depthwise_conv2d_backward_data(const Geom2D& g, const float* w, const float* dout, float* din) {
  TV_KERNELS::depthwise_conv2d_backward_data(g, w, dout, din);
}
void depthwise_conv2d_backward_params(const Geom2D& g, const float* in, const float* dout, float* dw, float* db) {
  TV_KERNELS::depthwise_conv2d_backward_params(g, in, dout, dw, db);
}
void avgpool2d_forward(const Geom2D& g, const float* in, float* out) {
  TV_KERNELS::avgpool2d_forward(g, in, out);
}
void avgpool2d_backward(const Geom2D& g, const float* dout, float* din) {
  TV_KERNELS::avgpool2d_backward(g, dout, din);
}
void adaptive_avgpool2d_forward(int in_h, int in_w, int c, int out_h, int out_w, const float* in, float* out) {
  TV_KERNELS::adaptive_avgpool2d_forward(in_h, in_w, c, out_h, out_w, in, out);
}
void adaptive_avgpool2d_backward(int in_h, int in_w, int c, int out_h, int out_w, const float* dout, float* din) {
  TV_KERNELS::adaptive_avgpool2d_backward(in_h, in_w, c, out_h, out_w, dout, din);
}
void maxpool2d_forward(const Geom2D& g, const float* in, float* out) {
  TV_KERNELS::maxpool2d_forward(g, in, out);
}
void maxpool2d_backward(const Geom2D& g, const float* in, const float* dout, float* din) {
  TV_KERNELS::maxpool2d_backward(g, in, dout, din);
}
void dense_forward(int in_n, int out_n, const float* in, const float* w, const float* b, float* out) {
  TV_KERNELS::dense_forward(in_n, out_n, in, w, b, out);
}
void dense_backward_data(int in_n, int out_n, const float* w, const float* dout, float* din) {
  TV_KERNELS::dense_backward_data(in_n, out_n, w, dout, din);
}
void dense_backward_params(int in_n, int out_n, const float* in, const float* dout, float* dw, float* db) {
  TV_KERNELS::dense_backward_params(in_n, out_n, in, dout, dw, db);
}
void relu_forward(float* x, size_t n) {
  TV_KERNELS::relu_forward(x, n);
}
void relu_backward(const float* y, float* dy, size_t n) {
  TV_KERNELS::relu_backward(y, dy, n);
}
void conv2d_forward_relu(const Geom2D& g, const float* in, const float* w, const float* b, float* out) {
  TV_KERNELS::conv2d_forward_relu(g, in, w, b, out);
}
void depthwise_conv2d_forward_relu(const Geom2D& g, const float* in, const float* w, const float* b, float* out) {
  TV_KERNELS::depthwise_conv2d_forward_relu(g, in, w, b, out);
}
void conv2d_backward_data_relu(const Geom2D& g, const float* w, const float* dout, float* din, const float* y) {
  TV_KERNELS::conv2d_backward_data_relu(g, w, dout, din, y);
}
void depthwise_conv2d_backward_data_relu(const Geom2D& g, const float* w, const float* dout, float* din,
                                         const float* y) {
  TV_KERNELS::depthwise_conv2d_backward_data_relu(g, w, dout, din, y);
}
void maxpool2d_backward_relu(const Geom2D& g, const float* in, const float* dout, float* din) {
  TV_KERNELS::maxpool2d_backward_relu(g, in, dout, din);
}
void leaky_relu_forward(float* x, size_t n, float alpha) {
  TV_KERNELS::leaky_relu_forward(x, n, alpha);
}
void leaky_relu_backward(const float* y, float* dy, size_t n, float alpha) {
  TV_KERNELS::leaky_relu_backward(y, dy, n, alpha);
}
void clip_forward(float* x, size_t n, float lo, float hi) {
  TV_KERNELS::clip_forward(x, n, lo, hi);
}

}  // namespace tv
