// Running a detector (tv::Task::Detect) on photos: the model's grid on the float or the int8 engine, then
// the core's tv::grid_objects at the model's threshold. One path for tvtrain's validation, `tvtrain detect`,
// `--eval` and tvquant's float-vs-int8 comparison, so every figure comes from the same objects the board finds.
#pragma once
#include <stdint.h>

#include <string>
#include <vector>

#include "host/model/model_io.h"
#include "host/photos/detection_dataset.h"
#include "host/train/detect_metrics.h"
#include "tv/detect/grid.h"

namespace tvh {

class Detector {
 public:
  // Throws tvh::Error when the model is no detector (`name` names it) or cannot run.
  Detector(const LoadedModel& model, const std::string& name);
  // The objects of one uint8 HWC image at the model's input size, centroids in input pixels (every object,
  // in tv::grid_objects's order). Throws tvh::Error naming `input` when the model cannot run on it.
  const std::vector<tv::GridObject>& detect(const uint8_t* image, const std::string& input);
  // The last image's grid: plan_outputs probabilities (a softmax per cell), and an int8 model's outputs.
  const std::vector<float>& grid() const { return probs_; }
  const std::vector<int8_t>& grid_int8() const { return logits_; }
  const tv::Shape& grid_shape() const { return grid_; }

 private:
  ModelRunner runner_;
  tv::Shape grid_;
  std::vector<float> probs_;
  std::vector<int8_t> logits_;
  std::vector<int> scratch_;
  std::vector<tv::GridObject> objects_;
};

// Throws tvh::Error unless the dataset's photos fit the detector: its input size, its classes, at most
// tv::kMaxBoxesPerPhoto boxes a photo.
void check_detector_fits(const tv::ModelPlan& plan, const DetectionDataset& ds);

// Throws tvh::Error unless the dataset's object classes are the detector's (its labels after `_background`,
// in order): `model_name` and the dataset's path are named, with what to do.
void check_detector_classes(const LoadedModel& model, const std::string& model_name, const DetectionDataset& ds);

// The objects a loaded detector finds on photos idx of a dataset (at the model's input size), as fractions of
// the photo, with each photo's labelled boxes: what detection_metrics measures. With cell_classes, also each
// photo's grid as the most probable channel of every cell (0 = background; row-major), to compare two
// engines cell by cell. Throws tvh::Error when the dataset does not fit the detector (its input size or its
// classes).
std::vector<PhotoDetections> detect_photos(const LoadedModel& model, const DetectionDataset& ds,
                                           const std::vector<int>& idx,
                                           std::vector<std::vector<uint8_t>>* cell_classes = nullptr);

// Float weights of a plan as a loaded model (for detect_photos on weights being trained).
LoadedModel float_detector(const tv::ModelPlan& plan, const float* params);

}  // namespace tvh
