// Evaluating a loaded model (float or int8) on dataset images.
#pragma once
#include <memory>
#include <vector>

#include "host/dataset.h"
#include "host/model_io.h"
#include "host/training.h"

namespace tvh {

// 0, 1, ..., ds.size() - 1.
std::vector<int> all_indices(const Dataset& ds);
// Evaluates a float or int8 model on images idx; throws when the model cannot run.
EvalResult evaluate_model(const LoadedModel& model, const Dataset& ds, const std::vector<int>& idx);

// Runs a loaded model (float, or int8 through the int8 engine) on one input image at a time.
class Predictor {
 public:
  // Throws tvh::Error when the model cannot run. `model` must outlive the predictor.
  explicit Predictor(const LoadedModel& model);
  ~Predictor();
  Predictor(const Predictor&) = delete;
  Predictor& operator=(const Predictor&) = delete;
  // Class probabilities probs[0 .. classes) of one image at the model's input size and channel order.
  void run(const uint8_t* image, float* probs);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tvh
