// One training session, the same on the PC (tvtrain) and on the board: the trainer options the recipe
// trains with, the epochs with their learning rates, per-epoch evaluation, keep-best and stopping.
// Host and board differ only in what they hand in: where samples come from (SampleSource), how lanes
// run (LaneRunner: threads, the second core) and how progress is shown (the hooks).
//
// Device-safe: no allocation (the caller hands in the memory session_memory() names), no exceptions,
// no double, 32-bit clean. Usage:
//   SessionMemory m = session_memory(plan, recipe, n_train, n_val);   // allocate its pieces
//   session_init(&s, setup);              // binds the trainer and the evaluator (weights zero)
//   he_init(plan, s.trainer.params, seed) or copy starting weights into s.trainer.params;
//   session_check_start(s);               // refuses weights whose outputs overflow float
//   SessionResult r = session_run(&s, hooks);   // s.trainer.params: the weights to keep
#pragma once
#include <stddef.h>
#include <stdint.h>

#include <atomic>

#include "tv/train/net.h"
#include "tv/train/presets.h"
#include "tv/train/train_loop.h"

namespace tv {

// The trainer options a recipe trains with: the one rule every caller goes through. The recipe's
// optimizer options, a best-weights snapshot only when the recipe restores the best epoch and there
// are validation samples to pick it by (n_val > 0; without them it would never be used), and a
// per-lane augmented image when the recipe augments and the samples are images (features: a
// features source, tv/train/feature_source.h, which augments itself).
TrainOptions session_options(const TrainRecipe& r, int n_val, bool features = false);

// The reference split (tvtrain's default and the board's): how many of a class's `images` validate,
// the last ones by name that are not corrections from the field (`plain` of the images; tv/names.h
// is_correction_photo): last_n, but at least one image of the class trains, and every correction trains
// (a person took it to be learned from).
int reference_val_count(int images, int plain, int last_n);

// When tvtrain and the board's Train and Learn warn about a split (host/photos/split.cpp,
// firmware/app/train.cpp): a class with fewer training photos than this is too thin to learn...
constexpr int kFewTrainingPhotos = 5;
// ...and classes are out of balance when one has more than this many times another's training photos.
constexpr int kImbalanceRatio = 3;

// Distillation from the starting model in an update that adds classes (docs/on-device-learning.md,
// "Keeping old classes: distillation"): the temperature and weight of distillation_loss (tv/ops/ops.h).
constexpr float kDistillTemperature = 2.f;
constexpr float kDistillWeight = 1.f;
// Turns distillation on in r->opt when an update from a model of old_classes adds classes (2 <= old_classes
// < num_classes): each training photo of an old class keeps the starting model's soft targets over the old
// classes. Otherwise leaves it off. Returns whether it is on. tvtrain --init and the board's Learn both call it.
bool distill_new_classes(TrainRecipe* r, int old_classes, int num_classes);

// What a session needs, all handed in by the caller (64-bit sums: size_t is 32 bits on the board).
struct SessionMemory {
  TrainMemory trainer;              // the training arena (weights, gradients, optimizer, activations...)
  size_t eval_work_bytes = 0;       // an inference work arena for the start check and the per-epoch
                                    // evaluation; any idle inference arena of the same plan will do
  size_t order_bytes = 0;           // the shuffled order: n_train ints
  size_t soft_target_bytes = 0;     // distillation (distill_outputs > 0): the starting model's soft targets,
                                    // distill_outputs floats for each of the n_indices sample indices
  size_t detect_scratch_bytes = 0;  // a detector's evaluation (detect_eval_scratch_ints), 0 for a classifier
  uint64_t total_bytes = 0;         // all five
};
// n_indices: how many sample indices the source has (0 .. n_indices-1), for the soft targets.
SessionMemory session_memory(const ModelPlan& plan, const TrainRecipe& r, int n_train, int n_val, bool features = false,
                             int n_indices = 0);

struct SessionSetup {
  const ModelPlan* plan = nullptr;  // the plan the trainer trains (a full plan, or a suffix plan whose
                                    // source delivers float features)
  const TrainRecipe* recipe = nullptr;
  SampleSource source;
  const int* train = nullptr;  // sample indices to train on
  int n_train = 0;
  const int* val = nullptr;  // sample indices to evaluate after every epoch (keep-best picks by them)
  int n_val = 0;
  uint64_t seed = 1;  // shuffling and augmentation
  // The memory (sizes from session_memory), kArenaAlign-aligned arenas.
  void* train_arena = nullptr;
  size_t train_arena_bytes = 0;
  void* eval_arena = nullptr;  // inference work (also when nothing validates: the start check runs in it)
  size_t eval_arena_bytes = 0;
  int* order = nullptr;           // n_train ints
  float* probs = nullptr;         // num_classes floats (a detector: plan_outputs floats)
  int* detect_scratch = nullptr;  // a detector with validation samples: detect_scratch_bytes
  // Distillation (distill_outputs > 0): soft_target_bytes of session_memory for n_indices
  // sample indices (every index in train is below it). session_run fills the rows of the training samples
  // of the old classes from the starting weights before the first epoch.
  float* soft_targets = nullptr;
  int n_indices = 0;
};

// One finished epoch, as the hooks see it.
struct EpochReport {
  int epoch = 0;  // 1-based
  int epochs = 0;
  EpochStats train;
  int val_correct = -1;  // -1: no validation samples
  int val_total = 0;
  // A detector's validation counts; its val_correct / val_total is their F1 (2 tp / (2 tp + fp + fn)), and
  // keep-best picks the epoch of the highest F1.
  DetectCounts val_detect;
  bool best = false;      // the best validation so far (kept when the recipe restores the best)
  uint64_t train_us = 0;  // the epoch's training, by the clock hook (0 without one)
  uint64_t eval_us = 0;   // its evaluation
};

// How the caller runs lanes, stops and shows progress. Every member may be null.
struct SessionHooks {
  void* ctx = nullptr;
  const LaneRunner* runner = nullptr;         // null: lanes one after another on this thread
  const std::atomic<bool>* stop = nullptr;    // checked between samples; set it (from any thread) to stop
  uint64_t (*clock_us)(void* ctx) = nullptr;  // a monotonic clock, for the epoch's timings
  void (*on_epoch_begin)(void* ctx, int epoch, int epochs) = nullptr;  // epoch 1-based
  void (*on_batch)(void* ctx, int epoch, int done, int total, const BatchStats& batch) = nullptr;
  // Each evaluated sample's probabilities (num_classes floats), in the order of the indices.
  void (*on_eval_sample)(void* ctx, int index, const float* probs) = nullptr;
  void (*on_epoch)(void* ctx, const EpochReport& report) = nullptr;  // after the epoch's evaluation
};

struct SessionResult {
  int epochs_run = 0;    // epochs that trained at least one sample (a stopped one counts)
  int samples = 0;       // samples trained over all epochs
  int best_epoch = 0;    // the epoch whose weights were restored (1-based), 0: none restored
  bool stopped = false;  // hooks.stop ended it
  uint64_t train_us = 0, eval_us = 0;
  // ok, or why evaluation could not run (NonFiniteActivation: the weights overflow float on sample
  // `failed_index`); the session then ends after that epoch, with the best weights when kept.
  Status status;
  int failed_index = -1;
};

struct TrainSession {
  SessionSetup setup;
  TrainOptions options;  // session_options(recipe, n_val)
  Trainer trainer;       // trainer.params: the weights (set them after session_init)
  Inference eval;        // bound to trainer.params in the eval arena
};

// Binds the trainer (zeroed weights) and the evaluator in the handed-in memory. Not ok when the
// memory is too small or missing, the source delivers nothing, or the plan cannot train.
Status session_init(TrainSession* s, const SessionSetup& setup);
// Runs the starting weights on the first training sample: NonFiniteActivation (naming the layer) when
// finite weights overflow float, which no training recovers from.
Status session_check_start(TrainSession* s);
// With distillation, first the starting weights' soft targets: softmax(logits / T) over the distilled
// outputs of every training sample of an old class (tv/train/net.h's TrainOptions::distill_*), computed
// once. Then runs the recipe's epochs: each sets its learning rate (recipe_lr), trains (train_epoch), evaluates
// the validation samples and keeps the best weights; stops early on hooks.stop or an evaluation that
// cannot run. At the end the best epoch's weights are restored when the recipe asks for them (also
// after a stop: the best validated weights beat a partly trained epoch's).
SessionResult session_run(TrainSession* s, const SessionHooks& hooks);

}  // namespace tv
