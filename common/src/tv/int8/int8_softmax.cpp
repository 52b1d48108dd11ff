// Softmax of int8 logits to float probabilities.
#include <math.h>

#include "tv/float_math.h"
#include "tv/int8/int8_ops.h"

namespace tv {

void softmax_s8(const int8_t* q, int n, int e, float* probs) {
  if (n <= 0) return;
  int q_max = q[0];
  for (int i = 1; i < n; ++i) q_max = q[i] > q_max ? q[i] : q_max;
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) {
    probs[i] = math::exp(ldexpf((float)(q[i] - q_max), e));  // q[i] - q_max in [-255, 0]: exact
    sum += probs[i];
  }
  for (int i = 0; i < n; ++i) probs[i] /= sum;
}

}  // namespace tv
