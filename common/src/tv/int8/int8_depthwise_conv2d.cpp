// Int8 DepthwiseConv2D (channel multiplier 1): HWC activations, weights [k_h][k_w][c].
#include "tv/int8/int8_ops.h"
#include "tv/int8/int8_window.h"

namespace tv {

Status depthwise_conv2d_s8(const Geom2D& g, const int8_t* in, const int8_t* w, const int32_t* bias, const Q8Layer& q,
                           int8_t* out) {
  int s = 0;  // the requantisation shift
  if (const Status st = int8_detail::check_window_requant(g, in, w, out, q, &s); !st.ok()) return st;
  if (g.out_c != g.in_c) return status_not_expected(StatusCode::ChannelMismatch, -1, g.out_c, g.in_c);

  const int c_n = g.in_c;
  for_each_window(g, [&](TapRange ry, TapRange rx, int iy0, int ix0, size_t px) {
    int8_t* o_px = out + px * c_n;
    for (int c = 0; c < c_n; ++c) {
      int32_t acc = 0;
      for (int ky = ry.begin; ky < ry.end; ++ky) {
        for (int kx = rx.begin; kx < rx.end; ++kx) {
          const int8_t x = in[tap_at(g, iy0, ix0, ky, kx) + c];
          const int8_t k = w[((size_t)ky * g.k_w + kx) * c_n + c];
          acc += (int32_t)x * (int32_t)k;
        }
      }
      o_px[c] = int8_detail::requant_output(acc, bias, c, s, q.relu);
    }
  });
  return ok_status();
}

}  // namespace tv
