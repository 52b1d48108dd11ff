#include "tv/optim.h"

#include <math.h>

namespace tv {

static inline float clamp_weight(float w, float c) {
  return w > c ? c : (w < -c ? -c : w);
}

void adam_step(float* params, const float* grad, float* m, float* v, size_t n, float lr, float beta1, float beta2,
               float eps, uint32_t t, float weight_decay, float weight_clip) {
  const double bc1 = 1.0 - pow((double)beta1, (double)t);
  const double bc2 = 1.0 - pow((double)beta2, (double)t);
  const float alpha = (float)((double)lr * sqrt(bc2) / bc1);
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

double grad_norm(const float* grad, size_t n) {
  double s = 0.0;
  for (size_t i = 0; i < n; ++i) s += (double)grad[i] * (double)grad[i];
  return sqrt(s);
}

void scale_buffer(float* x, size_t n, float s) {
  for (size_t i = 0; i < n; ++i) x[i] *= s;
}

}  // namespace tv
