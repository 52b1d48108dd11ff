// A dataset's features under a frozen prefix (tv/train/feature_source.h) in host memory: what a partial
// update (tvtrain --update head|sparse) trains its suffix on.
#pragma once
#include <memory>
#include <vector>

#include "host/model/model_io.h"
#include "host/photos/dataset.h"
#include "tv/train/feature_source.h"

namespace tvh {

class FeatureCache {
 public:
  // Binds the source over every image of `ds` and caches the features of the images `cached` (each
  // once, unaugmented). augment: training samples are recomputed, augmented, on every call. Throws
  // tvh::Error naming the image whose features overflow float.
  FeatureCache(const tv::ModelPlan& full, int first, const float* params, const Dataset& ds,
               const tv::TrainRecipe& recipe, uint64_t seed, bool augment, int lanes, const std::vector<int>& cached);
  FeatureCache(const FeatureCache&) = delete;
  FeatureCache& operator=(const FeatureCache&) = delete;
  // The features and labels as a session's sample source (valid while this object lives).
  tv::SampleSource source() { return tv::feature_samples(&fs_); }
  double seconds = 0;  // the time the cached features took

 private:
  std::vector<float> cache_;
  std::vector<int> slot_;
  AlignedBuffer lanes_;
  tv::FeatureSource fs_;
};

}  // namespace tvh
