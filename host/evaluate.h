// Evaluating a loaded model (float or int8) on dataset images.
#pragma once
#include <vector>

#include "host/dataset.h"
#include "host/model_io.h"
#include "host/training.h"

namespace tvh {

// 0, 1, ..., ds.size() - 1.
std::vector<int> all_indices(const Dataset& ds);
// Evaluates a float or int8 model on images idx; throws when the model cannot run.
EvalResult evaluate_model(const LoadedModel& model, const Dataset& ds, const std::vector<int>& idx);

}  // namespace tvh
