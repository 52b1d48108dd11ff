// The int8 kernels' arithmetic: rounding ties (positive and negative), saturation, shifts, the
// pooling and elementwise rules, lookup tables, quantisation and the accumulator headroom check.
// Conv/depthwise/dense are also compared with a naive int64 reference written independently here.
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "test_support.h"
#include "tv/int8/int8_ops.h"

namespace {

// ---------------------------------------------------------------- requantisation

TEST(Int8Requantize, RoundsHalfUpIncludingNegativeTies) {
  // s = 1: x / 2 with ties towards +inf.
  EXPECT_EQ(tv::requantize_s8(3, 1), 2);    // 1.5 -> 2
  EXPECT_EQ(tv::requantize_s8(1, 1), 1);    // 0.5 -> 1
  EXPECT_EQ(tv::requantize_s8(-1, 1), 0);   // -0.5 -> 0 (half UP, not away from zero)
  EXPECT_EQ(tv::requantize_s8(-3, 1), -1);  // -1.5 -> -1
  EXPECT_EQ(tv::requantize_s8(-5, 1), -2);  // -2.5 -> -2
  // s = 4: ties at 8/16.
  EXPECT_EQ(tv::requantize_s8(24, 4), 2);    // 1.5
  EXPECT_EQ(tv::requantize_s8(-24, 4), -1);  // -1.5
  EXPECT_EQ(tv::requantize_s8(23, 4), 1);    // 1.4375
  EXPECT_EQ(tv::requantize_s8(-25, 4), -2);  // -1.5625
  EXPECT_EQ(tv::requantize_s8(-8, 4), 0);    // -0.5
  EXPECT_EQ(tv::requantize_s8(-9, 4), -1);   // -0.5625
}

TEST(Int8Requantize, ShiftZeroHasNoRoundingTerm) {
  EXPECT_EQ(tv::requantize_s8(5, 0), 5);
  EXPECT_EQ(tv::requantize_s8(-7, 0), -7);
  EXPECT_EQ(tv::requantize_s8(200, 0), 127);
  EXPECT_EQ(tv::requantize_s8(-200, 0), -128);
}

TEST(Int8Requantize, Saturates) {
  EXPECT_EQ(tv::requantize_s8(127 * 16 + 7, 4), 127);    // 127.44 -> 127
  EXPECT_EQ(tv::requantize_s8(127 * 16 + 8, 4), 127);    // 127.5 -> 128 -> 127
  EXPECT_EQ(tv::requantize_s8(-128 * 16 - 8, 4), -128);  // -128.5 -> -128
  EXPECT_EQ(tv::requantize_s8(-128 * 16 - 9, 4), -128);  // -128.56 -> -129 -> -128
  EXPECT_EQ(tv::requantize_s8(int64_t(1) << 40, 3), 127);
  EXPECT_EQ(tv::requantize_s8(-(int64_t(1) << 40), 3), -128);
}

TEST(Int8Requantize, HugeShiftsGiveZero) {
  EXPECT_EQ(tv::requantize_s8(1000000, 40), 0);
  EXPECT_EQ(tv::requantize_s8(-1000000, 63), 0);
  EXPECT_EQ(tv::requantize_s8(int64_t(1) << 39, 40), 1);  // exactly 0.5 -> 1
}

// ---------------------------------------------------------------- quantise / dequantise

TEST(Int8Quantize, FloorOfXPlusHalf) {
  EXPECT_EQ(tv::quantize_one_s8(0.5f, 0), 1);
  EXPECT_EQ(tv::quantize_one_s8(-0.5f, 0), 0);
  EXPECT_EQ(tv::quantize_one_s8(1.5f, 0), 2);
  EXPECT_EQ(tv::quantize_one_s8(-1.5f, 0), -1);
  EXPECT_EQ(tv::quantize_one_s8(-2.5f, 0), -2);
  EXPECT_EQ(tv::quantize_one_s8(0.375f, -3), 3);     // 3.0
  EXPECT_EQ(tv::quantize_one_s8(-0.4375f, -3), -3);  // -3.5 -> -3
  EXPECT_EQ(tv::quantize_one_s8(-0.4376f, -3), -4);
  EXPECT_EQ(tv::quantize_one_s8(12.0f, 2), 3);    // 12 / 4
  EXPECT_EQ(tv::quantize_one_s8(-10.0f, 2), -2);  // -2.5 -> -2
  // The float just below one half rounds down: the sum is formed exactly, not in float32.
  EXPECT_EQ(tv::quantize_one_s8(std::nextafter(0.5f, 0.0f), 0), 0);
}

TEST(Int8Quantize, SaturatesAndHandlesNonFinite) {
  EXPECT_EQ(tv::quantize_one_s8(127.49f, 0), 127);
  EXPECT_EQ(tv::quantize_one_s8(127.5f, 0), 127);
  EXPECT_EQ(tv::quantize_one_s8(-128.5f, 0), -128);
  EXPECT_EQ(tv::quantize_one_s8(-1e30f, -7), -128);
  EXPECT_EQ(tv::quantize_one_s8(1e30f, -7), 127);
  EXPECT_EQ(tv::quantize_one_s8(std::numeric_limits<float>::infinity(), 0), 127);
  EXPECT_EQ(tv::quantize_one_s8(-std::numeric_limits<float>::infinity(), 0), -128);
  EXPECT_EQ(tv::quantize_one_s8(std::numeric_limits<float>::quiet_NaN(), 0), 0);
}

TEST(Int8Quantize, DequantizeIsExactAndRoundTrips) {
  for (int e = -12; e <= 4; ++e)
    for (int q = -128; q <= 127; ++q) {
      const float x = tv::dequantize_one_s8(int8_t(q), e);
      EXPECT_EQ(x, std::ldexp(float(q), e));
      EXPECT_EQ(tv::quantize_one_s8(x, e), q);
    }
  const float xs[3] = {0.25f, -0.3f, 1.0f};
  int8_t q[3];
  float back[3];
  tv::quantize_s8(xs, 3, -4, q);
  EXPECT_EQ(q[0], 4);
  EXPECT_EQ(q[1], -5);  // -4.8
  EXPECT_EQ(q[2], 16);
  tv::dequantize_s8(q, 3, -4, back);
  EXPECT_EQ(back[1], -0.3125f);
}

// ---------------------------------------------------------------- conv / depthwise / dense

// Naive references, written independently of the kernels: int64 sums, explicit bounds checks.
int8_t ref_requant(int64_t acc, int s, bool relu) {
  int64_t v = acc;
  if (s > 0) v = (int64_t)std::floor((long double)acc / (long double)(int64_t(1) << s) + 0.5L);
  if (v > 127) v = 127;
  if (v < -128) v = -128;
  if (relu && v < 0) v = 0;
  return int8_t(v);
}

std::vector<int8_t> ref_conv(const tv::Geom2D& g, const std::vector<int8_t>& in, const std::vector<int8_t>& w,
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

std::vector<int8_t> random_int8(std::mt19937& rng, size_t n, int lo = -128, int hi = 127) {
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<int8_t> v(n);
  for (auto& x : v) x = int8_t(d(rng));
  return v;
}

std::vector<int32_t> random_bias(std::mt19937& rng, size_t n, int mag) {
  std::uniform_int_distribution<int> d(-mag, mag);
  std::vector<int32_t> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

tv::Geom2D make_geom(int in_h, int in_w, int in_c, int out_c, int kh, int kw, int sh, int sw, int pt, int pl, int pb,
                     int pr) {
  tv::Geom2D g;
  g.in_h = in_h, g.in_w = in_w, g.in_c = in_c, g.out_c = out_c;
  g.k_h = kh, g.k_w = kw, g.stride_h = sh, g.stride_w = sw, g.pad_top = pt, g.pad_left = pl;
  g.out_h = (in_h + pt + pb - kh) / sh + 1;
  g.out_w = (in_w + pl + pr - kw) / sw + 1;
  return g;
}

TEST(Int8Conv, MatchesNaiveReferenceOnRandomGeometries) {
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 60; ++trial) {
    std::uniform_int_distribution<int> small(1, 5), ch(1, 19), k(1, 4), st(1, 2), pad(0, 2), sh(0, 12);
    const int kh = k(rng), kw = k(rng);
    tv::Geom2D g = make_geom(small(rng) + kh, small(rng) + kw, ch(rng), ch(rng), kh, kw, st(rng), st(rng),
                             std::min(pad(rng), kh - 1), std::min(pad(rng), kw - 1), pad(rng), pad(rng));
    const auto in = random_int8(rng, size_t(g.in_h) * g.in_w * g.in_c);
    const auto w = random_int8(rng, size_t(g.out_c) * kh * kw * g.in_c);
    const auto b = random_bias(rng, size_t(g.out_c), 20000);
    tv::Q8Layer q;
    q.e_in = -5, q.e_w = -7, q.e_out = q.e_in + q.e_w + sh(rng), q.relu = trial % 2 == 0;
    std::vector<int8_t> out(size_t(g.out_h) * g.out_w * g.out_c, 99);
    ASSERT_TRUE(tv::conv2d_s8(g, in.data(), w.data(), b.data(), q, out.data()).ok());
    EXPECT_EQ(out, ref_conv(g, in, w, b, q, false)) << "trial " << trial;
  }
}

TEST(Int8Conv, NullBiasMeansZeroBias) {
  std::mt19937 rng(5);
  const tv::Geom2D g = make_geom(4, 4, 3, 5, 3, 3, 1, 1, 1, 1, 1, 1);
  const auto in = random_int8(rng, 48), w = random_int8(rng, 5 * 27);
  tv::Q8Layer q;
  q.e_in = -4, q.e_w = -6, q.e_out = -3;
  std::vector<int8_t> a(g.out_h * g.out_w * 5), z(a.size());
  const std::vector<int32_t> zeros(5, 0);
  ASSERT_TRUE(tv::conv2d_s8(g, in.data(), w.data(), nullptr, q, a.data()).ok());
  ASSERT_TRUE(tv::conv2d_s8(g, in.data(), w.data(), zeros.data(), q, z.data()).ok());
  EXPECT_EQ(a, z);
}

TEST(Int8Conv, RefusesNegativeShiftAndBadGeometry) {
  const tv::Geom2D g = make_geom(2, 2, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0);
  int8_t in[4] = {1, 2, 3, 4}, w[1] = {1}, out[4];
  tv::Q8Layer q;
  q.e_in = -3, q.e_w = -3, q.e_out = -7;  // shift -1
  tv::Status s = tv::conv2d_s8(g, in, w, nullptr, q, out);
  EXPECT_EQ(s.code, tv::StatusCode::BadParameter);
  EXPECT_EQ(s.a, -1);
  EXPECT_EQ(tv::depthwise_conv2d_s8(g, in, w, nullptr, q, out).code, tv::StatusCode::BadParameter);
  EXPECT_EQ(tv::dense_s8(4, 1, in, w, nullptr, q, out).code, tv::StatusCode::BadParameter);
  q.e_out = -6;
  tv::Geom2D bad = g;
  bad.stride_w = 0;
  EXPECT_EQ(tv::conv2d_s8(bad, in, w, nullptr, q, out).code, tv::StatusCode::BadStride);
  bad = g;
  bad.in_c = 0;
  EXPECT_FALSE(tv::conv2d_s8(bad, in, w, nullptr, q, out).ok());
  EXPECT_EQ(tv::conv2d_s8(g, nullptr, w, nullptr, q, out).code, tv::StatusCode::InvalidArgument);
}

TEST(Int8Conv, ShiftZeroAndFusedRelu) {
  // 1x1 conv, one input channel: out = sat8(x * w + b) at s = 0.
  const tv::Geom2D g = make_geom(1, 4, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0);
  const int8_t in[4] = {3, -3, 100, -100};
  const int8_t w[1] = {2};
  const int32_t b[1] = {1};
  int8_t out[4];
  tv::Q8Layer q;
  q.e_in = -2, q.e_w = -1, q.e_out = -3;
  ASSERT_TRUE(tv::conv2d_s8(g, in, w, b, q, out).ok());
  EXPECT_EQ(out[0], 7);
  EXPECT_EQ(out[1], -5);
  EXPECT_EQ(out[2], 127);
  EXPECT_EQ(out[3], -128);
  q.relu = true;
  ASSERT_TRUE(tv::conv2d_s8(g, in, w, b, q, out).ok());
  EXPECT_EQ(out[1], 0);
  EXPECT_EQ(out[3], 0);
}

TEST(Int8DepthwiseConv, MatchesNaiveReferenceOnRandomGeometries) {
  std::mt19937 rng(99);
  for (int trial = 0; trial < 60; ++trial) {
    std::uniform_int_distribution<int> small(1, 6), ch(1, 37), k(1, 5), st(1, 3), pad(0, 2), sh(0, 10);
    const int kh = k(rng), kw = k(rng), c = ch(rng);
    tv::Geom2D g = make_geom(small(rng) + kh, small(rng) + kw, c, c, kh, kw, st(rng), st(rng),
                             std::min(pad(rng), kh - 1), std::min(pad(rng), kw - 1), pad(rng), pad(rng));
    const auto in = random_int8(rng, size_t(g.in_h) * g.in_w * c);
    const auto w = random_int8(rng, size_t(kh) * kw * c);
    const auto b = random_bias(rng, size_t(c), 3000);
    tv::Q8Layer q;
    q.e_in = -6, q.e_w = -6, q.e_out = q.e_in + q.e_w + sh(rng), q.relu = trial % 3 == 0;
    std::vector<int8_t> out(size_t(g.out_h) * g.out_w * c);
    ASSERT_TRUE(tv::depthwise_conv2d_s8(g, in.data(), w.data(), b.data(), q, out.data()).ok());
    EXPECT_EQ(out, ref_conv(g, in, w, b, q, true)) << "trial " << trial;
  }
}

TEST(Int8Dense, MatchesNaiveReferenceAndSaturates) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    std::uniform_int_distribution<int> n(1, 70), sh(0, 14);
    const int in_n = n(rng), out_n = n(rng);
    const auto in = random_int8(rng, size_t(in_n)), w = random_int8(rng, size_t(in_n) * out_n);
    const auto b = random_bias(rng, size_t(out_n), 100000);
    tv::Q8Layer q;
    q.e_in = -7, q.e_w = -8, q.e_out = -15 + sh(rng), q.relu = trial % 2 == 1;
    std::vector<int8_t> out(static_cast<size_t>(out_n));
    ASSERT_TRUE(tv::dense_s8(in_n, out_n, in.data(), w.data(), b.data(), q, out.data()).ok());
    for (int o = 0; o < out_n; ++o) {
      int64_t acc = b[size_t(o)];
      for (int i = 0; i < in_n; ++i) acc += int64_t(in[size_t(i)]) * w[size_t(o) * in_n + i];
      EXPECT_EQ(out[size_t(o)], ref_requant(acc, q.shift(), q.relu)) << trial << "/" << o;
    }
  }
}

TEST(Int8Dense, ExactTiesBothSigns) {
  // acc = x * 1 with s = 2: x = 6 -> 1.5 -> 2; x = -6 -> -1.5 -> -1; x = -2 -> -0.5 -> 0.
  const int8_t in[1] = {6};
  const int8_t w[3] = {1, -1, 0};
  const int32_t b[3] = {0, 0, -2};
  int8_t out[3];
  tv::Q8Layer q;
  q.e_in = 0, q.e_w = 0, q.e_out = 2;
  ASSERT_TRUE(tv::dense_s8(1, 3, in, w, b, q, out).ok());
  EXPECT_EQ(out[0], 2);
  EXPECT_EQ(out[1], -1);
  EXPECT_EQ(out[2], 0);
}

// ---------------------------------------------------------------- pooling

TEST(Int8Pool, MaxPoolKeepsValuesAndSkipsPadding) {
  // 1 x 4 x 1 input, window 1x2 stride 1, pad left 1: outputs max of (pad, a), (a, b), (b, c), (c, d).
  const tv::Geom2D g = make_geom(1, 4, 1, 1, 1, 2, 1, 1, 0, 1, 0, 0);
  const int8_t in[4] = {-100, -128, 5, -3};
  int8_t out[4];
  ASSERT_TRUE(tv::maxpool2d_s8(g, in, out).ok());
  EXPECT_EQ(out[0], -100);  // the padded cell is skipped, not a zero
  EXPECT_EQ(out[1], -100);
  EXPECT_EQ(out[2], 5);
  EXPECT_EQ(out[3], 5);
}

TEST(Int8Pool, AvgPoolRoundsHalfUpOverTheFullArea) {
  // 2x2 window on a 2x2 input, e_in == e_out: (sum / 4) rounded half up.
  const tv::Geom2D g = make_geom(2, 2, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0);
  struct Case {
    int8_t a, b, c, d, want;
  } cases[] = {
      {1, 1, 0, 0, 1},      // 0.5 -> 1
      {-1, -1, 0, 0, 0},    // -0.5 -> 0
      {3, 3, 0, 0, 2},      // 1.5 -> 2
      {-3, -3, 0, 0, -1},   // -1.5 -> -1
      {-3, -3, -1, 0, -2},  // -1.75 -> -2
      {127, 127, 127, 127, 127}, {-128, -128, -128, -128, -128},
  };
  for (const Case& c : cases) {
    const int8_t in[4] = {c.a, c.b, c.c, c.d};
    int8_t out[1];
    ASSERT_TRUE(tv::avgpool2d_s8(g, in, -5, -5, out).ok());
    EXPECT_EQ(out[0], c.want) << int(c.a) << "," << int(c.b) << "," << int(c.c) << "," << int(c.d);
  }
}

TEST(Int8Pool, AvgPoolExponentChangeAndSaturation) {
  const tv::Geom2D g = make_geom(1, 3, 1, 1, 1, 3, 1, 1, 0, 0, 0, 0);
  int8_t out[1];
  // sum 3 over area 3 at e_in = -6, e_out = -5: 1 * 2^-6 / 2^-5 = 0.5 -> 1; sum -3 -> -0.5 -> 0.
  const int8_t pos[3] = {1, 1, 1}, neg[3] = {-1, -1, -1};
  ASSERT_TRUE(tv::avgpool2d_s8(g, pos, -6, -5, out).ok());
  EXPECT_EQ(out[0], 1);
  ASSERT_TRUE(tv::avgpool2d_s8(g, neg, -6, -5, out).ok());
  EXPECT_EQ(out[0], 0);
  // sum 100 / 3 = 33.33 scaled up by 2^3 = 266.7 -> saturates.
  const int8_t big[3] = {40, 30, 30};
  ASSERT_TRUE(tv::avgpool2d_s8(g, big, -4, -7, out).ok());
  EXPECT_EQ(out[0], 127);
  // 100 / 3 * 2^-2 = 8.33 -> 8
  ASSERT_TRUE(tv::avgpool2d_s8(g, big, -4, -2, out).ok());
  EXPECT_EQ(out[0], 8);
  // Extreme exponent gaps stay exact: tiny -> 0, huge -> saturated.
  ASSERT_TRUE(tv::avgpool2d_s8(g, big, -60, 0, out).ok());
  EXPECT_EQ(out[0], 0);
  ASSERT_TRUE(tv::avgpool2d_s8(g, neg, 10, -40, out).ok());
  EXPECT_EQ(out[0], -128);
}

TEST(Int8Pool, AvgPoolPaddedCellsCountAsZero) {
  // Window 3 with left pad 2 at the first output: only one real cell, divisor still 3 (ONNX
  // count_include_pad = 1, the rule Espressif's golden vectors follow).
  const tv::Geom2D g = make_geom(1, 3, 1, 1, 1, 3, 1, 1, 0, 2, 0, 0);
  const int8_t in[3] = {9, 0, 0};
  int8_t out[3];
  ASSERT_TRUE(tv::avgpool2d_s8(g, in, -3, -3, out).ok());
  EXPECT_EQ(out[0], 3);
  EXPECT_EQ(out[1], 3);
  EXPECT_EQ(out[2], 3);
}

TEST(Int8Pool, GlobalAvgPool) {
  // 2 x 2 x 2 input; channel 0 sums to 6 (1.5 -> 2), channel 1 sums to -6 (-1.5 -> -1).
  const int8_t in[8] = {1, -1, 2, -2, 3, -3, 0, 0};
  int8_t out[2];
  ASSERT_TRUE(tv::global_avgpool_s8(2, 2, 2, in, -4, -4, out).ok());
  EXPECT_EQ(out[0], 2);
  EXPECT_EQ(out[1], -1);
  ASSERT_TRUE(tv::global_avgpool_s8(2, 2, 2, in, -4, -6, out).ok());  // x4: 6 and -6
  EXPECT_EQ(out[0], 6);
  EXPECT_EQ(out[1], -6);
  EXPECT_EQ(tv::global_avgpool_s8(0, 2, 2, in, 0, 0, out).code, tv::StatusCode::ZeroDimension);
}

// ---------------------------------------------------------------- lookup tables and activations

TEST(Int8Lut, TableIsIndexedFromMinus128) {
  int8_t table[256];
  for (int i = 0; i < 256; ++i) table[i] = int8_t(127 - i);  // q -> -1 - q
  const int8_t in[4] = {-128, 0, 127, -1};
  int8_t out[4];
  tv::lut_s8(table, in, 4, out);
  EXPECT_EQ(out[0], 127);
  EXPECT_EQ(out[1], -1);
  EXPECT_EQ(out[2], -128);
  EXPECT_EQ(out[3], 0);
  tv::lut_s8(table, out, 4, out);  // in place
  EXPECT_EQ(out[0], -128);
}

TEST(Int8Lut, LeakyReluTableFollowsFloat32Products) {
  int8_t t[256];
  // alpha = 0.25 (exact), e_in = e_out: negative q map to q/4 rounded half up; positive kept.
  tv::leaky_relu_table_s8(0.25f, -5, -5, t);
  EXPECT_EQ(t[127 + 128], 127);
  EXPECT_EQ(t[0 + 128], 0);
  EXPECT_EQ(t[-2 + 128], 0);   // -0.5 -> 0
  EXPECT_EQ(t[-6 + 128], -1);  // -1.5 -> -1
  EXPECT_EQ(t[-7 + 128], -2);  // -1.75 -> -2
  EXPECT_EQ(t[-128 + 128], -32);
  // alpha is the float32 the model stores: 0.3f = 0.30000001192..., so q = -105 gives
  // -31.5000012 -> -32, where the decimal 0.3 would give -31.5 -> -31.
  tv::leaky_relu_table_s8(0.3f, 0, 0, t);
  EXPECT_EQ(t[-105 + 128], -32);
  EXPECT_EQ(t[-128 + 128], -38);  // -38.4
  // The product is rounded to float32, as torch rounds it: 0.004f * -125 = -0.50000002375 exactly,
  // -0.5 in float32, so q = -125 maps to 0 where the exact product would give -1.
  tv::leaky_relu_table_s8(0.004f, 0, 0, t);
  EXPECT_EQ(t[-125 + 128], 0);
  EXPECT_EQ(t[-126 + 128], -1);  // -0.504
  // Positive part rescaled: e_in = -4, e_out = -3 -> q / 2 rounded half up; saturation impossible.
  tv::leaky_relu_table_s8(0.01f, -4, -3, t);
  EXPECT_EQ(t[3 + 128], 2);
  EXPECT_EQ(t[127 + 128], 64);
  // Scaled up: e_in = -3, e_out = -5 -> 4q saturates.
  tv::leaky_relu_table_s8(0.5f, -3, -5, t);
  EXPECT_EQ(t[40 + 128], 127);
  EXPECT_EQ(t[-128 + 128], -128);  // 0.5 * -128 * 4 = -256
}

TEST(Int8Lut, SigmoidTable) {
  int8_t t[256];
  tv::sigmoid_table_s8(-7, -8, t);
  EXPECT_EQ(t[0 + 128], 127);    // 0.5 * 256 = 128 saturates
  EXPECT_EQ(t[-128 + 128], 69);  // sigmoid(-1) * 256 = 68.8
}

TEST(Int8Relu, InPlace) {
  int8_t x[4] = {-128, -1, 0, 127};
  tv::relu_s8(x, 4);
  EXPECT_EQ(x[0], 0);
  EXPECT_EQ(x[1], 0);
  EXPECT_EQ(x[3], 127);
}

// ---------------------------------------------------------------- elementwise

TEST(Int8Elementwise, AddSameAndDifferentExponents) {
  const int8_t a[4] = {100, -100, 3, -3};
  const int8_t b[4] = {100, -100, 0, 0};
  int8_t out[4];
  tv::add_s8(a, -6, b, -6, 4, -6, out);
  EXPECT_EQ(out[0], 127);
  EXPECT_EQ(out[1], -128);
  EXPECT_EQ(out[2], 3);
  // a at -6, b at -5 to e_out -5: a/2 + b -> 3 * 2^-6 = 1.5 * 2^-5 -> 2; -1.5 -> -1.
  tv::add_s8(a, -6, b, -5, 4, -5, out);
  EXPECT_EQ(out[2], 2);
  EXPECT_EQ(out[3], -1);
  EXPECT_EQ(out[0], 127);  // 50 + 100 = 150
  // Scaling up to a finer output exponent.
  const int8_t c[1] = {5}, d[1] = {-3};
  tv::add_s8(c, -2, d, -3, 1, -4, out);  // (10 - 3) * 2^-3 = 14 * 2^-4
  EXPECT_EQ(out[0], 14);
}

TEST(Int8Elementwise, AddWithFarApartExponentsStillRoundsCorrectly) {
  // 1 * 2^0 + tiny: e_out = 1 puts the coarse value exactly at a tie (0.5); the tiny term decides.
  const int8_t one[2] = {1, 1};
  const int8_t tiny[2] = {1, -1};
  int8_t out[2];
  tv::add_s8(one, 0, tiny, -60, 2, 1, out);
  EXPECT_EQ(out[0], 1);  // 0.5 + eps -> 1
  EXPECT_EQ(out[1], 0);  // 0.5 - eps -> 0
  const int8_t zero[1] = {0}, small[1] = {64};
  tv::add_s8(zero, 0, small, -60, 1, -66, out);  // 64 * 2^-60 = 2^-54 = 4096 * 2^-66 -> saturates
  EXPECT_EQ(out[0], 127);
  tv::add_s8(tiny, -60, one, 0, 2, 1, out);  // operands swapped
  EXPECT_EQ(out[0], 1);
  EXPECT_EQ(out[1], 0);
}

TEST(Int8Elementwise, MulRoundsHalfUpAndSaturates) {
  const int8_t a[4] = {64, -64, 127, -128};
  const int8_t b[4] = {3, 3, 127, 127};
  int8_t out[4];
  // e_a = -7, e_b = -8 -> product at -15, e_out = -8: shift 7. 192 / 128 = 1.5 -> 2; -1.5 -> -1.
  tv::mul_s8(a, -7, b, -8, 4, -8, out);
  EXPECT_EQ(out[0], 2);
  EXPECT_EQ(out[1], -1);
  EXPECT_EQ(out[2], 126);                // 16129 / 128 = 126.01
  EXPECT_EQ(out[3], -127);               // -16256 / 128 = -127
  tv::mul_s8(a, -2, b, -2, 4, -5, out);  // shift -1: scaled up, saturated
  EXPECT_EQ(out[0], 127);
  EXPECT_EQ(out[3], -128);
}

TEST(Int8Elementwise, Rescale) {
  const int8_t in[5] = {3, -3, 1, -1, 100};
  int8_t out[5];
  tv::rescale_s8(in, 5, -6, -5, out);  // halve, half up
  EXPECT_EQ(out[0], 2);
  EXPECT_EQ(out[1], -1);
  EXPECT_EQ(out[2], 1);
  EXPECT_EQ(out[3], 0);
  EXPECT_EQ(out[4], 50);
  tv::rescale_s8(in, 5, -5, -6, out);  // double
  EXPECT_EQ(out[0], 6);
  EXPECT_EQ(out[4], 127);
  tv::rescale_s8(in, 5, -5, -5, out);
  EXPECT_EQ(out[1], -3);
}

// ---------------------------------------------------------------- softmax

TEST(Int8Softmax, ProbabilitiesSumToOneAndFollowTheLogits) {
  const int8_t q[4] = {-128, 0, 64, 127};
  float p[4];
  tv::softmax_s8(q, 4, -5, p);
  double sum = 0;
  for (float v : p) sum += v;
  EXPECT_NEAR(sum, 1.0, 1e-6);
  EXPECT_LT(p[0], p[1]);
  EXPECT_LT(p[2], p[3]);
  // Two logits 1.0 apart (32 * 2^-5): ratio e.
  const int8_t r[2] = {0, 32};
  tv::softmax_s8(r, 2, -5, p);
  EXPECT_NEAR(p[1] / p[0], std::exp(1.0), 1e-5);
}

// ---------------------------------------------------------------- accumulator headroom

TEST(Int8Headroom, BitsAgainstTheTwentyBitLanes) {
  EXPECT_EQ(tv::headroom_bits_s8(0), 19);
  EXPECT_EQ(tv::headroom_bits_s8(1), 18);
  EXPECT_EQ(tv::headroom_bits_s8((1 << 19) - 1), 0);
  EXPECT_EQ(tv::headroom_bits_s8(1 << 19), -1);
  EXPECT_EQ(tv::headroom_bits_s8(1 << 20), -2);
}

TEST(Int8Headroom, WorstOutputOfADenseLayer) {
  // Row 0: |w| sums to 10 -> 1280 + |b| 5 = 1285; row 1: 128 * 128 + 0 = 16384 (the -128 weight).
  const int8_t w[4] = {4, -6, -128, 0};
  const int32_t b[2] = {-5, 0};
  const tv::AccHeadroom h = tv::acc_headroom_s8(2, 2, w, b);
  EXPECT_EQ(h.worst, 16384);
  EXPECT_EQ(h.worst_output, 1);
  EXPECT_EQ(h.headroom_bits, 19 - 15);
  EXPECT_TRUE(h.fits());
  EXPECT_EQ(tv::acc_headroom_s8(2, 2, w, nullptr).worst, 16384);
}

TEST(Int8Headroom, ALayerThatOverflowsTheLanes) {
  // 32 weights of -128: 32 * 128 * 128 = 524288 = 2^19 > 2^19 - 1.
  std::vector<int8_t> w(32, -128);
  tv::AccHeadroom h = tv::acc_headroom_s8(1, 32, w.data(), nullptr);
  EXPECT_EQ(h.worst, 524288);
  EXPECT_FALSE(h.fits());
  EXPECT_EQ(h.headroom_bits, -1);
  // One weight less and a bias that lands exactly on the limit still fits.
  const int32_t b[1] = {-(16384 - 1)};
  h = tv::acc_headroom_s8(1, 31, w.data(), b);
  EXPECT_EQ(h.worst, tv::kS3AccLimit);
  EXPECT_TRUE(h.fits());
  EXPECT_EQ(h.headroom_bits, 0);
}

TEST(Int8Headroom, DepthwiseStridesByChannel) {
  // Weights [taps][c]; with c = 3 the bias INT32_MIN of channel 2 dominates.
  const int8_t w[6] = {1, -128, 0, 2, 127, 0};
  const int32_t b[3] = {0, 100, std::numeric_limits<int32_t>::min()};
  const tv::AccHeadroom h = tv::acc_headroom_depthwise_s8(2, 3, w, b);
  EXPECT_EQ(h.worst_output, 2);  // |INT32_MIN| dominates
  EXPECT_EQ(h.worst, int64_t(1) << 31);
  EXPECT_FALSE(h.fits());
  const tv::AccHeadroom h2 = tv::acc_headroom_depthwise_s8(2, 2, w, b);  // c = 2: [[1, -128], [0, 2]]
  EXPECT_EQ(h2.worst, 130 * 128 + 100);
  EXPECT_EQ(h2.worst_output, 1);
  const int8_t w3[6] = {1, -128, 0, 2, 127, 0};
  const int32_t b3[3] = {0, 100, 7};
  const tv::AccHeadroom h3 = tv::acc_headroom_depthwise_s8(2, 3, w3, b3);  // channel 1: -128, 127
  EXPECT_EQ(h3.worst, 255 * 128 + 100);
  EXPECT_EQ(h3.worst_output, 1);
}

}  // namespace
