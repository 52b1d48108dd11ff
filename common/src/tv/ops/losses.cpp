// Softmax, softmax cross-entropy and mean squared error.
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

float softmax_cross_entropy(const float* logits, int n, int label, float* probs, float* dlogits) {
  softmax(logits, n, probs);
  const float p = probs[label] > 1e-30f ? probs[label] : 1e-30f;
  const float loss = -math::log(p);
  for (int i = 0; i < n; ++i) dlogits[i] = probs[i] - (i == label ? 1.0f : 0.0f);
  return loss;
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

}  // namespace tv
