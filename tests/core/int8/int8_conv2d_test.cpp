// Int8 kernel tests (tv/int8/int8_ops.h, int8_conv2d.cpp): against the naive int64 reference on random geometries, null
// bias, refusals, shift 0 and fused ReLU.
#include "core/int8/int8_check.h"

namespace {

using namespace tvtest::int8;

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

}  // namespace
