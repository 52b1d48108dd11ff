// Int8 kernel tests (tv/int8/int8_ops.h, int8_dense.cpp): against the naive int64 reference, saturation and exact ties.
#include "core/int8/int8_check.h"

namespace {

using namespace tvtest::int8;

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

}  // namespace
