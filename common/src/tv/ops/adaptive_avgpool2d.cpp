// AdaptiveAvgPool2D float reference kernel (PyTorch bin rule; GlobalAvgPool is out 1x1).
#include "tv/ops/kernel_variants.h"

namespace tv {
namespace ref {
namespace {

// First input index of bin `o` when `in_size` cells are split into `out_size` bins: floor(o*in/out).
int bin_begin(int o, int in_size, int out_size) {
  return (o * in_size) / out_size;
}
// One past the last input index of bin `o`: ceil((o+1)*in/out).
int bin_end(int o, int in_size, int out_size) {
  return ((o + 1) * in_size + out_size - 1) / out_size;
}

}  // namespace

void adaptive_avgpool2d_forward(int in_h, int in_w, int c, int out_h, int out_w, const float* in, float* out) {
  for (int oy = 0; oy < out_h; ++oy) {
    const int y0 = bin_begin(oy, in_h, out_h), y1 = bin_end(oy, in_h, out_h);
    for (int ox = 0; ox < out_w; ++ox) {
      const int x0 = bin_begin(ox, in_w, out_w), x1 = bin_end(ox, in_w, out_w);
      const float count = (float)((y1 - y0) * (x1 - x0));
      float* o_px = out + ((size_t)oy * out_w + ox) * c;
      for (int ch = 0; ch < c; ++ch) o_px[ch] = 0.0f;
      for (int y = y0; y < y1; ++y) {
        for (int x = x0; x < x1; ++x) {
          const float* px = in + ((size_t)y * in_w + x) * c;
          for (int ch = 0; ch < c; ++ch) o_px[ch] += px[ch];
        }
      }
      for (int ch = 0; ch < c; ++ch) o_px[ch] /= count;
    }
  }
}

void adaptive_avgpool2d_backward(int in_h, int in_w, int c, int out_h, int out_w, const float* dout, float* din) {
  for (size_t i = 0, n = (size_t)in_h * in_w * c; i < n; ++i) din[i] = 0.0f;
  for (int oy = 0; oy < out_h; ++oy) {
    const int y0 = bin_begin(oy, in_h, out_h), y1 = bin_end(oy, in_h, out_h);
    for (int ox = 0; ox < out_w; ++ox) {
      const int x0 = bin_begin(ox, in_w, out_w), x1 = bin_end(ox, in_w, out_w);
      const float count = (float)((y1 - y0) * (x1 - x0));
      const float* d_px = dout + ((size_t)oy * out_w + ox) * c;
      // Bins may overlap when in is not a multiple of out: contributions add up.
      for (int y = y0; y < y1; ++y) {
        for (int x = x0; x < x1; ++x) {
          float* px = din + ((size_t)y * in_w + x) * c;
          for (int ch = 0; ch < c; ++ch) px[ch] += d_px[ch] / count;
        }
      }
    }
  }
}

}  // namespace ref
}  // namespace tv
