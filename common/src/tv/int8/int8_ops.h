// Int8 inference kernels of the TinyVision core: power-of-two quantisation as ESP-DL (v3) runs it on
// the ESP32-S3, reproduced bit for bit on any CPU.
//
// The numeric contract (docs/espdl-numerics.md; facts checked against esp-dl and
// esp-ppq sources and against Espressif's golden .espdl test vectors):
// - real = q * 2^e, q int8 in [-128, 127], one exponent per tensor, no zero point.
// - Conv / depthwise conv / dense: acc = sum(q_x * q_w) + q_b, the bias int32 at exponent e_in + e_w;
//   shift s = e_out - e_in - e_w must be >= 0; out = sat8((acc + 2^(s-1)) >> s) (round half up, an
//   arithmetic shift so negative values round towards +inf at exact halves); s == 0: out = sat8(acc);
//   then ReLU when fused. ESP-DL's own C conv does exactly this ((v + half) >> shift in
//   esp-dl/dl/base/isa/c/dl_c_conv_common.hpp); the golden vectors agree but do not pin the tie rule
//   down (their few exact ties are masked by ReLU or sliced away), so device tests remain the proof.
// - Every other op that produces a new exponent rounds the EXACT real result half up,
//   q = floor(v * 2^-e_out + 1/2), and saturates. This is what esp-ppq computes when it writes the
//   test vectors that the device's Model::test() compares with (see avgpool2d_s8 for where the
//   S3 assembly differs).
//
// Layouts are those of the float kernels (tv/ops/ops.h): HWC activations, conv weights
// [out_c][k_h][k_w][in_c], depthwise weights [k_h][k_w][c], dense weights [out][in]; the same
// tv::Geom2D describes a window op in both worlds.
//
// Plain loops over caller-owned buffers: no allocation, no I/O, no exceptions. A kernel that can be
// handed an impossible parameter returns tv::Status; the others cannot fail.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "tv/ops/ops.h"
#include "tv/status.h"

namespace tv {

// ---- Scalar helpers (inline: every kernel uses them) ----

// Clamps to the int8 range [-128, 127].
inline int8_t sat8(int64_t v) {
  return (int8_t)(v < -128 ? -128 : (v > 127 ? 127 : v));
}

// v / 2^s rounded half up (towards +inf at an exact half) for s >= 0; s == 0 returns v.
inline int64_t shift_round_half_up(int64_t v, int s) {
  if (s <= 0) return v;
  if (s > 62) s = 62;  // |v| < 2^61 for every caller here: the result is 0 either way
  return (v + ((int64_t)1 << (s - 1))) >> s;
}

// The requantisation step of conv/dense: sat8((acc + 2^(s-1)) >> s), s >= 0.
inline int8_t requantize_s8(int64_t acc, int s) {
  return sat8(shift_round_half_up(acc, s));
}

// floor(num / den) for den > 0.
inline int64_t floor_div(int64_t num, int64_t den) {
  int64_t q = num / den;
  if ((num % den) != 0 && num < 0) --q;
  return q;
}

// Exponents of one quantised conv / dense layer and whether ReLU is fused into it.
struct Q8Layer {
  int e_in = 0;   // exponent of the input activations
  int e_w = 0;    // exponent of the weights (the bias sits at e_in + e_w)
  int e_out = 0;  // exponent of the output activations
  bool relu = false;
  // e_out - e_in - e_w, computed without overflow and clamped to [-1024, 1024].
  int shift() const {
    const long long s = (long long)e_out - e_in - e_w;
    return (int)(s < -1024 ? -1024 : (s > 1024 ? 1024 : s));
  }
};

// ---- Limits of the kernels (q8_bind refuses a model that exceeds them) ----
// The largest filter (taps * channels summed into one int32 accumulator) conv2d_s8 and dense_s8
// accept: 2^17 products of at most 2^14 each stay below 2^31.
constexpr long kInt8MaxFanIn = 1L << 17;
// The largest window (cells averaged) avgpool2d_s8 and global_avgpool_s8 accept: keeps
// 2 * area * 2^40 inside int64.
constexpr int64_t kInt8MaxPoolArea = (int64_t)1 << 20;

// ---- Quantise / dequantise (int8_quantize.cpp) ----

// q = clamp(floor(x * 2^-e + 0.5), -128, 127), computed exactly in float (the floor, then the
// fraction compared with 1/2; never y + 0.5 rounded). NaN maps to 0, +-inf saturate.
int8_t quantize_one_s8(float x, int e);
void quantize_s8(const float* x, size_t n, int e, int8_t* q);
// x = q * 2^e (exact in float).
float dequantize_one_s8(int8_t q, int e);
void dequantize_s8(const int8_t* q, size_t n, int e, float* x);

// ---- Conv2D (int8_conv2d.cpp) ----
// out[oy][ox][o] = requantize(b[o] + sum_{ky,kx,i} in[iy][ix][i] * w[o][ky][kx][i]); taps outside the
// input read zero. `bias` may be null (no bias). BadParameter (a = shift) when the shift is negative;
// InvalidArgument on a null buffer, a non-positive size or stride, or a filter of more than 2^17 taps
// (the int32 accumulator's limit).
Status conv2d_s8(const Geom2D& g, const int8_t* in, const int8_t* w, const int32_t* bias, const Q8Layer& q,
                 int8_t* out);

// ---- DepthwiseConv2D, channel multiplier 1 (int8_depthwise_conv2d.cpp) ----
// out[oy][ox][c] = requantize(b[c] + sum_{ky,kx} in[iy][ix][c] * w[ky][kx][c]); g.out_c == g.in_c.
Status depthwise_conv2d_s8(const Geom2D& g, const int8_t* in, const int8_t* w, const int32_t* bias, const Q8Layer& q,
                           int8_t* out);

// ---- Dense / Gemm (int8_dense.cpp) ----
// out[o] = requantize(b[o] + sum_i w[o][i] * in[i]).
Status dense_s8(int in_n, int out_n, const int8_t* in, const int8_t* w, const int32_t* bias, const Q8Layer& q,
                int8_t* out);

// ---- Pooling (int8_pool.cpp); out_c == in_c ----
// Max over the window's cells inside the input; the exponent is unchanged (e_out = e_in). A window
// lying wholly in the padding gives 0, as the float kernel does.
Status maxpool2d_s8(const Geom2D& g, const int8_t* in, int8_t* out);
// out = sat8(round_half_up(sum * 2^e_in / (k_h * k_w) * 2^-e_out)), in exact integer arithmetic.
// The divisor is the FULL window area (padded cells count as zeros, ONNX count_include_pad = 1), as
// in esp-ppq's simulation and in ESP-DL's C reference avgpool2d_hwc1 (dl_base_avg_pool2d.cpp, which
// divides by args.avg_pool_area = k_h*k_w and rounds half to EVEN in float). The S3 assembly
// (dl_tie728_s8_avg_pool2d.S via avg_pool_shell in dl_base_pool2d.hpp) instead multiplies the sum by
// floor(2^n / area) with n from tool::calculate_exponent(area, 64) and shifts with rounding, and uses
// the valid-cell area at the borders: identical to this rule for power-of-two areas away from the
// borders, an approximation otherwise (area 3: 42/128 instead of 1/3). Espressif's golden vectors
// follow this rule, not the S3 approximation (tests/host/espdl/golden_test.cpp).
Status avgpool2d_s8(const Geom2D& g, const int8_t* in, int e_in, int e_out, int8_t* out);
// GlobalAveragePool: the same rule with the window = the whole h x w plane; out has c values.
Status global_avgpool_s8(int h, int w, int c, const int8_t* in, int e_in, int e_out, int8_t* out);

// ---- Lookup tables and activations (int8_lut.cpp) ----
// out[i] = table[in[i] + 128]: ESP-DL's int8 LUT op (Sigmoid, LeakyRelu, ... exported by esp-ppq as
// a 256-entry table indexed from q = -128). In place is allowed (out == in).
void lut_s8(const int8_t* table, const int8_t* in, size_t n, int8_t* out);
// The LeakyReLU table as esp-ppq builds it (AddLUTPattern.calculate_lut): for every q in
// [-128, 127], x = q * 2^e_in, y = x > 0 ? x : alpha * x with the product rounded to float32 as torch
// does, table[q + 128] = quantize_one_s8(y, e_out). alpha is the float32 the model stores.
void leaky_relu_table_s8(float alpha, int e_in, int e_out, int8_t table[256]);
// The Sigmoid table built the same way from 1 / (1 + exp(-x)) in float32.
void sigmoid_table_s8(int e_in, int e_out, int8_t table[256]);
// ReLU in place; the exponent is unchanged.
void relu_s8(int8_t* x, size_t n);

// ---- Elementwise (int8_elementwise.cpp); round half up of the exact result, saturated ----
// out = q * 2^(e_in - e_out) requantised (a plain copy when e_in == e_out). In place allowed.
void rescale_s8(const int8_t* in, size_t n, int e_in, int e_out, int8_t* out);
// out = a * 2^e_a + b * 2^e_b requantised to e_out. In place allowed.
void add_s8(const int8_t* a, int e_a, const int8_t* b, int e_b, size_t n, int e_out, int8_t* out);
// out = (a * 2^e_a) * (b * 2^e_b) requantised to e_out. In place allowed.
void mul_s8(const int8_t* a, int e_a, const int8_t* b, int e_b, size_t n, int e_out, int8_t* out);

// ---- Softmax (int8_softmax.cpp): int8 logits at exponent e -> float probabilities ----
// probs[i] = exp((q_i - q_max) * 2^e) / sum_j exp((q_j - q_max) * 2^e), in float with tv::math::exp.
void softmax_s8(const int8_t* q, int n, int e, float* probs);

// ---- Accumulator headroom on the ESP32-S3 (int8_headroom.cpp) ----
// The S3 vector MAC keeps 20-bit signed lanes: a host int32 result matches the device only while
// every output's worst case sum_i |q_w[i]| * 128 + |q_b| stays <= 2^19 - 1 (inputs span [-128, 127]).
constexpr int64_t kS3AccLimit = (1 << 19) - 1;

struct AccHeadroom {
  int64_t worst = 0;       // the largest worst-case |acc| over the layer's outputs
  int worst_output = -1;   // which output channel reaches it (-1 for a layer without outputs)
  int headroom_bits = 19;  // 19 - bit_length(worst): >= 0 exactly when worst <= 2^19 - 1
  bool fits() const { return headroom_bits >= 0; }
};

// Filters stored as rows of `fan_in` weights, one row per output: conv [out_c][k_h*k_w*in_c] and
// dense [out][in]. `bias` may be null.
AccHeadroom acc_headroom_s8(int out_n, int fan_in, const int8_t* w, const int32_t* bias);
// Depthwise weights [taps][c] (taps = k_h * k_w): channel c's filter is strided by c.
AccHeadroom acc_headroom_depthwise_s8(int taps, int c, const int8_t* w, const int32_t* bias);
// 19 - bit_length(worst), the headroom rule above, for a worst-case magnitude computed elsewhere.
int headroom_bits_s8(int64_t worst);

}  // namespace tv
