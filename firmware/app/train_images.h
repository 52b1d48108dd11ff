// The card's training images (train_images.cpp lists and decodes them; train.cpp trains on them).
#pragma once
#include <stddef.h>
#include <stdint.h>

#include <atomic>

#include "config.h"
#include "tv/model/model.h"
#include "tv/train/presets.h"
#include "tv/train/train_loop.h"

namespace tvfw {

class App;

// The card's training images: names in one pool, grouped by class, sorted within a class; and what
// the class folders hold that training cannot use.
struct ImageList {
  char* pool = nullptr;
  size_t pool_cap = 0, pool_used = 0;
  uint32_t* name_at = nullptr;  // offset of image i's name in pool
  int* label = nullptr;
  int cap = 0, count = 0;
  bool overflow = false;
  int current_label = 0;
  int per_class[kMaxClasses] = {};  // JPEG names found by the counting pass
  int subdirs = 0, others = 0;      // sub-folders, files that are not JPEG
  char first_subdir[kMaxLabelLength + 1] = {0}, first_other[48] = {0};
  int subdir_class = 0, other_class = 0;
};

// One training run: the image list, the decoded images, the split and the training arena, shared by
// App::train's steps and freed by release_training.
struct TrainRun {
  ImageList list;
  int class_begin[kMaxClasses + 1] = {0};
  uint8_t* pixels = nullptr;  // the decoded images, image_bytes each
  size_t image_bytes = 0;
  uint64_t cache_bytes = 0;
  int* train_idx = nullptr;  // the split, into the list's indices
  int* val_idx = nullptr;
  int n_train = 0, n_val = 0;
  // What every epoch trains on instead of train_idx, with its own order buffer (n_samples ints each, one
  // PSRAM block): Learn's samples with the new classes' photos repeated (tv::balanced_samples).
  int* samples = nullptr;
  int n_samples = 0;
  float decode_ms = 0;
  float* soft_targets = nullptr;  // distillation's soft targets (the session's soft_target_bytes), when it distills
  void* arena = nullptr;          // the session's training arena
  void* eval_arena = nullptr;     // its evaluation arena, when the loaded model's inference arena does not fit it
  int first_layer = 0;            // the model's layer the session's plan starts at (a suffix's: > 0)
};

// What a session trains, as App::start_session takes it: the plan (the loaded one, or a suffix whose
// source serves features), its recipe, the samples and the starting weights (plan->param_count floats).
struct SessionPlan {
  const tv::ModelPlan* plan = nullptr;
  const tv::TrainRecipe* recipe = nullptr;
  tv::SampleSource source;
  bool features = false;
  const float* start = nullptr;
  int first_layer = 0;  // the loaded model's layer the plan starts at (for messages)
};

// What the board shows while the session runs, and the stop request the session checks.
struct BoardProgress {
  App* app;
  const char* title = "TRAINING";  // the display's first line
  tv::LaneRunner runner;           // the batch's lanes on both cores (Hal::run_lanes)
  int batches_done = 0;
  int batches_total = 0;
  std::atomic<bool> stop{false};
};

}  // namespace tvfw
