// Float reference kernels of the TinyVision core: forward and backward, one op per .cpp file.
//
// Conventions shared by every kernel:
// - One sample at a time. Activations are channels-last (HWC): element (y, x, k) of an
//   h x w x c tensor sits at index (y * w + x) * c + k.
// - Conv2D weights are [out_c][k_h][k_w][in_c]; DepthwiseConv2D weights are [k_h][k_w][c]
//   (channel multiplier 1); Dense weights are [out][in] with `in` running over the flattened HWC input.
// - *_forward writes its whole output. *_backward_data OVERWRITES the input gradient.
//   *_backward_params ACCUMULATES (+=) into the weight and bias gradients, so a caller can sum
//   several samples into one gradient buffer; it zeroes them when it wants a fresh sum.
// - Activations (ReLU, LeakyReLU, Clip) work in place on the layer output; their backward takes the
//   stored OUTPUT y (for ReLU/LeakyReLU with alpha >= 0, y > 0 exactly when the input was > 0) and
//   scales the incoming gradient in place.
// - No allocation, no I/O, no exceptions: plain loops over caller-owned buffers.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "tv/build_config.h"

namespace tv {

// Geometry of a 2-D sliding-window op (conv, depthwise conv, max/avg pool) on an HWC tensor.
// Output pixel (oy, ox) reads input rows oy*stride_h - pad_top + ky, columns ox*stride_w - pad_left + kx;
// reads outside the input see zero (conv) or are skipped (pooling).
struct Geom2D {
  int in_h, in_w, in_c;
  int out_h, out_w, out_c;
  int k_h, k_w;
  int stride_h, stride_w;
  int pad_top, pad_left;
};

// ---- Conv2D (conv2d.cpp) ----
// out[oy][ox][o] = b[o] + sum_{ky,kx,i} in[iy][ix][i] * w[o][ky][kx][i]
void conv2d_forward(const Geom2D& g, const float* in, const float* w, const float* b, float* out);
// din = dL/din given dout = dL/dout (overwrites din, g.in_h*g.in_w*g.in_c floats).
void conv2d_backward_data(const Geom2D& g, const float* w, const float* dout, float* din);
// dw += dL/dw, db += dL/db.
void conv2d_backward_params(const Geom2D& g, const float* in, const float* dout, float* dw, float* db);

// ---- DepthwiseConv2D (depthwise_conv2d.cpp), channel multiplier 1, out_c == in_c ----
void depthwise_conv2d_forward(const Geom2D& g, const float* in, const float* w, const float* b, float* out);
void depthwise_conv2d_backward_data(const Geom2D& g, const float* w, const float* dout, float* din);
void depthwise_conv2d_backward_params(const Geom2D& g, const float* in, const float* dout, float* dw, float* db);

// ---- MaxPool2D (maxpool2d.cpp), out_c == in_c, padded cells are skipped ----
void maxpool2d_forward(const Geom2D& g, const float* in, float* out);
// Routes each dout to the FIRST maximum of its window in row-major (ky, kx) order, found again from
// `in`; overlapping windows add up. Overwrites din.
void maxpool2d_backward(const Geom2D& g, const float* in, const float* dout, float* din);

// ---- AvgPool2D (avgpool2d.cpp), out_c == in_c; divides by the full window area k_h*k_w ----
void avgpool2d_forward(const Geom2D& g, const float* in, float* out);
void avgpool2d_backward(const Geom2D& g, const float* dout, float* din);  // overwrites din

// ---- AdaptiveAvgPool2D (adaptive_avgpool2d.cpp); GlobalAvgPool is out_h = out_w = 1 ----
// Bin (oy, ox) averages input rows [floor(oy*in_h/out_h), ceil((oy+1)*in_h/out_h)) and likewise
// columns (the PyTorch rule).
void adaptive_avgpool2d_forward(int in_h, int in_w, int c, int out_h, int out_w, const float* in, float* out);
void adaptive_avgpool2d_backward(int in_h, int in_w, int c, int out_h, int out_w, const float* dout,
                                 float* din);  // overwrites din

// ---- Dense (dense.cpp): out[o] = b[o] + sum_i w[o][i] * in[i], summed in float in input order ----
void dense_forward(int in_n, int out_n, const float* in, const float* w, const float* b, float* out);
void dense_backward_data(int in_n, int out_n, const float* w, const float* dout, float* din);
void dense_backward_params(int in_n, int out_n, const float* in, const float* dout, float* dw, float* db);

// ---- Activations, in place (activations.cpp) ----
void relu_forward(float* x, size_t n);
void relu_backward(const float* y, float* dy, size_t n);                     // dy *= (y > 0)
void leaky_relu_forward(float* x, size_t n, float alpha);                    // x = x > 0 ? x : alpha * x
void leaky_relu_backward(const float* y, float* dy, size_t n, float alpha);  // dy *= y > 0 ? 1 : alpha
// A layer and the ReLU beside it, the same bits as the two one by one (the fast kernels apply the
// ReLU while the layer's output is still in the cache; the reference runs them one after the other).
// Forward: the layer, then relu_forward(out). Backward: the layer's backward_data, then
// relu_backward(y, din) for the ReLU before it (y: its output, the layer's input; `in` for max-pool).
void conv2d_forward_relu(const Geom2D& g, const float* in, const float* w, const float* b, float* out);
void depthwise_conv2d_forward_relu(const Geom2D& g, const float* in, const float* w, const float* b, float* out);
void conv2d_backward_data_relu(const Geom2D& g, const float* w, const float* dout, float* din, const float* y);
void depthwise_conv2d_backward_data_relu(const Geom2D& g, const float* w, const float* dout, float* din,
                                         const float* y);
void maxpool2d_backward_relu(const Geom2D& g, const float* in, const float* dout, float* din);
// Clamp to [lo, hi]; its gradient passes straight through (as the reference firmware does), so it
// has no backward.
void clip_forward(float* x, size_t n, float lo, float hi);

// ---- Softmax and losses (losses.cpp) ----
// Numerically stable softmax (subtracts the max).
void softmax(const float* logits, int n, float* probs);
// Cross-entropy of softmax(logits) against `label`; writes probs and dlogits = probs - onehot(label);
// returns -log(max(probs[label], 1e-30)).
float softmax_cross_entropy(const float* logits, int n, int label, float* probs, float* dlogits);
// Mean squared error L = (1/n) * sum (out - target)^2; writes dout = (2/n) * (out - target).
float mse_loss(const float* out, const float* target, int n, float* dout);

}  // namespace tv
