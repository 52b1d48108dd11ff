// tvtrain on a detection dataset (child processes): YOLO's images/train is never read as a class folder;
// tvtrain says what it read and refuses with one sentence, since the detection network is not built yet.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "detection_fixture.h"
#include "test_support.h"

TEST(TvtrainDetection, YoloImagesTrainIsNeverAClassFolder) {
  const std::string root = dettest::write_folder(dettest::ultralytics_files());
  const std::string model = tvtest::temp_dir("tvtrain-det") + "/model.tvb";
  const tvtest::CommandResult r =
      tvtest::run_capture(tvtest::bin_path("tvtrain") + " " + tvtest::quoted(root) + " --epochs 1 -o " + model);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(
      tvtest::contains(r.err, "detection dataset (YOLO): 3 photos, 2 classes, 4 objects; train 2 / val 1 as given"))
      << r.err;
  EXPECT_TRUE(tvtest::contains(r.err, "training a detector is not available yet")) << r.err;
  EXPECT_FALSE(tvtest::contains(r.err, "class folder")) << r.err;
  EXPECT_FALSE(std::filesystem::exists(model));
}

TEST(TvtrainDetection, ARoboflowZipIsSaidWithItsSeededSplit) {
  dettest::Files f;
  f["export/classes.txt"] = dettest::bytes_of("bolt\n");
  for (int k = 0; k < 5; ++k) {
    f["export/images/p" + std::to_string(k) + ".jpg"] = dettest::jpeg_photo(24, 24, k);
    f["export/labels/p" + std::to_string(k) + ".txt"] = dettest::bytes_of("0 0.5 0.5 0.5 0.5\n");
  }
  const std::string zip = dettest::write_zip(f);
  const tvtest::CommandResult r = tvtest::run_capture(tvtest::bin_path("tvtrain") + " " + tvtest::quoted(zip) + " -o " +
                                                      tvtest::temp_dir("tvtrain-det-zip") + "/m.tvb");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(tvtest::contains(r.err,
                               "detection dataset (YOLO): 5 photos, 1 classes, 5 objects; train 4 / val 1 "
                               "(seeded split)"))
      << r.err;
}

TEST(TvtrainDetection, TheProjectsDetectDatasetIsSaidAsGiven) {
  const tvtest::CommandResult r =
      tvtest::run_capture(tvtest::bin_path("tvtrain") + " " + tvtest::quoted(tvtest::source_path("datasets/detect")) +
                          " -o " + tvtest::temp_dir("tvtrain-det-own") + "/m.tvb");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(tvtest::contains(r.err, "detection dataset (YOLO): 300 photos, 3 classes, ")) << r.err;
  EXPECT_TRUE(tvtest::contains(r.err, "; train 240 / val 60 as given; 0 file(s) left out")) << r.err;
}
