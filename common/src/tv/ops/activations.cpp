// In-place activations; backward passes read the stored output y.
#include "tv/ops/kernel_variants.h"

namespace tv {
namespace ref {

void relu_forward(float* x, size_t n) {
  for (size_t i = 0; i < n; ++i) x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

void relu_backward(const float* y, float* dy, size_t n) {
  for (size_t i = 0; i < n; ++i) dy[i] = y[i] > 0.0f ? dy[i] : 0.0f;
}

void leaky_relu_forward(float* x, size_t n, float alpha) {
  for (size_t i = 0; i < n; ++i) x[i] = x[i] > 0.0f ? x[i] : alpha * x[i];
}

void leaky_relu_backward(const float* y, float* dy, size_t n, float alpha) {
  for (size_t i = 0; i < n; ++i) dy[i] = y[i] > 0.0f ? dy[i] : alpha * dy[i];
}

void clip_forward(float* x, size_t n, float lo, float hi) {
  for (size_t i = 0; i < n; ++i) x[i] = x[i] < lo ? lo : (x[i] > hi ? hi : x[i]);
}

}  // namespace ref
}  // namespace tv
