// Likely label mistakes found from out-of-fold predictions, confident-learning style (Northcutt, Jiang
// and Chuang, "Confident Learning", JAIR 2021; see docs/suspect-labels.md): each class j gets a
// threshold t_j, the mean out-of-fold probability of class j over the photos labelled j, and a floor
// u_j, the mean probability of class j over the photos labelled otherwise. A photo labelled i is
// suspect when p_i < t_i while another class j reaches its own threshold, p_j >= t_j (confident of
// j), or when p_i < u_i while another class is more probable (confident it is not i).
#pragma once
#include <string>
#include <vector>

#include "host/photos/dataset.h"

namespace tvh {

struct SuspectLabel {
  int index = 0;          // the photo (dataset index, or position in the inputs)
  int given = 0;          // its folder's class
  int suggested = 0;      // the most probable class among those at or above their threshold
  float p_given = 0;      // out-of-fold probability of the given class
  float p_suggested = 0;  // out-of-fold probability of the suggested class
};

// Per-class thresholds: t_j = mean of probs[n * k + j] over the photos n with labels[n] == j; a class
// without photos gets 2 (above any probability, so never suggested).
std::vector<float> class_thresholds(const std::vector<int>& labels, const std::vector<float>& probs, int k);

// Per-class floors: u_j = mean of probs[n * k + j] over the photos n with labels[n] != j (how much of
// class j the model sees in other classes' photos); -1 (never above a probability) when every photo is
// labelled j. Throws like class_thresholds.
std::vector<float> other_class_means(const std::vector<int>& labels, const std::vector<float>& probs, int k);

// The suspect photos among labels[n] with out-of-fold probabilities probs[n * k ...], ranked by margin
// p_suggested - p_given, largest first (ties: lower index first). Suggested: the most probable class at
// or above its threshold (ties: the lower class); for a photo flagged by its floor alone, the most
// probable other class. Throws tvh::Error when the sizes disagree or a label is out of range.
std::vector<SuspectLabel> find_suspect_labels(const std::vector<int>& labels, const std::vector<float>& probs, int k);

// The first `show` suspects for stderr ("path: in cat, looks like dog (p(cat) 3.1 %, p(dog) 91.0 %)"),
// then "... and N more"; no final newline; empty when none. Paths come from ds.paths[index].
std::string suspects_text(const Dataset& ds, const std::vector<SuspectLabel>& suspects, size_t show = 10);

}  // namespace tvh
