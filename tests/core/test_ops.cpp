// Tests of the float reference kernels (tv/ops.h): hand-computed golden forwards, a comparison with
// a naive double-precision reference, and a finite-difference gradient check for every trainable op
// and both losses. The kernels that also have a fast variant (tv/ops/kernel_variants.h: conv2d,
// maxpool2d, dense, the activations) run every one of their tests twice, on the reference kernels
// and on the fast variants (test names end in _Reference / _Fast).
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

#include "tv/ops.h"
#include "tv/ops/kernel_variants.h"

namespace {

constexpr float kEps = 1e-2f;
constexpr double kRelTol = 1e-2;
constexpr double kAbsTol = 1e-3;
// Written into buffers that a kernel must overwrite, to catch a kernel that accumulates instead.
constexpr float kSentinel = 777.0f;

using Vec = std::vector<float>;

Vec random_vec(std::mt19937& rng, size_t n, float lo = -1.0f, float hi = 1.0f) {
  std::uniform_real_distribution<float> dist(lo, hi);
  Vec v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// Values in [min_abs, max_abs] with a random sign: at least min_abs away from zero.
Vec away_from_zero(std::mt19937& rng, size_t n, float min_abs, float max_abs) {
  std::uniform_real_distribution<float> mag(min_abs, max_abs);
  std::bernoulli_distribution neg(0.5);
  Vec v(n);
  for (auto& x : v) x = neg(rng) ? -mag(rng) : mag(rng);
  return v;
}

// A shuffled grid of n distinct values spaced 0.1 apart, so no +-kEps step changes which is the max.
Vec distinct_values(std::mt19937& rng, size_t n) {
  Vec v(n);
  for (size_t i = 0; i < n; ++i) v[i] = 0.1f * (float)((int)i - (int)n / 2);
  std::shuffle(v.begin(), v.end(), rng);
  return v;
}

double weighted_sum(const Vec& out, const Vec& r) {
  double s = 0.0;
  for (size_t i = 0; i < out.size(); ++i) s += (double)out[i] * (double)r[i];
  return s;
}

// Compares `analytic` (dL/dx) with central differences of loss() over every element of x.
void expect_gradient(const char* what, Vec& x, const Vec& analytic, const std::function<double()>& loss) {
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
void expect_doubled(const char* what, const Vec& once, const Vec& twice) {
  ASSERT_EQ(once.size(), twice.size());
  for (size_t i = 0; i < once.size(); ++i)
    EXPECT_NEAR(twice[i], 2.0f * once[i], 1e-5f * (1.0f + std::fabs(once[i]))) << what << "[" << i << "]";
}

void expect_all_near(const Vec& got, const std::vector<double>& want, double rel) {
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

std::string case_name(const WindowCase& c) {
  std::ostringstream s;
  s << c.in_h << "x" << c.in_w << "x" << c.in_c << "_to" << c.out_c << "_k" << c.k_h << "x" << c.k_w << "_s"
    << c.stride_h << "x" << c.stride_w << (c.same ? "_same" : "_valid");
  return s.str();
}

void axis(int in, int k, int stride, bool same, int* out, int* pad_before) {
  if (same) {
    *out = (in + stride - 1) / stride;
    const int total = std::max((*out - 1) * stride + k - in, 0);
    *pad_before = total / 2;
  } else {
    *out = (in - k) / stride + 1;
    *pad_before = 0;
  }
}

tv::Geom2D make_geom(const WindowCase& c) {
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

size_t in_size(const tv::Geom2D& g) {
  return (size_t)g.in_h * g.in_w * g.in_c;
}
size_t out_size(const tv::Geom2D& g) {
  return (size_t)g.out_h * g.out_w * g.out_c;
}

// Calls visit(iy, ix) for every in-bounds tap of output pixel (oy, ox), in row-major (ky, kx) order.
template <class Visit>
void for_each_tap(const tv::Geom2D& g, int oy, int ox, Visit visit) {
  for (int ky = 0; ky < g.k_h; ++ky)
    for (int kx = 0; kx < g.k_w; ++kx) {
      const int iy = oy * g.stride_h - g.pad_top + ky, ix = ox * g.stride_w - g.pad_left + kx;
      if (iy >= 0 && iy < g.in_h && ix >= 0 && ix < g.in_w) visit(ky, kx, iy, ix);
    }
}

// ---- naive double-precision references of the forwards ----

std::vector<double> conv_reference(const tv::Geom2D& g, const Vec& in, const Vec& w, const Vec& b) {
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

std::vector<double> depthwise_reference(const tv::Geom2D& g, const Vec& in, const Vec& w, const Vec& b) {
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
Vec conv_in_float_order(const tv::Geom2D& g, const Vec& in, const Vec& w, const Vec& b) {
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
std::vector<double> pool_reference(const tv::Geom2D& g, const Vec& in, bool is_max) {
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
const std::vector<WindowCase> kConvCases = {
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
const std::vector<WindowCase> kPoolCases = {
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

std::string param_name(const testing::TestParamInfo<WindowCase>& info) {
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
const KernelSet kReference = {"Reference",
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
const KernelSet kFast = {"Fast",
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
const KernelSet* const kKernelSets[] = {&kReference, &kFast};

// A test run once per kernel set.
class KernelTest : public testing::TestWithParam<const KernelSet*> {
 protected:
  const KernelSet& k() const { return *GetParam(); }
};

std::string kernel_name(const testing::TestParamInfo<const KernelSet*>& info) {
  return info.param->name;
}

// A sliding-window case run once per kernel set.
class WindowKernelTest : public testing::TestWithParam<std::tuple<WindowCase, const KernelSet*>> {
 protected:
  const WindowCase& window() const { return std::get<0>(GetParam()); }
  const KernelSet& k() const { return *std::get<1>(GetParam()); }
};

std::string window_kernel_name(const testing::TestParamInfo<std::tuple<WindowCase, const KernelSet*>>& info) {
  return case_name(std::get<0>(info.param)) + "_" + std::get<1>(info.param)->name;
}

// ======================= Conv2D =======================

class Conv2dGolden : public KernelTest {};

TEST_P(Conv2dGolden, ThreeByThreeWithTwoByTwoKernel) {
  // in = [[1,2,3],[4,5,6],[7,8,9]], w = [[1,2],[3,4]], b = 1:
  // out(0,0) = 1*1 + 2*2 + 4*3 + 5*4 + 1 = 38, (0,1) = 2+6+15+24+1 = 48,
  // (1,0) = 4+10+21+32+1 = 68, (1,1) = 5+12+24+36+1 = 78.
  const tv::Geom2D g = make_geom({3, 3, 1, 1, 2, 2, 1, 1, false});
  const Vec in = {1, 2, 3, 4, 5, 6, 7, 8, 9}, w = {1, 2, 3, 4}, b = {1};
  Vec out(4, kSentinel);
  k().conv2d_forward(g, in.data(), w.data(), b.data(), out.data());
  EXPECT_EQ(out, (Vec{38, 48, 68, 78}));
}

TEST_P(Conv2dGolden, SamePaddingSeesZeros) {
  // All-ones 3x3 input and 3x3 kernel with padding 1: each output counts its in-bounds taps.
  const tv::Geom2D g = make_geom({3, 3, 1, 1, 3, 3, 1, 1, true});
  ASSERT_EQ(g.pad_top, 1);
  ASSERT_EQ(g.pad_left, 1);
  const Vec in(9, 1.0f), w(9, 1.0f), b = {0};
  Vec out(9, kSentinel);
  k().conv2d_forward(g, in.data(), w.data(), b.data(), out.data());
  EXPECT_EQ(out, (Vec{4, 6, 4, 6, 9, 6, 4, 6, 4}));
}

TEST_P(Conv2dGolden, ChannelsLastLayoutAndWeightOrder) {
  // 1x2 pixels, 2 input channels, 3 filters of 1x1: a matrix product per pixel.
  // pixel 0 = (1, 2), pixel 1 = (3, -1); w[o] = (1,0), (0,1), (2,3); b = (0, 10, -1).
  const tv::Geom2D g = make_geom({1, 2, 2, 3, 1, 1, 1, 1, false});
  const Vec in = {1, 2, 3, -1}, w = {1, 0, 0, 1, 2, 3}, b = {0, 10, -1};
  Vec out(6, kSentinel);
  k().conv2d_forward(g, in.data(), w.data(), b.data(), out.data());
  EXPECT_EQ(out, (Vec{1, 12, 7, 3, 9, 2}));
}

TEST_P(Conv2dGolden, StrideTwoPicksEveryOtherPixel) {
  // 4x4 input holding its own index, 1x1 kernel of 1, stride 2: outputs are in[0], in[2], in[8], in[10].
  const tv::Geom2D g = make_geom({4, 4, 1, 1, 1, 1, 2, 2, false});
  Vec in(16);
  std::iota(in.begin(), in.end(), 0.0f);
  const Vec w = {1}, b = {0};
  Vec out(4, kSentinel);
  k().conv2d_forward(g, in.data(), w.data(), b.data(), out.data());
  EXPECT_EQ(out, (Vec{0, 2, 8, 10}));
}

TEST_P(Conv2dGolden, NonSquareKernelWeightIndex) {
  // 2x3 input, one 1x2 kernel (k_h=1, k_w=2) with w = (1, 10): out(y,x) = in(y,x) + 10*in(y,x+1).
  const tv::Geom2D g = make_geom({2, 3, 1, 1, 1, 2, 1, 1, false});
  const Vec in = {1, 2, 3, 4, 5, 6}, w = {1, 10}, b = {0};
  Vec out(4, kSentinel);
  k().conv2d_forward(g, in.data(), w.data(), b.data(), out.data());
  EXPECT_EQ(out, (Vec{21, 32, 54, 65}));
}

TEST_P(Conv2dGolden, BackwardDataAndParamsByHand) {
  // Same setup as ThreeByThreeWithTwoByTwoKernel, dout = [[1,0],[0,2]]:
  // din = 1 * w placed at (0,0) + 2 * w placed at (1,1) = [[1,2,0],[3,4+2,4],[0,6,8]];
  // dw = 1 * in[0:2,0:2] + 2 * in[1:3,1:3] = [1+10, 2+12, 4+16, 5+18]; db = 3.
  const tv::Geom2D g = make_geom({3, 3, 1, 1, 2, 2, 1, 1, false});
  const Vec in = {1, 2, 3, 4, 5, 6, 7, 8, 9}, w = {1, 2, 3, 4}, dout = {1, 0, 0, 2};
  Vec din(9, kSentinel);
  k().conv2d_backward_data(g, w.data(), dout.data(), din.data());
  EXPECT_EQ(din, (Vec{1, 2, 0, 3, 6, 4, 0, 6, 8}));
  Vec dw(4, 0.0f), db(1, 0.0f);
  k().conv2d_backward_params(g, in.data(), dout.data(), dw.data(), db.data());
  EXPECT_EQ(dw, (Vec{11, 14, 20, 23}));
  EXPECT_EQ(db, (Vec{3}));
}

INSTANTIATE_TEST_SUITE_P(Kernels, Conv2dGolden, testing::ValuesIn(kKernelSets), kernel_name);

class Conv2dCase : public WindowKernelTest {};

TEST_P(Conv2dCase, ForwardMatchesNaiveReference) {
  const tv::Geom2D g = make_geom(window());
  std::mt19937 rng(11);
  const Vec in = random_vec(rng, in_size(g));
  const Vec w = random_vec(rng, (size_t)g.out_c * g.k_h * g.k_w * g.in_c);
  const Vec b = random_vec(rng, g.out_c);
  Vec out(out_size(g), kSentinel);
  k().conv2d_forward(g, in.data(), w.data(), b.data(), out.data());
  expect_all_near(out, conv_reference(g, in, w, b), 1e-5);
}

TEST_P(Conv2dCase, ForwardSumsInFixedFloatOrder) {
  // Bit-for-bit: the float sum runs bias + (ky, kx, ic) in order, whatever the loop blocking.
  const tv::Geom2D g = make_geom(window());
  std::mt19937 rng(13);
  const Vec in = random_vec(rng, in_size(g));
  const Vec w = random_vec(rng, (size_t)g.out_c * g.k_h * g.k_w * g.in_c);
  const Vec b = random_vec(rng, g.out_c);
  Vec out(out_size(g), kSentinel);
  k().conv2d_forward(g, in.data(), w.data(), b.data(), out.data());
  EXPECT_EQ(out, conv_in_float_order(g, in, w, b));
}

TEST_P(Conv2dCase, GradientsMatchFiniteDifferences) {
  const tv::Geom2D g = make_geom(window());
  std::mt19937 rng(12);
  Vec in = random_vec(rng, in_size(g));
  Vec w = random_vec(rng, (size_t)g.out_c * g.k_h * g.k_w * g.in_c);
  Vec b = random_vec(rng, g.out_c);
  const Vec r = random_vec(rng, out_size(g));  // dL/dout
  auto loss = [&] {
    Vec out(out_size(g));
    k().conv2d_forward(g, in.data(), w.data(), b.data(), out.data());
    return weighted_sum(out, r);
  };
  Vec din(in.size(), kSentinel), dw(w.size(), 0.0f), db(b.size(), 0.0f);
  k().conv2d_backward_data(g, w.data(), r.data(), din.data());
  k().conv2d_backward_params(g, in.data(), r.data(), dw.data(), db.data());
  expect_gradient("din", in, din, loss);
  expect_gradient("dw", w, dw, loss);
  expect_gradient("db", b, db, loss);

  // backward_params accumulates: a second call doubles the buffers.
  Vec dw2 = dw, db2 = db;
  k().conv2d_backward_params(g, in.data(), r.data(), dw2.data(), db2.data());
  expect_doubled("dw", dw, dw2);
  expect_doubled("db", db, db2);
}

INSTANTIATE_TEST_SUITE_P(Geometries, Conv2dCase,
                         testing::Combine(testing::ValuesIn(kConvCases), testing::ValuesIn(kKernelSets)),
                         window_kernel_name);

// ======================= DepthwiseConv2D =======================

TEST(DepthwiseConv2dGolden, TwoChannelsAreIndependent) {
  // Channel 0: in = 1..9, w = [[1,2],[3,4]], b = 1 -> 38 48 68 78 (see the Conv2D golden case).
  // Channel 1: in = -(1..9), w = all ones, b = 0 -> minus the window sums 12 16 24 28.
  const tv::Geom2D g = make_geom({3, 3, 2, 2, 2, 2, 1, 1, false});
  Vec in(18);
  for (int i = 0; i < 9; ++i) {
    in[2 * i] = (float)(i + 1);
    in[2 * i + 1] = -(float)(i + 1);
  }
  const Vec w = {1, 1, 2, 1, 3, 1, 4, 1}, b = {1, 0};
  Vec out(8, kSentinel);
  tv::depthwise_conv2d_forward(g, in.data(), w.data(), b.data(), out.data());
  EXPECT_EQ(out, (Vec{38, -12, 48, -16, 68, -24, 78, -28}));
}

class DepthwiseConv2dCase : public testing::TestWithParam<WindowCase> {};

WindowCase depthwise_case(WindowCase c) {
  c.out_c = c.in_c;
  return c;
}

TEST_P(DepthwiseConv2dCase, ForwardMatchesNaiveReference) {
  const tv::Geom2D g = make_geom(depthwise_case(GetParam()));
  std::mt19937 rng(21);
  const Vec in = random_vec(rng, in_size(g));
  const Vec w = random_vec(rng, (size_t)g.k_h * g.k_w * g.in_c);
  const Vec b = random_vec(rng, g.in_c);
  Vec out(out_size(g), kSentinel);
  tv::depthwise_conv2d_forward(g, in.data(), w.data(), b.data(), out.data());
  expect_all_near(out, depthwise_reference(g, in, w, b), 1e-5);
}

TEST_P(DepthwiseConv2dCase, GradientsMatchFiniteDifferences) {
  const tv::Geom2D g = make_geom(depthwise_case(GetParam()));
  std::mt19937 rng(22);
  Vec in = random_vec(rng, in_size(g));
  Vec w = random_vec(rng, (size_t)g.k_h * g.k_w * g.in_c);
  Vec b = random_vec(rng, g.in_c);
  const Vec r = random_vec(rng, out_size(g));
  auto loss = [&] {
    Vec out(out_size(g));
    tv::depthwise_conv2d_forward(g, in.data(), w.data(), b.data(), out.data());
    return weighted_sum(out, r);
  };
  Vec din(in.size(), kSentinel), dw(w.size(), 0.0f), db(b.size(), 0.0f);
  tv::depthwise_conv2d_backward_data(g, w.data(), r.data(), din.data());
  tv::depthwise_conv2d_backward_params(g, in.data(), r.data(), dw.data(), db.data());
  expect_gradient("din", in, din, loss);
  expect_gradient("dw", w, dw, loss);
  expect_gradient("db", b, db, loss);

  Vec dw2 = dw, db2 = db;
  tv::depthwise_conv2d_backward_params(g, in.data(), r.data(), dw2.data(), db2.data());
  expect_doubled("dw", dw, dw2);
  expect_doubled("db", db, db2);
}

INSTANTIATE_TEST_SUITE_P(Geometries, DepthwiseConv2dCase, testing::ValuesIn(kConvCases), param_name);

// ======================= MaxPool2D =======================

class MaxPool2dGolden : public KernelTest {};

TEST_P(MaxPool2dGolden, FourByFourToTwoByTwo) {
  const tv::Geom2D g = make_geom({4, 4, 1, 1, 2, 2, 2, 2, false});
  const Vec in = {1, 5, 2,  0,   //
                  3, 4, 8,  1,   //
                  0, 0, -1, -2,  //
                  9, 1, -3, -4};
  Vec out(4, kSentinel);
  k().maxpool2d_forward(g, in.data(), out.data());
  EXPECT_EQ(out, (Vec{5, 8, 9, -1}));

  const Vec dout = {10, 20, 30, 40};
  Vec din(16, kSentinel);
  k().maxpool2d_backward(g, in.data(), dout.data(), din.data());
  EXPECT_EQ(din, (Vec{0, 10, 0, 0,  //
                      0, 0, 20, 0,  //
                      0, 0, 40, 0,  //
                      30, 0, 0, 0}));
}

TEST_P(MaxPool2dGolden, TiesGoToFirstMaximumInRowMajorOrder) {
  // One 2x2 window of equal values: the whole gradient goes to (0,0); a tie between (0,1) and (1,0)
  // goes to (0,1).
  const tv::Geom2D g = make_geom({2, 2, 2, 2, 2, 2, 2, 2, false});
  const Vec in = {3, 0, 3, 7, 3, 7, 3, 1};  // channel 0 all 3; channel 1 = [[0,7],[7,1]]
  Vec out(2, kSentinel);
  k().maxpool2d_forward(g, in.data(), out.data());
  EXPECT_EQ(out, (Vec{3, 7}));
  const Vec dout = {1.5f, -2.0f};
  Vec din(8, kSentinel);
  k().maxpool2d_backward(g, in.data(), dout.data(), din.data());
  EXPECT_EQ(din, (Vec{1.5f, 0, 0, -2.0f, 0, 0, 0, 0}));
}

TEST_P(MaxPool2dGolden, PaddedCellsAreSkippedNotZero) {
  // All-negative 3x3 input, 2x2 windows at stride 2 with the last row/column in padding: a padded
  // cell must not win with a zero.
  const tv::Geom2D g = make_geom({3, 3, 1, 1, 2, 2, 2, 2, true});
  ASSERT_EQ(g.out_h, 2);
  const Vec in = {-1, -2, -3, -4, -5, -6, -7, -8, -9};
  Vec out(4, kSentinel);
  k().maxpool2d_forward(g, in.data(), out.data());
  EXPECT_EQ(out, (Vec{-1, -3, -7, -9}));
}

TEST_P(MaxPool2dGolden, OverlappingWindowsAddUp) {
  // 1x3 input, 1x2 windows at stride 1: the middle value is the max of both windows.
  const tv::Geom2D g = make_geom({1, 3, 1, 1, 1, 2, 1, 1, false});
  const Vec in = {1, 5, 2}, dout = {0.25f, 0.5f};
  Vec din(3, kSentinel);
  k().maxpool2d_backward(g, in.data(), dout.data(), din.data());
  EXPECT_EQ(din, (Vec{0, 0.75f, 0}));
}

INSTANTIATE_TEST_SUITE_P(Kernels, MaxPool2dGolden, testing::ValuesIn(kKernelSets), kernel_name);

class MaxPool2dCase : public WindowKernelTest {};

TEST_P(MaxPool2dCase, ForwardMatchesNaiveReference) {
  const tv::Geom2D g = make_geom(window());
  std::mt19937 rng(31);
  const Vec in = random_vec(rng, in_size(g));
  Vec out(out_size(g), kSentinel);
  k().maxpool2d_forward(g, in.data(), out.data());
  expect_all_near(out, pool_reference(g, in, true), 0.0);
}

TEST_P(MaxPool2dCase, GradientMatchesFiniteDifferences) {
  const tv::Geom2D g = make_geom(window());
  std::mt19937 rng(32);
  Vec in = distinct_values(rng, in_size(g));
  const Vec r = random_vec(rng, out_size(g));
  auto loss = [&] {
    Vec out(out_size(g));
    k().maxpool2d_forward(g, in.data(), out.data());
    return weighted_sum(out, r);
  };
  Vec din(in.size(), kSentinel);
  k().maxpool2d_backward(g, in.data(), r.data(), din.data());
  expect_gradient("din", in, din, loss);
}

INSTANTIATE_TEST_SUITE_P(Geometries, MaxPool2dCase,
                         testing::Combine(testing::ValuesIn(kPoolCases), testing::ValuesIn(kKernelSets)),
                         window_kernel_name);

// ======================= AvgPool2D =======================

TEST(AvgPool2dGolden, FourByFourToTwoByTwo) {
  const tv::Geom2D g = make_geom({4, 4, 1, 1, 2, 2, 2, 2, false});
  const Vec in = {1, 5, 2,  0,   //
                  3, 4, 8,  1,   //
                  0, 0, -1, -2,  //
                  9, 1, -3, -4};
  Vec out(4, kSentinel);
  tv::avgpool2d_forward(g, in.data(), out.data());
  EXPECT_EQ(out, (Vec{13.0f / 4, 11.0f / 4, 10.0f / 4, -10.0f / 4}));

  const Vec dout = {4, 8, -4, 2};
  Vec din(16, kSentinel);
  tv::avgpool2d_backward(g, dout.data(), din.data());
  EXPECT_EQ(din, (Vec{1, 1, 2, 2,          //
                      1, 1, 2, 2,          //
                      -1, -1, 0.5f, 0.5f,  //
                      -1, -1, 0.5f, 0.5f}));
}

TEST(AvgPool2dGolden, PaddedWindowDividesByFullArea) {
  // All-ones 3x3 input, 2x2 windows at stride 2, last row/column in padding: the divisor stays 4.
  const tv::Geom2D g = make_geom({3, 3, 1, 1, 2, 2, 2, 2, true});
  const Vec in(9, 1.0f);
  Vec out(4, kSentinel);
  tv::avgpool2d_forward(g, in.data(), out.data());
  EXPECT_EQ(out, (Vec{1, 0.5f, 0.5f, 0.25f}));
}

class AvgPool2dCase : public testing::TestWithParam<WindowCase> {};

TEST_P(AvgPool2dCase, ForwardMatchesNaiveReference) {
  const tv::Geom2D g = make_geom(GetParam());
  std::mt19937 rng(41);
  const Vec in = random_vec(rng, in_size(g));
  Vec out(out_size(g), kSentinel);
  tv::avgpool2d_forward(g, in.data(), out.data());
  expect_all_near(out, pool_reference(g, in, false), 1e-6);
}

TEST_P(AvgPool2dCase, GradientMatchesFiniteDifferences) {
  const tv::Geom2D g = make_geom(GetParam());
  std::mt19937 rng(42);
  Vec in = random_vec(rng, in_size(g));
  const Vec r = random_vec(rng, out_size(g));
  auto loss = [&] {
    Vec out(out_size(g));
    tv::avgpool2d_forward(g, in.data(), out.data());
    return weighted_sum(out, r);
  };
  Vec din(in.size(), kSentinel);
  tv::avgpool2d_backward(g, r.data(), din.data());
  expect_gradient("din", in, din, loss);
}

INSTANTIATE_TEST_SUITE_P(Geometries, AvgPool2dCase, testing::ValuesIn(kPoolCases), param_name);

// ======================= AdaptiveAvgPool2D =======================

TEST(AdaptiveAvgPool2dGolden, SevenToThreeOverlappingBins) {
  // Rows 0..6 split into [0,3), [2,5), [4,7) (floor/ceil rule): means of 0..6 are 1, 3, 5.
  Vec in(7);
  std::iota(in.begin(), in.end(), 0.0f);
  Vec out(3, kSentinel);
  tv::adaptive_avgpool2d_forward(7, 1, 1, 3, 1, in.data(), out.data());
  EXPECT_EQ(out, (Vec{1, 3, 5}));

  // Rows 2 and 4 sit in two bins each and collect both shares.
  const Vec dout = {3, 6, 9};
  Vec din(7, kSentinel);
  tv::adaptive_avgpool2d_backward(7, 1, 1, 3, 1, dout.data(), din.data());
  EXPECT_EQ(din, (Vec{1, 1, 3, 2, 5, 3, 3}));
}

TEST(AdaptiveAvgPool2dGolden, GlobalAveragePerChannel) {
  // 2x2 pixels, 2 channels: channel 0 = 1,2,3,4 (mean 2.5), channel 1 = 10,0,0,-2 (mean 2).
  const Vec in = {1, 10, 2, 0, 3, 0, 4, -2};
  Vec out(2, kSentinel);
  tv::adaptive_avgpool2d_forward(2, 2, 2, 1, 1, in.data(), out.data());
  EXPECT_EQ(out, (Vec{2.5f, 2.0f}));
  const Vec dout = {4, -8};
  Vec din(8, kSentinel);
  tv::adaptive_avgpool2d_backward(2, 2, 2, 1, 1, dout.data(), din.data());
  EXPECT_EQ(din, (Vec{1, -2, 1, -2, 1, -2, 1, -2}));
}

struct AdaptiveCase {
  int in_h, in_w, c, out_h, out_w;
};

class AdaptiveAvgPool2dCase : public testing::TestWithParam<AdaptiveCase> {};

TEST_P(AdaptiveAvgPool2dCase, GradientMatchesFiniteDifferences) {
  const AdaptiveCase p = GetParam();
  std::mt19937 rng(51);
  Vec in = random_vec(rng, (size_t)p.in_h * p.in_w * p.c);
  const Vec r = random_vec(rng, (size_t)p.out_h * p.out_w * p.c);
  auto loss = [&] {
    Vec out(r.size());
    tv::adaptive_avgpool2d_forward(p.in_h, p.in_w, p.c, p.out_h, p.out_w, in.data(), out.data());
    return weighted_sum(out, r);
  };
  Vec din(in.size(), kSentinel);
  tv::adaptive_avgpool2d_backward(p.in_h, p.in_w, p.c, p.out_h, p.out_w, r.data(), din.data());
  expect_gradient("din", in, din, loss);
}

// Divisible, non-divisible (7->3, 5->3, 7->2), global 1x1, and more bins than cells (2->3).
INSTANTIATE_TEST_SUITE_P(Sizes, AdaptiveAvgPool2dCase,
                         testing::Values(AdaptiveCase{7, 7, 2, 3, 3}, AdaptiveCase{6, 6, 3, 2, 2},
                                         AdaptiveCase{5, 7, 2, 3, 2}, AdaptiveCase{4, 4, 3, 1, 1},
                                         AdaptiveCase{3, 5, 2, 1, 1}, AdaptiveCase{2, 2, 1, 3, 3}),
                         [](const testing::TestParamInfo<AdaptiveCase>& info) {
                           const AdaptiveCase& p = info.param;
                           return std::to_string(p.in_h) + "x" + std::to_string(p.in_w) + "x" + std::to_string(p.c) +
                                  "_to" + std::to_string(p.out_h) + "x" + std::to_string(p.out_w);
                         });

// ======================= Dense =======================

class DenseGolden : public KernelTest {};

TEST_P(DenseGolden, ThreeToTwo) {
  // w = [[1,2,3],[4,5,6]], in = (1,-1,2), b = (0.5,-1): out = (1-2+6+0.5, 4-5+12-1) = (5.5, 10).
  const Vec in = {1, -1, 2}, w = {1, 2, 3, 4, 5, 6}, b = {0.5f, -1};
  Vec out(2, kSentinel);
  k().dense_forward(3, 2, in.data(), w.data(), b.data(), out.data());
  EXPECT_EQ(out, (Vec{5.5f, 10}));

  // dout = (1, 2): din = w^T dout = (9, 12, 15); dw = dout in^T; db = dout.
  const Vec dout = {1, 2};
  Vec din(3, kSentinel);
  k().dense_backward_data(3, 2, w.data(), dout.data(), din.data());
  EXPECT_EQ(din, (Vec{9, 12, 15}));
  Vec dw(6, 0.0f), db(2, 0.0f);
  k().dense_backward_params(3, 2, in.data(), dout.data(), dw.data(), db.data());
  EXPECT_EQ(dw, (Vec{1, -1, 2, 2, -2, 4}));
  EXPECT_EQ(db, (Vec{1, 2}));
}

TEST_P(DenseGolden, ProductsAreSummedInDouble) {
  // 1e8 + 1 - 1e8 is 0 in float but 1 in double.
  const Vec in = {1e8f, 1, -1e8f}, w = {1, 1, 1}, b = {0};
  Vec out(1, kSentinel);
  k().dense_forward(3, 1, in.data(), w.data(), b.data(), out.data());
  EXPECT_EQ(out[0], 1.0f);
}

INSTANTIATE_TEST_SUITE_P(Kernels, DenseGolden, testing::ValuesIn(kKernelSets), kernel_name);

class Dense : public KernelTest {};

TEST_P(Dense, GradientsMatchFiniteDifferences) {
  const int in_n = 12, out_n = 5;
  std::mt19937 rng(61);
  Vec in = random_vec(rng, in_n), w = random_vec(rng, (size_t)in_n * out_n), b = random_vec(rng, out_n);
  const Vec r = random_vec(rng, out_n);
  auto loss = [&] {
    Vec out(out_n);
    k().dense_forward(in_n, out_n, in.data(), w.data(), b.data(), out.data());
    return weighted_sum(out, r);
  };
  Vec din(in_n, kSentinel), dw(w.size(), 0.0f), db(out_n, 0.0f);
  k().dense_backward_data(in_n, out_n, w.data(), r.data(), din.data());
  k().dense_backward_params(in_n, out_n, in.data(), r.data(), dw.data(), db.data());
  expect_gradient("din", in, din, loss);
  expect_gradient("dw", w, dw, loss);
  expect_gradient("db", b, db, loss);

  Vec dw2 = dw, db2 = db;
  k().dense_backward_params(in_n, out_n, in.data(), r.data(), dw2.data(), db2.data());
  expect_doubled("dw", dw, dw2);
  expect_doubled("db", db, db2);
}

INSTANTIATE_TEST_SUITE_P(Kernels, Dense, testing::ValuesIn(kKernelSets), kernel_name);

// ======================= Activations =======================

class ActivationsGolden : public KernelTest {};

TEST_P(ActivationsGolden, ReluLeakyReluClip) {
  Vec x = {-2, -0.5f, 0, 0.5f, 3};
  k().relu_forward(x.data(), x.size());
  EXPECT_EQ(x, (Vec{0, 0, 0, 0.5f, 3}));
  Vec dy = {1, 2, 3, 4, 5};
  k().relu_backward(x.data(), dy.data(), dy.size());
  EXPECT_EQ(dy, (Vec{0, 0, 0, 4, 5}));

  Vec lx = {-2, -0.5f, 0, 0.5f, 3};
  k().leaky_relu_forward(lx.data(), lx.size(), 0.25f);
  EXPECT_EQ(lx, (Vec{-0.5f, -0.125f, 0, 0.5f, 3}));
  Vec ldy = {4, 4, 4, 4, 4};
  k().leaky_relu_backward(lx.data(), ldy.data(), ldy.size(), 0.25f);
  EXPECT_EQ(ldy, (Vec{1, 1, 1, 4, 4}));

  Vec cx = {-2, -0.5f, 0, 0.5f, 3};
  k().clip_forward(cx.data(), cx.size(), -1.0f, 1.0f);
  EXPECT_EQ(cx, (Vec{-1, -0.5f, 0, 0.5f, 1}));
}

INSTANTIATE_TEST_SUITE_P(Kernels, ActivationsGolden, testing::ValuesIn(kKernelSets), kernel_name);

// Gradient of an in-place activation: forward(x) into y, backward(y, dy = r) gives dL/dx.
void check_activation(const char* what, const std::function<void(float*, size_t)>& forward,
                      const std::function<void(const float*, float*, size_t)>& backward) {
  std::mt19937 rng(71);
  Vec x = away_from_zero(rng, 43, 5 * kEps, 2.0f);  // kinks at 0 stay out of the +-kEps steps
  const Vec r = random_vec(rng, x.size());
  auto loss = [&] {
    Vec y = x;
    forward(y.data(), y.size());
    return weighted_sum(y, r);
  };
  Vec y = x;
  forward(y.data(), y.size());
  Vec dx = r;
  backward(y.data(), dx.data(), dx.size());
  expect_gradient(what, x, dx, loss);
}

class Activations : public KernelTest {};

TEST_P(Activations, ReluGradientMatchesFiniteDifferences) {
  check_activation("relu", k().relu_forward, k().relu_backward);
}

TEST_P(Activations, LeakyReluGradientMatchesFiniteDifferences) {
  const float alpha = 0.1f;
  check_activation(
      "leaky_relu", [&](float* x, size_t n) { k().leaky_relu_forward(x, n, alpha); },
      [&](const float* y, float* dy, size_t n) { k().leaky_relu_backward(y, dy, n, alpha); });
}

INSTANTIATE_TEST_SUITE_P(Kernels, Activations, testing::ValuesIn(kKernelSets), kernel_name);

// ======================= Softmax and losses =======================

TEST(LossesGolden, SoftmaxOfZeroAndLn2) {
  const Vec logits = {0.0f, std::log(2.0f)};
  Vec p(2, kSentinel);
  tv::softmax(logits.data(), 2, p.data());
  EXPECT_NEAR(p[0], 1.0f / 3, 1e-7f);
  EXPECT_NEAR(p[1], 2.0f / 3, 1e-7f);

  // Shifting all logits changes nothing, even far beyond exp's float range.
  const Vec big = {1000.0f, 1000.0f + std::log(2.0f)};
  tv::softmax(big.data(), 2, p.data());
  EXPECT_NEAR(p[0], 1.0f / 3, 1e-4f);
  EXPECT_NEAR(p[1], 2.0f / 3, 1e-4f);

  // In place (probs aliasing logits) is allowed.
  Vec inplace = logits;
  tv::softmax(inplace.data(), 2, inplace.data());
  EXPECT_NEAR(inplace[1], 2.0f / 3, 1e-7f);
}

TEST(LossesGolden, SoftmaxCrossEntropy) {
  // softmax(0, ln2) = (1/3, 2/3); label 1: loss = ln(3/2); dlogits = (1/3, -1/3).
  const Vec logits = {0.0f, std::log(2.0f)};
  Vec p(2, kSentinel), d(2, kSentinel);
  const float loss = tv::softmax_cross_entropy(logits.data(), 2, 1, p.data(), d.data());
  EXPECT_NEAR(loss, std::log(1.5f), 1e-6f);
  EXPECT_NEAR(p[1], 2.0f / 3, 1e-7f);
  EXPECT_NEAR(d[0], 1.0f / 3, 1e-7f);
  EXPECT_NEAR(d[1], -1.0f / 3, 1e-7f);
}

TEST(LossesGolden, SoftmaxCrossEntropyClampsTinyProbability) {
  // p[label] = e^-200 underflows to 0 in float; the loss is capped at -ln(1e-30) ~ 69.08.
  const Vec logits = {0.0f, -200.0f};
  Vec p(2), d(2);
  const float loss = tv::softmax_cross_entropy(logits.data(), 2, 1, p.data(), d.data());
  EXPECT_TRUE(std::isfinite(loss));
  EXPECT_NEAR(loss, -std::log(1e-30f), 1e-3f);
  EXPECT_NEAR(d[1], -1.0f, 1e-7f);
}

TEST(LossesGolden, MeanSquaredError) {
  // out = (1, 2, 0), target = (0, 0, 0): L = (1 + 4 + 0) / 3; dout = (2/3) * (1, 2, 0).
  const Vec out = {1, 2, 0}, target = {0, 0, 0};
  Vec d(3, kSentinel);
  const float loss = tv::mse_loss(out.data(), target.data(), 3, d.data());
  EXPECT_NEAR(loss, 5.0f / 3, 1e-6f);
  EXPECT_NEAR(d[0], 2.0f / 3, 1e-7f);
  EXPECT_NEAR(d[1], 4.0f / 3, 1e-7f);
  EXPECT_EQ(d[2], 0.0f);
}

TEST(Losses, SoftmaxCrossEntropyGradientMatchesFiniteDifferences) {
  std::mt19937 rng(81);
  for (int label : {0, 3, 6}) {
    SCOPED_TRACE(label);
    Vec logits = random_vec(rng, 7, -3.0f, 3.0f);
    Vec p(7), d(7);
    auto loss = [&] {
      Vec pp(7), dd(7);
      return (double)tv::softmax_cross_entropy(logits.data(), 7, label, pp.data(), dd.data());
    };
    tv::softmax_cross_entropy(logits.data(), 7, label, p.data(), d.data());
    expect_gradient("dlogits", logits, d, loss);
  }
}

TEST(Losses, MeanSquaredErrorGradientMatchesFiniteDifferences) {
  std::mt19937 rng(82);
  Vec out = random_vec(rng, 9, -2.0f, 2.0f);
  const Vec target = random_vec(rng, 9, -2.0f, 2.0f);
  auto loss = [&] {
    Vec dd(9);
    return (double)tv::mse_loss(out.data(), target.data(), 9, dd.data());
  };
  Vec d(9, kSentinel);
  tv::mse_loss(out.data(), target.data(), 9, d.data());
  expect_gradient("dout", out, d, loss);
}

}  // namespace
