#include "tv/train/feature_source.h"

#include <string.h>

#include "tv/in_place.h"
#include "tv/train/update.h"

namespace tv {

namespace {

size_t align_up(size_t bytes) {
  return (bytes + kArenaAlign - 1) / kArenaAlign * kArenaAlign;
}

int lane_count(const FeatureSourceSetup& s) {
  return s.lanes < 1 ? 1 : (s.lanes > kMaxLanes ? kMaxLanes : s.lanes);
}

size_t image_bytes(const FeatureSourceSetup& s) {
  return align_up(s.augment ? s.full->input.size() : 0);
}
size_t work_bytes(const FeatureSourceSetup& s) {
  return align_up(prefix_work_floats(*s.full) * sizeof(float));
}
size_t features_bytes(const FeatureSourceSetup& s) {
  return align_up(prefix_feature_floats(*s.full, s.first) * sizeof(float));
}

const float* features_of(void* ctx, int index, int lane, int epoch) {
  FeatureSource& fs = *(FeatureSource*)ctx;
  const FeatureSourceSetup& s = fs.setup;
  const bool augment = s.augment && epoch >= 0;
  if (!augment && fs.slot[index] >= 0) return fs.cache + (size_t)fs.slot[index] * fs.feature_floats;
  FeatureSource::Lane& l = fs.lanes[lane];
  const uint8_t* img = s.images.image(s.images.ctx, index);
  if (augment) {
    const Shape& in = s.full->input;
    augment_image(*s.recipe, img, l.image, in.h, in.w, in.c, s.seed, epoch, index);
    img = l.image;
  }
  // A sample whose features overflow float trains as NaN: the trainer's guard drops its batch.
  prefix_forward(*s.full, s.first, s.params, img, l.work, l.features);
  return l.features;
}

int label_of(void* ctx, int index) {
  const FeatureSource& fs = *(const FeatureSource*)ctx;
  return fs.setup.images.label(fs.setup.images.ctx, index);
}

}  // namespace

FeatureSourceMemory feature_source_memory(const FeatureSourceSetup& setup, int cache_rows) {
  FeatureSourceMemory m;
  if (!setup.full || setup.first <= 0 || setup.first >= setup.full->num_layers) return m;
  m.cache_bytes =
      (size_t)(cache_rows < 0 ? 0 : cache_rows) * prefix_feature_floats(*setup.full, setup.first) * sizeof(float);
  m.slot_bytes = sizeof(int) * (size_t)(setup.n_samples < 0 ? 0 : setup.n_samples);
  m.lane_bytes = image_bytes(setup) + work_bytes(setup) + features_bytes(setup);
  m.total_bytes = (uint64_t)m.cache_bytes + m.slot_bytes + (uint64_t)m.lane_bytes * (uint64_t)lane_count(setup);
  return m;
}

Status feature_source_init(FeatureSource* fs, const FeatureSourceSetup& setup, float* cache, int cache_rows, int* slot,
                           void* lane_arena, size_t lane_arena_bytes) {
  if (!fs || !setup.full || !setup.params || !setup.images.image || !setup.images.label || setup.n_samples < 0 ||
      setup.first <= 0 || setup.first >= setup.full->num_layers || !slot || !lane_arena || cache_rows < 0 ||
      (cache_rows > 0 && !cache) || (setup.augment && !setup.recipe))
    return status_plain(StatusCode::InvalidArgument);
  if ((uintptr_t)lane_arena % kArenaAlign) return status_plain(StatusCode::Misaligned);
  const FeatureSourceMemory need = feature_source_memory(setup, cache_rows);
  const int lanes = lane_count(setup);
  if (lane_arena_bytes < need.lane_bytes * (size_t)lanes)
    return status_too_small(StatusCode::ArenaTooSmall, -1, (int32_t)lane_arena_bytes,
                            (int32_t)(need.lane_bytes * (size_t)lanes));
  reset_in_place(fs);
  fs->setup = setup;
  fs->feature_floats = prefix_feature_floats(*setup.full, setup.first);
  fs->cache = cache;
  fs->cache_rows = cache_rows;
  fs->slot = slot;
  for (int i = 0; i < setup.n_samples; ++i) slot[i] = -1;
  uint8_t* p = (uint8_t*)lane_arena;
  for (int l = 0; l < lanes; ++l) {
    FeatureSource::Lane& lane = fs->lanes[l];
    lane.image = image_bytes(setup) ? p : nullptr;
    p += image_bytes(setup);
    lane.work = (float*)p;
    p += work_bytes(setup);
    lane.features = (float*)p;
    p += features_bytes(setup);
  }
  return ok_status();
}

Status feature_cache_add(FeatureSource* fs, const int* idx, int n, int* failed_index) {
  const FeatureSourceSetup& s = fs->setup;
  for (int k = 0; k < n; ++k) {
    const int i = idx[k];
    if (i < 0 || i >= s.n_samples) return status_value(StatusCode::InvalidArgument, -1, i);
    if (fs->slot[i] >= 0) continue;
    if (fs->cached >= fs->cache_rows)
      return status_too_small(StatusCode::ArenaTooSmall, -1, fs->cache_rows, fs->cached + 1);
    float* row = fs->cache + (size_t)fs->cached * fs->feature_floats;
    const Status st =
        prefix_forward(*s.full, s.first, s.params, s.images.image(s.images.ctx, i), fs->lanes[0].work, row);
    if (!st.ok()) {
      if (failed_index) *failed_index = i;
      return st;
    }
    fs->slot[i] = fs->cached++;
  }
  return ok_status();
}

SampleSource feature_samples(FeatureSource* fs) {
  SampleSource src;
  src.ctx = fs;
  src.features = features_of;
  src.label = label_of;
  return src;
}

}  // namespace tv
