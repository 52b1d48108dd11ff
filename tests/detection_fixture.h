// Detection datasets written by the tests: real JPEG and PNG photos, label files and .zip archives
// (libzip), shared by detection_labels_test.cpp and detection_dataset_test.cpp.
#pragma once
#include <gtest/gtest.h>
#include <zip.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "host/base/files.h"
#include "host/photos/detection_dataset.h"
#include "host/photos/jpeg.h"
#include "test_support.h"

namespace dettest {

// Files of a dataset by relative path: their bytes.
using Files = std::map<std::string, std::vector<uint8_t>>;

inline std::vector<uint8_t> bytes_of(const std::string& text) {
  return std::vector<uint8_t>(text.begin(), text.end());
}

// A w x h RGB picture that differs per seed (smooth, so JPEG keeps it).
inline std::vector<uint8_t> picture(int w, int h, int seed) {
  std::vector<uint8_t> px((size_t)w * h * 3);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c)
        px[((size_t)y * w + x) * 3 + c] = (uint8_t)((x * 4 + y * 2 + seed * 40 + c * 70) % 256);
  return px;
}

inline std::vector<uint8_t> jpeg_photo(int w, int h, int seed) {
  const std::vector<uint8_t> px = picture(w, h, seed);
  return tvh::encode_jpeg(px.data(), w, h, 3, 90, false);
}

// Writes every file below a fresh temp folder; returns the folder.
inline std::string write_folder(const Files& files) {
  const std::string root = tvtest::temp_dir("det");
  for (const auto& kv : files) {
    const std::filesystem::path p = std::filesystem::path(root) / kv.first;
    std::filesystem::create_directories(p.parent_path());
    tvh::write_file_atomic(p.string(), kv.second);
  }
  return root;
}

// Writes every file into a fresh .zip (libzip); returns its path.
inline std::string write_zip(const Files& files) {
  const std::string path = tvtest::temp_dir("detzip") + "/dataset.zip";
  int err = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  EXPECT_NE(z, nullptr);
  for (const auto& kv : files) {
    zip_source_t* src = zip_source_buffer(z, kv.second.data(), kv.second.size(), 0);  // files outlive zip_close
    EXPECT_GE(zip_file_add(z, kv.first.c_str(), src, ZIP_FL_ENC_UTF_8), 0);
  }
  EXPECT_EQ(zip_close(z), 0);
  return path;
}

inline tvh::DetectionDataset load_detection(const std::string& path, int h = 16, int w = 16) {
  tvh::DetectionOptions o;
  o.path = path;
  o.height = h;
  o.width = w;
  o.threads = 1;
  return tvh::load_detection_dataset(o);
}

// A YOLO dataset in the Ultralytics layout: images/{train,val}/ + labels/{train,val}/ + data.yaml.
inline Files ultralytics_files() {
  Files f;
  f["data.yaml"] = bytes_of("path: .\ntrain: images/train\nval: images/val\nnames:\n  0: cat\n  1: dog\n");
  f["images/train/a.jpg"] = jpeg_photo(40, 30, 1);
  f["labels/train/a.txt"] = bytes_of("0 0.5 0.5 0.2 0.4\n1 0.25 0.75 0.1 0.1\n");
  f["images/train/b.jpg"] = jpeg_photo(32, 32, 2);
  f["labels/train/b.txt"] = bytes_of("1 0.5 0.5 0.5 0.5\n");
  f["images/val/c.jpg"] = jpeg_photo(24, 48, 3);
  f["labels/val/c.txt"] = bytes_of("0 0.1 0.1 0.2 0.2\n");
  return f;
}

// A small detection dataset of the project's generator (tvgen-detect, style a: rings, crosses, triangles):
// 160 training and 40 validation photos of 160 x 160 in the YOLO layout, written below dir/photos; returns
// its path ("" when the generator failed: the test then fails on its own ASSERT).
inline std::string small_detect_dataset(const std::string& dir) {
  const std::string path = dir + "/photos";
  const tvtest::CommandResult r = tvtest::run_capture(tvtest::tool_command("tvgen-detect") + " " +
                                                      tvtest::quoted(path) + " --train 160 --val 40 --seed 5");
  EXPECT_EQ(r.status, 0) << r.err;
  return r.status == 0 ? path : "";
}

// A detector tvtrain trains on `dataset` in a few epochs (--seed 1, 96x96x3), written as dir/det.tvb; returns
// its path, "" when tvtrain failed.
inline std::string train_detector(const std::string& dir, const std::string& dataset, int epochs) {
  const std::string model = dir + "/det.tvb";
  const tvtest::CommandResult r =
      tvtest::run_capture(tvtest::bin_path("tvtrain") + " " + tvtest::quoted(dataset) + " --epochs " +
                          std::to_string(epochs) + " -q -o " + tvtest::quoted(model));
  EXPECT_EQ(r.status, 0) << r.err;
  return r.status == 0 ? model : "";
}

// tvquant's int8 model of a detector calibrated on `dataset`: dir/det.q8.tvb, "" when tvquant failed.
inline std::string quantize_detector(const std::string& dir, const std::string& dataset, const std::string& model) {
  const std::string q8 = dir + "/det.q8.tvb";
  const tvtest::CommandResult r =
      tvtest::run_capture(tvtest::bin_path("tvquant") + " " + tvtest::quoted(model) + " --calib " +
                          tvtest::quoted(dataset) + " --calib-sample 60 -q -o " + tvtest::quoted(q8));
  EXPECT_EQ(r.status, 0) << r.err;
  return r.status == 0 ? q8 : "";
}

}  // namespace dettest
