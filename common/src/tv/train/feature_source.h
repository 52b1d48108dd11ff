// The samples a partial update trains on (tv/train/update.h): a SampleSource of float features, the frozen
// prefix's outputs, for a session that trains the suffix plan.
//
// Without augmentation every sample's features are computed once (feature_cache_add) and served from
// the cache (in PSRAM on the board). With augmentation (sparse updates only: head never augments)
// a training sample is augmented and run through the prefix, forward only, on every call, in the
// calling lane's own buffers; evaluation (epoch -1) is never augmented and reads the cache when the
// sample is there, else recomputes it.
//
// Device-safe: no allocation (the caller hands in the memory feature_source_memory names), no
// exceptions, 32-bit clean.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "tv/model/model.h"
#include "tv/train/net.h"
#include "tv/train/presets.h"
#include "tv/train/train_loop.h"

namespace tv {

struct FeatureSourceSetup {
  const ModelPlan* full = nullptr;      // the whole network
  int first = 0;                        // the suffix's first layer (tv::update_first_layer), > 0
  const float* params = nullptr;        // the whole network's parameters (only the prefix's are read)
  SampleSource images;                  // uint8 images at the full model's input size, and labels
  int n_samples = 0;                    // sample indices are 0 .. n_samples-1
  const TrainRecipe* recipe = nullptr;  // its augmentation, when `augment`
  uint64_t seed = 0;                    // the session's seed (augmentation draws as the image path does)
  bool augment = false;                 // recompute augmented training samples on every call
  int lanes = 1;                        // the trainer's lanes (each calls from its own buffers)
};

struct FeatureSourceMemory {
  size_t cache_bytes = 0;  // cache_rows rows of prefix_feature_floats floats
  size_t slot_bytes = 0;   // n_samples ints: each sample's cache row or -1
  size_t lane_bytes = 0;   // per lane (at least one, for filling the cache): augmented image, prefix work, features
  uint64_t total_bytes = 0;
};
// The memory for a source caching `cache_rows` samples.
FeatureSourceMemory feature_source_memory(const FeatureSourceSetup& setup, int cache_rows);

struct FeatureSource {
  FeatureSourceSetup setup;
  size_t feature_floats = 0;
  float* cache = nullptr;
  int cache_rows = 0, cached = 0;
  int* slot = nullptr;
  struct Lane {
    uint8_t* image = nullptr;  // the augmented image
    float* work = nullptr;     // prefix_forward's work buffer
    float* features = nullptr;
  } lanes[kMaxLanes];
};

// Binds the memory (sizes from feature_source_memory; lane_arena kArenaAlign-aligned, lane_bytes
// per lane for max(1, lanes) lanes); no sample is cached yet.
Status feature_source_init(FeatureSource* fs, const FeatureSourceSetup& setup, float* cache, int cache_rows, int* slot,
                           void* lane_arena, size_t lane_arena_bytes);
// Computes and caches the features of samples idx[0..n) (unaugmented; already cached ones are kept).
// NonFiniteActivation (as infer_u8) stops it with *failed_index = the sample; ArenaTooSmall when the
// cache is full.
Status feature_cache_add(FeatureSource* fs, const int* idx, int n, int* failed_index);
// The SampleSource a session trains and evaluates the suffix plan with (features and labels).
SampleSource feature_samples(FeatureSource* fs);

}  // namespace tv
