// What the float kernel tests share (tests/core/ops/*_test.cpp, one file per kernel): random data,
// the finite-difference gradient check, sliding-window geometries, naive double-precision references
// and the two kernel sets (reference and fast variants) every kernel with a fast variant runs on.
//
// Gradient-check method and tolerance. For each op we form the scalar L = sum(out * r) with a fixed
// random r (accumulated in double), perturb one float at a time by +-kEps and compare
// (L+ - L-) / (x+ - x-) with the analytic gradient (the denominator uses the perturbed values as
// actually stored in float). We accept
//     |analytic - numeric| <= kAbsTol + kRelTol * max(|analytic|, |numeric|)
// with kEps = 1e-2, kRelTol = 1e-2, kAbsTol = 1e-3. Why: every op here is linear in the perturbed
// variable (or piecewise linear, with inputs kept at least 5x kEps away from kinks and ties), and the
// losses are smooth, so truncation error is zero or O(kEps^2) ~ 1e-5; the only other error is
// float32 rounding of the outputs, about 1e-7 * |out| per changed output, which divided by 2*kEps
// stays below ~1e-4 at these sizes. A larger eps keeps that rounding noise small; the bound leaves
// >= 10x headroom over the noise while any indexing or scaling bug gives O(1) errors.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "tv/ops/kernel_variants.h"
#include "tv/ops/ops.h"

namespace tvtest {
namespace ops {

inline constexpr float kEps = 1e-2f;
inline constexpr double kRelTol = 1e-2;
inline constexpr double kAbsTol = 1e-3;
// Written into buffers that a kernel must overwrite, to catch a kernel that accumulates instead.
inline constexpr float kSentinel = 777.0f;

using Vec = std::vector<float>;

inline Vec random_vec(std::mt19937& rng, size_t n, float lo = -1.0f, float hi = 1.0f) {
  std::uniform_real_distribution<float> dist(lo, hi);
  Vec v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// Values in [min_abs, max_abs] with a random sign: at least min_abs away from zero.
inline Vec away_from_zero(std::mt19937& rng, size_t n, float min_abs, float max_abs) {
  std::uniform_real_distribution<float> mag(min_abs, max_abs);
  std::bernoulli_distribution neg(0.5);
  Vec v(n);
  for (auto& x : v) x = neg(rng) ? -mag(rng) : mag(rng);
  return v;
}

// A shuffled grid of n distinct values spaced 0.1 apart, so no +-kEps step changes which is the max.
inline Vec distinct_values(std::mt19937& rng, size_t n) {
  Vec v(n);
  for (size_t i = 0; i < n; ++i) v[i] = 0.1f * (float)((int)i - (int)n / 2);
  std::shuffle(v.begin(), v.end(), rng);
  return v;
}

inline double weighted_sum(const Vec& out, const Vec& r) {
  double s = 0.0;
  for (size_t i = 0; i < out.size(); ++i) s += (double)out[i] * (double)r[i];
  return s;
}

// Compares `analytic` (dL/dx) with central differences of loss() over every element of x.
inline void expect_gradient(const char* what, Vec& x, const Vec& analytic, const std::function<double()>& loss) {
  ASSERT_EQ(x.size(), analytic.size()) << what;
  double worst = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    const float saved = x[i];
    const float up = saved + kEps, down = saved - kEps;
    x[i] = up;
    const double l_up = loss();
    x[i] = down;
    const double l_down = loss();
    x[i] = saved;
    const double numeric = (l_up - l_down) / ((double)up - (double)down);
    const double err = std::fabs((double)analytic[i] - numeric);
    const double bound = kAbsTol + kRelTol * std::max(std::fabs((double)analytic[i]), std::fabs(numeric));
    worst = std::max(worst, err / bound);
    EXPECT_LE(err, bound) << what << "[" << i << "]: analytic " << analytic[i] << ", numeric " << numeric;
  }
  EXPECT_LE(worst, 1.0) << what;
}

// Expects `twice` (after a second accumulating call) to be 2 * `once`.
inline void expect_doubled(const char* what, const Vec& once, const Vec& twice) {
  ASSERT_EQ(once.size(), twice.size());
  for (size_t i = 0; i < once.size(); ++i)
    EXPECT_NEAR(twice[i], 2.0f * once[i], 1e-5f * (1.0f + std::fabs(once[i]))) << what << "[" << i << "]";
}

inline void expect_all_near(const Vec& got, const std::vector<double>& want, double rel) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], rel * (1.0 + std::fabs(want[i]))) << "index " << i;
}

// ---- geometry ----

// A sliding-window case: valid padding, or "same" padding as TensorFlow does it (out = ceil(in/stride),
// the extra row/column of padding at the bottom/right).
struct WindowCase {
  int in_h, in_w, in_c, out_c;
  int k_h, k_w, stride_h, stride_w;
  bool same;
};

inline std::string case_name(const WindowCase& c) {
  std::ostringstream s;
  s << c.in_h << "x" << c.in_w << "x" << c.in_c << "_to" << c.out_c << "_k" << c.k_h << "x" << c.k_w << "_s"
    << c.stride_h << "x" << c.stride_w << (c.same ? "_same" : "_valid");
  return s.str();
}

inline void axis(int in, int k, int stride, bool same, int* out, int* pad_before) {
  if (same) {
    *out = (in + stride - 1) / stride;
    const int total = std::max((*out - 1) * stride + k - in, 0);
    *pad_before = total / 2;
  } else {
    *out = (in - k) / stride + 1;
    *pad_before = 0;
  }
}

inline tv::Geom2D make_geom(const WindowCase& c) {
  tv::Geom2D g{};
  g.in_h = c.in_h;
  g.in_w = c.in_w;
  g.in_c = c.in_c;
  g.out_c = c.out_c;
  g.k_h = c.k_h;
  g.k_w = c.k_w;
  g.stride_h = c.stride_h;
  g.stride_w = c.stride_w;
  axis(c.in_h, c.k_h, c.stride_h, c.same, &g.out_h, &g.pad_top);
  axis(c.in_w, c.k_w, c.stride_w, c.same, &g.out_w, &g.pad_left);
  return g;
}

inline size_t in_size(const tv::Geom2D& g) {
  return (size_t)g.in_h * g.in_w * g.in_c;
}
inline size_t out_size(const tv::Geom2D& g) {
  return (size_t)g.out_h * g.out_w * g.out_c;
}

// Calls visit(iy, ix) for every in-bounds tap of output pixel (oy, ox), in row-major (ky, kx) order.
template <class Visit>
inline void for_each_tap(const tv::Geom2D& g, int oy, int ox, Visit visit) {
  for (int ky = 0; ky < g.k_h; ++ky)
    for (int kx = 0; kx < g.k_w; ++kx) {
      const int iy = oy * g.stride_h - g.pad_top + ky, ix = ox * g.stride_w - g.pad_left + kx;
      if (iy >= 0 && iy < g.in_h && ix >= 0 && ix < g.in_w) visit(ky, kx, iy, ix);
    }
}

// ---- naive double-precision references of the forwards ----

inline std::vector<double> conv_reference(const tv::Geom2D& g, const Vec& in, const Vec& w, const Vec& b) {
  std::vector<double> out(out_size(g));
  for (int oy = 0; oy < g.out_h; ++oy)
    for (int ox = 0; ox < g.out_w; ++ox)
      for (int o = 0; o < g.out_c; ++o) {
        double acc = b[o];
        for_each_tap(g, oy, ox, [&](int ky, int kx, int iy, int ix) {
          for (int i = 0; i < g.in_c; ++i)
            acc += (double)in[((size_t)iy * g.in_w + ix) * g.in_c + i] *
                   w[(((size_t)o * g.k_h + ky) * g.k_w + kx) * g.in_c + i];
        });
        out[((size_t)oy * g.out_w + ox) * g.out_c + o] = acc;
      }
  return out;
}

inline std::vector<double> depthwise_reference(const tv::Geom2D& g, const Vec& in, const Vec& w, const Vec& b) {
  std::vector<double> out(out_size(g));
  for (int oy = 0; oy < g.out_h; ++oy)
    for (int ox = 0; ox < g.out_w; ++ox)
      for (int c = 0; c < g.in_c; ++c) {
        double acc = b[c];
        for_each_tap(g, oy, ox, [&](int ky, int kx, int iy, int ix) {
          acc += (double)in[((size_t)iy * g.in_w + ix) * g.in_c + c] * w[((size_t)ky * g.k_w + kx) * g.in_c + c];
        });
        out[((size_t)oy * g.out_w + ox) * g.in_c + c] = acc;
      }
  return out;
}

// Conv2D forward as the contract fixes it in float: bias, then taps in (ky, kx, ic) order, padded
// taps skipped.
inline Vec conv_in_float_order(const tv::Geom2D& g, const Vec& in, const Vec& w, const Vec& b) {
  Vec out(out_size(g));
  for (int oy = 0; oy < g.out_h; ++oy)
    for (int ox = 0; ox < g.out_w; ++ox)
      for (int o = 0; o < g.out_c; ++o) {
        float acc = b[o];
        for_each_tap(g, oy, ox, [&](int ky, int kx, int iy, int ix) {
          for (int i = 0; i < g.in_c; ++i)
            acc +=
                in[((size_t)iy * g.in_w + ix) * g.in_c + i] * w[(((size_t)o * g.k_h + ky) * g.k_w + kx) * g.in_c + i];
        });
        out[((size_t)oy * g.out_w + ox) * g.out_c + o] = acc;
      }
  return out;
}

// Max (is_max) or average over the full window area k_h*k_w (padded cells skipped).
inline std::vector<double> pool_reference(const tv::Geom2D& g, const Vec& in, bool is_max) {
  std::vector<double> out(out_size(g));
  for (int oy = 0; oy < g.out_h; ++oy)
    for (int ox = 0; ox < g.out_w; ++ox)
      for (int c = 0; c < g.in_c; ++c) {
        double acc = is_max ? -INFINITY : 0.0;
        for_each_tap(g, oy, ox, [&](int, int, int iy, int ix) {
          const double v = in[((size_t)iy * g.in_w + ix) * g.in_c + c];
          acc = is_max ? std::max(acc, v) : acc + v;
        });
        out[((size_t)oy * g.out_w + ox) * g.in_c + c] = is_max ? acc : acc / (g.k_h * g.k_w);
      }
  return out;
}

// Sliding-window cases shared by conv and pooling tests: valid and same padding, stride 1 and 2,
// square and non-square kernels, even kernels (asymmetric padding), a 1x1 kernel and a kernel larger
// than the input.
inline const std::vector<WindowCase> kConvCases = {
    {5, 5, 1, 1, 3, 3, 1, 1, false},
    {6, 7, 3, 4, 3, 3, 1, 1, false},
    {6, 7, 3, 4, 3, 3, 1, 1, true},
    {7, 6, 2, 3, 3, 3, 2, 2, false},
    {7, 6, 2, 3, 3, 3, 2, 2, true},
    {8, 8, 3, 2, 3, 2, 1, 1, true},
    {7, 9, 2, 3, 2, 3, 2, 1, false},
    {7, 9, 2, 3, 2, 3, 2, 1, true},
    {6, 6, 2, 2, 4, 4, 2, 2, true},
    {5, 5, 4, 2, 1, 1, 1, 1, false},
    {3, 3, 2, 2, 5, 5, 1, 1, true},
    {6, 5, 3, 2, 1, 3, 2, 2, true},
    {6, 6, 3, 6, 3, 3, 1, 1, true},
    {7, 7, 2, 5, 3, 3, 2, 2, false},
    // Rows of more than 16 pixels, 3, 4 and 8 input channels, 4, 8 and 12 filters: the fast
    // variants' vector paths, their tails and, with same padding, their border pixels.
    {7, 21, 3, 4, 3, 3, 1, 1, false},
    {6, 19, 4, 8, 3, 3, 1, 1, false},
    {5, 18, 8, 12, 3, 3, 1, 1, true},
    {5, 17, 3, 5, 3, 3, 1, 1, true},
};

// Pooling windows: non-overlapping (stride = k), overlapping (stride < k), padded, non-square.
inline const std::vector<WindowCase> kPoolCases = {
    {4, 4, 2, 2, 2, 2, 2, 2, false},
    {6, 6, 3, 3, 2, 2, 2, 2, false},
    {7, 7, 2, 2, 3, 3, 2, 2, false},
    {6, 5, 2, 2, 3, 3, 1, 1, false},
    {5, 5, 2, 2, 3, 3, 2, 2, true},
    {6, 6, 1, 1, 3, 3, 2, 2, true},
    {5, 7, 2, 2, 2, 3, 1, 2, false},
    {5, 5, 3, 3, 2, 2, 2, 2, true},
    // 2x2 windows over 4 and 8 channels, 3 channels with uncovered last row and column, 3x3 windows
    // over 5 channels: the fast max-pool's paths.
    {6, 10, 4, 4, 2, 2, 2, 2, false},
    {4, 6, 8, 8, 2, 2, 2, 2, false},
    {7, 9, 3, 3, 2, 2, 2, 2, false},
    {6, 7, 5, 5, 3, 3, 3, 3, false},
};

inline std::string param_name(const testing::TestParamInfo<WindowCase>& info) {
  return case_name(info.param);
}

// ---- the two kernel sets ----

// The implementations of the kernels that have a fast variant.
struct KernelSet {
  const char* name;
  decltype(&tv::ref::conv2d_forward) conv2d_forward;
  decltype(&tv::ref::conv2d_backward_data) conv2d_backward_data;
  decltype(&tv::ref::conv2d_backward_params) conv2d_backward_params;
  decltype(&tv::ref::maxpool2d_forward) maxpool2d_forward;
  decltype(&tv::ref::maxpool2d_backward) maxpool2d_backward;
  decltype(&tv::ref::dense_forward) dense_forward;
  decltype(&tv::ref::dense_backward_data) dense_backward_data;
  decltype(&tv::ref::dense_backward_params) dense_backward_params;
  decltype(&tv::ref::relu_forward) relu_forward;
  decltype(&tv::ref::relu_backward) relu_backward;
  decltype(&tv::ref::leaky_relu_forward) leaky_relu_forward;
  decltype(&tv::ref::leaky_relu_backward) leaky_relu_backward;
  decltype(&tv::ref::clip_forward) clip_forward;
};
inline const KernelSet kReference = {"Reference",
                                     tv::ref::conv2d_forward,
                                     tv::ref::conv2d_backward_data,
                                     tv::ref::conv2d_backward_params,
                                     tv::ref::maxpool2d_forward,
                                     tv::ref::maxpool2d_backward,
                                     tv::ref::dense_forward,
                                     tv::ref::dense_backward_data,
                                     tv::ref::dense_backward_params,
                                     tv::ref::relu_forward,
                                     tv::ref::relu_backward,
                                     tv::ref::leaky_relu_forward,
                                     tv::ref::leaky_relu_backward,
                                     tv::ref::clip_forward};
inline const KernelSet kFast = {"Fast",
                                tv::fast::conv2d_forward,
                                tv::fast::conv2d_backward_data,
                                tv::fast::conv2d_backward_params,
                                tv::fast::maxpool2d_forward,
                                tv::fast::maxpool2d_backward,
                                tv::fast::dense_forward,
                                tv::fast::dense_backward_data,
                                tv::fast::dense_backward_params,
                                tv::fast::relu_forward,
                                tv::fast::relu_backward,
                                tv::fast::leaky_relu_forward,
                                tv::fast::leaky_relu_backward,
                                tv::fast::clip_forward};
inline const KernelSet* const kKernelSets[] = {&kReference, &kFast};

// A test run once per kernel set.
class KernelTest : public testing::TestWithParam<const KernelSet*> {
 protected:
  const KernelSet& k() const { return *GetParam(); }
};

inline std::string kernel_name(const testing::TestParamInfo<const KernelSet*>& info) {
  return info.param->name;
}

// A sliding-window case run once per kernel set.
class WindowKernelTest : public testing::TestWithParam<std::tuple<WindowCase, const KernelSet*>> {
 protected:
  const WindowCase& window() const { return std::get<0>(GetParam()); }
  const KernelSet& k() const { return *std::get<1>(GetParam()); }
};

inline std::string window_kernel_name(const testing::TestParamInfo<std::tuple<WindowCase, const KernelSet*>>& info) {
  return case_name(std::get<0>(info.param)) + "_" + std::get<1>(info.param)->name;
}

}  // namespace ops
}  // namespace tvtest
