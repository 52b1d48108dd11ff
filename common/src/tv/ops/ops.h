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

// ---- Conv2D, DepthwiseConv2D, MaxPool2D, AvgPool2D, AdaptiveAvgPool2D, Dense, activations ----
// The kernels with a reference and a fast variant, declared from their one list (with each one's
// contract): tv/ops/variant_kernels.h.
#define TV_VARIANT_KERNEL(name, params, args) void name params;
#include "tv/ops/variant_kernels.h"
#undef TV_VARIANT_KERNEL

// ---- Softmax and losses (losses.cpp) ----
// Numerically stable softmax (subtracts the max).
void softmax(const float* logits, int n, float* probs);
// softmax over each of `cells` rows of n logits (a detector's grid, tv/detect/grid.h); probs may alias logits.
void grid_softmax(const float* logits, int cells, int n, float* probs);
// Cross-entropy of softmax(logits) against `label`; writes probs and dlogits = probs - onehot(label);
// returns -log(max(probs[label], 1e-30)).
float softmax_cross_entropy(const float* logits, int n, int label, float* probs, float* dlogits);
// Knowledge distillation (Hinton et al. 2015): L = weight * T^2 * KL(target || softmax(logits[0..n) / T)),
// target: a teacher's probabilities at temperature T (summing to 1). ADDS its gradient weight * T * (q - target),
// q = softmax(logits / T), to dlogits[0..n) (on top of the sample's own loss) and returns L. No buffer.
float distillation_loss(const float* logits, int n, const float* target, float temperature, float weight,
                        float* dlogits);
// Mean squared error L = (1/n) * sum (out - target)^2; writes dout = (2/n) * (out - target).
float mse_loss(const float* out, const float* target, int n, float* dout);
// Detection's loss (FOMO's): per-cell softmax cross-entropy over a grid of `cells` cells of n logits each
// (HWC: cell c's logits at c * n; channel 0 is background, 1..n-1 the object classes), target[c] the
// cell's class (0 = background). An object cell weighs object_weight, a background cell 1:
// L = (1 / cells) * sum_c w_c * -ln(max(p_c[target_c], 1e-30)); writes every cell's probabilities to
// probs and dlogits = (w_c / cells) * (p_c - onehot(target_c)). probs may alias logits; a target of n or
// more counts as background (never read past the row), and so does every cell when target is null.
float grid_cross_entropy(const float* logits, int cells, int n, const uint8_t* target, float object_weight,
                         float* probs, float* dlogits);

}  // namespace tv
