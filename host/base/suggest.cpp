#include "host/base/suggest.h"

#include <algorithm>

namespace tvh {

namespace {

// Optimal string alignment distance.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

}  // namespace

std::string nearest_name(const std::string& typed, const std::vector<std::string>& known) {
  std::string best;
  size_t best_d = 0;
  for (const std::string& k : known) {
    const size_t dist = edit_distance(typed, k);
    const size_t limit = std::max<size_t>(1, std::max(typed.size(), k.size()) / 3);
    if (dist > limit) continue;
    if (best.empty() || dist < best_d) {
      best = k;
      best_d = dist;
    }
  }
  return best;
}

}  // namespace tvh
