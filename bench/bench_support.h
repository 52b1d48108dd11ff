// What the benchmarks share: medians of timings, the machine they ran on, and the files and processes the
// PyTorch twins are run with.
#pragma once
#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tv/model/model.h"
#include "tv/train/presets.h"

namespace tvbench {

double median(std::vector<double> v);
double minimum(const std::vector<double>& v);
double mean(const std::vector<double>& v);

// The text after "key: " on the first line of `path` that starts with key ("unknown" when none does), e.g.
// the CPU model from /proc/cpuinfo.
std::string read_first_line_with(const std::string& path, const std::string& key);
// The 1, 5 and 15 minute load averages, as /proc/loadavg says them.
std::string load_average();

// A .npy file (format 1.0) of a C-order array; throws tvh::Error when it cannot be written.
void write_npy(const std::filesystem::path& path, const char* descr, const std::vector<size_t>& shape, const void* data,
               size_t bytes);
// Indices as an int64 .npy vector.
void write_indices(const std::filesystem::path& path, const std::vector<int>& v);

// The plan's layers as the twins read them from spec.json: type, filters/units, kernel, stride, padding and
// output size per layer.
nlohmann::json layers_json(const tv::ModelPlan& plan);

// The recipe as the twins read it from spec.json (every field; a twin uses those its preset has).
nlohmann::json recipe_json(const tv::TrainRecipe& r);
// Writes JSON to a file; throws tvh::Error when it cannot.
void write_json(const std::filesystem::path& path, const nlohmann::json& j);

// A twin's last output line, "torch VERSION median S min S KEY VALUE": false when it is not there.
struct TwinFigures {
  std::string version;
  double median = 0, min = 0, value = 0;
  std::string earlier;  // the lines before it (each run's own figures)
};
bool twin_figures(const std::string& output, const char* key, TwinFigures* out);

// The first python3 that imports torch: "python3" on PATH, then Debian's /usr/bin/python3 ("" when none).
std::string python_with_torch();
// Runs a shell command and returns its stdout ("" when it cannot start).
std::string run_capture(const std::string& cmd);

}  // namespace tvbench
