// Partial updates: which part of a network trains, and what the rest costs.
//
// A partial update trains a SUFFIX of the network: layer index `first` is the first layer that
// trains (0 for full; for head the last layer with weights; for sparse=K the K-th layer with weights
// counted from the end). plan_suffix() plans the layers first..end as a network of their own whose
// input is the float tensor full.layers[first].in; its parameters are exactly the tail of the full
// parameters from full.layers[first].param_offset (plan_model lays them out in layer order), so a
// trainer bound to the suffix holds gradients and optimizer state for the trainable tail only and
// the frozen prefix's bytes cannot change. The frozen prefix runs forward only (prefix_forward):
// once per image into a feature cache when nothing augments, or per sample when augmentation is on.
//
// Device-safe: no allocation, no exceptions, memory handed in, size math in 64 bits.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "tv/model/model.h"
#include "tv/status.h"
#include "tv/train/net.h"
#include "tv/train/presets.h"

namespace tv {

enum class UpdateMode : uint8_t { Full = 0, Head = 1, Sparse = 2 };

// The layers with weights a sparse update trains when none is named (sparse without =K).
constexpr int kDefaultSparseLayers = 2;

struct UpdateSpec {
  UpdateMode mode = UpdateMode::Full;
  int k = 0;  // Sparse: the layers with weights that train, counted from the end; 0 = kDefaultSparseLayers
};

// The recipe an update trains with: head never augments (its frozen part would have to run for every
// sample of every epoch), so its augmentation is turned off; full and sparse keep the recipe's.
// Returns true when it turned augmentation off.
bool update_recipe(const UpdateSpec& spec, TrainRecipe* recipe);

// "full", "head", "sparse" or "sparse=K" (K = 1..kMaxLayers, digits only) -> spec; false otherwise.
bool parse_update(const char* text, UpdateSpec* spec);
// "full", "head", "sparse".
const char* update_mode_name(UpdateMode mode);
// The spec as parse_update reads it back ("sparse=2" for sparse, with the default K written out);
// writes at most n - 1 characters and a zero; returns the length.
int format_update(const UpdateSpec& spec, char* buf, int n);

// The number of layers with weights.
int weighted_layer_count(const ModelPlan& plan);

// The first layer that trains under `spec`: 0 for full; for head the last layer with weights; for
// sparse=K the K-th layer with weights from the end. An explicit K larger than the layers with
// weights is refused (BadParameter, a = K, b = the count: the user asked for more than exists, and
// "all of them" is `full`); the default K is clamped to the count (sparse then trains every layer
// with weights, from the first one).
Status update_first_layer(const ModelPlan& plan, const UpdateSpec& spec, int* first);

// Plans full's layers first..end as a network whose input is the float tensor full.layers[first].in
// (no normalization: suffix->input holds its shape; suffix->desc.input keeps the full model's image
// description, which only the uint8 entry points would use). suffix->layers[i].param_offset +
// full.layers[first].param_offset == full.layers[first + i].param_offset for every layer, and
// suffix->param_count == full.param_count - full.layers[first].param_offset.
Status plan_suffix(const ModelPlan& full, int first, ModelPlan* suffix);

// The float count of the frozen prefix's output (the trained suffix's input): full.layers[first].in.
size_t prefix_feature_floats(const ModelPlan& full, int first);
// The work buffer prefix_forward needs, in floats: the full model's inference work buffer.
size_t prefix_work_floats(const ModelPlan& full);
// Forward only of layers 0..first-1 of `full` on a uint8 HWC image: normalizes into `work` (at
// least prefix_work_floats floats), runs the layers and copies the features (prefix_feature_floats)
// into `features`. Every layer's output is checked (NonFiniteActivation as infer_u8). No allocation.
Status prefix_forward(const ModelPlan& full, int first, const float* params, const uint8_t* image, float* work,
                      float* features);

// ---- Class-balanced training samples ----

// The training samples of an update that adds classes first_new..num_classes-1: the old classes'
// samples as they are (in the order of `train`), then each new class's samples repeated in turn up to
// the old classes' mean count, so that a class learned from 5 photos weighs about as much in training
// as one with 800 (without it the head learns to leave the new class out: docs/on-device-learning.md).
// train: n sample indices; labels: the class of every sample index (labels[train[i]]; a label outside
// 0..num_classes-1 is left out). Writes the samples to `out` when it is not null and returns their
// count; -1 beyond kMaxBalancedSamples (train on `train` as it is then). The session shuffles them.
// No allocation; O(n * (num_classes - first_new + 1)).
constexpr int kMaxBalancedSamples = 1 << 24;
int balanced_samples(const int* train, int n, const int* labels, int num_classes, int first_new, int* out);

// ---- FLOPs (2 per multiply-add, the convention of ModelPlan::flops_forward) ----

// Forward FLOPs of layers [from, to).
uint64_t forward_flops(const ModelPlan& plan, int from, int to);
// One sample's backward FLOPs when layers first..end train: every layer with weights from `first` on
// computes its weight and bias gradient (as many multiply-adds as its forward) and, except the first
// layer with weights that trains (nothing below it needs a gradient), its input gradient (as many again).
uint64_t backward_flops(const ModelPlan& plan, int first);

// What a run trains and evaluates, for the FLOPs and memory of a whole run.
struct UpdateRun {
  int train_images = 0;
  int train_samples = -1;  // training samples per epoch: more than the images when classes are balanced
                           // (balanced_samples); -1: train_images
  int val_images = 0;
  int epochs = 0;
  bool augment = false;  // the recipe augments (never with head): the prefix runs per training sample
  // Distillation (tv/train/train_session.h): the outputs it compares (distill_outputs; 0 = off) and the
  // training images whose soft targets the starting weights compute once (the old classes').
  int distill_outputs = 0;
  int distilled_images = 0;
};

// The FLOPs a run performs under an update whose first trained layer is `first` (0 = full):
//   cache  = (train + val) * forward(0..first)           once, when first > 0 and nothing augments;
//            val * forward(0..first)                     once, when it augments (validation is not augmented);
//   train  = epochs * samples * (forward(first..end) + backward(first) [+ forward(0..first) when augmenting]);
//   eval   = (epochs + 1) * val * forward(first..end) + train * forward(first..end)
//            [+ train * forward(0..first) when augmenting: the training samples are not cached]
//            (validation after every epoch, then the final evaluation of both splits; on cached features
//            when first > 0, so a full update evaluates the whole network);
//   distill = distilled_images * (forward(first..end) [+ forward(0..first) when augmenting])   once, the soft targets.
struct UpdateFlops {
  uint64_t cache = 0, train = 0, eval = 0, distill = 0, total = 0;
};
UpdateFlops update_run_flops(const ModelPlan& full, int first, const UpdateRun& run);

// ---- Memory ----

// The board's photos are 240x240 RGB: its JPEG decode buffer (one photo's pixels).
constexpr uint32_t kBoardDecodeBytes = 240u * 240u * 3u;

// The memory a run holds at its peak on the board. All figures are bytes in 64 bits.
struct UpdateMemory {
  uint64_t weights_bytes = 0;      // the whole model's float weights (frozen prefix included)
  uint64_t train_arena_bytes = 0;  // training_memory(trained plan, opt).total_bytes (the suffix's with first > 0)
  uint64_t infer_arena_bytes = 0;  // the full model's inference work buffer (prefix forward, evaluation)
  uint64_t cache_bytes = 0;        // the dataset cache: decoded uint8 images (full, or any augmenting run), or
                                   // float features of every image (first > 0 without augmentation)
  uint64_t decode_bytes = 0;       // the JPEG decode buffer (kBoardDecodeBytes on the board)
  uint64_t soft_target_bytes = 0;  // distillation's soft targets: distill_outputs floats per image (train + val)
  // weights + max(training arena, inference arena) + cache + decode buffer + soft targets. Documented as that sum.
  uint64_t board_peak_bytes = 0;
};
// `opt` as the trainer will run (lanes, optimizer, keep_best); its augment is taken from run.augment.
UpdateMemory update_memory(const ModelPlan& full, int first, const TrainOptions& opt, const UpdateRun& run,
                           uint64_t decode_bytes = kBoardDecodeBytes);

}  // namespace tv
