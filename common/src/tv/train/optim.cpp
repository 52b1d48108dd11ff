#include "tv/train/optim.h"

#include <math.h>

#include "tv/float_math.h"

namespace tv {

static inline float clamp_weight(float w, float c) {
  return w > c ? c : (w < -c ? -c : w);
}

void adam_step(float* params, const float* grad, float* m, float* v, size_t n, float lr, float beta1, float beta2,
               float eps, uint32_t t, float weight_decay, float weight_clip) {
  const float bc1 = 1.0f - math::powi(beta1, t);
  const float bc2 = 1.0f - math::powi(beta2, t);
  const float alpha = lr * sqrtf(bc2) / bc1;
  const float decay = lr * weight_decay;
  const float one_b1 = 1.0f - beta1, one_b2 = 1.0f - beta2;
  for (size_t i = 0; i < n; ++i) {
    float g = grad[i];
    float mi = beta1 * m[i] + one_b1 * g;
    float vi = beta2 * v[i] + one_b2 * (g * g);
    m[i] = mi;
    v[i] = vi;
    float p = params[i] - alpha * mi / (sqrtf(vi) + eps);
    if (decay != 0.f) p -= decay * params[i];
    if (weight_clip > 0.f) p = clamp_weight(p, weight_clip);
    params[i] = p;
  }
}

void sgd_step(float* params, const float* grad, float* vel, size_t n, float lr, float momentum, float weight_decay,
              float weight_clip) {
  const float decay = lr * weight_decay;
  for (size_t i = 0; i < n; ++i) {
    float vi = momentum * vel[i] + grad[i];
    vel[i] = vi;
    float p = params[i] - lr * vi;
    if (decay != 0.f) p -= decay * params[i];
    if (weight_clip > 0.f) p = clamp_weight(p, weight_clip);
    params[i] = p;
  }
}

float grad_norm(const float* grad, size_t n) {
  float s = 0.0f;
  for (size_t i = 0; i < n; ++i) s += grad[i] * grad[i];
  if (s <= 3.0e38f) return sqrtf(s);
  // The squares overflowed float (or a gradient is not finite): sum (g / max|g|)^2 instead.
  float big = 0.0f;
  for (size_t i = 0; i < n; ++i) {
    const float a = grad[i] < 0.0f ? -grad[i] : grad[i];
    if (!(a <= big)) big = a;  // a NaN makes big NaN and stays
  }
  if (!(big <= 3.4e38f)) return big;  // inf or NaN: not finite
  s = 0.0f;
  for (size_t i = 0; i < n; ++i) {
    const float r = grad[i] / big;
    s += r * r;
  }
  return big * sqrtf(s);
}

void scale_buffer(float* x, size_t n, float s) {
  for (size_t i = 0; i < n; ++i) x[i] *= s;
}

}  // namespace tv
