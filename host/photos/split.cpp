#include "host/photos/split.h"

#include <algorithm>
#include <map>

#include "host/base/error.h"
#include "tv/names.h"
#include "tv/rng.h"
#include "tv/train/train_session.h"

namespace tvh {

namespace {

// Uniform in [0, n), n >= 1, without modulo bias, from the core's splitmix64 (the same sequence on
// every platform).
uint64_t unbiased_below(tv::Rng& rng, uint64_t n) {
  const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  for (;;) {
    const uint64_t x = rng.next();
    if (x < limit) return x % n;
  }
}

// Image indices of each class, ascending (= sorted by path).
std::vector<std::vector<int>> indices_by_class(const Dataset& ds) {
  std::vector<std::vector<int>> by_class(ds.classes.size());
  for (size_t i = 0; i < ds.labels.size(); ++i) {
    const int label = ds.labels[i];
    if (label < 0 || (size_t)label >= by_class.size()) {
      throw Error("dataset '" + ds.source + "' has image " + std::to_string(i) + " with label " +
                  std::to_string(label) + " outside its " + std::to_string(by_class.size()) + " classes.");
    }
    by_class[(size_t)label].push_back((int)i);
  }
  return by_class;
}

// A class's indices in a seeded random order (Fisher-Yates driven by splitmix64).
std::vector<int> shuffled(std::vector<int> v, uint64_t seed, size_t label) {
  tv::Rng rng(seed ^ (0xD1B54A32D192ED03ull * (uint64_t)(label + 1)));
  for (size_t i = v.size(); i > 1; --i) {
    const size_t j = (size_t)unbiased_below(rng, i);
    std::swap(v[i - 1], v[j]);
  }
  return v;
}

// How many of n images a validation fraction takes: round(n * fraction), at least one when the fraction
// is above 0 and n >= 2, never all of them.
size_t fraction_count(size_t n, double val_fraction) {
  size_t n_val = (size_t)((double)n * val_fraction + 0.5);
  if (val_fraction > 0.0 && n >= 2 && n_val == 0) n_val = 1;
  if (n_val >= n) n_val = n > 0 ? n - 1 : 0;
  return n_val;
}

// Throws unless 0 <= val_fraction < 1.
void check_val_fraction(const std::string& source, double val_fraction) {
  if (!(val_fraction >= 0.0 && val_fraction < 1.0)) {
    throw Error("cannot split '" + source + "' with validation fraction " + std::to_string(val_fraction) +
                ": it must be at least 0 and below 1.");
  }
}

// Orders both lists by class then path: image indices are already laid out that way.
void sort_split(Split& s) {
  std::sort(s.train.begin(), s.train.end());
  std::sort(s.val.begin(), s.val.end());
}

}  // namespace

Split reference_split(const Dataset& dataset, int last_n) {
  if (last_n < 0) throw Error("cannot split '" + dataset.source + "' with a negative validation count.");
  Split split;
  for (const auto& idx : indices_by_class(dataset)) {
    std::vector<bool> correction(idx.size());
    int plain = 0;
    for (size_t k = 0; k < idx.size(); ++k) {
      const size_t i = (size_t)idx[k];  // a dataset built in memory has no paths, so no corrections
      correction[k] =
          i < dataset.paths.size() && tv::is_correction_photo(dataset.paths[i].data(), dataset.paths[i].size());
      plain += correction[k] ? 0 : 1;
    }
    // the last n_val photos that are not corrections validate; every correction trains
    int n_val = tv::reference_val_count((int)idx.size(), plain, last_n), seen = 0;
    for (size_t k = 0; k < idx.size(); ++k) {
      const bool val = !correction[k] && seen++ >= plain - n_val;
      (val ? split.val : split.train).push_back(idx[k]);
    }
  }
  sort_split(split);
  return split;
}

Split fraction_split(const Dataset& dataset, double val_fraction, uint64_t seed) {
  check_val_fraction(dataset.source, val_fraction);
  Split split;
  const auto by_class = indices_by_class(dataset);
  for (size_t c = 0; c < by_class.size(); ++c) {
    const size_t n = by_class[c].size();
    const size_t n_val = fraction_count(n, val_fraction);
    const std::vector<int> order = shuffled(by_class[c], seed, c);
    for (size_t k = 0; k < n; ++k) (k < n_val ? split.val : split.train).push_back(order[k]);
  }
  sort_split(split);
  return split;
}

Split detection_split(const DetectionDataset& dataset, double val_fraction, uint64_t seed) {
  check_val_fraction(dataset.source, val_fraction);
  Split split;
  const bool val_given = dataset.subset_count("val") > 0;
  std::vector<int> pool;
  for (size_t i = 0; i < dataset.size(); ++i) {
    const std::string& subset = i < dataset.subsets.size() ? dataset.subsets[i] : std::string();
    if (subset == "test") continue;
    if (val_given)
      (subset == "val" ? split.val : split.train).push_back((int)i);
    else
      pool.push_back((int)i);
  }
  if (!val_given) {
    const size_t n_val = fraction_count(pool.size(), val_fraction);
    const std::vector<int> order = shuffled(pool, seed, 0);
    for (size_t k = 0; k < order.size(); ++k) (k < n_val ? split.val : split.train).push_back(order[k]);
  }
  sort_split(split);
  return split;
}

std::vector<Split> detection_kfold_splits(const DetectionDataset& dataset, int k, uint64_t seed) {
  std::vector<int> pool;
  for (size_t i = 0; i < dataset.size(); ++i)
    if (i >= dataset.subsets.size() || dataset.subsets[i] != "test") pool.push_back((int)i);
  if (k < 2 || (size_t)k > pool.size())
    throw Error("cannot make " + std::to_string(k) + " folds of '" + dataset.source + "' (" +
                std::to_string(pool.size()) + " photos outside its test set): k must be 2 or more and at most that.");
  std::vector<Split> folds((size_t)k);
  const std::vector<int> order = shuffled(pool, seed, 0);
  for (size_t n = 0; n < order.size(); ++n)
    for (int f = 0; f < k; ++f)
      (n % (size_t)k == (size_t)f ? folds[(size_t)f].val : folds[(size_t)f].train).push_back(order[n]);
  for (Split& s : folds) sort_split(s);
  return folds;
}

std::vector<Split> kfold_splits(const Dataset& dataset, int k, uint64_t seed) {
  if (k < 2 || (size_t)k > dataset.size()) {
    throw Error("cannot make " + std::to_string(k) + " folds of '" + dataset.source + "' (" +
                std::to_string(dataset.size()) + " images): k must be 2 or more and at most the image count.");
  }
  std::vector<int> fold_of(dataset.size(), 0);
  const auto by_class = indices_by_class(dataset);
  size_t dealt = 0;
  for (size_t c = 0; c < by_class.size(); ++c) {
    for (int i : shuffled(by_class[c], seed, c)) fold_of[(size_t)i] = (int)(dealt++ % (size_t)k);
  }
  std::vector<Split> folds((size_t)k);
  for (size_t i = 0; i < dataset.size(); ++i) {
    for (int f = 0; f < k; ++f) (fold_of[i] == f ? folds[(size_t)f].val : folds[(size_t)f].train).push_back((int)i);
  }
  return folds;
}

std::vector<std::string> split_warnings(const Dataset& ds, const Split& split) {
  std::vector<std::string> out;
  const size_t k = ds.classes.size();
  std::vector<size_t> train(k, 0), val(k, 0);
  for (int i : split.train) ++train[(size_t)ds.labels[(size_t)i]];
  for (int i : split.val) ++val[(size_t)ds.labels[(size_t)i]];
  size_t largest = 0, smallest = SIZE_MAX, big = 0, small = 0;
  for (size_t c = 0; c < k; ++c) {
    if (train[c] + val[c] == 0) continue;  // a starting model's class without photos (tvtrain --init warns)
    if (train[c] > largest) largest = train[c], big = c;
    if (train[c] < smallest) smallest = train[c], small = c;
  }
  if (k > (size_t)tv::kBoardMaxClasses) {
    out.push_back(std::to_string(k) + " classes: the board's firmware runs " + std::to_string(tv::kBoardMinClasses) +
                  " to " + std::to_string(tv::kBoardMaxClasses) +
                  ", so this model runs on the PC only (tvtrain --eval, tvexport -o MODEL.espdl); keep " +
                  std::to_string(tv::kBoardMaxClasses) + " class folders or fewer for the board.");
  }
  if (k >= 2 && smallest > 0 && largest > (size_t)tv::kImbalanceRatio * smallest) {
    out.push_back("the classes are out of balance: '" + ds.classes[big] + "' has " + std::to_string(largest) +
                  " training images, '" + ds.classes[small] + "' only " + std::to_string(smallest) + " (more than " +
                  std::to_string(tv::kImbalanceRatio) +
                  "x): add images to the small classes, or the model will favour the large one.");
  }
  bool few_val = false;
  for (size_t c = 0; c < k; ++c) {
    if (train[c] + val[c] == 0) continue;
    if (train[c] < (size_t)tv::kFewTrainingPhotos) {
      out.push_back("class '" + ds.classes[c] + "' has only " + std::to_string(train[c]) +
                    " training image(s): " + std::to_string(tv::kFewTrainingPhotos) +
                    " or more per class are needed to learn anything; add photos.");
    }
    if (val[c] == 0) {
      out.push_back("class '" + ds.classes[c] +
                    "' has no validation image, so its accuracy is not measured: add photos, or use --kfold 5.");
    } else if (val[c] < 3) {
      few_val = true;
    }
  }
  if (few_val) {
    out.push_back(
        "some classes have fewer than 3 validation images, so the validation accuracy is a rough guess: "
        "use --kfold 5 to measure the recipe on every image.");
  }
  // The same photo twice: in two classes, or in both training and validation.
  std::vector<char> in_val(ds.size(), 0);
  for (int i : split.val) in_val[(size_t)i] = 1;
  std::map<uint64_t, size_t> first;
  size_t reported = 0, more = 0;
  for (size_t i = 0; i < ds.size() && i < ds.file_hashes.size(); ++i) {
    auto [it, fresh] = first.emplace(ds.file_hashes[i], i);
    if (fresh) continue;
    const size_t j = it->second;
    std::string what;
    if (ds.labels[i] != ds.labels[j]) {
      what = "in two classes ('" + ds.classes[(size_t)ds.labels[j]] + "' and '" + ds.classes[(size_t)ds.labels[i]] +
             "'): keep it in its right class only";
    } else if (in_val[i] != in_val[j]) {
      what = "in both training and validation, which inflates the validation accuracy: remove one copy";
    } else {
      continue;
    }
    if (reported < 5) {
      out.push_back("'" + ds.paths[j] + "' and '" + ds.paths[i] + "' are the same file " + what + ".");
      ++reported;
    } else {
      ++more;
    }
  }
  if (more) out.push_back(std::to_string(more) + " more identical pair(s) like those above.");
  return out;
}

std::vector<int> class_balanced_sample(const Dataset& dataset, const std::vector<int>& idx, size_t n, uint64_t seed) {
  if (idx.size() <= n) return idx;
  std::vector<std::vector<int>> by_class(dataset.classes.size());
  for (int i : idx) by_class[(size_t)dataset.labels[(size_t)i]].push_back(i);
  // Shares: classes from the smallest up take min(size, what is left / classes left).
  std::vector<size_t> order(by_class.size()), take(by_class.size(), 0);
  for (size_t c = 0; c < order.size(); ++c) order[c] = c;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return by_class[a].size() < by_class[b].size(); });
  size_t left = n;
  for (size_t j = 0; j < order.size(); ++j) {
    const size_t c = order[j];
    take[c] = std::min(by_class[c].size(), left / (order.size() - j));
    left -= take[c];
  }
  std::vector<int> out;
  for (size_t c = 0; c < by_class.size(); ++c) {
    const std::vector<int> mixed = shuffled(by_class[c], seed, c);
    out.insert(out.end(), mixed.begin(), mixed.begin() + (long)take[c]);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<int> seeded_sample(const std::vector<int>& idx, size_t n, uint64_t seed) {
  if (idx.size() <= n) return idx;
  std::vector<int> out = shuffled(idx, seed, 0);
  out.resize(n);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace tvh
