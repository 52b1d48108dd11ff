// tvtrain through its real command line, as child processes, on real JPEGs and zip files.
#include <gtest/gtest.h>
#include <zip.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "host/base/files.h"
#include "host/model/model_io.h"
#include "host/photos/jpeg.h"
#include "test_support.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string shapes() {
  return tvtest::source_path("datasets/shapes");
}

// tvtrain with these arguments, its stdout as JSON (see tvtest::run_json).
json tvtrain_json(const std::string& args, int* rc = nullptr, std::string* err = nullptr) {
  return tvtest::run_json(tvtest::bin_path("tvtrain") + " " + args, rc, err);
}

}  // namespace

TEST(Tvtrain, HelpAndVersion) {
  std::string out;
  EXPECT_EQ(tvtest::run_command(tvtest::bin_path("tvtrain") + " --help", &out), 0);
  EXPECT_NE(out.find("--preset"), std::string::npos);
  EXPECT_EQ(tvtest::run_command(tvtest::bin_path("tvtrain") + " --version", &out), 0);
  EXPECT_NE(out.find("tvtrain"), std::string::npos);
}

TEST(Tvtrain, TrainsAFolderAndReportsEverything) {
  std::string ds = tvtest::shapes_subset("train", 8);
  std::string out = tvtest::temp_dir("train-out");
  json j =
      tvtrain_json(ds + " --preset webmcu --epochs 3 -o " + out + "/m.tvb --raw-out " + out + "/myWeights.bin --json");
  for (const char* k : {"classes", "train_images", "val_images", "epochs", "train_seconds", "decode_seconds",
                        "train_accuracy", "val_accuracy", "val_correct", "confusion_matrix", "params", "memory"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_EQ(j["train_images"], 15);  // 8 per class, last 3 of each for validation
  EXPECT_EQ(j["val_images"], 9);
  EXPECT_EQ(j["params"], 20595);
  EXPECT_TRUE(j["memory"].contains("train_bytes"));
  EXPECT_TRUE(j["memory"].contains("infer_bytes"));
  EXPECT_EQ(j["confusion_matrix"].size(), 3u);
  EXPECT_TRUE(fs::exists(out + "/m.tvb"));
  EXPECT_EQ(fs::file_size(out + "/myWeights.bin"), 82380u);
  std::string svg = tvtest::read_text(out + "/m.curve.svg");
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("polyline"), std::string::npos);
  // The blob loads back with the dataset's classes as labels.
  tvh::LoadedModel m = tvh::load_model(out + "/m.tvb");
  EXPECT_EQ(m.labels, (std::vector<std::string>{"0blank", "1circle", "2cross"}));
}

TEST(Tvtrain, SameSeedSameBytesAndThreadsChangeNothing) {
  std::string ds = tvtest::shapes_subset("repro", 6);
  std::string out = tvtest::temp_dir("repro-out");
  for (const char* preset : {"webmcu", "tinyvision"}) {
    std::string common = ds + " --preset " + preset + " --epochs 2 --seed 7 --no-curve -q";
    int rc;
    tvtrain_json(common + " -o " + out + "/a.tvb --threads 1 --json", &rc);
    ASSERT_EQ(rc, 0);
    tvtrain_json(common + " -o " + out + "/b.tvb --threads 1 --json", &rc);
    tvtrain_json(common + " -o " + out + "/c.tvb --threads 2 --json", &rc);
    tvtrain_json(common + " -o " + out + "/d.tvb --threads 3 --json", &rc);
    auto a = tvh::read_file(out + "/a.tvb");
    EXPECT_EQ(a, tvh::read_file(out + "/b.tvb")) << preset << ": same seed must give the same bytes";
    EXPECT_EQ(a, tvh::read_file(out + "/c.tvb")) << preset << ": --threads 2 changed the model";
    EXPECT_EQ(a, tvh::read_file(out + "/d.tvb")) << preset << ": --threads 3 changed the model";
    tvtrain_json(ds + " --preset " + preset + " --epochs 2 --seed 8 --no-curve -q -o " + out + "/e.tvb --json", &rc);
    EXPECT_NE(a, tvh::read_file(out + "/e.tvb")) << preset << ": another seed should give another model";
  }
}

TEST(Tvtrain, ZipDatasetGivesTheSameModelAsTheFolder) {
  std::string ds = tvtest::shapes_subset("zip", 5);
  std::string out = tvtest::temp_dir("zip-out");
  std::string zpath = out + "/photos.zip";
  int err = 0;
  zip_t* z = zip_open(zpath.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  ASSERT_NE(z, nullptr);
  std::vector<std::vector<uint8_t>> keep;
  for (auto& cls : fs::directory_iterator(ds))
    for (auto& f : fs::directory_iterator(cls.path())) {
      keep.push_back(tvh::read_file(f.path().string()));
      zip_source_t* src = zip_source_buffer(z, keep.back().data(), keep.back().size(), 0);
      std::string name = "photos/" + cls.path().filename().string() + "/" + f.path().filename().string();
      ASSERT_GE(zip_file_add(z, name.c_str(), src, ZIP_FL_OVERWRITE), 0);
    }
  ASSERT_EQ(zip_close(z), 0);
  int rc;
  tvtrain_json(ds + " --preset webmcu --epochs 1 -q --no-curve -o " + out + "/f.tvb --json", &rc);
  ASSERT_EQ(rc, 0);
  json j = tvtrain_json(zpath + " --preset webmcu --epochs 1 -q --no-curve -o " + out + "/z.tvb --json", &rc);
  ASSERT_EQ(rc, 0);
  EXPECT_EQ(j["train_images"], 6);
  // The provenance names the dataset path, so compare the weights, not the bytes.
  EXPECT_EQ(tvh::load_model(out + "/f.tvb").params, tvh::load_model(out + "/z.tvb").params);
}

TEST(Tvtrain, MessyFoldersAreReportedAndSkipped) {
  std::string ds = tvtest::shapes_subset("messy", 5);
  fs::create_directories(ds + "/header");  // no images: skipped with a warning
  std::ofstream(ds + "/header/notes.txt") << "not a photo";
  std::ofstream(ds + "/1circle/broken.jpg") << "definitely not a jpeg";
  auto good = tvh::read_file(ds + "/0blank/" + fs::directory_iterator(ds + "/0blank")->path().filename().string());
  std::vector<uint8_t> half(good.begin(), good.begin() + good.size() / 2);
  tvh::write_file_atomic(ds + "/2cross/truncated.jpg", half);
  // A grayscale, progressive, odd-sized photo in a class folder.
  std::vector<uint8_t> gray(97 * 53);
  for (size_t i = 0; i < gray.size(); ++i) gray[i] = (uint8_t)(i * 7);
  tvh::write_file_atomic(ds + "/0blank/zz_gray.jpg", tvh::encode_jpeg(gray.data(), 97, 53, 1, 90, true));
  std::string out = tvtest::temp_dir("messy-out"), err;
  int rc;
  json j = tvtrain_json(ds + " --preset webmcu --epochs 1 --no-curve -o " + out + "/m.tvb --json", &rc, &err);
  ASSERT_EQ(rc, 0) << err;
  EXPECT_NE(err.find("header"), std::string::npos) << err;
  EXPECT_NE(err.find("broken.jpg"), std::string::npos) << err;
  EXPECT_NE(err.find("truncated.jpg"), std::string::npos) << err;
  EXPECT_EQ(j["skipped_images"], 3);  // broken.jpg, truncated.jpg and header/notes.txt (not in a class folder)
  EXPECT_EQ((int)j["train_images"] + (int)j["val_images"], 16);
}

TEST(Tvtrain, InputSizeFollowsAndTooSmallIsRefused) {
  std::string ds = tvtest::shapes_subset("input", 4);
  std::string out = tvtest::temp_dir("input-out"), err;
  int rc;
  json j = tvtrain_json(ds + " --preset webmcu --input 28x28x1 --epochs 1 -q --no-curve -o " + out + "/g.tvb --json",
                        &rc, &err);
  ASSERT_EQ(rc, 0) << err;
  EXPECT_EQ(j["params"], 36 + 4 + 288 + 8 + 968 * 3 + 3);
  tvtrain_json(ds + " --preset webmcu --input 6x6x3 --epochs 1 -o " + out + "/x.tvb", &rc, &err);
  EXPECT_EQ(rc, 1);
  EXPECT_NE(err.find("layer 4"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(out + "/x.tvb"));
  tvtrain_json(ds + " --input 28x28 -o " + out + "/x.tvb", &rc, &err);
  EXPECT_EQ(rc, 2);
  EXPECT_NE(err.find("HxWxC"), std::string::npos) << err;
}

TEST(Tvtrain, BadConfigsAreRefusedNamingFileAndKey) {
  std::string ds = tvtest::shapes_subset("cfg", 4);
  std::string dir = tvtest::temp_dir("cfg-out"), err;
  struct Case {
    const char* json;
    const char* expect;
  } cases[] = {
      {"{\"training\": {\"lr\": \"fast\"}}", "training.lr"},
      {"{\"training\": {\"epochs\": 0}}", "training.epochs"},
      {"{\"trainig\": {}}", "trainig"},
      {"{\"model\": {\"layers\": [{\"type\": \"conv3d\"}]}}", "model.layers[0].type"},
      {"{\"model\": {\"layers\": [{\"type\": \"conv2d\", \"filters\": 4, \"kernel\": 3}]}}", "class count"},
      {"{ not json", "not valid JSON"},
  };
  for (const auto& c : cases) {
    tvh::write_file_atomic(dir + "/c.json", std::string(c.json));
    int rc;
    tvtrain_json(ds + " --config " + dir + "/c.json --epochs 1 -o " + dir + "/m.tvb", &rc, &err);
    EXPECT_EQ(rc, 1) << c.json;
    EXPECT_NE(err.find(c.expect), std::string::npos) << c.json << " -> " << err;
    // One sentence: exactly one error line.
    size_t pos = err.find("tvtrain: ");
    ASSERT_NE(pos, std::string::npos) << err;
    EXPECT_EQ(err.find('\n', pos), err.size() - 1) << err;
  }
  // A valid custom model trains.
  tvh::write_file_atomic(dir + "/ok.json",
                         std::string(R"({"model": {"input": {"height": 32, "width": 32, "channels": 3},
      "layers": [{"type": "conv2d", "filters": 4, "kernel": 3, "padding": "same"}, {"type": "relu"},
                 {"type": "maxpool2d", "kernel": 2}, {"type": "global_avgpool"}, {"type": "dense"}]},
      "training": {"epochs": 1, "batch_size": 4, "batch_reduction": "mean", "optimizer": "sgd", "lr": 0.01}})"));
  int rc;
  json j = tvtrain_json(ds + " --config " + dir + "/ok.json -q --no-curve -o " + dir + "/ok.tvb --json", &rc, &err);
  ASSERT_EQ(rc, 0) << err;
  EXPECT_EQ(j["params"], 3 * 9 * 4 + 4 + 4 * 3 + 3);
}

TEST(Tvtrain, InitMatchesClassesByNameAndRefusesShapeChanges) {
  std::string ds = tvtest::shapes_subset("init", 4);
  std::string out = tvtest::temp_dir("init-out"), err;
  int rc;
  tvtrain_json(ds + " --preset webmcu --epochs 1 -q --no-curve -o " + out + "/m.tvb --json", &rc);
  ASSERT_EQ(rc, 0);
  // Same classes: resumes.
  tvtrain_json(ds + " --init " + out + "/m.tvb --epochs 1 -q --no-curve -o " + out + "/m2.tvb --json", &rc, &err);
  EXPECT_EQ(rc, 0) << err;
  // Renamed class folder: the model's class without photos keeps its row (a warning), the new name is
  // appended (imprinted) after it (tests/tools/test_tvtrain_update.cpp).
  fs::rename(ds + "/2cross", ds + "/2star");
  json j = tvtrain_json(ds + " --init " + out + "/m.tvb --epochs 1 --no-curve -o " + out + "/m3.tvb --json", &rc, &err);
  EXPECT_EQ(rc, 0) << err;
  EXPECT_NE(err.find("warning: " + out + "/m.tvb's class '2cross' has no photos"), std::string::npos) << err;
  EXPECT_EQ(j["classes"], json({"0blank", "1circle", "2cross", "2star"}));
  // Shape change on --init: refused as a usage error (exit status 2).
  tvtrain_json(ds + " --init " + out + "/m.tvb --input 32x32x3 -o " + out + "/m4.tvb", &rc, &err);
  EXPECT_EQ(rc, 2);
  EXPECT_NE(err.find("--input"), std::string::npos) << err;
  // A raw myWeights.bin for 3 classes on a 2-class dataset: refused.
  tvtrain_json(ds + " --preset webmcu --epochs 1 -q --no-curve -o " + out + "/w.tvb --raw-out " + out + "/w.bin --json",
               &rc);
  ASSERT_EQ(rc, 0);
  fs::remove_all(ds + "/2star");
  tvtrain_json(ds + " --init " + out + "/w.bin --eval", &rc, &err);
  EXPECT_EQ(rc, 1);
  EXPECT_NE(err.find("w.bin"), std::string::npos) << err;
}

TEST(Tvtrain, EvalOfTheDeviceWeightsMatchesTheDevice) {
  TV_REQUIRE_SHARED("datasets/webmcu-b");
  int rc;
  std::string err;
  json j = tvtrain_json(tvtest::shared_path("datasets/webmcu-b") + " --eval --init " +
                            tvtest::shared_path("datasets/webmcu-b/header/myWeights.bin") + " --json",
                        &rc, &err);
  ASSERT_EQ(rc, 0) << err;
  EXPECT_EQ(j["correct"], 82);
  EXPECT_EQ(j["total"], 90);
  EXPECT_TRUE(j.contains("confusion_matrix"));
  EXPECT_TRUE(j.contains("accuracy"));
}

TEST(Tvtrain, KfoldReportsMeanAndSd) {
  std::string ds = tvtest::shapes_subset("kfold", 4);
  int rc;
  std::string err;
  json j = tvtrain_json(ds + " --preset webmcu --kfold 3 --epochs 1 -q --json", &rc, &err);
  ASSERT_EQ(rc, 0) << err;
  EXPECT_TRUE(j.contains("cv_accuracy_mean"));
  EXPECT_TRUE(j.contains("cv_accuracy_sd"));
  EXPECT_EQ(j["folds"].size(), 3u);
}

TEST(Tvtrain, FailedRunLeavesTheOldModel) {
  std::string ds = tvtest::shapes_subset("atomic", 4);
  std::string out = tvtest::temp_dir("atomic-out"), err;
  tvh::write_file_atomic(out + "/m.tvb", std::string("previous model"));
  int rc;
  tvtrain_json(ds + " --classes 0blank,9missing -o " + out + "/m.tvb", &rc, &err);
  EXPECT_EQ(rc, 1);
  EXPECT_NE(err.find("9missing"), std::string::npos) << err;
  EXPECT_EQ(tvtest::read_text(out + "/m.tvb"), "previous model");
  tvtrain_json(tvtest::temp_dir("nothing") + "/nope -o " + out + "/m.tvb", &rc, &err);
  EXPECT_EQ(rc, 1);
  EXPECT_NE(err.find("nope"), std::string::npos) << err;
}

TEST(Tvtrain, ReadmeFirstCommandTrainsOnTheProjectDataset) {
  // The quickstart's training step on datasets/shapes: the default preset and recipe, as is.
  std::string out = tvtest::temp_dir("quick"), err;
  int rc;
  json j = tvtrain_json(shapes() + " --threads 2 -q -o " + out + "/model.tvb --json", &rc, &err);
  ASSERT_EQ(rc, 0) << err;
  EXPECT_EQ(j["classes"].size(), 3u);
  EXPECT_EQ(j["train_images"], 99);
  EXPECT_GE((double)j["val_accuracy"], 0.75);
  EXPECT_GE((double)j["train_accuracy"], 0.9);
}

TEST(TvtrainAccuracy, WebmcuPresetFiveSeedsOnTheReferenceSplit) {
  // The tracker's bar: mean validation accuracy >= 65 % over 5 seeds (the device reports 67-89 %,
  // a faithful PyTorch copy averages 69 %).
  TV_REQUIRE_SHARED("datasets/webmcu-b");
  std::string out = tvtest::temp_dir("acc-webmcu"), err;
  double sum = 0;
  for (int seed = 1; seed <= 5; ++seed) {
    int rc;
    json j = tvtrain_json(tvtest::shared_path("datasets/webmcu-b") + " --preset webmcu --seed " + std::to_string(seed) +
                              " --threads 2 -q --no-curve -o " + out + "/m.tvb --json",
                          &rc, &err);
    ASSERT_EQ(rc, 0) << err;
    EXPECT_EQ(j["val_images"], 9);
    sum += (double)j["val_accuracy"];
  }
  std::printf("webmcu preset, 5 seeds, reference split: mean validation accuracy %.2f %%\n", 100 * sum / 5);
  EXPECT_GE(sum / 5, 0.65);
}

TEST(TvtrainAccuracy, RecommendedPresetFiveFoldCrossValidation) {
  // The tracker's bar for the recommended (default) preset: 5-fold CV on webmcu-b >= 90 %.
  TV_REQUIRE_SHARED("datasets/webmcu-b");
  int rc;
  std::string err;
  json j =
      tvtrain_json(tvtest::shared_path("datasets/webmcu-b") + " --kfold 5 --seed 1 --threads 2 -q --json", &rc, &err);
  ASSERT_EQ(rc, 0) << err;
  std::printf("tinyvision preset, 5-fold CV on webmcu-b: %.2f %% +- %.2f %%\n", 100 * (double)j["cv_accuracy_mean"],
              100 * (double)j["cv_accuracy_sd"]);
  EXPECT_GE((double)j["cv_accuracy_mean"], 0.90);
}
