// Evaluating a loaded model (float or int8) on dataset images.
#pragma once
#include <vector>

#include "host/model/model_io.h"
#include "host/photos/dataset.h"
#include "host/train/training.h"

namespace tvh {

// 0, 1, ..., ds.size() - 1.
std::vector<int> all_indices(const Dataset& ds);
// The class the model gives each of the images idx (one pass through its engine); throws when the
// model cannot run or the images are not at its input size.
std::vector<int> predict(const LoadedModel& model, const Dataset& ds, const std::vector<int>& idx);
// Accuracy and confusion matrix of predictions pred[n] for images idx[n].
EvalResult score_predictions(const std::vector<int>& pred, const Dataset& ds, const std::vector<int>& idx,
                             int num_classes);
// Every image classified once: accuracy, confusion matrix and each image's predicted class and probability.
EvalResult evaluate_model(const LoadedModel& model, const Dataset& ds, const std::vector<int>& idx);

}  // namespace tvh
