// Optimizer steps and gradient guards (plain loops over caller buffers).
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "tv/build_config.h"

namespace tv {

// Adam with bias correction folded into the step size, as the reference firmware:
// alpha_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t); p -= alpha_t * m / (sqrt(v) + eps).
// t is the 1-based step. Then optional decoupled weight decay and clipping to +-weight_clip.
void adam_step(float* params, const float* grad, float* m, float* v, size_t n, float lr, float beta1, float beta2,
               float eps, uint32_t t, float weight_decay, float weight_clip);
// SGD with momentum: vel = momentum * vel + grad; p -= lr * vel; then weight decay and clip.
void sgd_step(float* params, const float* grad, float* vel, size_t n, float lr, float momentum, float weight_decay,
              float weight_clip);
// L2 norm of a gradient in float (rescaled when the squares overflow); NaN or Inf when any element is not finite.
float grad_norm(const float* grad, size_t n);
// Scales grad by s.
void scale_buffer(float* x, size_t n, float s);

}  // namespace tv
