#include "host/stats.h"

#include <algorithm>
#include <cmath>

namespace tvh {

Interval wilson_interval(int successes, int n, double z) {
  if (n <= 0) return {};
  const double p = (double)successes / n, z2 = z * z;
  const double centre = (p + z2 / (2.0 * n)) / (1 + z2 / n);
  const double half = z * std::sqrt(p * (1 - p) / n + z2 / (4.0 * n * n)) / (1 + z2 / n);
  return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

}  // namespace tvh
