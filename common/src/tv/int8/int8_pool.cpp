// Int8 pooling: MaxPool (exponent kept), AveragePool and GlobalAveragePool (exact, round half up).
#include "tv/int8/int8_ops.h"
#include "tv/int8/int8_window.h"

namespace tv {
namespace {

// sat8(round_half_up(sum * 2^shift_up / area)) in exact integer arithmetic, area > 0.
// round_half_up(v) = floor(v + 1/2) = floor((2 * num + den) / (2 * den)) for v = num / den.
int8_t average_s8(int64_t sum, int64_t area, int shift_up) {
  if (sum == 0) return 0;
  if (shift_up > 30) return sum > 0 ? 127 : -128;  // |sum| >= 1 times 2^31 / area saturates
  if (shift_up < -40) return 0;                    // |v| <= 128 * 2^-40: rounds to 0 (and can never be -1/2)
  int64_t num = sum, den = area;
  if (shift_up >= 0)
    num *= (int64_t)1 << shift_up;
  else
    den *= (int64_t)1 << (-shift_up);
  return sat8(floor_div(2 * num + den, 2 * den));
}

}  // namespace

Status maxpool2d_s8(const Geom2D& g, const int8_t* in, int8_t* out) {
  if (!in || !out) return status_plain(StatusCode::InvalidArgument);
  const Status gs = int8_detail::check_geom(g);
  if (!gs.ok()) return gs;
  if (g.out_c != g.in_c) return status_not_expected(StatusCode::ChannelMismatch, -1, g.out_c, g.in_c);
  maxpool_windows(g, in, out);
  return ok_status();
}

Status avgpool2d_s8(const Geom2D& g, const int8_t* in, int e_in, int e_out, int8_t* out) {
  if (!in || !out) return status_plain(StatusCode::InvalidArgument);
  const Status gs = int8_detail::check_geom(g);
  if (!gs.ok()) return gs;
  if (g.out_c != g.in_c) return status_not_expected(StatusCode::ChannelMismatch, -1, g.out_c, g.in_c);
  const int64_t area = (int64_t)g.k_h * g.k_w;
  if (area > kInt8MaxPoolArea)
    return status_over_limit(StatusCode::InvalidArgument, -1, (int32_t)area, (int32_t)kInt8MaxPoolArea);
  const int c_n = g.in_c;
  for_each_window(g, [&](TapRange ry, TapRange rx, int iy0, int ix0, size_t px) {
    int8_t* o_px = out + px * c_n;
    for (int c = 0; c < c_n; ++c) {
      int64_t sum = 0;
      for (int ky = ry.begin; ky < ry.end; ++ky)
        for (int kx = rx.begin; kx < rx.end; ++kx) sum += in[tap_at(g, iy0, ix0, ky, kx) + c];
      o_px[c] = average_s8(sum, area, e_in - e_out);
    }
  });
  return ok_status();
}

Status global_avgpool_s8(int h, int w, int c, const int8_t* in, int e_in, int e_out, int8_t* out) {
  if (!in || !out) return status_plain(StatusCode::InvalidArgument);
  if (h <= 0 || w <= 0 || c <= 0) return status_plain(StatusCode::ZeroDimension);
  const int64_t area = (int64_t)h * w;
  if (area > kInt8MaxPoolArea)
    return status_over_limit(StatusCode::InvalidArgument, -1, (int32_t)area, (int32_t)kInt8MaxPoolArea);
  for (int ch = 0; ch < c; ++ch) {
    int64_t sum = 0;
    for (int64_t p = 0; p < area; ++p) sum += in[(size_t)p * c + ch];
    out[ch] = average_s8(sum, area, e_in - e_out);
  }
  return ok_status();
}

}  // namespace tv
