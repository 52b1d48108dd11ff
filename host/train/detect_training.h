// Training and evaluating detectors on a decoded detection dataset (the host side of tv::session_run for a
// tv::Task::Detect plan): the same session, epochs and keep-best as the classifiers' (keep-best by the F1 of
// centroids), and each photo's objects for the metrics (host/train/detect_metrics.h).
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "host/photos/detection_dataset.h"
#include "host/photos/split.h"
#include "host/train/detect_metrics.h"
#include "tv/model/model.h"
#include "tv/train/net.h"
#include "tv/train/presets.h"

namespace tvh {

struct DetectEpochRecord {
  int epoch = 0;          // 1-based
  double train_loss = 0;  // mean over the epoch's samples, as seen during training
  double val_f1 = -1;     // after the epoch (-1: no validation photos)
  tv::DetectCounts val;   // its counts
  float lr = 0;
  int skipped_batches = 0;  // dropped by the NaN/Inf guard
};

struct DetectTrainRequest {
  const tv::ModelPlan* plan = nullptr;  // a detector (tv::Task::Detect) at the dataset's input size
  tv::TrainRecipe recipe;
  const DetectionDataset* dataset = nullptr;
  std::vector<int> train, val;  // photo indices
  uint64_t seed = 1;
  int threads = 1;
  std::function<void(int epoch, int done, int total)> on_batch;
  std::function<void(const DetectEpochRecord&)> on_epoch;
};

struct DetectTrainResult {
  std::vector<float> params;
  std::vector<DetectEpochRecord> history;
  int best_epoch = 0;  // when the recipe restores the best weights
  double train_seconds = 0, eval_seconds = 0;
  tv::TrainMemory memory;
  tv::InferenceMemory infer_memory;
};

// A request for `split` of a dataset (its photo indices), without callbacks.
DetectTrainRequest detect_train_request(const tv::ModelPlan& plan, const tv::TrainRecipe& recipe,
                                        const DetectionDataset& ds, const Split& split, uint64_t seed, int threads);

// Trains from He init; the result depends only on the request's data, recipe and seed (not on threads).
// Throws tvh::Error when the plan is no detector, the dataset does not fit it or training cannot start.
DetectTrainResult train_detector(const DetectTrainRequest& req);

}  // namespace tvh
