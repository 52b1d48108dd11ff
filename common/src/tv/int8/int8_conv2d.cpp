// Int8 Conv2D: HWC activations, weights [out_c][k_h][k_w][in_c], int32 bias, requantised output.
#include "tv/int8/int8_ops.h"
#include "tv/int8/int8_window.h"

namespace tv {

Status conv2d_s8(const Geom2D& g, const int8_t* in, const int8_t* w, const int32_t* bias, const Q8Layer& q,
                 int8_t* out) {
  int s = 0;  // the requantisation shift
  if (const Status st = int8_detail::check_window_requant(g, in, w, out, q, &s); !st.ok()) return st;
  const long fan_in = (long)g.k_h * g.k_w * g.in_c;
  if (fan_in > kInt8MaxFanIn)
    return status_over_limit(StatusCode::InvalidArgument, -1, (int32_t)fan_in, (int32_t)kInt8MaxFanIn);

  const int w_row = g.k_w * g.in_c;  // weights in one kernel row of one filter
  const int w_filter = g.k_h * w_row;
  for_each_window(g, [&](TapRange ry, TapRange rx, int iy0, int ix0, size_t px) {
    // Taps kx in [rx.begin, rx.end) times all channels are contiguous in input and weights alike.
    const int span = (rx.end - rx.begin) * g.in_c;
    int8_t* o_px = out + px * g.out_c;
    for (int o = 0; o < g.out_c; ++o) {
      int32_t acc = 0;
      for (int ky = ry.begin; span > 0 && ky < ry.end; ++ky) {
        const int8_t* x = in + tap_at(g, iy0, ix0, ky, rx.begin);
        const int8_t* k = w + (size_t)o * w_filter + (size_t)ky * w_row + (size_t)rx.begin * g.in_c;
        for (int j = 0; j < span; ++j) acc += (int32_t)x[j] * (int32_t)k[j];
      }
      o_px[o] = int8_detail::requant_output(acc, bias, o, s, q.relu);
    }
  });
  return ok_status();
}

}  // namespace tv
