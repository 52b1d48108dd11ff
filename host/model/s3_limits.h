// The ESP32-S3's int8 limits in one place: what tvquant respects when it chooses exponents and what
// the .espdl exporter checks before it writes a model (docs/espdl-numerics.md explains them).
// - Biases are 20-bit on the S3: q_b in [kS3BiasMin, kS3BiasMax].
// - Accumulator lanes are 20-bit: every running sum of a conv / depthwise / dense output must stay
//   within tv::kS3AccLimit (tv/int8/int8_ops.h) for the board to compute what our engine computes.
// - Whether a sum can leave the lanes depends on the int8 values its input can hold for ANY image:
//   the reachable interval, propagated layer by layer from the input pixels 0..255.
#pragma once
#include <stdint.h>

#include "tv/model/model.h"

namespace tvh {

constexpr int64_t kS3BiasMin = -(int64_t(1) << 19), kS3BiasMax = (int64_t(1) << 19) - 1;

// The int8 values a tensor can hold on any input image, as an interval of integers.
struct Int8Interval {
  int64_t lo = -128, hi = 127;
};

// The input tensor's interval: pixels 0..255 normalized (pixel * scale + offset) and quantized at e0.
Int8Interval input_interval(const tv::InputDesc& in, int e0);

// The output interval of a layer without parameters whose input holds `in` (e_in, e_out: its int8
// exponents). Throws tvh::Error for a layer with parameters (their interval needs the weights:
// filter_sums below).
Int8Interval parameterless_interval(const tv::LayerDesc& d, int e_in, int e_out, const Int8Interval& in);

// One output's running sums over the taps of a filter, for any input in `in` and any order of the
// taps: with 0 inside the input interval (padding, skipped taps) every partial sum lies in
// [min(b, 0) + sum_t min(w_t lo, w_t hi), max(b, 0) + sum_t max(w_t lo, w_t hi)].
struct FilterSums {
  int64_t bound = 0;   // the largest |partial sum|
  int64_t end_lo = 0;  // the smallest and largest complete sum (bias included): the output range
  int64_t end_hi = 0;  // before requantization
};
// `w(t)` gives tap t's int8 weight, b the int32 bias.
template <typename WeightAt>
FilterSums filter_sums(int64_t b, int taps, WeightAt w, const Int8Interval& in) {
  const int64_t x_lo = in.lo < 0 ? in.lo : 0, x_hi = in.hi > 0 ? in.hi : 0;
  int64_t neg = 0, pos = 0;
  for (int t = 0; t < taps; ++t) {
    const int64_t q = w(t), a = q * x_lo, z = q * x_hi;
    neg += a < z ? a : z;
    pos += a < z ? z : a;
  }
  FilterSums s;
  const int64_t lo = (b < 0 ? b : 0) + neg, hi = (b > 0 ? b : 0) + pos;
  s.bound = hi > -lo ? hi : -lo;
  s.end_lo = b + neg;
  s.end_hi = b + pos;
  return s;
}

}  // namespace tvh
