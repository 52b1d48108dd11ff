// The pieces of training shared by tvtrain and the firmware: one epoch (shuffling, batches dealt to
// gradient lanes, seeded augmentation), the learning-rate schedule, and evaluation. tv/train/train_session.h
// puts them together into a whole run (epochs, keep-best, stopping).
// Device-safe: the caller supplies samples through a callback and, optionally, a way to run lanes
// in parallel (threads on a computer, the second core on the ESP32-S3).
#pragma once
#include <stddef.h>
#include <stdint.h>

#include <atomic>

#include "tv/detect/grid.h"
#include "tv/train/net.h"
#include "tv/train/presets.h"

namespace tv {

// Where samples come from: either uint8 HWC images at the plan's input size (`image`), or float inputs
// of plan.input.size() values (`features`: e.g. a frozen prefix's outputs for a suffix plan, computed
// once or per call). Exactly one of the two is set. `features` may be called from several lanes at
// once: lane (0 .. lanes-1) names a buffer the source may fill, epoch is the training epoch (0-based;
// -1 when evaluating) for a source that augments itself (tv/train/feature_source.h). Training and
// evaluation take both.
// A detector's samples also give their labelled boxes (`boxes`: the count, *out pointing at them, fractions
// of the photo, at most kMaxBoxesPerPhoto); `label` is then unused (any value).
struct SampleSource {
  void* ctx = nullptr;
  const uint8_t* (*image)(void* ctx, int index) = nullptr;
  const float* (*features)(void* ctx, int index, int lane, int epoch) = nullptr;
  int (*label)(void* ctx, int index) = nullptr;
  int (*boxes)(void* ctx, int index, const DetectBox** out) = nullptr;
};

// Runs fn(arg, lane) for lane = 0 .. lanes-1, in any order or in parallel, and returns when all
// are done. A null LaneRunner (or run == nullptr) runs them one after another on this thread.
typedef void (*LaneFn)(void* arg, int lane);
struct LaneRunner {
  void* ctx = nullptr;
  void (*run)(void* ctx, int lanes, LaneFn fn, void* arg) = nullptr;
};

// The learning rate of `epoch` (0-based) under the recipe's schedule.
float recipe_lr(const TrainRecipe& r, int epoch);
// What augment_image did to one image: a flip, then output pixel (x, y) is the (flipped) source's
// (x + dx, y + dy), edges replicated.
struct Augmented {
  bool flipped = false;
  int dx = 0, dy = 0;
};
// Seeded augmentation of one image (flip, shift with replicated edges, brightness) into dst. The random
// stream depends only on (seed, epoch, index), so threads do not change it.
// A detector's grid of targets (grid_h x grid_w cells, one byte each) moved as augment_image moved its
// image: mirrored with a flip, shifted by whole cells (dx, dy are multiples of kGridStride); a cell moved in
// from outside the photo is background.
void augment_targets(const Augmented& a, uint8_t* targets, int grid_h, int grid_w);
Augmented augment_image(const TrainRecipe& r, const uint8_t* src, uint8_t* dst, int h, int w, int c, uint64_t seed,
                        int epoch, int index);
// True when the recipe augments at all (then the trainer needs TrainOptions::augment, which
// reserves each lane's augmented image in the training arena).
bool recipe_augments(const TrainRecipe& r);

struct BatchStats {
  float loss_sum = 0;
  int correct = 0;
  int seen = 0;
  bool stepped = false;  // false when the NaN/Inf guard dropped the batch or it was stopped
  bool stopped = false;  // the stop flag became true during the batch
};

// Everything one epoch needs. order: n ints of scratch for the shuffled order. A recipe that
// augments needs a trainer set up with TrainOptions::augment. The epoch trains at the trainer's
// learning rate (trainer->opt.lr): the caller sets it (the session: recipe_lr).
struct EpochJob {
  Trainer* trainer = nullptr;
  const TrainRecipe* recipe = nullptr;
  SampleSource source;
  const int* train = nullptr;  // indices of the training samples
  int n = 0;
  int* order = nullptr;  // scratch, n ints
  uint64_t seed = 0;
  int epoch = 0;
  const LaneRunner* runner = nullptr;
  const std::atomic<bool>* stop = nullptr;  // checked between samples; set it (any thread) to stop within a few images
  // Distillation (distill_outputs(plan, trainer->opt) > 0): the soft targets of sample index i at
  // soft_targets + i * distill_outputs, for the samples whose label is below opt.distill_old_classes.
  const float* soft_targets = nullptr;
  // Called after each batch with the samples done so far in this epoch (may be null).
  void (*on_batch)(void* ctx, int done, int total, const BatchStats& batch) = nullptr;
  void* on_batch_ctx = nullptr;
};

struct EpochStats {
  float loss_sum = 0;
  int correct = 0;
  int seen = 0;
  int skipped_batches = 0;
  bool stopped = false;
  float lr = 0.f;  // the learning rate the epoch trained at
  float mean_loss() const { return seen ? loss_sum / (float)seen : 0.0f; }
  float accuracy() const { return seen ? (float)correct / (float)seen : 0.0f; }
};

// Shuffles (seeded by seed and epoch; the reference reshuffles every epoch) and runs every batch at
// the trainer's learning rate (it does not change it). Bit-identical for any LaneRunner. A `features`
// source trains through trainer_sample_f32 (it augments itself, when it does).
EpochStats train_epoch(const EpochJob& job);

// Sees each evaluated sample's probabilities (num_classes floats), in the order of the indices.
struct EvalObserver {
  void* ctx = nullptr;
  void (*sample)(void* ctx, int index, const float* probs) = nullptr;
};

// Classifies samples idx[0..n) with a bound Inference (infer_u8 for an image source, infer_f32 for a
// features source); fills confusion[true * K + predicted] (K = classes, may be null) and returns the
// number correct. A sample the model cannot run (NonFiniteActivation) stops it: *status (when not
// null) gets that status, else stays ok; the observer has then seen the samples before it.
int evaluate(const Inference& inf, const SampleSource& src, const int* idx, int n, int* confusion, float* probs,
             Status* status = nullptr, const EvalObserver* observer = nullptr);

// A detector's evaluation: the ints of scratch it needs (grid_objects' scratch, the objects and their matches).
size_t detect_eval_scratch_ints(const ModelPlan& plan);
// Finds the objects of samples idx[0..n) (tv::grid_objects at the model's threshold) and matches them to the
// source's boxes (tv::match_objects), summing the counts. probs: plan_outputs floats; scratch:
// detect_eval_scratch_ints. A sample the model cannot run stops it as evaluate does.
DetectCounts evaluate_detector(const Inference& inf, const SampleSource& src, const int* idx, int n, float* probs,
                               int* scratch, Status* status = nullptr, const EvalObserver* observer = nullptr);

}  // namespace tv
