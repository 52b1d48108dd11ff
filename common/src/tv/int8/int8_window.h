// Internal helpers of the int8 window kernels (conv, depthwise conv, pooling): geometry checks and
// the range of kernel taps that land inside the input.
#pragma once
#include "tv/int8/int8_ops.h"
#include "tv/ops/ops.h"
#include "tv/ops/window.h"
#include "tv/status.h"

namespace tv {
namespace int8_detail {

// The tap range helper is shared with the float kernels.
using tv::TapRange;
using tv::valid_taps;

// Ok when every size and stride is positive and the pads are not negative.
inline Status check_geom(const Geom2D& g) {
  if (g.in_h <= 0 || g.in_w <= 0 || g.in_c <= 0 || g.out_h <= 0 || g.out_w <= 0 || g.out_c <= 0 || g.k_h <= 0 ||
      g.k_w <= 0)
    return status_plain(StatusCode::ZeroDimension);
  if (g.stride_h <= 0 || g.stride_w <= 0) return status_plain(StatusCode::BadStride);
  if (g.pad_top < 0 || g.pad_left < 0) return status_plain(StatusCode::InvalidArgument);
  return ok_status();
}

// The requantisation shift of a conv/dense layer into *shift: Ok when it is >= 0 (the ESP-DL contract),
// BadParameter otherwise; InvalidArgument for a missing buffer.
inline Status check_requant(const void* in, const void* w, const void* out, const Q8Layer& q, int* shift) {
  if (!in || !w || !out) return status_plain(StatusCode::InvalidArgument);
  *shift = q.shift();
  if (*shift < 0) return status_value(StatusCode::BadParameter, -1, *shift);
  return ok_status();
}

// check_requant, then check_geom: what a conv or depthwise conv checks before it runs.
inline Status check_window_requant(const Geom2D& g, const void* in, const void* w, const void* out, const Q8Layer& q,
                                   int* shift) {
  const Status rs = check_requant(in, w, out, q, shift);
  return rs.ok() ? check_geom(g) : rs;
}

// One output of a conv/dense layer: accumulator + bias (when there is one), requantised, then the
// fused ReLU.
inline int8_t requant_output(int32_t acc, const int32_t* bias, int o, int shift, bool relu) {
  const int8_t r = requantize_s8((int64_t)acc + (bias ? bias[o] : 0), shift);
  return relu && r < 0 ? 0 : r;
}

}  // namespace int8_detail
}  // namespace tv
