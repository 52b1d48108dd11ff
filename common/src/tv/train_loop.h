// The training loop shared by tvtrain and the firmware: epochs, shuffling, batches dealt to
// gradient lanes, seeded augmentation, the learning-rate schedule, and evaluation.
// Device-safe: the caller supplies images through a callback and, optionally, a way to run lanes
// in parallel (threads on a computer, the second core on the ESP32-S3).
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "tv/net.h"
#include "tv/presets.h"

namespace tv {

// Where training images come from: uint8 HWC images at the model's input size.
struct SampleSource {
  void* ctx = nullptr;
  const uint8_t* (*image)(void* ctx, int index) = nullptr;
  int (*label)(void* ctx, int index) = nullptr;
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
// Seeded augmentation of one image (flip, shift with replicated edges, brightness) into dst.
// The random stream depends only on (seed, epoch, index), so threads do not change it.
void augment_image(const TrainRecipe& r, const uint8_t* src, uint8_t* dst, int h, int w, int c, uint64_t seed,
                   int epoch, int index);
// True when the recipe augments at all (then the trainer needs TrainOptions::augment, which
// reserves each lane's augmented image in the training arena).
bool recipe_augments(const TrainRecipe& r);

struct BatchStats {
  float loss_sum = 0;
  int correct = 0;
  int seen = 0;
  bool stepped = false;  // false when the NaN/Inf guard dropped the batch or it was stopped
  bool stopped = false;  // *stop became true during the batch
};

// Everything one epoch needs. order: n ints of scratch for the shuffled order. A recipe that
// augments needs a trainer set up with TrainOptions::augment.
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
  volatile bool* stop = nullptr;  // checked between samples; set it to stop within a few images
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
  float lr = 0.f;
  float mean_loss() const { return seen ? loss_sum / (float)seen : 0.0f; }
  float accuracy() const { return seen ? (float)correct / (float)seen : 0.0f; }
};

// Shuffles (seeded by seed and epoch; the reference reshuffles every epoch), sets the epoch's
// learning rate, and runs every batch. Bit-identical for any LaneRunner.
EpochStats train_epoch(const EpochJob& job);

// Classifies samples idx[0..n) with a bound Inference; fills confusion[true * K + predicted]
// (K = classes, may be null) and returns the number correct. A sample the model cannot run
// (infer_u8's NonFiniteActivation) stops it: *status (when not null) gets that status, else stays ok.
int evaluate(const Inference& inf, const SampleSource& src, const int* idx, int n, int* confusion, float* probs,
             Status* status = nullptr);

}  // namespace tv
