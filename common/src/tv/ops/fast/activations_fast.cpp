// Activations, fast variant: eight elements at a time with vector selects instead of the
// reference's data-dependent branches (about half of all activations are negative, so those
// branches mispredict). Same expressions, same bits as activations.cpp.
#include "tv/ops/kernel_variants.h"
#include "tv/ops/simd.h"

namespace tv {
namespace fast {

TV_TARGET_CLONES void relu_forward(float* x, size_t n) {
  const f8 zero = splat8(0.0f);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const f8 v = load8(x + i);
    store8(x + i, v > zero ? v : zero);
  }
  for (; i < n; ++i) x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

TV_TARGET_CLONES void relu_backward(const float* y, float* dy, size_t n) {
  const f8 zero = splat8(0.0f);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) store8(dy + i, load8(y + i) > zero ? load8(dy + i) : zero);
  for (; i < n; ++i) dy[i] = y[i] > 0.0f ? dy[i] : 0.0f;
}

TV_TARGET_CLONES void leaky_relu_forward(float* x, size_t n, float alpha) {
  const f8 zero = splat8(0.0f), a = splat8(alpha);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const f8 v = load8(x + i);
    store8(x + i, v > zero ? v : a * v);
  }
  for (; i < n; ++i) x[i] = x[i] > 0.0f ? x[i] : alpha * x[i];
}

TV_TARGET_CLONES void leaky_relu_backward(const float* y, float* dy, size_t n, float alpha) {
  const f8 zero = splat8(0.0f), a = splat8(alpha);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const f8 d = load8(dy + i);
    store8(dy + i, load8(y + i) > zero ? d : a * d);
  }
  for (; i < n; ++i) dy[i] = y[i] > 0.0f ? dy[i] : alpha * dy[i];
}

TV_TARGET_CLONES void clip_forward(float* x, size_t n, float lo, float hi) {
  const f8 l = splat8(lo), h = splat8(hi);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const f8 v = load8(x + i);
    store8(x + i, v < l ? l : (v > h ? h : v));
  }
  for (; i < n; ++i) x[i] = x[i] < lo ? lo : (x[i] > hi ? hi : x[i]);
}

}  // namespace fast
}  // namespace tv
