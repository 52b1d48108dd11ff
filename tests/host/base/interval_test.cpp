// The Wilson score interval printed beside every accuracy, against published values.
#include "host/base/interval.h"

#include <gtest/gtest.h>

TEST(WilsonInterval, MatchesKnownValues) {
  struct Case {
    long k, n;
    double lo, hi;
  };
  // Newcombe (1998), "Two-sided confidence intervals for the single proportion", Table I, method 3
  // (Wilson score, no continuity correction), to 4 decimals; and 8/10 worked by hand.
  const Case cases[] = {{81, 263, 0.2553, 0.3662}, {15, 148, 0.0624, 0.1605}, {0, 20, 0.0, 0.1611},
                        {1, 29, 0.0061, 0.1718},   {8, 10, 0.4902, 0.9433},   {10, 10, 0.7225, 1.0}};
  for (const Case& c : cases) {
    const auto ci = tvh::wilson_interval(c.k, c.n);
    EXPECT_NEAR(ci.first, c.lo, 5e-5) << c.k << "/" << c.n;
    EXPECT_NEAR(ci.second, c.hi, 5e-5) << c.k << "/" << c.n;
  }
  EXPECT_EQ(tvh::wilson_interval(0, 0), std::make_pair(0.0, 1.0));
}

TEST(WilsonInterval, TextAndTheKfoldHint) {
  EXPECT_EQ(tvh::accuracy_with_interval(8, 10), "80.00 % (8/10; 95 % interval 49.0-94.3 %)");
  EXPECT_NE(tvh::wide_interval_hint(16, 18).find("--kfold"), std::string::npos);
  EXPECT_EQ(tvh::wide_interval_hint(900, 1000), "");  // 3.7 points wide
  EXPECT_EQ(tvh::wide_interval_hint(0, 0), "");
}
