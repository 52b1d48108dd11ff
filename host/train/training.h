// Training and evaluating float models on a decoded dataset (the host side of tv::session_run).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "host/photos/dataset.h"
#include "host/photos/split.h"
#include "tv/train/net.h"
#include "tv/train/presets.h"
#include "tv/train/train_loop.h"
#include "tv/train/update.h"

namespace tvh {

struct EpochRecord {
  int epoch = 0;          // 1-based
  double train_loss = 0;  // mean over the epoch's samples, as seen during training
  double train_acc = 0;   // running accuracy during the epoch
  double val_acc = -1;    // after the epoch (-1 when there is no validation split)
  double val_loss = -1;   // mean cross-entropy on the validation images after the epoch (-1: none)
  float lr = 0;
  int skipped_batches = 0;  // dropped by the NaN/Inf guard
};

struct EvalResult {
  int correct = 0;
  int total = 0;
  std::vector<int> confusion;  // [true * K + predicted]
  // Per evaluated image, in the order of the indices given: dataset index, predicted class and its
  // probability.
  std::vector<int> index, predicted;
  std::vector<float> confidence;
  // Every class's probability per evaluated image: probs[n * K + class].
  std::vector<float> probs;
  double loss = 0;  // mean cross-entropy, -ln p(true class) (p floored at 1e-12)
  double accuracy() const { return total ? (double)correct / total : 0.0; }
  // Records one classified image.
  void add(int dataset_index, int truth, const float* probs, int k);
};

// The mean cross-entropy of each class's evaluated images (-ln p(true class), p floored as EvalResult::loss
// floors it); 0 for a class without images.
std::vector<double> class_losses(const Dataset& ds, const EvalResult& r);

struct TrainRequest {
  const tv::ModelPlan* plan = nullptr;
  tv::TrainRecipe recipe;  // with distillation on (tv::distill_new_classes) in an update that adds classes
  // What trains (tv/train/update.h): full, or a suffix on the frozen prefix's features (head turns the
  // recipe's augmentation off: tv::update_recipe).
  tv::UpdateSpec update;
  // Classes whose logits rows (and biases) come out as they start: a starting model's classes without
  // photos here (tv::copy_class_row).
  std::vector<int> keep_rows;
  const Dataset* dataset = nullptr;
  std::vector<int> train, val;  // indices into the dataset
  // The first class the starting model lacks (appended, imprinted): its classes' photos are repeated up
  // to the old classes' mean count every epoch (training_samples); -1: no class was added.
  int first_new_class = -1;
  // What every epoch trains on when it is not `train`: training_samples(*this), set by the caller once.
  std::vector<int> samples;
  uint64_t seed = 1;
  int threads = 1;
  const std::vector<float>* init = nullptr;  // start from these weights instead of He init
  // Progress callbacks (may be empty): after every batch and after every epoch.
  std::function<void(int epoch, int done, int total)> on_batch;
  std::function<void(const EpochRecord&)> on_epoch;
};

// The samples every epoch trains on: req.train, or with classes added, tv::balanced_samples of it (for
// TrainRequest::samples).
std::vector<int> training_samples(const TrainRequest& req);

struct TrainResult {
  std::vector<float> params;
  std::vector<EpochRecord> history;
  double train_seconds = 0;  // the training loop only (no validation, no decoding)
  double eval_seconds = 0;   // per-epoch validation
  EvalResult train_eval;     // the final weights on the training images
  EvalResult val_eval;       // the final weights on the validation images
  int best_epoch = 0;        // when the recipe restores the best weights
  tv::TrainMemory memory;    // the trainer's arena (the suffix's in a partial update)
  tv::InferenceMemory infer_memory;
  int first_trained = 0;     // the first layer that trained (0: full)
  bool augmented = false;    // the run augmented its training samples
  double cache_seconds = 0;  // computing the frozen prefix's features (partial updates)
  tv::UpdateFlops flops;     // what the run performed (tv::update_run_flops)
  tv::UpdateMemory board;    // its peak on the board (tv::update_memory)
  int distill_outputs = 0;   // distillation (tv::distill_new_classes): the old classes' outputs it compared, 0: off
  int distilled_images = 0;  // the old classes' training images it kept the starting model's soft targets of
};

// A request to train `plan` with `recipe` on the split's images of ds, from He init, without progress
// callbacks (the caller adds a starting model, the update, kept rows and progress).
TrainRequest train_request(const tv::ModelPlan& plan, const tv::TrainRecipe& recipe, const Dataset& ds,
                           const Split& split, uint64_t seed, int threads);
// Trains with the core's session (tv/train/train_session.h: the same epochs, keep-best and options as the
// board); the result depends only on the request's data, recipe and seed (not on threads).
TrainResult train_model(const TrainRequest& req);
// Throws tvh::Error naming the dataset when its images or class count do not fit the model.
void check_compatible(const tv::ModelPlan& plan, const Dataset& ds);
// Evaluates float weights on dataset images idx (throws naming the image whose outputs overflow float).
EvalResult evaluate_float(const tv::ModelPlan& plan, const float* params, const Dataset& ds,
                          const std::vector<int>& idx);

}  // namespace tvh
