// Softmax of int8 logits to float probabilities.
#include <math.h>

#include "tv/int8/int8_ops.h"

namespace tv {

void softmax_s8(const int8_t* q, int n, int e, float* probs) {
  if (n <= 0) return;
  int q_max = q[0];
  for (int i = 1; i < n; ++i) q_max = q[i] > q_max ? q[i] : q_max;
  double sum = 0.0;
  for (int i = 0; i < n; ++i) sum += exp(ldexp((double)(q[i] - q_max), e));
  for (int i = 0; i < n; ++i) probs[i] = (float)(exp(ldexp((double)(q[i] - q_max), e)) / sum);
}

}  // namespace tv
