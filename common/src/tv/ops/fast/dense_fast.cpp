// Dense, fast variant. The forward keeps the reference's sums exactly (each output's products added
// one after another in float) but runs four outputs side by side, so four independent add chains
// share each load of the input. The backward passes are element-wise over the
// input, eight elements at a time. Same bits as dense.cpp.
#include "tv/ops/kernel_variants.h"
#include "tv/ops/simd.h"

namespace tv {
namespace fast {

namespace {

// N outputs side by side from w's rows o..o+N-1: N independent add chains, each in the reference's
// order (bias, then every product in input order). Inlined into each clone of dense_forward.
template <int N>
TV_INLINE void dense_rows(int in_n, const float* in, const float* w, const float* b, float* out) {
  float acc[N];
  for (int k = 0; k < N; ++k) acc[k] = b[k];
  for (int i = 0; i < in_n; ++i) {
    const float x = in[i];
    for (int k = 0; k < N; ++k) acc[k] += w[(size_t)k * in_n + i] * x;
  }
  for (int k = 0; k < N; ++k) out[k] = acc[k];
}

}  // namespace

TV_TARGET_CLONES void dense_forward(int in_n, int out_n, const float* in, const float* w, const float* b, float* out) {
  int o = 0;
  for (; o + 4 <= out_n; o += 4) dense_rows<4>(in_n, in, w + (size_t)o * in_n, b + o, out + o);
  switch (out_n - o) {  // 0..3 outputs left: the same loop with fewer chains
    case 3: dense_rows<3>(in_n, in, w + (size_t)o * in_n, b + o, out + o); break;
    case 2: dense_rows<2>(in_n, in, w + (size_t)o * in_n, b + o, out + o); break;
    case 1: dense_rows<1>(in_n, in, w + (size_t)o * in_n, b + o, out + o); break;
    default: break;
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
