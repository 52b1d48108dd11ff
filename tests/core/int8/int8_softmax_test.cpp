// Int8 kernel tests (tv/int8/int8_ops.h, int8_softmax.cpp): probabilities from int8 logits.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "tv/int8/int8_ops.h"

namespace {

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

}  // namespace
