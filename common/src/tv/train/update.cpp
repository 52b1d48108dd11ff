#include "tv/train/update.h"

#include <string.h>

#include "tv/in_place.h"
#include "tv/train/train_loop.h"

namespace tv {

namespace {

bool text_equal(const char* a, const char* b) {
  return strcmp(a, b) == 0;
}

uint64_t align16(uint64_t bytes) {
  return (bytes + kArenaAlign - 1) / kArenaAlign * kArenaAlign;
}

// Forward multiply-adds * 2 of one layer: every weight once per output position.
uint64_t layer_flops(const LayerPlan& lp) {
  return 2 * (uint64_t)lp.out.h * (uint64_t)lp.out.w * (uint64_t)lp.weight_count;
}

}  // namespace

bool update_recipe(const UpdateSpec& spec, TrainRecipe* recipe) {
  if (spec.mode != UpdateMode::Head) return false;
  const bool augmented = recipe_augments(*recipe);
  recipe->aug_flip = false;
  recipe->aug_shift = 0;
  recipe->aug_brightness = 0.f;
  return augmented;
}

bool parse_update(const char* text, UpdateSpec* spec) {
  if (!text || !spec) return false;
  UpdateSpec s;
  if (text_equal(text, "full")) {
    s.mode = UpdateMode::Full;
  } else if (text_equal(text, "head")) {
    s.mode = UpdateMode::Head;
  } else if (strncmp(text, "sparse", 6) == 0) {
    s.mode = UpdateMode::Sparse;
    const char* p = text + 6;
    if (*p == '=') {
      ++p;
      if (!*p) return false;
      int k = 0;
      for (; *p; ++p) {
        if (*p < '0' || *p > '9') return false;
        k = k * 10 + (*p - '0');
        if (k > kMaxLayers) return false;
      }
      if (k < 1) return false;
      s.k = k;
    } else if (*p) {
      return false;
    }
  } else {
    return false;
  }
  *spec = s;
  return true;
}

// Each mode's name, in the order of UpdateMode.
constexpr const char* kUpdateModeNames[] = {"full", "head", "sparse"};
constexpr size_t kUpdateModes = sizeof kUpdateModeNames / sizeof kUpdateModeNames[0];
static_assert(kUpdateModes == (size_t)UpdateMode::Sparse + 1, "a name per update mode");

const char* update_mode_name(UpdateMode mode) {
  return (size_t)mode < kUpdateModes ? kUpdateModeNames[(size_t)mode] : "full";
}

int format_update(const UpdateSpec& spec, char* buf, int n) {
  if (!buf || n <= 0) return 0;
  const char* name = update_mode_name(spec.mode);
  char text[24];
  size_t len = strlen(name);
  memcpy(text, name, len);
  if (spec.mode == UpdateMode::Sparse) {
    int k = spec.k > 0 ? spec.k : kDefaultSparseLayers;
    text[len++] = '=';
    if (k >= 10) text[len++] = (char)('0' + k / 10 % 10);
    text[len++] = (char)('0' + k % 10);
  }
  text[len] = 0;
  if ((int)len > n - 1) len = (size_t)(n - 1);
  memcpy(buf, text, len);
  buf[len] = 0;
  return (int)len;
}

int weighted_layer_count(const ModelPlan& plan) {
  int count = 0;
  for (int i = 0; i < plan.num_layers; ++i) count += plan.layers[i].weight_count > 0;
  return count;
}

Status update_first_layer(const ModelPlan& plan, const UpdateSpec& spec, int* first) {
  if (!first) return status_plain(StatusCode::InvalidArgument);
  const int weighted = weighted_layer_count(plan);
  if (weighted == 0) return status_plain(StatusCode::NotSupported);
  int k = 0;
  switch (spec.mode) {
    case UpdateMode::Full: *first = 0; return ok_status();
    case UpdateMode::Head: k = 1; break;
    case UpdateMode::Sparse:
      if (spec.k < 0) return status_over_limit(StatusCode::BadParameter, -1, spec.k, weighted);
      if (spec.k > weighted) return status_over_limit(StatusCode::BadParameter, -1, spec.k, weighted);
      k = spec.k > 0 ? spec.k : (kDefaultSparseLayers < weighted ? kDefaultSparseLayers : weighted);
      break;
  }
  for (int i = plan.num_layers - 1; i >= 0; --i) {
    if (plan.layers[i].weight_count == 0) continue;
    if (--k == 0) {
      *first = i;
      return ok_status();
    }
  }
  return status_over_limit(StatusCode::BadParameter, -1, spec.k, weighted);  // not reached: k <= weighted
}

Status plan_suffix(const ModelPlan& full, int first, ModelPlan* suffix) {
  if (!suffix || first < 0 || first >= full.num_layers) return status_plain(StatusCode::InvalidArgument);
  reset_in_place(suffix);
  ModelDesc& d = suffix->desc;
  d = full.desc;
  d.num_layers = (uint8_t)(full.num_layers - first);
  for (int i = 0; i < d.num_layers; ++i) d.layers[i] = full.desc.layers[first + i];
  for (int i = d.num_layers; i < kMaxLayers; ++i) d.layers[i] = LayerDesc();
  Status st = plan_layers(full.layers[first].in, suffix);
  if (!st.ok()) return st;
  // plan_layers derives the same shapes and parameter counts from the same layers; check the layout
  // the frozen/trained split relies on rather than assume it.
  const size_t base = full.layers[first].param_offset;
  for (int i = 0; i < suffix->num_layers; ++i) {
    const LayerPlan& s = suffix->layers[i];
    const LayerPlan& f = full.layers[first + i];
    if (s.param_offset + base != f.param_offset || s.weight_count != f.weight_count || s.bias_count != f.bias_count)
      return status_plain(StatusCode::NotSupported, first + i);
  }
  if (suffix->param_count + base != full.param_count) return status_plain(StatusCode::NotSupported, first);
  return ok_status();
}

size_t prefix_feature_floats(const ModelPlan& full, int first) {
  return full.layers[first].in.size();
}

size_t prefix_work_floats(const ModelPlan& full) {
  return full.infer_floats;
}

Status prefix_forward(const ModelPlan& full, int first, const float* params, const uint8_t* image, float* work,
                      float* features) {
  // The input at the low end; each layer that writes a new tensor writes it at the opposite end from
  // its input (full.infer_floats is the largest in + out), as inference does.
  normalize_input(full, image, work);
  float* cur = work;
  bool low = true;
  for (int i = 0; i < first; ++i) {
    if (layer_in_place(full.desc.layers[i].type)) {
      forward_layer(full, i, params, cur, cur);
    } else {
      float* out = low ? work + full.infer_floats - full.layers[i].out.size() : work;
      forward_layer(full, i, params, cur, out);
      cur = out;
      low = !low;
    }
    const Status st = check_finite_output(i, cur, full.layers[i].out.size());
    if (!st.ok()) return st;
  }
  memcpy(features, cur, prefix_feature_floats(full, first) * sizeof(float));
  return ok_status();
}

uint64_t forward_flops(const ModelPlan& plan, int from, int to) {
  uint64_t flops = 0;
  for (int i = from < 0 ? 0 : from; i < to && i < plan.num_layers; ++i) flops += layer_flops(plan.layers[i]);
  return flops;
}

uint64_t backward_flops(const ModelPlan& plan, int first) {
  uint64_t flops = 0;
  bool lowest = true;  // the first layer with weights that trains computes no input gradient
  for (int i = first < 0 ? 0 : first; i < plan.num_layers; ++i) {
    const uint64_t f = layer_flops(plan.layers[i]);
    if (f == 0) continue;
    flops += lowest ? f : 2 * f;
    lowest = false;
  }
  return flops;
}

int balanced_samples(const int* train, int n, const int* labels, int num_classes, int first_new, int* out) {
  if (!train || !labels || n <= 0 || num_classes <= 0) return 0;
  if (first_new < 0) first_new = 0;
  int old_samples = 0, old_classes = 0;
  for (int c = 0; c < first_new && c < num_classes; ++c) {
    int count = 0;
    for (int i = 0; i < n; ++i) count += labels[train[i]] == c;
    old_samples += count;
    old_classes += count > 0;
  }
  const int64_t mean_old = old_classes > 0 ? old_samples / old_classes : 0;
  int64_t total = old_samples;
  for (int c = first_new; c < num_classes; ++c) {
    int64_t count = 0;
    for (int i = 0; i < n; ++i) count += labels[train[i]] == c;
    total += count > 0 && count < mean_old ? mean_old : count;
  }
  if (total > kMaxBalancedSamples) return -1;
  if (!out) return (int)total;
  int at = 0;
  for (int i = 0; i < n; ++i)
    if (labels[train[i]] >= 0 && labels[train[i]] < first_new && labels[train[i]] < num_classes) out[at++] = train[i];
  for (int c = first_new; c < num_classes; ++c) {
    const int begin = at;
    for (int i = 0; i < n; ++i)
      if (labels[train[i]] == c) out[at++] = train[i];
    const int count = at - begin;
    for (int64_t k = count; count > 0 && k < mean_old; ++k) out[at++] = out[begin + (int)(k % count)];
  }
  return at;
}

UpdateFlops update_run_flops(const ModelPlan& full, int first, const UpdateRun& run) {
  UpdateFlops r;
  const uint64_t prefix = forward_flops(full, 0, first);
  const uint64_t suffix = forward_flops(full, first, full.num_layers);
  const uint64_t train = (uint64_t)(run.train_images < 0 ? 0 : run.train_images);
  const uint64_t samples = run.train_samples < 0 ? train : (uint64_t)run.train_samples;
  const uint64_t val = (uint64_t)(run.val_images < 0 ? 0 : run.val_images);
  const uint64_t epochs = (uint64_t)(run.epochs < 0 ? 0 : run.epochs);
  if (first > 0) r.cache = (run.augment ? val : train + val) * prefix;
  const uint64_t per_sample = suffix + backward_flops(full, first) + (first > 0 && run.augment ? prefix : 0);
  r.train = epochs * samples * per_sample;
  r.eval = ((epochs + 1) * val + train) * suffix + (first > 0 && run.augment ? train * prefix : 0);
  if (run.distill_outputs > 0 && run.distilled_images > 0)
    r.distill = (uint64_t)run.distilled_images * (suffix + (first > 0 && run.augment ? prefix : 0));
  r.total = r.cache + r.train + r.eval + r.distill;
  return r;
}

UpdateMemory update_memory(const ModelPlan& full, int first, const TrainOptions& opt, const UpdateRun& run,
                           uint64_t decode_bytes) {
  UpdateMemory m;
  const uint64_t train = (uint64_t)(run.train_images < 0 ? 0 : run.train_images);
  const uint64_t val = (uint64_t)(run.val_images < 0 ? 0 : run.val_images);
  const uint64_t image_bytes = (uint64_t)full.input.size();
  m.weights_bytes = (uint64_t)full.param_count * sizeof(float);
  m.infer_arena_bytes = (uint64_t)inference_memory(full).work_bytes;
  m.decode_bytes = decode_bytes;
  TrainOptions o = opt;
  if (first <= 0) {
    o.augment = run.augment;
    m.train_arena_bytes = training_memory(full, o).total_bytes;
    m.cache_bytes = (train + val) * image_bytes;
  } else {
    ModelPlan suffix;
    if (!plan_suffix(full, first, &suffix).ok()) return m;  // board_peak_bytes 0: not a plan
    o.augment = false;                                      // the suffix trains on float features
    m.train_arena_bytes = training_memory(suffix, o).total_bytes;
    const uint64_t feature_bytes = (uint64_t)prefix_feature_floats(full, first) * sizeof(float);
    if (run.augment) {
      // Per lane: the augmented image, the prefix's work buffer and the features it hands the suffix.
      const int lanes = o.lanes < 1 ? 1 : (o.lanes > kMaxLanes ? kMaxLanes : o.lanes);
      m.train_arena_bytes += (uint64_t)lanes * (align16(image_bytes) + m.infer_arena_bytes + align16(feature_bytes));
      m.cache_bytes = train * image_bytes + val * feature_bytes;
    } else {
      m.cache_bytes = (train + val) * feature_bytes;
    }
  }
  if (run.distill_outputs > 0) m.soft_target_bytes = (train + val) * (uint64_t)run.distill_outputs * sizeof(float);
  const uint64_t arena = m.train_arena_bytes > m.infer_arena_bytes ? m.train_arena_bytes : m.infer_arena_bytes;
  m.board_peak_bytes = m.weights_bytes + arena + m.cache_bytes + m.decode_bytes + m.soft_target_bytes;
  return m;
}

}  // namespace tv
