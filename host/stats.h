// Small statistics for the reports.
#pragma once

namespace tvh {

// The Wilson score interval (95 % by default, z = 1.96) of a proportion of `successes` out of `n`:
// [lo, hi] within [0, 1]; [0, 1] when n is 0.
struct Interval {
  double lo = 0, hi = 1;
};
Interval wilson_interval(int successes, int n, double z = 1.96);

}  // namespace tvh
