// Helpers of the fast-vs-reference kernel tests (kernel_variants*_test.cpp): random data, a readable
// geometry, and a bit-for-bit comparison.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tv/ops/ops.h"

namespace kernel_compare {

using Vec = std::vector<float>;

// n values uniform in [lo, hi), each replaced by an exact 0 with probability zero_fraction.
inline Vec sparse_random_vec(std::mt19937& rng, size_t n, float zero_fraction = 0.0f, float lo = -1.0f,
                             float hi = 1.0f) {
  std::uniform_real_distribution<float> value(lo, hi), coin(0.0f, 1.0f);
  Vec v(n);
  for (auto& x : v) x = coin(rng) < zero_fraction ? 0.0f : value(rng);
  return v;
}

inline std::string describe(const tv::Geom2D& g) {
  std::ostringstream s;
  s << g.in_h << "x" << g.in_w << "x" << g.in_c << " -> " << g.out_h << "x" << g.out_w << "x" << g.out_c << " k"
    << g.k_h << "x" << g.k_w << " s" << g.stride_h << "x" << g.stride_w << " pad " << g.pad_top << "," << g.pad_left;
  return s.str();
}

// Same bits (the sign of zero included; any NaN equals any NaN, as which of two NaN operands an
// addition returns is up to the instruction), reporting the first difference.
inline void expect_same_bits(const char* what, const Vec& ref, const Vec& fast, const std::string& where) {
  ASSERT_EQ(ref.size(), fast.size()) << what << " " << where;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (std::isnan(ref[i]) && std::isnan(fast[i])) continue;
    if (std::memcmp(&ref[i], &fast[i], sizeof(float)) != 0) {
      ADD_FAILURE() << what << " " << where << ": element " << i << " is " << ref[i] << " (reference) vs " << fast[i]
                    << " (fast)";
      return;
    }
  }
}

// A valid or TensorFlow-"same" geometry along one axis.
inline void same_or_valid(int in, int k, int stride, bool same, int* out, int* pad_before) {
  if (same) {
    *out = (in + stride - 1) / stride;
    const int total = std::max((*out - 1) * stride + k - in, 0);
    *pad_before = total / 2;
  } else {
    *out = (in - k) / stride + 1;
    *pad_before = 0;
  }
}

// A random conv geometry: mostly 3x3 or 1x1, stride 1 or 2, valid or same, up to 40 pixels wide.
inline bool random_conv(std::mt19937& rng, tv::Geom2D* g) {
  *g = tv::Geom2D{};
  g->in_h = 1 + (int)(rng() % 16);
  g->in_w = 1 + (int)(rng() % 40);
  g->in_c = 1 + (int)(rng() % 9);
  g->out_c = 1 + (int)(rng() % 13);
  const int shape = (int)(rng() % 3);
  g->k_h = shape == 0 ? 3 : (shape == 1 ? 1 : 1 + (int)(rng() % 4));
  g->k_w = shape == 0 ? 3 : (shape == 1 ? 1 : 1 + (int)(rng() % 4));
  g->stride_h = rng() % 4 ? 1 : 2;
  g->stride_w = rng() % 4 ? 1 : 2;
  const bool same = rng() % 2;
  if (!same && (g->in_h < g->k_h || g->in_w < g->k_w)) return false;
  same_or_valid(g->in_h, g->k_h, g->stride_h, same, &g->out_h, &g->pad_top);
  same_or_valid(g->in_w, g->k_w, g->stride_w, same, &g->out_w, &g->pad_left);
  return true;
}

}  // namespace kernel_compare
