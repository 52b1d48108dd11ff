// Running a planned model: inference and training in caller-provided memory (one arena each).
//
// Nothing here allocates. The caller asks for the bytes (inference_memory / training_memory), hands
// in a buffer of at least that size aligned to kArenaAlign, and every forward, backward and
// optimizer step runs inside it.
//
// Training semantics (deterministic for any number of threads): a batch's samples are dealt to a
// fixed number of gradient lanes (sample j of the batch to lane j % lanes); each lane accumulates
// its samples' gradients in batch order; at the end of the batch the lanes are summed in lane order
// into lane 0 and the optimizer steps on that sum. Threads only decide who computes a lane, never
// the order of any floating-point sum, so 1 thread and N threads give the same bits.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "tv/model/model.h"
#include "tv/status.h"

namespace tv {

constexpr size_t kArenaAlign = 16;
constexpr int kMaxLanes = 8;

// ---- Inference ----

struct InferenceMemory {
  size_t params_bytes;  // weights and biases (may live in flash instead)
  size_t work_bytes;    // activation work buffer (the arena)
  size_t total_bytes;   // params + work
};
InferenceMemory inference_memory(const ModelPlan& plan);

struct Inference {
  const ModelPlan* plan = nullptr;
  const float* params = nullptr;
  float* work = nullptr;
};

// Binds a plan, its parameters and a work arena of at least inference_memory().work_bytes.
Status inference_init(Inference* inf, const ModelPlan* plan, const float* params, void* arena, size_t arena_bytes);
// Classifies one uint8 HWC image already at the model's input size; writes num_classes
// probabilities (a detector: plan_outputs, a softmax per grid cell) and, when logits is not null, the
// final layer's outputs (plan_outputs values). Every layer's output is
// checked: a model whose finite weights overflow float on this input returns NonFiniteActivation
// (layer = the first layer whose output holds an Inf or NaN, a = the element) and its probabilities
// are not to be used. The one check every path that runs a float model goes through.
Status infer_u8(const Inference& inf, const uint8_t* image, float* probs, float* logits = nullptr);
// Same from a normalized float input (copied into the arena first).
Status infer_f32(const Inference& inf, const float* input, float* probs, float* logits = nullptr);
// Ok, or NonFiniteActivation naming `layer` and the first element of x[0..n) that is infinite or NaN
// (tested on the bits, so fast-math builds keep the test).
Status check_finite_output(int layer, const float* x, size_t n);
// Index of the largest value (the first one on ties).
int argmax(const float* v, int n);

// ---- Training ----

enum class OptimizerKind : uint8_t { Adam = 0, SGD = 1 };
enum class LossKind : uint8_t { CrossEntropy = 0, MSE = 1 };

struct TrainOptions {
  OptimizerKind optimizer = OptimizerKind::Adam;
  LossKind loss = LossKind::CrossEntropy;
  float lr = 3e-4f;
  float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-6f;  // Adam
  float momentum = 0.9f;                            // SGD
  float weight_decay = 0.f;                         // decoupled (AdamW-style), 0 = off
  float weight_clip = 0.f;                          // clamp weights to +-weight_clip after a step, 0 = off
  float grad_clip_norm = 0.f;                       // rescale the batch gradient to this L2 norm, 0 = off
  float grad_scale = 1.f;                           // batch gradient multiplier (1 = summed, as the reference)
  bool batch_mean = false;                          // divide the batch gradient by its sample count (a true mean,
                                                    // also for a short last batch)
  int lanes = 2;                                    // gradient lanes (see above), 1..kMaxLanes
  bool keep_best = false;                           // reserve a best-weights snapshot
  bool augment = false;                             // reserve a per-lane uint8 image for augmentation
  // Distillation from the starting model (tv/train/train_session.h, docs/on-device-learning.md): a sample
  // handed soft targets adds distillation_loss (tv/ops/ops.h) over the old classes' outputs, its first
  // distill_old_classes, to its loss. distill_weight 0 = off.
  float distill_weight = 0.f;
  float distill_temperature = 2.f;
  int distill_old_classes = 0;  // the starting model's classes: samples of these labels are distilled
  // A detector's loss (tv::grid_cross_entropy): how much more a cell holding an object weighs than background.
  float object_weight = 8.f;
};

struct TrainMemory {
  size_t params_bytes;      // weights and biases
  size_t grad_bytes;        // one gradient buffer per lane
  size_t optimizer_bytes;   // Adam m and v, or SGD velocity
  size_t snapshot_bytes;    // best-weights copy (keep_best)
  size_t activation_bytes;  // per lane: the input and every stored layer output
  size_t scratch_bytes;     // per lane: backward ping-pong buffers, probabilities, loss gradient
  size_t augment_bytes;     // per lane: the augmented input image (augment)
  size_t total_bytes;       // the arena size trainer_init needs
};
TrainMemory training_memory(const ModelPlan& plan, const TrainOptions& opt);

struct TrainLane {
  float* grad = nullptr;     // parameter gradient accumulated over this lane's samples
  float* acts = nullptr;     // input + stored layer outputs
  float* scratch = nullptr;  // backward buffers
  float* probs = nullptr;
  float* dlogits = nullptr;
  uint8_t* aug = nullptr;  // augmented input image (TrainOptions::augment)
  float loss_sum = 0;      // statistics of the current batch
  int correct = 0;
  int seen = 0;
};

struct Trainer {
  const ModelPlan* plan = nullptr;
  TrainOptions opt;
  float* params = nullptr;
  float* m = nullptr;  // Adam first moment / SGD velocity
  float* v = nullptr;  // Adam second moment
  float* best = nullptr;
  TrainLane lanes[kMaxLanes];
  uint32_t step = 0;           // optimizer steps taken (Adam's t)
  uint32_t skipped_steps = 0;  // batches dropped by the NaN/Inf guard
  float last_grad_norm = 0.f;
};

// Carves the arena (>= training_memory().total_bytes, kArenaAlign-aligned); zeroes everything.
Status trainer_init(Trainer* tr, const ModelPlan* plan, const TrainOptions& opt, void* arena, size_t arena_bytes);
// He initialization: weights ~ N(0, 2 / fan_in) from a seeded generator, biases zero.
void he_init(const ModelPlan& plan, float* params, uint64_t seed);
// Zeroes every lane's gradient and batch statistics.
void trainer_begin_batch(Trainer* tr);
// Forward and backward of one sample on a lane; accumulates its gradient into that lane.
// `image` is uint8 HWC at the input size. Returns the loss; *predicted gets the argmax class.
// soft_target (may be null): the sample's distillation targets (distill_outputs floats), used when
// distill_outputs > 0. A detector trains on cell_targets (one byte per grid cell, tv::grid_targets; null:
// all background) with tv::grid_cross_entropy; its *predicted is `label` when every cell's most probable
// channel is its target, else -1 (and that counts as the lane's `correct`).
float trainer_sample(Trainer* tr, int lane, const uint8_t* image, int label, int* predicted,
                     const float* soft_target = nullptr, const uint8_t* cell_targets = nullptr);
// Same from a float input already normalized (plan.input.size() values), e.g. cached features of a
// frozen prefix (tv/train/update.h's plan_suffix).
float trainer_sample_f32(Trainer* tr, int lane, const float* input, int label, int* predicted,
                         const float* soft_target = nullptr, const uint8_t* cell_targets = nullptr);
// The outputs distillation compares: opt.distill_old_classes when distillation is on (distill_weight > 0)
// and there are 2 to num_classes old classes; 0 otherwise (off).
int distill_outputs(const ModelPlan& plan, const TrainOptions& opt);
// Sums the lanes in order, applies grad_scale (and 1/samples with batch_mean) and clipping, and steps the optimizer.
// Returns false (and leaves the weights untouched) when the gradient holds a NaN or Inf.
bool trainer_end_batch(Trainer* tr);
// Best-weights snapshot (needs keep_best): save the current weights / restore the saved ones.
void trainer_save_best(Trainer* tr);
void trainer_restore_best(Trainer* tr);

// ---- Shared pieces (used by the tools, the firmware and the tests) ----

// The model's float input from a uint8 HWC image at its input size: pixel * scale + offset.
void normalize_input(const ModelPlan& plan, const uint8_t* image, float* dst);
// Forward pass of layer i from `in` to `out` (out == in for in-place layers).
void forward_layer(const ModelPlan& plan, int i, const float* params, const float* in, float* out);

}  // namespace tv
