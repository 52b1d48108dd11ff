// Every int8 kernel against its float twin from tv/ops/ops.h on random data.
//
// Method: draw int8 inputs/weights, dequantise them, run the float kernel on the dequantised values
// and the int8 kernel on the integers. The float kernels then see exactly the real values the int8
// kernel represents, so the only int8 error left is the final rounding to the output exponent:
// - conv, depthwise conv, dense: |dequant(out) - float| <= 2^(e_out - 1), exactly (every float
//   partial sum is a multiple of 2^(e_in + e_w) below 2^24 of them, so float is exact here);
//   outputs that saturate are excluded by choosing e_out from the float result;
// - max pool, ReLU: equal; LeakyReLU: equal to quantising the float result (that is the table's
//   definition); average pools: half a step plus 1e-6 relative for the float division;
// - softmax: within 1e-6 of the float softmax of the dequantised logits.
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "test_support.h"
#include "tv/int8/int8_ops.h"
#include "tv/ops/ops.h"

namespace {

std::vector<int8_t> random_q(std::mt19937& rng, size_t n) {
  std::uniform_int_distribution<int> d(-128, 127);
  std::vector<int8_t> v(n);
  for (auto& x : v) x = int8_t(d(rng));
  return v;
}

std::vector<float> deq(const std::vector<int8_t>& q, int e) {
  std::vector<float> x(q.size());
  tv::dequantize_s8(q.data(), q.size(), e, x.data());
  return x;
}

// The smallest e_out >= min_e for which no value of `ref` saturates.
int fitting_exponent(const std::vector<float>& ref, int min_e) {
  float m = 0;
  for (float v : ref) m = std::max(m, std::fabs(v));
  int e = min_e;
  while (std::ldexp(127.0, e) < m + std::ldexp(1.0, e - 1)) ++e;
  return e;
}

tv::Geom2D random_geom(std::mt19937& rng, bool depthwise) {
  std::uniform_int_distribution<int> small(1, 5), ch(1, 12), k(1, 3), st(1, 2), pad(0, 1);
  tv::Geom2D g;
  g.k_h = k(rng), g.k_w = k(rng);
  g.in_h = small(rng) + g.k_h, g.in_w = small(rng) + g.k_w, g.in_c = ch(rng);
  g.out_c = depthwise ? g.in_c : ch(rng);
  g.stride_h = st(rng), g.stride_w = st(rng);
  g.pad_top = std::min(pad(rng), g.k_h - 1), g.pad_left = std::min(pad(rng), g.k_w - 1);
  g.out_h = (g.in_h + 2 * g.pad_top - g.k_h) / g.stride_h + 1;
  g.out_w = (g.in_w + 2 * g.pad_left - g.k_w) / g.stride_w + 1;
  return g;
}

void expect_within_half_step(const std::vector<int8_t>& q, int e_out, const std::vector<float>& ref, double rel_slack,
                             const char* what, int trial) {
  ASSERT_EQ(q.size(), ref.size());
  const double half = std::ldexp(1.0, e_out - 1);
  for (size_t i = 0; i < q.size(); ++i) {
    const double got = std::ldexp(double(q[i]), e_out);
    EXPECT_LE(std::fabs(got - ref[i]), half * (1.0 + rel_slack) + std::fabs(ref[i]) * rel_slack)
        << what << " trial " << trial << " index " << i << ": int8 " << int(q[i]) << " float " << ref[i];
  }
}

TEST(Int8VsFloat, Conv2D) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 40; ++trial) {
    const tv::Geom2D g = random_geom(rng, false);
    tv::Q8Layer q;
    q.e_in = -5, q.e_w = -7;
    const auto xq = random_q(rng, size_t(g.in_h) * g.in_w * g.in_c);
    const auto wq = random_q(rng, size_t(g.out_c) * g.k_h * g.k_w * g.in_c);
    std::uniform_int_distribution<int> bd(-5000, 5000);
    std::vector<int32_t> bq(size_t(g.out_c));
    for (auto& b : bq) b = bd(rng);
    std::vector<float> bf(bq.size());
    for (size_t i = 0; i < bq.size(); ++i) bf[i] = std::ldexp(float(bq[i]), q.e_in + q.e_w);
    const auto x = deq(xq, q.e_in), w = deq(wq, q.e_w);
    std::vector<float> ref(size_t(g.out_h) * g.out_w * g.out_c);
    tv::conv2d_forward(g, x.data(), w.data(), bf.data(), ref.data());
    q.e_out = fitting_exponent(ref, q.e_in + q.e_w);
    std::vector<int8_t> out(ref.size());
    ASSERT_TRUE(tv::conv2d_s8(g, xq.data(), wq.data(), bq.data(), q, out.data()).ok());
    expect_within_half_step(out, q.e_out, ref, 0.0, "conv2d", trial);
  }
}

TEST(Int8VsFloat, DepthwiseConv2D) {
  std::mt19937 rng(12);
  for (int trial = 0; trial < 40; ++trial) {
    const tv::Geom2D g = random_geom(rng, true);
    tv::Q8Layer q;
    q.e_in = -6, q.e_w = -6;
    const auto xq = random_q(rng, size_t(g.in_h) * g.in_w * g.in_c);
    const auto wq = random_q(rng, size_t(g.k_h) * g.k_w * g.in_c);
    std::vector<int32_t> bq(size_t(g.in_c));
    std::uniform_int_distribution<int> bd(-2000, 2000);
    for (auto& b : bq) b = bd(rng);
    std::vector<float> bf(bq.size());
    for (size_t i = 0; i < bq.size(); ++i) bf[i] = std::ldexp(float(bq[i]), q.e_in + q.e_w);
    const auto x = deq(xq, q.e_in), w = deq(wq, q.e_w);
    std::vector<float> ref(size_t(g.out_h) * g.out_w * g.out_c);
    tv::depthwise_conv2d_forward(g, x.data(), w.data(), bf.data(), ref.data());
    q.e_out = fitting_exponent(ref, q.e_in + q.e_w);
    std::vector<int8_t> out(ref.size());
    ASSERT_TRUE(tv::depthwise_conv2d_s8(g, xq.data(), wq.data(), bq.data(), q, out.data()).ok());
    expect_within_half_step(out, q.e_out, ref, 0.0, "depthwise", trial);
  }
}

TEST(Int8VsFloat, DenseWithAndWithoutRelu) {
  std::mt19937 rng(13);
  for (int trial = 0; trial < 40; ++trial) {
    std::uniform_int_distribution<int> n(1, 300);
    const int in_n = n(rng), out_n = n(rng) % 40 + 1;
    tv::Q8Layer q;
    q.e_in = -4, q.e_w = -8, q.relu = trial % 2 == 1;
    const auto xq = random_q(rng, size_t(in_n)), wq = random_q(rng, size_t(in_n) * out_n);
    std::vector<int32_t> bq(static_cast<size_t>(out_n));
    std::uniform_int_distribution<int> bd(-100000, 100000);
    for (auto& b : bq) b = bd(rng);
    std::vector<float> bf(bq.size());
    for (size_t i = 0; i < bq.size(); ++i) bf[i] = std::ldexp(float(bq[i]), q.e_in + q.e_w);
    const auto x = deq(xq, q.e_in), w = deq(wq, q.e_w);
    std::vector<float> ref(static_cast<size_t>(out_n));
    tv::dense_forward(in_n, out_n, x.data(), w.data(), bf.data(), ref.data());
    if (q.relu) tv::relu_forward(ref.data(), ref.size());
    q.e_out = fitting_exponent(ref, q.e_in + q.e_w);
    std::vector<int8_t> out(ref.size());
    ASSERT_TRUE(tv::dense_s8(in_n, out_n, xq.data(), wq.data(), bq.data(), q, out.data()).ok());
    expect_within_half_step(out, q.e_out, ref, 0.0, "dense", trial);
  }
}

TEST(Int8VsFloat, MaxPoolIsExact) {
  std::mt19937 rng(14);
  for (int trial = 0; trial < 30; ++trial) {
    const tv::Geom2D g = random_geom(rng, true);
    const auto xq = random_q(rng, size_t(g.in_h) * g.in_w * g.in_c);
    const auto x = deq(xq, -3);
    std::vector<float> ref(size_t(g.out_h) * g.out_w * g.out_c);
    tv::maxpool2d_forward(g, x.data(), ref.data());
    std::vector<int8_t> out(ref.size());
    ASSERT_TRUE(tv::maxpool2d_s8(g, xq.data(), out.data()).ok());
    EXPECT_EQ(deq(out, -3), ref) << "trial " << trial;
  }
}

TEST(Int8VsFloat, AvgPool) {
  std::mt19937 rng(15);
  for (int trial = 0; trial < 30; ++trial) {
    const tv::Geom2D g = random_geom(rng, true);
    const int e_in = -5, e_out = -5 - trial % 3;  // also finer output exponents
    const auto xq = random_q(rng, size_t(g.in_h) * g.in_w * g.in_c);
    const auto x = deq(xq, e_in);
    std::vector<float> ref(size_t(g.out_h) * g.out_w * g.out_c);
    tv::avgpool2d_forward(g, x.data(), ref.data());
    std::vector<int8_t> out(ref.size());
    ASSERT_TRUE(tv::avgpool2d_s8(g, xq.data(), e_in, e_out, out.data()).ok());
    for (size_t i = 0; i < ref.size(); ++i)  // saturated outputs are the right clamp
      ref[i] = std::min(std::max(ref[i], float(std::ldexp(-128.0, e_out))), float(std::ldexp(127.0, e_out)));
    expect_within_half_step(out, e_out, ref, 1e-6, "avgpool", trial);
  }
}

TEST(Int8VsFloat, GlobalAvgPool) {
  std::mt19937 rng(16);
  for (int trial = 0; trial < 30; ++trial) {
    std::uniform_int_distribution<int> d(1, 9), c(1, 20);
    const int h = d(rng), w = d(rng), ch = c(rng), e_in = -6, e_out = -6 - trial % 2;
    const auto xq = random_q(rng, size_t(h) * w * ch);
    const auto x = deq(xq, e_in);
    std::vector<float> ref(static_cast<size_t>(ch));
    tv::adaptive_avgpool2d_forward(h, w, ch, 1, 1, x.data(), ref.data());
    std::vector<int8_t> out(ref.size());
    ASSERT_TRUE(tv::global_avgpool_s8(h, w, ch, xq.data(), e_in, e_out, out.data()).ok());
    for (auto& r : ref) r = std::min(std::max(r, float(std::ldexp(-128.0, e_out))), float(std::ldexp(127.0, e_out)));
    expect_within_half_step(out, e_out, ref, 1e-6, "global avgpool", trial);
  }
}

TEST(Int8VsFloat, ReluIsExact) {
  std::mt19937 rng(17);
  auto q = random_q(rng, 500);
  auto x = deq(q, -4);
  tv::relu_forward(x.data(), x.size());
  tv::relu_s8(q.data(), q.size());
  EXPECT_EQ(deq(q, -4), x);
}

TEST(Int8VsFloat, LeakyReluTableEqualsQuantisedFloat) {
  for (float alpha : {0.01f, 0.1f, 0.2f, 0.3f, 0.25f}) {
    for (int e_in = -8; e_in <= -2; e_in += 3) {
      for (int e_out = e_in - 1; e_out <= e_in + 1; ++e_out) {
        int8_t table[256];
        tv::leaky_relu_table_s8(alpha, e_in, e_out, table);
        for (int q = -128; q <= 127; ++q) {
          float x = tv::dequantize_one_s8(int8_t(q), e_in);
          tv::leaky_relu_forward(&x, 1, alpha);
          EXPECT_EQ(table[q + 128], tv::quantize_one_s8(x, e_out))
              << "alpha " << alpha << " e_in " << e_in << " e_out " << e_out << " q " << q;
          const double clamped = std::min(std::max(double(x), std::ldexp(-128.0, e_out)), std::ldexp(127.0, e_out));
          EXPECT_LE(std::fabs(std::ldexp(double(table[q + 128]), e_out) - clamped), std::ldexp(1.0, e_out - 1));
        }
      }
    }
  }
}

TEST(Int8VsFloat, SoftmaxMatchesFloatSoftmax) {
  std::mt19937 rng(18);
  for (int trial = 0; trial < 20; ++trial) {
    const int n = 2 + trial, e = -6 + trial % 4;
    const auto q = random_q(rng, size_t(n));
    const auto x = deq(q, e);
    std::vector<float> ref(static_cast<size_t>(n)), got(static_cast<size_t>(n));
    tv::softmax(x.data(), n, ref.data());
    tv::softmax_s8(q.data(), n, e, got.data());
    for (int i = 0; i < n; ++i) EXPECT_NEAR(got[size_t(i)], ref[size_t(i)], 1e-6) << trial << "/" << i;
  }
}

TEST(Int8VsFloat, QuantizeRoundTripWithinHalfAStep) {
  std::mt19937 rng(19);
  std::uniform_real_distribution<float> d(-3.9f, 3.9f);
  for (int i = 0; i < 2000; ++i) {
    const float x = d(rng);
    const int8_t q = tv::quantize_one_s8(x, -5);  // step 1/32, range [-4, 3.97]
    EXPECT_LE(std::fabs(tv::dequantize_one_s8(q, -5) - x), 1.0f / 64 + 1e-7f) << x;
  }
}

}  // namespace
