// What quantizing a classifier and a detector share: the command line, the calibration and quantization
// step, and the parts of the report about the int8 model itself (exponents, adjustments, bytes, memory).
// tvquant.cpp compares a classifier's accuracy, detect_quant.cpp a detector's F1.
#pragma once
#include <CLI/CLI.hpp>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "host/base/files.h"
#include "host/model/model_io.h"
#include "host/photos/image_set.h"
#include "host/quant/quantize.h"
#include "tools/common/cli.h"

namespace tvquant {

// Calibration sample: enough images that the chosen exponents no longer change (measured on
// Fashion-MNIST and webmcu-b, docs/quantization.md), drawn with a fixed seed (class-balanced for a classifier).
constexpr size_t kDefaultCalibSample = 2000;
constexpr uint64_t kCalibSampleSeed = 1;

// The command line of `tvquant MODEL --calib DATASET -o OUT`.
struct QuantArgs {
  std::string model, calib, output, eval_on, calib_images = "train", acc_check = "worst-case", observer, report_path;
  double percentile = 99.99;
  int val_last = 3, threads = 0;
  size_t calib_sample = kDefaultCalibSample;
  bool per_channel = false, as_json = false, quiet = false, calib_all = false;
  CLI::Option* percentile_opt = nullptr;
  CLI::Option* sample_opt = nullptr;
  CLI::Option* val_last_opt = nullptr;
  // The files the command writes (the report's may be empty).
  std::vector<tvh::NamedPath> outputs() const { return {{"-o", output}, {"--report", report_path}}; }
};

// The images that calibrate: a view of the dataset, the chosen indices and the pool they were drawn from.
struct CalibImages {
  tvh::ImageSet images;
  std::vector<int> idx;
  size_t pool = 0;
  std::string sample_kind;  // "class-balanced" or "seeded": how a sample of the pool was drawn
};

// The int8 model and how it was made.
struct Quantized {
  tvh::QuantOptions qo;
  std::string calibration;  // the observer as the report names it ("mse", "percentile 99.99", ...)
  std::string sampled;      // "a class-balanced sample (seed 1) of " when the calibration images are a sample
  tvh::QuantResult q;
  double calib_seconds = 0;
};

// Calibrates the activation exponents on the calibration images and quantizes the model; `extra_provenance`
// ends the provenance lines the int8 model carries (e.g. "task=detect\n").
Quantized calibrate_and_quantize(const QuantArgs& a, const tvh::LoadedModel& m, const CalibImages& c,
                                 const std::string& extra_provenance, const tvcli::StderrLog& log);

// The report's first part: "int8 model OUT (N bytes), exponents per layer:", the table, the input exponent
// and the 20-bit note, and every adjustment.
std::string exponents_text(const QuantArgs& a, const tv::ModelPlan& plan, size_t calib_images, const Quantized& z);
// The report's last part: weights and inference memory, float and int8.
std::string weights_and_memory_text(const tv::ModelPlan& plan, const Quantized& z);

// What --json says of the int8 model whatever its task: files, calibration, options, bytes, memory, exponents
// and layers.
nlohmann::json quantization_json(const QuantArgs& a, const tvh::LoadedModel& m, const CalibImages& c,
                                 const Quantized& z);

// After every file is written: the report on stdout (the text, or the JSON with the text on stderr), then
// "wrote OUT" and the next step on stderr. A refused stdout (a full disk) loses no file asked for.
void print_results(const QuantArgs& a, const std::string& text, const nlohmann::json& j, const tvcli::StderrLog& log);

// Quantizes a float detector (tv::Task::Detect): calibration on its training photos of --calib (a detection
// dataset, split as tvtrain split it), float vs int8 F1, precision, recall and count error on its validation
// photos (or every photo of --eval-on), the int8 detector written. Returns the exit code.
int quantize_detector(const QuantArgs& a, const tvh::LoadedModel& m, const tvcli::StderrLog& log);

}  // namespace tvquant
