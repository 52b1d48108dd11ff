#include "host/train/suspects.h"

#include <algorithm>

#include "host/base/error.h"
#include "host/base/text.h"

namespace tvh {

std::vector<float> class_thresholds(const std::vector<int>& labels, const std::vector<float>& probs, int k) {
  if (k < 1 || probs.size() != labels.size() * (size_t)k)
    throw Error("out-of-fold probabilities: " + std::to_string(probs.size()) + " values for " +
                std::to_string(labels.size()) + " photos of " + std::to_string(k) + " classes.");
  std::vector<double> sum((size_t)k, 0.0);
  std::vector<size_t> count((size_t)k, 0);
  for (size_t n = 0; n < labels.size(); ++n) {
    const int c = labels[n];
    if (c < 0 || c >= k) throw Error("out-of-fold probabilities: label " + std::to_string(c) + " out of range.");
    sum[(size_t)c] += probs[n * (size_t)k + (size_t)c];
    ++count[(size_t)c];
  }
  std::vector<float> t((size_t)k, 2.f);
  for (size_t c = 0; c < (size_t)k; ++c) {
    if (count[c]) t[c] = (float)(sum[c] / (double)count[c]);
  }
  return t;
}

std::vector<float> other_class_means(const std::vector<int>& labels, const std::vector<float>& probs, int k) {
  class_thresholds(labels, probs, k);  // checks the sizes and labels
  std::vector<double> sum((size_t)k, 0.0);
  std::vector<size_t> count((size_t)k, 0);
  for (size_t n = 0; n < labels.size(); ++n) {
    for (size_t j = 0; j < (size_t)k; ++j) {
      if ((int)j == labels[n]) continue;
      sum[j] += probs[n * (size_t)k + j];
      ++count[j];
    }
  }
  std::vector<float> u((size_t)k, -1.f);
  for (size_t j = 0; j < (size_t)k; ++j) {
    if (count[j]) u[j] = (float)(sum[j] / (double)count[j]);
  }
  return u;
}

namespace {

// The most probable class other than `given` among those `eligible` accepts (ties: the lower class),
// or -1.
template <class Eligible>
int most_probable_other(const float* p, int k, int given, Eligible eligible) {
  int best = -1;
  for (int j = 0; j < k; ++j) {
    if (j == given || !eligible(j)) continue;
    if (best < 0 || p[j] > p[best]) best = j;
  }
  return best;
}

}  // namespace

std::vector<SuspectLabel> find_suspect_labels(const std::vector<int>& labels, const std::vector<float>& probs, int k) {
  const std::vector<float> t = class_thresholds(labels, probs, k);
  const std::vector<float> u = other_class_means(labels, probs, k);
  std::vector<SuspectLabel> out;
  for (size_t n = 0; n < labels.size(); ++n) {
    const float* p = probs.data() + n * (size_t)k;
    const int given = labels[n];
    int best = -1;
    // 1. Less sure of the given class than usual while as sure of another as of its real photos.
    if (p[given] < t[(size_t)given])
      best = most_probable_other(p, k, given, [&](int j) { return p[j] >= t[(size_t)j]; });
    // 2. Less of the given class than the model sees in other classes' photos on average, and another
    //    class more probable: confident it is not the given class.
    if (best < 0 && p[given] < u[(size_t)given]) {
      best = most_probable_other(p, k, given, [](int) { return true; });
      if (best >= 0 && !(p[best] > p[given])) best = -1;
    }
    if (best < 0) continue;
    out.push_back({(int)n, given, best, p[given], p[best]});
  }
  std::stable_sort(out.begin(), out.end(), [](const SuspectLabel& a, const SuspectLabel& b) {
    return a.p_suggested - a.p_given > b.p_suggested - b.p_given;
  });
  return out;
}

std::string suspects_text(const Dataset& ds, const std::vector<SuspectLabel>& suspects, size_t show) {
  if (suspects.empty()) return "";
  std::string out = std::to_string(suspects.size()) +
                    " photo(s) may be in the wrong class folder (out-of-fold prediction; check them first):";
  for (size_t n = 0; n < suspects.size() && n < show; ++n) {
    const SuspectLabel& s = suspects[n];
    const std::string given = one_line(ds.classes[(size_t)s.given]);
    const std::string suggested = one_line(ds.classes[(size_t)s.suggested]);
    out += "\n  " + one_line(ds.paths[(size_t)s.index]) + ": in " + given + ", looks like " + suggested + " (p(" +
           given + ") " + fmt("%.1f", 100.0 * s.p_given) + " %, p(" + suggested + ") " +
           fmt("%.1f", 100.0 * s.p_suggested) + " %)";
  }
  if (suspects.size() > show)
    out += "\n  ... and " + std::to_string(suspects.size() - show) + " more (all in --json and the report)";
  return out;
}

}  // namespace tvh
