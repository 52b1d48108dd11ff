// Internal helpers of the int8 window kernels (conv, depthwise conv, pooling): geometry checks and
// the range of kernel taps that land inside the input.
#pragma once
#include "tv/int8/int8_ops.h"
#include "tv/ops.h"
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
    return make_status(StatusCode::ZeroDimension);
  if (g.stride_h <= 0 || g.stride_w <= 0) return make_status(StatusCode::BadStride);
  if (g.pad_top < 0 || g.pad_left < 0) return make_status(StatusCode::InvalidArgument);
  return ok_status();
}

}  // namespace int8_detail
}  // namespace tv
