#include "host/train/detect_metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "host/base/interval.h"
#include "tv/rng.h"

namespace tvh {

namespace {

// One photo's counts per class (index num_classes: classes outside the range) and its count error.
struct PhotoTally {
  std::vector<DetectionCounts> per_class;
  long count_error = 0;
};

PhotoTally tally(const PhotoDetections& photo, int num_classes) {
  PhotoTally t;
  t.per_class.resize((size_t)num_classes + 1);
  const auto slot = [&](int label) { return label >= 0 && label < num_classes ? (size_t)label : (size_t)num_classes; };
  const DetectionMatch m = match_detections(photo);
  std::vector<long> predicted(t.per_class.size()), labelled(t.per_class.size());
  for (size_t i = 0; i < photo.predicted.size(); ++i) {
    const size_t c = slot(photo.predicted[i].label);
    predicted[c]++;
    (m.box_of_prediction[i] >= 0 ? t.per_class[c].tp : t.per_class[c].fp)++;
  }
  for (size_t j = 0; j < photo.truth.size(); ++j) {
    const size_t c = slot(photo.truth[j].label);
    labelled[c]++;
    if (!m.box_found[j]) t.per_class[c].fn++;
  }
  for (size_t c = 0; c < t.per_class.size(); ++c) t.count_error += std::labs(predicted[c] - labelled[c]);
  return t;
}

void add(DetectionCounts& to, const DetectionCounts& c) {
  to.tp += c.tp;
  to.fp += c.fp;
  to.fn += c.fn;
}

// The q-quantile (0..1) of sorted values, by the nearest rank.
double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const size_t i = (size_t)std::min<double>((double)sorted.size() - 1, std::floor(q * (double)sorted.size()));
  return sorted[i];
}

}  // namespace

std::vector<DetectedObject> detected_objects(const std::vector<tv::GridObject>& objects, int input_h, int input_w) {
  std::vector<DetectedObject> v;
  v.reserve(objects.size());
  for (const tv::GridObject& o : objects) v.push_back({o.label, o.prob, o.x / (float)input_w, o.y / (float)input_h});
  return v;
}

DetectionMatch match_detections(const PhotoDetections& photo) {
  // the core's matching (the board's and the training session's), on an input of 1 x 1: the fractions
  std::vector<tv::GridObject> objects(photo.predicted.size());
  for (size_t i = 0; i < objects.size(); ++i) {
    const DetectedObject& p = photo.predicted[i];
    objects[i].label = p.label;
    objects[i].prob = p.prob;
    objects[i].x = p.fx;
    objects[i].y = p.fy;
  }
  DetectionMatch m;
  m.box_of_prediction.assign(objects.size(), -1);
  std::vector<uint8_t> found(photo.truth.size());
  tv::match_objects(objects.data(), (int)objects.size(), photo.truth.data(), (int)photo.truth.size(), 1, 1,
                    m.box_of_prediction.data(), found.data());
  m.box_found.assign(found.begin(), found.end());
  return m;
}

double DetectionCounts::precision() const {
  return tp + fp > 0 ? (double)tp / (double)(tp + fp) : 1.0;
}
double DetectionCounts::recall() const {
  return tp + fn > 0 ? (double)tp / (double)(tp + fn) : 1.0;
}
double DetectionCounts::f1() const {
  return tp + fp + fn > 0 ? 2.0 * (double)tp / (double)(2 * tp + fp + fn) : 1.0;
}

DetectionMetrics detection_metrics(const std::vector<PhotoDetections>& photos, int num_classes, uint64_t seed,
                                   int bootstrap_rounds) {
  DetectionMetrics m;
  num_classes = std::max(num_classes, 0);
  m.per_class.resize((size_t)num_classes);
  m.photos = (long)photos.size();
  std::vector<PhotoTally> tallies;
  tallies.reserve(photos.size());
  long count_error = 0;
  for (const PhotoDetections& p : photos) {
    tallies.push_back(tally(p, num_classes));
    const PhotoTally& t = tallies.back();
    for (size_t c = 0; c < t.per_class.size(); ++c) {
      if (c < m.per_class.size()) add(m.per_class[c], t.per_class[c]);
      add(m.micro, t.per_class[c]);
    }
    count_error += t.count_error;
  }
  if (photos.empty()) return m;
  m.count_mae = (double)count_error / (double)photos.size();
  m.precision_ci = wilson_interval(m.micro.tp, m.micro.tp + m.micro.fp);
  m.recall_ci = wilson_interval(m.micro.tp, m.micro.tp + m.micro.fn);
  // The bootstrap: photos drawn with replacement, each photo's micro counts and count error summed.
  std::vector<DetectionCounts> photo_micro(tallies.size());
  for (size_t i = 0; i < tallies.size(); ++i)
    for (const DetectionCounts& c : tallies[i].per_class) add(photo_micro[i], c);
  tv::Rng rng(seed);
  std::vector<double> f1s, maes;
  const uint64_t n = tallies.size();
  for (int r = 0; r < bootstrap_rounds; ++r) {
    DetectionCounts c;
    long err = 0;
    for (uint64_t k = 0; k < n; ++k) {
      const size_t i = (size_t)(rng.next() % n);  // n is small: the modulo bias is below 1e-15
      add(c, photo_micro[i]);
      err += tallies[i].count_error;
    }
    f1s.push_back(c.f1());
    maes.push_back((double)err / (double)n);
  }
  std::sort(f1s.begin(), f1s.end());
  std::sort(maes.begin(), maes.end());
  if (bootstrap_rounds > 0) {
    m.f1_ci = {quantile(f1s, 0.025), quantile(f1s, 0.975)};
    m.count_mae_ci = {quantile(maes, 0.025), quantile(maes, 0.975)};
  }
  return m;
}

namespace {

nlohmann::json counts_json(const DetectionCounts& c) {
  return {{"precision", c.precision()}, {"recall", c.recall()}, {"f1", c.f1()}, {"right", c.tp},
          {"false_alarms", c.fp},       {"missed", c.fn}};
}

}  // namespace

nlohmann::json detection_metrics_json(const std::string& prefix, const DetectionMetrics& m) {
  using nlohmann::json;
  const bool any = m.photos > 0;
  const auto figure = [any](double v) { return any ? json(v) : json(); };
  const auto interval = [any](const std::pair<double, double>& ci) {
    return any ? json({ci.first, ci.second}) : json();
  };
  return {{prefix + "f1", figure(m.micro.f1())},
          {prefix + "f1_interval", interval(m.f1_ci)},
          {prefix + "precision", figure(m.micro.precision())},
          {prefix + "precision_interval", interval(m.precision_ci)},
          {prefix + "recall", figure(m.micro.recall())},
          {prefix + "recall_interval", interval(m.recall_ci)},
          {prefix + "count_mae", figure(m.count_mae)},
          {prefix + "count_mae_interval", interval(m.count_mae_ci)},
          {prefix + "right", m.micro.tp},
          {prefix + "false_alarms", m.micro.fp},
          {prefix + "missed", m.micro.fn}};
}

nlohmann::json detection_per_class_json(const std::vector<std::string>& classes, const DetectionMetrics& m) {
  nlohmann::json per_class = nlohmann::json::object();
  for (size_t k = 0; k < classes.size() && k < m.per_class.size(); ++k)
    per_class[classes[k]] = counts_json(m.per_class[k]);
  return per_class;
}

}  // namespace tvh
