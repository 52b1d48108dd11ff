// Int8 kernel tests (tv/int8/int8_ops.h, int8_depthwise_conv2d.cpp): against the naive int64 reference on random
// geometries.
#include "core/int8/int8_check.h"

namespace {

using namespace tvtest::int8;

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

}  // namespace
