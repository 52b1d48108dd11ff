// Float kernel tests (tv/ops/ops.h), AdaptiveAvgPool2D (and global average pooling): golden bins and the gradient.
// The method and tolerance of the gradient checks: op_check.h.
#include "core/ops/op_check.h"

namespace {

using namespace tvtest::ops;

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

}  // namespace
