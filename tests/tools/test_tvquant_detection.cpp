// tvquant and tvexport on a detector (child processes, a detector tvtrain trains in a few epochs on a small set
// of the project's generator, tvgen-detect): the int8 detector keeps its task and threshold, its F1 is reported beside
// the float's on tvtrain's own validation photos, its .espdl (output "grid") verifies, and what does not apply to a
// detector is refused with one sentence.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "detection_fixture.h"
#include "host/espdl/espdl.h"
#include "test_support.h"
#include "tv/model/blob.h"

// The float F1 tvquant reports is the one tvtrain reported on the same validation photos (the same split and
// the same objects), the int8 F1 sits beside it, and the int8 blob is a detector with the float's threshold.
TEST(TvquantDetection, QuantizesADetectorAndReportsBothF1s) {
  const std::string dir = tvtest::temp_dir("tvquant-det");
  const std::string photos = dettest::small_detect_dataset(dir);
  ASSERT_FALSE(photos.empty());
  const std::string set = tvtest::quoted(photos);
  const std::string model = dir + "/det.tvb";
  const nlohmann::json trained =
      tvtest::run_json(tvtest::bin_path("tvtrain") + " " + set + " --epochs 12 --seed 2 -q --json -o " + model);
  ASSERT_TRUE(trained.is_object());
  std::string err;
  int rc = -1;
  const nlohmann::json j = tvtest::run_json(tvtest::bin_path("tvquant") + " " + model + " --calib " + set +
                                                " --calib-sample 80 --json -o " + dir + "/det.q8.tvb",
                                            &rc, &err);
  ASSERT_EQ(rc, 0) << err;
  EXPECT_EQ(j["task"], "detect");
  EXPECT_EQ(j["eval_images"], 40);
  EXPECT_EQ(j["calib_images"], 80);  // a seeded sample of the training photos
  EXPECT_EQ(j["calib_pool_images"], 160);
  EXPECT_EQ(j["eval_split"], "validation");
  EXPECT_EQ(j["float_val_f1"], trained["val_f1"]);
  EXPECT_EQ(j["float_val_right"], trained["val_right"]);
  EXPECT_EQ(j["float_val_false_alarms"], trained["val_false_alarms"]);
  EXPECT_EQ(j["float_per_class"], trained["per_class"]);
  ASSERT_TRUE(j["int8_val_f1"].is_number());
  EXPECT_NEAR(j["int8_val_f1"].get<double>(), j["float_val_f1"].get<double>(), 0.05);
  EXPECT_TRUE(j["int8_val_count_mae"].is_number());
  EXPECT_TRUE(j["int8_per_class"].contains("triangle"));
  EXPECT_GT(j["cell_agreement"].get<double>(), 0.97);
  EXPECT_EQ(j["grid_cells"], 40 * 12 * 12);
  // the text says it too
  EXPECT_TRUE(tvtest::contains(err, "detection on ")) << err;
  EXPECT_TRUE(tvtest::contains(err, "F1 per class, float / int8: ring ")) << err;
  EXPECT_TRUE(tvtest::contains(err, "calibrating on a seeded sample (seed 1) of 80 of the 160 images")) << err;
  const std::string blob = tvtest::read_text(dir + "/det.q8.tvb");
  tv::BlobView v;
  ASSERT_TRUE(tv::blob_decode((const uint8_t*)blob.data(), blob.size(), &v).ok());
  EXPECT_TRUE(v.is_int8());
  EXPECT_EQ(v.model.task, tv::Task::Detect);
  EXPECT_EQ(v.model.detect_threshold, trained["threshold"].get<float>());
  EXPECT_EQ(v.num_labels, 4);
  // tvtrain --eval runs the int8 detector (its objects through the same path)
  const nlohmann::json eval =
      tvtest::run_json(tvtest::bin_path("tvtrain") + " " + set + " --eval --init " + dir + "/det.q8.tvb -q --json");
  ASSERT_TRUE(eval.is_object());
  EXPECT_EQ(eval["int8"], true);
  EXPECT_EQ(eval["photos"], 200);
  // --eval-on: every photo of another set (here all 200), the keys without val_, the float figures --eval's
  const nlohmann::json all =
      tvtest::run_json(tvtest::bin_path("tvquant") + " " + model + " --calib " + set + " --calib-sample 20 --eval-on " +
                       set + " -q --json -o " + dir + "/all.q8.tvb");
  ASSERT_TRUE(all.is_object());
  EXPECT_EQ(all["eval_split"], "all");
  EXPECT_EQ(all["eval_images"], 200);
  EXPECT_FALSE(all.contains("float_val_f1"));
  const nlohmann::json float_eval =
      tvtest::run_json(tvtest::bin_path("tvtrain") + " " + set + " --eval --init " + model + " -q --json");
  ASSERT_TRUE(float_eval.is_object());
  EXPECT_EQ(all["float_f1"], float_eval["f1"]);
  EXPECT_TRUE(all["int8_f1"].is_number());
}

// The int8 detector as an ESP-DL file: its output named "grid" ([1, 12, 12, 4]), the task and threshold in
// its metadata, verified by `tvexport verify` like every other export (a test photo of the dataset too).
TEST(TvquantDetection, TheEspdlOfADetectorVerifies) {
  const std::string dir = tvtest::temp_dir("tvexport-det-espdl");
  const std::string photos = dettest::small_detect_dataset(dir);
  ASSERT_FALSE(photos.empty());
  const std::string model = dettest::train_detector(dir, photos, 4);
  ASSERT_FALSE(model.empty());
  const std::string q8 = dettest::quantize_detector(dir, photos, model);
  ASSERT_FALSE(q8.empty());
  for (const std::string& test_images : {std::string(), " --test-images " + tvtest::quoted(photos)}) {
    const std::string espdl = dir + "/det.espdl";
    const tvtest::CommandResult e =
        tvtest::run_capture(tvtest::bin_path("tvexport") + " " + q8 + " -o " + espdl + test_images);
    ASSERT_EQ(e.status, 0) << e.err;
    EXPECT_TRUE(tvtest::contains(e.err, "its output 'grid' of 12x12 cells of 4 logits")) << e.err;
    const tvh::EspdlModel g = tvh::espdl_read_file(espdl);
    ASSERT_EQ(g.outputs.size(), 1u);
    EXPECT_EQ(g.outputs[0].name, "grid");
    EXPECT_EQ(g.outputs[0].dims, (std::vector<int64_t>{1, 12, 12, 4}));
    bool task = false;
    for (const auto& kv : g.metadata) task = task || (kv.first == "task" && kv.second == "detect");
    EXPECT_TRUE(task);
    EXPECT_TRUE(tvtest::contains(g.doc_string, "TinyVision int8 detector (background + 3 object classes"))
        << g.doc_string;
    int rc = -1;
    const nlohmann::json v = tvtest::run_json(tvtest::bin_path("tvexport") + " verify " + espdl + " --json", &rc);
    EXPECT_EQ(rc, 0);
    EXPECT_EQ(v["passed"], true) << v.dump();
    EXPECT_EQ(v["loader_problems"].size(), 0u) << v.dump();
  }
  // tvexport info describes it
  const tvtest::CommandResult info = tvtest::run_capture(tvtest::bin_path("tvexport") + " info " + q8);
  EXPECT_EQ(info.status, 0) << info.err;
  EXPECT_TRUE(tvtest::contains(info.out, "_background")) << info.out;
  EXPECT_TRUE(tvtest::contains(info.out, "task: detect (a grid of 12x12 cells")) << info.out;
}

// Each step that does not apply to a detector says so in one sentence and writes nothing.
TEST(TvquantDetection, WhatDoesNotApplyToADetectorIsRefused) {
  const std::string dir = tvtest::temp_dir("tvquant-det-refused");
  const std::string photos = dettest::small_detect_dataset(dir);
  ASSERT_FALSE(photos.empty());
  const std::string set = tvtest::quoted(photos);
  const std::string model = dettest::train_detector(dir, photos, 2);
  ASSERT_FALSE(model.empty());
  const std::string out = dir + "/out";
  struct Case {
    std::string command, says;
    int status;
  };
  const std::string tvquant = tvtest::bin_path("tvquant") + " ", tvexport = tvtest::bin_path("tvexport") + " ";
  const std::vector<Case> cases = {
      {tvquant + "prune " + model + " " + set + " --ratio 0.2 -o " + out + ".tvb",
       "is a detector (a grid of objects), and pruning fine-tunes classifiers on class folders", 1},
      {tvquant + model + " --calib " + tvtest::quoted(tvtest::source_path("datasets/shapes")) + " -o " + out + ".tvb",
       "(--calib) holds no labelled boxes", 1},
      {tvquant + model + " --calib " + set + " --report " + out + ".html -o " + out + ".tvb",
       "--report draws a classifier's page", 2},
      {tvquant + model + " --calib " + set + " --val-last 2 -o " + out + ".tvb", "--val-last splits class folders", 2},
      {tvexport + model + " -o " + out + ".espdl", "is a float model; an .espdl needs an int8 model", 1},
      {tvexport + model + " -o " + out + ".bin", "is a detector (a grid of objects), and the reference firmware's raw",
       1},
      {tvexport + model + " --style webmcu -o " + out + ".h", "webmcu-style header holds its classifier only", 1},
  };
  for (const Case& c : cases) {
    const tvtest::CommandResult r = tvtest::run_capture(c.command);
    EXPECT_EQ(r.status, c.status) << c.command << ": " << r.err;
    EXPECT_TRUE(tvtest::contains(r.err, c.says)) << c.command << ": " << r.err;
  }
  for (const char* ext : {".tvb", ".html", ".espdl", ".bin", ".h"})
    EXPECT_FALSE(std::filesystem::exists(out + ext)) << ext;
}
