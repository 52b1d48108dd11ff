#include "host/train/feature_cache.h"

#include <chrono>

#include "host/base/error.h"
#include "host/model/model_io.h"
#include "host/train/samples.h"

namespace tvh {

FeatureCache::FeatureCache(const tv::ModelPlan& full, int first, const float* params, const Dataset& ds,
                           const tv::TrainRecipe& recipe, uint64_t seed, bool augment, int lanes,
                           const std::vector<int>& cached) {
  const auto t0 = std::chrono::steady_clock::now();
  tv::FeatureSourceSetup s;
  s.full = &full;
  s.first = first;
  s.params = params;
  s.images = source_of(ds);
  s.n_samples = (int)ds.size();
  s.recipe = &recipe;
  s.seed = seed;
  s.augment = augment;
  s.lanes = lanes;
  const tv::FeatureSourceMemory m = tv::feature_source_memory(s, (int)cached.size());
  cache_.resize(m.cache_bytes / sizeof(float) + 1);
  slot_.resize(ds.size() + 1);
  const size_t lane_bytes = m.lane_bytes * (size_t)(lanes < 1 ? 1 : lanes);
  lanes_ = AlignedBuffer(lane_bytes);
  tv::Status st =
      tv::feature_source_init(&fs_, s, cache_.data(), (int)cached.size(), slot_.data(), lanes_.data(), lane_bytes);
  if (!st.ok()) throw Error("cannot set up the feature cache: " + status_message(st, &full.desc) + ".");
  int failed = -1;
  st = tv::feature_cache_add(&fs_, cached.data(), (int)cached.size(), &failed);
  if (!st.ok()) throw_if_not_runnable(st, full, failed >= 0 ? ds.name((size_t)failed) : ds.source);
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace tvh
