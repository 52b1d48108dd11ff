// Int8 kernel tests (tv/int8/int8_ops.h, int8_headroom.cpp): the worst-case accumulator against the S3's 20-bit lanes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "tv/int8/int8_ops.h"

namespace {

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
