// Worst-case accumulator magnitude per layer against the ESP32-S3's 20-bit MAC lanes.
#include "tv/int8/int8_ops.h"

namespace tv {
namespace {

int64_t abs64(int64_t v) {
  return v < 0 ? -v : v;
}

void consider(AccHeadroom& h, int64_t worst, int output) {
  if (h.worst_output < 0 || worst > h.worst) {
    h.worst = worst;
    h.worst_output = output;
  }
}

}  // namespace

int headroom_bits_s8(int64_t worst) {
  int bits = 0;
  for (int64_t v = worst < 0 ? -worst : worst; v > 0; v >>= 1) ++bits;
  return 19 - bits;
}

namespace {

// The worst accumulator of out_n outputs of fan_in taps each: weight (o, i) at w[o * o_step + i * i_step].
AccHeadroom headroom_of(int out_n, int fan_in, const int8_t* w, size_t o_step, size_t i_step, const int32_t* bias) {
  AccHeadroom h;
  for (int o = 0; o < out_n; ++o) {
    int64_t sum = 0;
    for (int i = 0; i < fan_in; ++i) sum += abs64(w[(size_t)o * o_step + (size_t)i * i_step]);
    consider(h, sum * 128 + (bias ? abs64(bias[o]) : 0), o);
  }
  h.headroom_bits = headroom_bits_s8(h.worst);
  return h;
}

}  // namespace

AccHeadroom acc_headroom_s8(int out_n, int fan_in, const int8_t* w, const int32_t* bias) {
  return headroom_of(out_n, fan_in, w, (size_t)fan_in, 1, bias);
}

AccHeadroom acc_headroom_depthwise_s8(int taps, int c, const int8_t* w, const int32_t* bias) {
  return headroom_of(c, taps, w, 1, (size_t)c, bias);
}

}  // namespace tv
