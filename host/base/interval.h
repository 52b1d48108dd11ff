// How sure an accuracy measured on n images is: the Wilson score interval, printed beside every
// accuracy the tools report (a small validation set swings by several points under another split).
#pragma once
#include <string>
#include <utility>

namespace tvh {

// The Wilson score interval of `correct` successes in `total` trials at 95 % (z = 1.959964): {lo, hi}
// within [0, 1]; {0, 1} when total is 0.
std::pair<double, double> wilson_interval(long correct, long total);

// "88.89 % (16/18; 95 % interval 67.2-96.9 %)".
std::string accuracy_with_interval(long correct, long total);

// A sentence suggesting --kfold when the interval is wide (more than 20 percentage points from end to
// end), else "".
std::string wide_interval_hint(long correct, long total);

}  // namespace tvh
