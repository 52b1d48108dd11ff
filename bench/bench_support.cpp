#include "bench/bench_support.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <fstream>
#include <numeric>

#include "host/base/error.h"
#include "tv/model/layer_table.h"

namespace tvbench {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double minimum(const std::vector<double>& v) {
  return *std::min_element(v.begin(), v.end());
}

double mean(const std::vector<double>& v) {
  return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / (double)v.size();
}

std::string read_first_line_with(const std::string& path, const std::string& key) {
  std::ifstream f(path);
  std::string line;
  while (std::getline(f, line))
    if (line.compare(0, key.size(), key) == 0) {
      const size_t colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(colon + 2);
    }
  return "unknown";
}

std::string load_average() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return a + " " + b + " " + c;
}

void write_npy(const std::filesystem::path& path, const char* descr, const std::vector<size_t>& shape, const void* data,
               size_t bytes) {
  std::string dims;
  for (size_t s : shape) dims += std::to_string(s) + ", ";
  if (shape.size() > 1) dims.resize(dims.size() - 2);
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  while ((10 + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  const unsigned char magic[8] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  f.write((const char*)magic, 8);
  const uint16_t len = (uint16_t)header.size();
  const unsigned char len_le[2] = {(unsigned char)(len & 0xff), (unsigned char)(len >> 8)};
  f.write((const char*)len_le, 2);
  f << header;
  f.write((const char*)data, (std::streamsize)bytes);
  if (!f) throw tvh::Error("cannot write " + path.string());
}

void write_indices(const std::filesystem::path& path, const std::vector<int>& v) {
  std::vector<int64_t> w(v.begin(), v.end());
  write_npy(path, "<i8", {w.size()}, w.data(), w.size() * sizeof(int64_t));
}

nlohmann::json layers_json(const tv::ModelPlan& plan) {
  nlohmann::json layers = nlohmann::json::array();
  for (int i = 0; i < plan.num_layers; ++i) {
    const tv::LayerDesc& d = plan.desc.layers[i];
    layers.push_back({{"type", tv::layer_type_name(d.type)},
                      {"filters", d.units},
                      {"units", d.units},
                      {"kernel", d.kernel_h},
                      {"stride", d.stride_h},
                      {"padding", d.padding == tv::Padding::Same ? "same" : "valid"},
                      {"out_h", d.out_h},
                      {"out_w", d.out_w}});
  }
  return layers;
}

nlohmann::json recipe_json(const tv::TrainRecipe& r) {
  return {{"epochs", r.epochs},
          {"batch", r.batch_size},
          {"lr", r.opt.lr},
          {"eps", r.opt.eps},
          {"grad_clip_norm", r.opt.grad_clip_norm},
          {"cosine", r.cosine},
          {"warmup_epochs", r.warmup_epochs},
          {"lr_min_factor", r.lr_min_factor},
          {"object_weight", r.opt.object_weight},
          {"restore_best", r.restore_best},
          {"flip", r.aug_flip},
          {"shift", r.aug_shift},
          {"shift_cells", r.aug_shift_cells},
          {"brightness", r.aug_brightness}};
}

void write_json(const std::filesystem::path& path, const nlohmann::json& j) {
  std::ofstream f(path);
  f << j.dump(1);
  if (!f) throw tvh::Error("cannot write " + path.string());
}

bool twin_figures(const std::string& output, const char* key, TwinFigures* out) {
  const size_t last = output.find_last_of('\n', output.size() >= 2 ? output.size() - 2 : 0);
  const std::string line = output.substr(last == std::string::npos ? 0 : last + 1);
  char version[64] = "";
  const std::string format = std::string("torch %63s median %lf min %lf ") + key + " %lf";
  if (std::sscanf(line.c_str(), format.c_str(), version, &out->median, &out->min, &out->value) != 4) return false;
  out->version = version;
  out->earlier = output.substr(0, last == std::string::npos ? 0 : last + 1);
  return true;
}

std::string python_with_torch() {
  for (const char* py : {"python3", "/usr/bin/python3"}) {
    const std::string cmd = std::string(py) + " -c 'import torch' >/dev/null 2>&1";
    const int rc = std::system(cmd.c_str());
    if (rc != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 0) return py;
  }
  return "";
}

std::string run_capture(const std::string& cmd) {
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return "";
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof buf, p)) out += buf;
  pclose(p);
  return out;
}

}  // namespace tvbench
