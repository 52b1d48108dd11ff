// Softmax, softmax cross-entropy, mean squared error, distillation and detection's per-cell cross-entropy.
#include "tv/float_math.h"
#include "tv/ops/ops.h"

namespace tv {

void softmax(const float* logits, int n, float* probs) {
  float max_logit = logits[0];
  for (int i = 1; i < n; ++i) max_logit = logits[i] > max_logit ? logits[i] : max_logit;
  // Element-wise, so probs may alias logits.
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) {
    probs[i] = math::exp(logits[i] - max_logit);
    sum += probs[i];
  }
  for (int i = 0; i < n; ++i) probs[i] /= sum;
}

void grid_softmax(const float* logits, int cells, int n, float* probs) {
  for (int c = 0; c < cells; ++c) softmax(logits + (size_t)c * (size_t)n, n, probs + (size_t)c * (size_t)n);
}

float softmax_cross_entropy(const float* logits, int n, int label, float* probs, float* dlogits) {
  softmax(logits, n, probs);
  const float p = probs[label] > 1e-30f ? probs[label] : 1e-30f;
  const float loss = -math::log(p);
  for (int i = 0; i < n; ++i) dlogits[i] = probs[i] - (i == label ? 1.0f : 0.0f);
  return loss;
}

float distillation_loss(const float* logits, int n, const float* target, float temperature, float weight,
                        float* dlogits) {
  // q = softmax(logits / T) without a buffer: log q_i = (z_i - max) / T - log(sum_j exp((z_j - max) / T)).
  float max_logit = logits[0];
  for (int i = 1; i < n; ++i) max_logit = logits[i] > max_logit ? logits[i] : max_logit;
  const float inv_t = 1.0f / temperature;
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) sum += math::exp((logits[i] - max_logit) * inv_t);
  const float log_sum = math::log(sum);
  float kl = 0.0f;
  const float grad_scale = weight * temperature;  // d/dz_i of T^2 * KL is T * (q_i - target_i)
  for (int i = 0; i < n; ++i) {
    const float log_q = (logits[i] - max_logit) * inv_t - log_sum;
    dlogits[i] += grad_scale * (math::exp(log_q) - target[i]);
    if (target[i] > 0.0f) kl += target[i] * (math::log(target[i]) - log_q);
  }
  return weight * temperature * temperature * kl;
}

float mse_loss(const float* out, const float* target, int n, float* dout) {
  float sum = 0.0f;
  const float scale = 2.0f / (float)n;
  for (int i = 0; i < n; ++i) {
    const float diff = out[i] - target[i];
    sum += diff * diff;
    dout[i] = scale * diff;
  }
  return sum / (float)n;
}

float grid_cross_entropy(const float* logits, int cells, int n, const uint8_t* target, float object_weight,
                         float* probs, float* dlogits) {
  if (cells <= 0 || n <= 0) return 0.0f;
  const float inv_cells = 1.0f / (float)cells;
  float sum = 0.0f;
  for (int c = 0; c < cells; ++c) {
    const size_t at = (size_t)c * (size_t)n;
    const int label = target && target[c] < n ? target[c] : 0;
    const float w = label > 0 ? object_weight : 1.0f;
    sum += w * softmax_cross_entropy(logits + at, n, label, probs + at, dlogits + at);
    const float scale = w * inv_cells;
    for (int k = 0; k < n; ++k) dlogits[at + (size_t)k] *= scale;
  }
  return sum * inv_cells;
}

}  // namespace tv
