// How well a detector finds objects (issue 27): centroids matched to labelled boxes, per class and over
// all classes (micro), with the count error per photo and how sure each figure is.
//
// A prediction is right when its centroid falls inside a box of its class: tv::match_objects's rule
// (tv/detect/grid.h), the one the training session and the board use.
#pragma once
#include <stdint.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "tv/detect/grid.h"

namespace tvh {

// One detected object: its class, probability and centroid as fractions of the photo's width and height.
struct DetectedObject {
  int label = 0;
  float prob = 0.f;
  float fx = 0.f, fy = 0.f;
};

// The objects of a grid (tv::grid_objects) as fractions of the model's input, which is the whole photo
// resized: the same fractions of the photo.
std::vector<DetectedObject> detected_objects(const std::vector<tv::GridObject>& objects, int input_h, int input_w);

// One photo's predictions and its labelled boxes (fractions of the photo).
struct PhotoDetections {
  std::vector<DetectedObject> predicted;
  std::vector<tv::DetectBox> truth;
};

// The matching of one photo: for each prediction the index of the box it matched (-1: a false alarm), for
// each box whether a prediction matched it.
struct DetectionMatch {
  std::vector<int> box_of_prediction;
  std::vector<bool> box_found;
};
DetectionMatch match_detections(const PhotoDetections& photo);

// Right (tp), false alarms (fp) and missed (fn), with precision tp / (tp + fp) (1 without predictions),
// recall tp / (tp + fn) (1 without boxes) and F1 = 2 tp / (2 tp + fp + fn) (1 when all three are 0).
struct DetectionCounts {
  long tp = 0, fp = 0, fn = 0;
  double precision() const;
  double recall() const;
  double f1() const;
};

struct DetectionMetrics {
  std::vector<DetectionCounts> per_class;  // by object class
  DetectionCounts micro;                   // summed over classes
  // Per photo, the sum over classes of |predicted - labelled|, averaged over photos.
  double count_mae = 0;
  long photos = 0;
  // 95 % intervals: Wilson for the micro precision and recall; a seeded bootstrap over photos
  // (bootstrap_rounds resamplings, the 2.5 and 97.5 percentiles) for the micro F1 and count_mae.
  std::pair<double, double> precision_ci{0, 1}, recall_ci{0, 1}, f1_ci{0, 1}, count_mae_ci{0, 0};
};

// The metrics of a set of photos for num_classes object classes; predictions or boxes of a class outside
// 0..num_classes-1 count in micro and count_mae only. The same figures for the same seed on every machine.
DetectionMetrics detection_metrics(const std::vector<PhotoDetections>& photos, int num_classes, uint64_t seed = 1,
                                   int bootstrap_rounds = 1000);

// The micro figures as JSON keys after `prefix` (tvtrain's "val_" or "", tvquant's "float_val_" and
// "int8_val_"): f1, precision, recall and count_mae with their `_interval`s (null without photos), right,
// false_alarms, missed.
nlohmann::json detection_metrics_json(const std::string& prefix, const DetectionMetrics& m);
// Per class by name: precision, recall, f1, right, false_alarms, missed.
nlohmann::json detection_per_class_json(const std::vector<std::string>& classes, const DetectionMetrics& m);

}  // namespace tvh
