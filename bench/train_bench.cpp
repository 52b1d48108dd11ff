// tv_bench_train: times what `tvtrain DATASET` runs with the default preset (tinyvision) and with
// `--preset webmcu` (tvh::train_model on the decoded cache, reference split, the preset's model and
// recipe for this dataset, as tvtrain chooses them) at 1 and 2 threads, with 4x the images, and, when
// Debian's python3-torch is installed, the same network and recipe in PyTorch on the same decoded
// images (torch_tinyvision.py, torch_webmcu.py). Ends with one summary line per preset.
//
//   tv_bench_train [DATASET] [--preset NAME] [--runs N] [--scale K] [--scale-runs N] [--no-torch]
//
// DATASET defaults to ../shared/datasets/webmcu-b next to the source tree. Prints figures only.
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_support.h"
#include "host/base/error.h"
#include "host/model/model_io.h"
#include "host/photos/dataset.h"
#include "host/photos/split.h"
#include "host/train/config.h"
#include "host/train/training.h"
#include "tv/ops/kernel_variants.h"

namespace fs = std::filesystem;
using namespace tvbench;

namespace {

struct Options {
  std::string dataset = TV_SOURCE_DIR "/../shared/datasets/webmcu-b";
  int runs = 7;
  int scale = 4;
  int scale_runs = 3;
  bool torch = true;
  std::vector<std::string> presets = {"tinyvision", "webmcu"};
};

double process_cpu_seconds() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
         ru.ru_stime.tv_usec * 1e-6;
}

long peak_rss_kb() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

// Multiply-adds of one training step on one sample: every parameter layer's forward and weight
// gradient, and its input gradient except for the first parameter layer (never computed). Pooling
// and activations are left out (they are not multiply-adds).
double training_macs(const tv::ModelPlan& plan) {
  double macs = 0;
  for (int i = 0; i < plan.num_layers; ++i) {
    const tv::LayerDesc& d = plan.desc.layers[i];
    const tv::LayerPlan& lp = plan.layers[i];
    double layer = 0;
    if (d.type == tv::LayerType::Conv2D)
      layer = (double)lp.out.size() * lp.geom.k_h * lp.geom.k_w * lp.in.c;
    else if (d.type == tv::LayerType::DepthwiseConv2D)
      layer = (double)lp.out.size() * lp.geom.k_h * lp.geom.k_w;
    else if (d.type == tv::LayerType::Dense)
      layer = (double)lp.in.size() * lp.out.c;
    else
      continue;
    macs += layer * (i > plan.first_param_layer ? 3 : 2);
  }
  return macs;
}

// A copy of the dataset with every image k times (copy j of image i at index j * N + i) and the split
// whose training set holds every copy of the training images; validation stays the original images.
tvh::Dataset repeat_dataset(const tvh::Dataset& ds, int k, const tvh::Split& split, tvh::Split* out_split) {
  tvh::Dataset r;
  r.source = ds.source + " x" + std::to_string(k);
  r.classes = ds.classes;
  r.height = ds.height;
  r.width = ds.width;
  r.channels = ds.channels;
  r.order = ds.order;
  const int n = (int)ds.size();
  for (int j = 0; j < k; ++j) {
    r.paths.insert(r.paths.end(), ds.paths.begin(), ds.paths.end());
    r.labels.insert(r.labels.end(), ds.labels.begin(), ds.labels.end());
    r.pixels.insert(r.pixels.end(), ds.pixels.begin(), ds.pixels.end());
    for (int i : split.train) out_split->train.push_back(j * n + i);
  }
  out_split->val = split.val;
  return r;
}

struct Timing {
  std::vector<double> seconds;      // train_seconds: wall time of the training loop
  std::vector<double> cpu_seconds;  // CPU time of the whole train_model call (validation included)
  bool identical = true;            // every run produced the weights of the first
  std::vector<float> params;
  tv::TrainMemory memory{};
};

Timing time_training(const tv::ModelPlan& plan, const tv::TrainRecipe& recipe, const tvh::Dataset& ds,
                     const tvh::Split& split, int threads, int runs, const std::vector<float>* expect) {
  Timing t;
  for (int r = 0; r < runs; ++r) {
    const tvh::TrainRequest req = tvh::train_request(plan, recipe, ds, split, 1, threads);
    const double cpu0 = process_cpu_seconds();
    tvh::TrainResult res = tvh::train_model(req);
    t.cpu_seconds.push_back(process_cpu_seconds() - cpu0);
    t.seconds.push_back(res.train_seconds);
    t.memory = res.memory;
    if (t.params.empty()) t.params = res.params;
    if (res.params != t.params || (expect && res.params != *expect)) t.identical = false;
  }
  return t;
}

void print_timing(const char* what, const Timing& t, double gflop) {
  const double med = median(t.seconds);
  std::printf("%-12s median %.3f s   min %.3f s   (%zu runs)   %5.1f GFLOP/s   CPU %.3f s%s\n", what, med,
              minimum(t.seconds), t.seconds.size(), gflop / med, median(t.cpu_seconds),
              t.identical ? "" : "   WEIGHTS DIFFER BETWEEN RUNS");
}

// ---- the PyTorch comparison ----

void write_spec(const fs::path& path, const tv::ModelPlan& plan, const tv::TrainRecipe& r) {
  const nlohmann::json layers = layers_json(plan);
  const nlohmann::json spec = {{"height", plan.input.h},
                               {"width", plan.input.w},
                               {"channels", plan.input.c},
                               {"layers", layers},
                               {"recipe", recipe_json(r)}};
  write_json(path, spec);
}

// The preset's PyTorch twin on the same decoded images and split, 1 and 2 threads; returns the
// 1-thread median (0 when the run failed).
double run_torch(const std::string& python, const std::string& preset, const tv::ModelPlan& plan,
                 const tvh::Dataset& ds, const tvh::Split& split, const tv::TrainRecipe& r, int runs, double ours_1t,
                 double ours_2t) {
  char tmpl[] = "/tmp/tv_bench_XXXXXX";
  if (!mkdtemp(tmpl)) throw tvh::Error("cannot create a temporary folder for the PyTorch data");
  const fs::path dir = tmpl;
  write_npy(dir / "images.npy", "|u1", {ds.size(), (size_t)ds.height, (size_t)ds.width, (size_t)ds.channels},
            ds.pixels.data(), ds.pixels.size());
  write_indices(dir / "labels.npy", ds.labels);
  write_indices(dir / "train.npy", split.train);
  write_indices(dir / "val.npy", split.val);
  const bool webmcu = preset == "webmcu";
  if (!webmcu) write_spec(dir / "spec.json", plan, r);
  const std::string script =
      webmcu ? TV_SOURCE_DIR "/bench/torch_webmcu.py" : TV_SOURCE_DIR "/bench/torch_tinyvision.py";
  double first = 0;
  for (int threads : {1, 2}) {
    std::ostringstream cmd;
    cmd << python << " " << script << " " << dir.string() << " --threads " << threads << " --runs " << runs;
    if (webmcu)
      cmd << " --epochs " << r.epochs << " --batch " << r.batch_size << " --lr " << r.opt.lr << " --eps " << r.opt.eps
          << " --weight-clip " << r.opt.weight_clip;
    const std::string out = run_capture(cmd.str());
    TwinFigures twin;
    if (!twin_figures(out, "val_acc", &twin)) {
      std::printf("PyTorch run failed (%s):\n%s\n", cmd.str().c_str(), out.c_str());
      break;
    }
    const double ours = threads == 1 ? ours_1t : ours_2t;
    if (threads == 1) first = twin.median;
    std::printf("%-12s median %.3f s   min %.3f s   (%d runs)   tvtrain is %.1fx faster (medians), torch %s\n",
                threads == 1 ? "1 thread" : "2 threads", twin.median, twin.min, runs, twin.median / ours,
                twin.version.c_str());
  }
  fs::remove_all(dir);
  return first;
}

// One preset: tvtrain's model and recipe for this dataset, timed at 1 and 2 threads, scaled, and its
// PyTorch twin. Prints one summary line at the end.
std::string bench_preset(const Options& o, const std::string& preset) {
  tvh::TrainSetup setup = tvh::preset_setup(preset);
  tvh::DatasetOptions dopt;
  dopt.path = o.dataset;
  dopt.height = setup.model.input.height;
  dopt.width = setup.model.input.width;
  dopt.channels = setup.model.input.channels;
  dopt.order = setup.model.input.order;
  const tvh::Dataset ds = tvh::load_dataset(dopt);
  // As tvtrain: the preset's model and recipe for this input and image count.
  tv::DataShape data;
  data.height = dopt.height;
  data.width = dopt.width;
  data.channels = dopt.channels;
  data.images = (long)ds.size();
  tv::preset_model_for(preset.c_str(), (int)ds.classes.size(), data, &setup.model);
  tv::preset_recipe_for(preset.c_str(), data, &setup.recipe);
  setup.model.num_classes = (uint16_t)ds.classes.size();
  const auto plan = tvh::plan_or_throw(setup.model, "the " + preset + " model");
  const tvh::Split split = tvh::reference_split(ds, setup.recipe.val_last_n);
  const tv::TrainRecipe& recipe = setup.recipe;
  const double macs = training_macs(*plan);
  const double samples = (double)split.train.size() * recipe.epochs;
  const double gflop = 2.0 * macs * samples / 1e9;
  std::printf("==== preset %s ====\n", preset.c_str());
  std::printf("dataset: %s: %zu images (%zu train, %zu val), %d classes, decoded in %.3f s\n", o.dataset.c_str(),
              ds.size(), split.train.size(), split.val.size(), (int)ds.classes.size(), ds.decode_seconds);
  std::printf(
      "recipe: %s, %zu parameters, %d epochs, batch %d, %d lanes; %.0f sample-steps, %.2f GFLOP (%.2f M "
      "multiply-adds per sample)\n\n",
      preset.c_str(), plan->param_count, recipe.epochs, recipe.batch_size, recipe.opt.lanes, samples, gflop,
      macs / 1e6);

  std::printf(
      "training loop: train_seconds as tvtrain --json reports it (wall time); GFLOP/s from the median;\n"
      "CPU: median CPU time of the whole train_model call, all threads, per-epoch validation included\n");
  const Timing t1 = time_training(*plan, recipe, ds, split, 1, o.runs, nullptr);
  print_timing("1 thread", t1, gflop);
  const Timing t2 = time_training(*plan, recipe, ds, split, 2, o.runs, &t1.params);
  print_timing("2 threads", t2, gflop);
  std::printf("weights of every run and thread count: %s\n", t1.identical && t2.identical ? "identical" : "DIFFER");
  std::printf("2 threads: %.2fx the speed of 1 thread (medians)\n\n", median(t1.seconds) / median(t2.seconds));

  if (o.scale > 1) {
    tvh::Split big_split;
    const tvh::Dataset big = repeat_dataset(ds, o.scale, split, &big_split);
    const double big_gflop = 2.0 * macs * (double)big_split.train.size() * recipe.epochs / 1e9;
    std::printf("scaling: each image %d times (%zu train images, %.2f GFLOP)\n", o.scale, big_split.train.size(),
                big_gflop);
    const long rss_before = peak_rss_kb();
    const Timing b1 = time_training(*plan, recipe, big, big_split, 1, o.scale_runs, nullptr);
    print_timing("1 thread", b1, big_gflop);
    const Timing b2 = time_training(*plan, recipe, big, big_split, 2, o.scale_runs, nullptr);
    print_timing("2 threads", b2, big_gflop);
    std::printf("scaling: %.2fx the time of the original for %.2fx the sample-steps (1 thread, medians)\n",
                median(b1.seconds) / median(t1.seconds), (double)big_split.train.size() / split.train.size());
    std::printf("memory: decoded cache %.1f MB + training arena %.2f MB; peak RSS %.1f MB (%.1f MB before)\n\n",
                big.pixels.size() / 1e6, b1.memory.total_bytes / 1e6, peak_rss_kb() / 1e3, rss_before / 1e3);
  }

  char summary[256];
  std::snprintf(summary, sizeof summary, "%-10s tvtrain 1 thread %.3f s (%.1f GFLOP/s), 2 threads %.3f s",
                preset.c_str(), median(t1.seconds), gflop / median(t1.seconds), median(t2.seconds));
  std::string result = summary;
  if (o.torch) {
    const std::string python = python_with_torch();
    if (python.empty()) {
      std::printf("PyTorch not installed: skipped\n\n");
    } else {
      std::printf("PyTorch (%s; same decoded images, split, network and recipe; training loop only)\n", python.c_str());
      const double torch_1t =
          run_torch(python, preset, *plan, ds, split, recipe, o.runs, median(t1.seconds), median(t2.seconds));
      std::printf("\n");
      if (torch_1t > 0) {
        std::snprintf(summary, sizeof summary, "; PyTorch 1 thread %.3f s = %.1fx tvtrain", torch_1t,
                      torch_1t / median(t1.seconds));
        result += summary;
      }
    }
  }
  return result;
}

int run(const Options& o) {
  std::printf("machine: %s, %u hardware threads, load average %s\n",
              read_first_line_with("/proc/cpuinfo", "model name").c_str(), std::thread::hardware_concurrency(),
              load_average().c_str());
  std::printf("kernels: %s\n\n", tv::fast_kernels_enabled() ? "fast variants (TV_FAST_KERNELS)" : "reference");
  if (!fs::exists(o.dataset)) {
    std::printf("dataset %s not found: skipped\n", o.dataset.c_str());
    return 0;
  }
  std::vector<std::string> summaries;
  for (const std::string& preset : o.presets) summaries.push_back(bench_preset(o, preset));
  std::printf("summary (%s, load average at the end %s):\n",
              read_first_line_with("/proc/cpuinfo", "model name").c_str(), load_average().c_str());
  for (const std::string& line : summaries) std::printf("  %s\n", line.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto value = [&]() -> int {
        if (i + 1 >= argc) throw tvh::Error(a + " needs a value");
        return std::atoi(argv[++i]);
      };
      if (a == "--runs")
        o.runs = std::max(1, value());
      else if (a == "--scale")
        o.scale = value();
      else if (a == "--scale-runs")
        o.scale_runs = std::max(1, value());
      else if (a == "--no-torch")
        o.torch = false;
      else if (a == "--preset" && i + 1 < argc)
        o.presets = {argv[++i]};
      else if (a == "-h" || a == "--help") {
        std::printf(
            "usage: tv_bench_train [DATASET] [--preset NAME] [--runs N] [--scale K] [--scale-runs N] [--no-torch]\n");
        return 0;
      } else if (!a.empty() && a[0] != '-')
        o.dataset = a;
      else
        throw tvh::Error("unknown option " + a);
    }
    return run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tv_bench_train: %s\n", e.what());
    return 1;
  }
}
