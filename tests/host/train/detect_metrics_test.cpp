// Detection metrics (host/train/detect_metrics.h) on hand-made photos: matching, counts, F1, count error
// and the intervals.
#include "host/train/detect_metrics.h"

#include <gtest/gtest.h>

namespace {

tvh::DetectedObject pred(int label, float prob, float fx, float fy) {
  return {label, prob, fx, fy};
}
tv::DetectBox box(int label, float cx, float cy, float w, float h) {
  return {label, cx, cy, w, h};
}

TEST(DetectMetrics, ACentroidInsideABoxOfItsClassIsRightEachBoxOnce) {
  tvh::PhotoDetections p;
  p.truth = {box(0, 0.2f, 0.2f, 0.2f, 0.2f), box(1, 0.75f, 0.75f, 0.25f, 0.25f)};
  p.predicted = {pred(0, 0.6f, 0.25f, 0.15f),     // inside box 0: right
                 pred(0, 0.9f, 0.21f, 0.21f),     // inside box 0 too, more probable: it takes the box
                 pred(0, 0.8f, 0.7f, 0.7f),       // inside box 1 but of the wrong class: a false alarm
                 pred(1, 0.5f, 0.875f, 0.875f)};  // on box 1's corner (edges count): right
  const tvh::DetectionMatch m = tvh::match_detections(p);
  EXPECT_EQ(m.box_of_prediction, (std::vector<int>{-1, 0, -1, 1}));
  EXPECT_EQ(m.box_found, (std::vector<bool>{true, true}));
}

TEST(DetectMetrics, OfSeveralBoxesTheNearestCentreIsTaken) {
  tvh::PhotoDetections p;
  p.truth = {box(0, 0.3f, 0.5f, 0.6f, 0.6f), box(0, 0.55f, 0.5f, 0.3f, 0.3f)};
  p.predicted = {pred(0, 0.9f, 0.5f, 0.5f), pred(0, 0.8f, 0.2f, 0.5f)};
  const tvh::DetectionMatch m = tvh::match_detections(p);
  EXPECT_EQ(m.box_of_prediction, (std::vector<int>{1, 0}));
}

TEST(DetectMetrics, PrecisionRecallF1AndCountErrorPerClassAndOverall) {
  std::vector<tvh::PhotoDetections> photos(3);
  // photo 0: two cups found, a pen missed
  photos[0].truth = {box(0, 0.2f, 0.2f, 0.1f, 0.1f), box(0, 0.6f, 0.2f, 0.1f, 0.1f), box(1, 0.5f, 0.8f, 0.1f, 0.1f)};
  photos[0].predicted = {pred(0, 0.9f, 0.2f, 0.2f), pred(0, 0.9f, 0.6f, 0.2f)};
  // photo 1: no objects, one false pen
  photos[1].predicted = {pred(1, 0.7f, 0.5f, 0.5f)};
  // photo 2: a pen found, a cup seen as a pen (a false pen and a missed cup)
  photos[2].truth = {box(1, 0.3f, 0.3f, 0.2f, 0.2f), box(0, 0.7f, 0.7f, 0.2f, 0.2f)};
  photos[2].predicted = {pred(1, 0.8f, 0.3f, 0.3f), pred(1, 0.6f, 0.7f, 0.7f)};
  const tvh::DetectionMetrics m = tvh::detection_metrics(photos, 2, 7, 200);
  ASSERT_EQ(m.per_class.size(), 2u);
  EXPECT_EQ(m.per_class[0].tp, 2);
  EXPECT_EQ(m.per_class[0].fp, 0);
  EXPECT_EQ(m.per_class[0].fn, 1);
  EXPECT_EQ(m.per_class[1].tp, 1);
  EXPECT_EQ(m.per_class[1].fp, 2);
  EXPECT_EQ(m.per_class[1].fn, 1);
  EXPECT_EQ(m.micro.tp, 3);
  EXPECT_EQ(m.micro.fp, 2);
  EXPECT_EQ(m.micro.fn, 2);
  EXPECT_DOUBLE_EQ(m.micro.precision(), 3.0 / 5);
  EXPECT_DOUBLE_EQ(m.micro.recall(), 3.0 / 5);
  EXPECT_DOUBLE_EQ(m.micro.f1(), 6.0 / 10);
  EXPECT_DOUBLE_EQ(m.per_class[1].f1(), 2.0 / 5);
  // count errors: photo 0 |2-2| + |0-1| = 1; photo 1: 1; photo 2: |0-1| + |2-1| = 2
  EXPECT_DOUBLE_EQ(m.count_mae, 4.0 / 3);
  EXPECT_EQ(m.photos, 3);
  EXPECT_LE(m.precision_ci.first, 0.6);
  EXPECT_GE(m.precision_ci.second, 0.6);
  EXPECT_LE(m.f1_ci.first, m.micro.f1());
  EXPECT_GE(m.f1_ci.second, m.micro.f1());
  EXPECT_LE(m.count_mae_ci.first, m.count_mae);
  EXPECT_GE(m.count_mae_ci.second, m.count_mae);
  EXPECT_LT(m.count_mae_ci.first, m.count_mae_ci.second);
  // the same seed, the same intervals; another seed draws other photos
  const tvh::DetectionMetrics again = tvh::detection_metrics(photos, 2, 7, 200);
  EXPECT_EQ(again.f1_ci, m.f1_ci);
  EXPECT_EQ(again.count_mae_ci, m.count_mae_ci);
}

TEST(DetectMetrics, EmptyCasesArePerfectOrZeroAsDefined) {
  tvh::DetectionCounts none;
  EXPECT_EQ(none.precision(), 1.0);
  EXPECT_EQ(none.recall(), 1.0);
  EXPECT_EQ(none.f1(), 1.0);
  tvh::DetectionCounts only_missed;
  only_missed.fn = 3;
  EXPECT_EQ(only_missed.precision(), 1.0);
  EXPECT_EQ(only_missed.recall(), 0.0);
  EXPECT_EQ(only_missed.f1(), 0.0);
  const tvh::DetectionMetrics m = tvh::detection_metrics({}, 3);
  EXPECT_EQ(m.photos, 0);
  EXPECT_EQ(m.count_mae, 0.0);
  // a class outside the range counts overall only
  std::vector<tvh::PhotoDetections> photos(1);
  photos[0].predicted = {pred(5, 0.9f, 0.5f, 0.5f)};
  photos[0].truth = {box(5, 0.5f, 0.5f, 0.2f, 0.2f)};
  const tvh::DetectionMetrics odd = tvh::detection_metrics(photos, 2);
  EXPECT_EQ(odd.micro.tp, 1);
  EXPECT_EQ(odd.per_class[0].tp + odd.per_class[1].tp, 0);
}

TEST(DetectMetrics, GridObjectsBecomeFractionsOfThePhoto) {
  tv::GridObject o;
  o.label = 2;
  o.prob = 0.75f;
  o.x = 48;
  o.y = 24;
  const auto v = tvh::detected_objects({o}, 96, 192);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].label, 2);
  EXPECT_FLOAT_EQ(v[0].fx, 0.25f);
  EXPECT_FLOAT_EQ(v[0].fy, 0.25f);
}

}  // namespace
