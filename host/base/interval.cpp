#include "host/base/interval.h"

#include <algorithm>
#include <cmath>

#include "host/base/text.h"

namespace tvh {

namespace {
constexpr double kZ95 = 1.959963984540054;  // the 97.5 % point of the standard normal
constexpr double kWide = 0.20;              // an interval wider than this asks for --kfold
}  // namespace

std::pair<double, double> wilson_interval(long correct, long total) {
  if (total <= 0) return {0.0, 1.0};
  const double n = (double)total, p = (double)correct / n, z2 = kZ95 * kZ95;
  const double denom = 1.0 + z2 / n;
  const double centre = (p + z2 / (2.0 * n)) / denom;
  const double half = kZ95 * std::sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n)) / denom;
  return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

std::string accuracy_with_interval(long correct, long total) {
  const auto ci = wilson_interval(correct, total);
  return fmt("%.2f", total ? 100.0 * (double)correct / (double)total : 0.0) + " % (" + std::to_string(correct) + "/" +
         std::to_string(total) + "; 95 % interval " + fmt("%.1f", 100.0 * ci.first) + "-" +
         fmt("%.1f", 100.0 * ci.second) + " %)";
}

std::string wide_interval_hint(long correct, long total) {
  const auto ci = wilson_interval(correct, total);
  if (total <= 0 || ci.second - ci.first <= kWide) return "";
  return "the 95 % interval of this accuracy is " + fmt("%.0f", 100.0 * (ci.second - ci.first)) +
         " points wide: " + std::to_string(total) +
         " images are too few to tell models apart; --kfold 5 measures on every image (add images to narrow it).";
}

}  // namespace tvh
