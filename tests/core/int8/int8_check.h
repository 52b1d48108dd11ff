// What the int8 kernel tests share (tests/core/int8/int8_*_test.cpp, one file per kernel): naive
// references written independently of the kernels (int64 sums, explicit bounds checks), random
// int8 data and window geometries.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "tv/int8/int8_ops.h"

namespace tvtest {
namespace int8 {

// Naive references, written independently of the kernels: int64 sums, explicit bounds checks.
inline int8_t ref_requant(int64_t acc, int s, bool relu) {
  int64_t v = acc;
  if (s > 0) v = (int64_t)std::floor((long double)acc / (long double)(int64_t(1) << s) + 0.5L);
  if (v > 127) v = 127;
  if (v < -128) v = -128;
  if (relu && v < 0) v = 0;
  return int8_t(v);
}

inline std::vector<int8_t> ref_conv(const tv::Geom2D& g, const std::vector<int8_t>& in, const std::vector<int8_t>& w,
                                    const std::vector<int32_t>& b, const tv::Q8Layer& q, bool depthwise) {
  std::vector<int8_t> out(size_t(g.out_h) * g.out_w * g.out_c);
  for (int oy = 0; oy < g.out_h; ++oy)
    for (int ox = 0; ox < g.out_w; ++ox)
      for (int o = 0; o < g.out_c; ++o) {
        int64_t acc = b.empty() ? 0 : b[size_t(o)];
        for (int ky = 0; ky < g.k_h; ++ky)
          for (int kx = 0; kx < g.k_w; ++kx) {
            const int iy = oy * g.stride_h - g.pad_top + ky, ix = ox * g.stride_w - g.pad_left + kx;
            if (iy < 0 || iy >= g.in_h || ix < 0 || ix >= g.in_w) continue;
            if (depthwise) {
              acc += int64_t(in[(size_t(iy) * g.in_w + ix) * g.in_c + o]) * w[(size_t(ky) * g.k_w + kx) * g.in_c + o];
            } else {
              for (int i = 0; i < g.in_c; ++i)
                acc += int64_t(in[(size_t(iy) * g.in_w + ix) * g.in_c + i]) *
                       w[((size_t(o) * g.k_h + ky) * g.k_w + kx) * g.in_c + i];
            }
          }
        out[(size_t(oy) * g.out_w + ox) * g.out_c + o] = ref_requant(acc, q.shift(), q.relu);
      }
  return out;
}

inline std::vector<int8_t> random_int8(std::mt19937& rng, size_t n, int lo = -128, int hi = 127) {
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<int8_t> v(n);
  for (auto& x : v) x = int8_t(d(rng));
  return v;
}

inline std::vector<int32_t> random_bias(std::mt19937& rng, size_t n, int mag) {
  std::uniform_int_distribution<int> d(-mag, mag);
  std::vector<int32_t> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

inline tv::Geom2D make_geom(int in_h, int in_w, int in_c, int out_c, int kh, int kw, int sh, int sw, int pt, int pl,
                            int pb, int pr) {
  tv::Geom2D g;
  g.in_h = in_h, g.in_w = in_w, g.in_c = in_c, g.out_c = out_c;
  g.k_h = kh, g.k_w = kw, g.stride_h = sh, g.stride_w = sw, g.pad_top = pt, g.pad_left = pl;
  g.out_h = (in_h + pt + pb - kh) / sh + 1;
  g.out_w = (in_w + pl + pr - kw) / sw + 1;
  return g;
}

}  // namespace int8
}  // namespace tvtest
