// Train/validation splits of a decoded Dataset: the reference rule, a stratified random fraction,
// stratified k folds, and the warnings a person should read before training on one.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "host/photos/dataset.h"
#include "host/photos/detection_dataset.h"

namespace tvh {

// Indices into a Dataset, each list ordered by class then path (i.e. ascending index).
struct Split {
  std::vector<int> train, val;
};

// What a person should know before training on `split`, one sentence each with what to do: classes
// out of balance (largest/smallest training count above 3), a class with fewer than 5 training
// images, fewer than 3 validation images in a class (suggests --kfold), a class with no validation
// image, and the same photo (identical file bytes) in two classes or in both training and validation.
// A class without any image (a starting model's class with no photos here, tvtrain --init) is left out.
std::vector<std::string> split_warnings(const Dataset& dataset, const Split& split);

// The reference rule: in each class the last `last_n` images (by sorted path) that are not corrections
// from the board (img_<n>c.jpg, tv::is_correction_photo) are validation, the rest training. A class with
// last_n images or fewer keeps one image in training. Throws if last_n < 0.
Split reference_split(const Dataset& dataset, int last_n = 3);

// A stratified random split: in each class round(count * val_fraction) images (at least one when
// val_fraction > 0 and the class has two or more, never all of them) are validation, chosen by a
// seeded shuffle (splitmix64, the same on every platform). Throws unless 0 <= val_fraction < 1.
Split fraction_split(const Dataset& dataset, double val_fraction, uint64_t seed);

// k stratified folds: each class is shuffled (seeded) and dealt round-robin over the folds, so every
// image is in exactly one fold's val and fold sizes differ by at most one. Throws unless
// 2 <= k <= dataset.size().
std::vector<Split> kfold_splits(const Dataset& dataset, int k, uint64_t seed);

// At most `n` of the images `idx`, class-balanced and seeded: each class gets an equal share of n (the
// share a small class cannot fill goes to the others), chosen by the seeded shuffle of fraction_split;
// ascending. All of idx when it holds n images or fewer.
std::vector<int> class_balanced_sample(const Dataset& dataset, const std::vector<int>& idx, size_t n, uint64_t seed);

// The train/validation split of a detection dataset, per image. When the dataset gives a "val" subset
// (its layout or data.yaml), that is validation and every other image but "test" trains. Otherwise
// round(count * val_fraction) of the images outside "test" (at least one when val_fraction > 0 and there
// are two or more, never all) are validation, chosen by fraction_split's seeded shuffle. "test" images
// are in neither list. Throws unless 0 <= val_fraction < 1.
Split detection_split(const DetectionDataset& dataset, double val_fraction, uint64_t seed);

// K folds of a detection dataset, per image: every image outside "test" (its train and val subsets pooled)
// is validated in exactly one fold, dealt round-robin from a seeded shuffle. Throws unless 2 <= k <= that
// many images.
std::vector<Split> detection_kfold_splits(const DetectionDataset& dataset, int k, uint64_t seed);

// At most `n` of the images `idx` (photos of a detection dataset, which has no classes to balance),
// chosen by fraction_split's seeded shuffle; ascending. All of idx when it holds n images or fewer.
std::vector<int> seeded_sample(const std::vector<int>& idx, size_t n, uint64_t seed);

}  // namespace tvh
