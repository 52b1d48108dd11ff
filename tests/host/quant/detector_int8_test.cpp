// A whole detector, int8 against its float twin: trained in-process on the project's datasets/detect (a few
// epochs at 96x96x3), calibrated on its training photos through host/quant's classifier path (tvh::ImageSet),
// then both engines on the validation photos: the same class in nearly every grid cell, F1 close, and the
// int8 blob still a detector with the float's threshold.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "host/model/model_io.h"
#include "host/photos/detection_dataset.h"
#include "host/photos/split.h"
#include "host/quant/quantize.h"
#include "host/train/detect_metrics.h"
#include "host/train/detect_training.h"
#include "host/train/detector.h"
#include "test_support.h"
#include "tv/train/presets.h"

TEST(DetectorInt8, AgreesWithItsFloatTwinCellByCell) {
  tvh::DetectionOptions o;
  o.path = tvtest::source_path("datasets/detect");
  o.height = o.width = 96;
  o.channels = 3;
  o.threads = 2;
  const tvh::DetectionDataset ds = tvh::load_detection_dataset(o);
  tvh::Split split = tvh::detection_split(ds, 0.2, 1);
  ASSERT_EQ(split.val.size(), 100u);
  split.train.resize(240);  // enough for a few epochs to find objects
  tv::DataShape data;
  data.height = data.width = 96;
  data.channels = 3;
  data.images = (long)split.train.size();
  tv::ModelDesc desc;
  const int k = (int)ds.classes.size() + 1;
  tv::preset_model_for("detect", k, data, &desc);
  tvh::DetectTrainRequest req;
  const auto plan = tvh::plan_or_throw(desc, "the detector");
  req.plan = plan.get();
  tv::preset_recipe_for("detect", data, &req.recipe);
  req.recipe.epochs = 12;
  req.dataset = &ds;
  req.train = split.train;
  req.val = split.val;
  req.threads = 2;
  const tvh::DetectTrainResult r = tvh::train_detector(req);
  const tvh::LoadedModel f = tvh::float_detector(*plan, r.params.data());

  // Calibration on 60 of the training photos: the detection dataset is an image set as a classification one is.
  tvh::QuantOptions qo;
  qo.threads = 2;
  const std::vector<int> calib = tvh::seeded_sample(split.train, 60, 1);  // as tvquant --calib-sample 60
  const tvh::CalibrationStats stats = tvh::calibrate(*plan, r.params.data(), ds, calib, qo);
  const tvh::ImageSet images(ds);
  const tvh::QuantResult q =
      tvh::quantize_model(*plan, r.params.data(), stats, f.labels, "tool=test\n", qo, &images, &calib);
  const tvh::LoadedModel q8 = tvh::decode_model(q.blob, "det.q8.tvb", tvh::Tasks::Any);
  ASSERT_TRUE(q8.int8);
  ASSERT_TRUE(tvh::is_detector(q8));
  EXPECT_EQ(q8.plan->desc.detect_threshold, plan->desc.detect_threshold);
  // A classifier-only load still refuses it, with the sentence.
  EXPECT_TRUE(tvtest::contains(tvtest::thrown_message([&] { tvh::decode_model(q.blob, "det.q8.tvb"); }),
                               "det.q8.tvb is a detector"));

  std::vector<std::vector<uint8_t>> fcells, qcells;
  const tvh::DetectionMetrics mf = tvh::detection_metrics(tvh::detect_photos(f, ds, split.val, &fcells), k - 1);
  const tvh::DetectionMetrics mq = tvh::detection_metrics(tvh::detect_photos(q8, ds, split.val, &qcells), k - 1);
  ASSERT_EQ(fcells.size(), 100u);
  long cells = 0, same = 0;
  for (size_t n = 0; n < fcells.size(); ++n) {
    ASSERT_EQ(fcells[n].size(), 144u);  // a 12 x 12 grid at 96 x 96
    for (size_t c = 0; c < fcells[n].size(); ++c) {
      ++cells;
      same += fcells[n][c] == qcells[n][c];
    }
  }
  EXPECT_GE((double)same / (double)cells, 0.97) << same << " of " << cells;
  EXPECT_GT(mf.micro.f1(), 0.2);  // it learned something: chance is near 0
  EXPECT_NEAR(mq.micro.f1(), mf.micro.f1(), 0.05) << "float " << mf.micro.f1() << ", int8 " << mq.micro.f1();
  EXPECT_NEAR(mq.count_mae, mf.count_mae, 0.2);
}
