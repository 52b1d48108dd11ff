// Dense, fast variant. The forward keeps the reference's sums exactly (each output's products added
// one after another in float) but runs four outputs side by side, so four independent add chains
// share each load of the input. The backward passes are element-wise over the
// input, eight elements at a time. Same bits as dense.cpp.
#include "tv/ops/kernel_variants.h"
#include "tv/ops/simd.h"

namespace tv {
namespace fast {

TV_TARGET_CLONES void dense_forward(int in_n, int out_n, const float* in, const float* w, const float* b, float* out) {
  int o = 0;
  for (; o + 4 <= out_n; o += 4) {
    const float* w0 = w + (size_t)o * in_n;
    const float* w1 = w0 + in_n;
    const float* w2 = w1 + in_n;
    const float* w3 = w2 + in_n;
    float acc0 = b[o], acc1 = b[o + 1], acc2 = b[o + 2], acc3 = b[o + 3];
    for (int i = 0; i < in_n; ++i) {
      const float x = in[i];
      acc0 += w0[i] * x;
      acc1 += w1[i] * x;
      acc2 += w2[i] * x;
      acc3 += w3[i] * x;
    }
    out[o] = acc0;
    out[o + 1] = acc1;
    out[o + 2] = acc2;
    out[o + 3] = acc3;
  }
  const int rest = out_n - o;  // 0..3 outputs left: the same loop with fewer chains
  if (rest == 3) {
    const float* w0 = w + (size_t)o * in_n;
    const float* w1 = w0 + in_n;
    const float* w2 = w1 + in_n;
    float acc0 = b[o], acc1 = b[o + 1], acc2 = b[o + 2];
    for (int i = 0; i < in_n; ++i) {
      const float x = in[i];
      acc0 += w0[i] * x;
      acc1 += w1[i] * x;
      acc2 += w2[i] * x;
    }
    out[o] = acc0;
    out[o + 1] = acc1;
    out[o + 2] = acc2;
  } else if (rest == 2) {
    const float* w0 = w + (size_t)o * in_n;
    const float* w1 = w0 + in_n;
    float acc0 = b[o], acc1 = b[o + 1];
    for (int i = 0; i < in_n; ++i) {
      const float x = in[i];
      acc0 += w0[i] * x;
      acc1 += w1[i] * x;
    }
    out[o] = acc0;
    out[o + 1] = acc1;
  } else if (rest == 1) {
    ref::dense_forward(in_n, 1, in, w + (size_t)o * in_n, b + o, out + o);
  }
}

TV_TARGET_CLONES void dense_backward_data(int in_n, int out_n, const float* w, const float* dout, float* din) {
  // din[i] = 0 + dout[0] * w[0][i] + dout[1] * w[1][i] + ... in this order, as the reference sums it.
  int i = 0;
  for (; i + 8 <= in_n; i += 8) {
    f8 acc = splat8(0.0f);
    for (int o = 0; o < out_n; ++o) acc += splat8(dout[o]) * load8(w + (size_t)o * in_n + i);
    store8(din + i, acc);
  }
  for (; i < in_n; ++i) {
    float acc = 0.0f;
    for (int o = 0; o < out_n; ++o) acc += dout[o] * w[(size_t)o * in_n + i];
    din[i] = acc;
  }
}

TV_TARGET_CLONES void dense_backward_params(int in_n, int out_n, const float* in, const float* dout, float* dw,
                                            float* db) {
  for (int o = 0; o < out_n; ++o) {
    const float d = dout[o];
    db[o] += d;
    float* dw_row = dw + (size_t)o * in_n;
    const f8 dv = splat8(d);
    int i = 0;
    for (; i + 8 <= in_n; i += 8) store8(dw_row + i, load8(dw_row + i) + dv * load8(in + i));
    for (; i < in_n; ++i) dw_row[i] += d * in[i];
  }
}

}  // namespace fast
}  // namespace tv
