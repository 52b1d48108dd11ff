// tv_bench_detect: times what `tvtrain DATASET` runs on a detection dataset (tvh::train_detector on the
// decoded photos, the layout's train/val split, the detect preset's model and recipe as tvtrain chooses
// them) at 1 and 2 threads, measures the validation F1 of centroids for a few seeds and, when Debian's
// python3-torch is installed, trains the same network and recipe in PyTorch on the same photos and the
// same grids of targets (torch_detect.py). Ends with a summary line.
//
//   tv_bench_detect [DATASET] [--runs N] [--seeds N] [--no-torch] [--input HxWxC]
//
// DATASET defaults to the repository's datasets/detect. Prints figures only.
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_support.h"
#include "host/base/error.h"
#include "host/model/model_io.h"
#include "host/photos/detection_dataset.h"
#include "host/photos/split.h"
#include "host/train/config.h"
#include "host/train/detect_metrics.h"
#include "host/train/detect_training.h"
#include "host/train/detector.h"
#include "tv/detect/grid.h"
#include "tv/ops/kernel_variants.h"
#include "tv/train/presets.h"

namespace fs = std::filesystem;
using namespace tvbench;

namespace {

struct Options {
  std::string dataset = TV_SOURCE_DIR "/datasets/detect";
  int runs = 3;
  int seeds = 3;
  bool torch = true;
  int height = 96, width = 96, channels = 3;  // tvtrain's default detector input
};

struct Trained {
  tvh::DetectTrainResult result;
  tvh::DetectionMetrics metrics;
};

Trained train_once(const tv::ModelPlan& plan, const tv::TrainRecipe& recipe, const tvh::DetectionDataset& ds,
                   const tvh::Split& split, uint64_t seed, int threads) {
  Trained t;
  t.result = tvh::train_detector(tvh::detect_train_request(plan, recipe, ds, split, seed, threads));
  t.metrics =
      tvh::detection_metrics(tvh::detect_photos(tvh::float_detector(plan, t.result.params.data()), ds, split.val),
                             (int)ds.classes.size(), seed);
  return t;
}

struct Timing {
  std::vector<double> seconds;  // train_seconds: wall time of the epochs' training (no validation)
  bool identical = true;        // every run produced the weights of the first
  std::vector<float> params;
  Trained first;
};

Timing time_training(const tv::ModelPlan& plan, const tv::TrainRecipe& recipe, const tvh::DetectionDataset& ds,
                     const tvh::Split& split, int threads, int runs, const std::vector<float>* expect) {
  Timing t;
  for (int r = 0; r < runs; ++r) {
    Trained one = train_once(plan, recipe, ds, split, 1, threads);
    t.seconds.push_back(one.result.train_seconds);
    if (r == 0) {
      t.params = one.result.params;
      t.first = std::move(one);
    } else if (one.result.params != t.params) {
      t.identical = false;
    }
    if (expect && t.params != *expect) t.identical = false;
  }
  return t;
}

void print_timing(const char* what, const Timing& t) {
  std::printf("%-12s median %.3f s   min %.3f s   (%zu runs)%s\n", what, median(t.seconds), minimum(t.seconds),
              t.seconds.size(), t.identical ? "" : "   WEIGHTS DIFFER BETWEEN RUNS");
}

std::string f1_line(const tvh::DetectionMetrics& m) {
  char buf[200];
  std::snprintf(buf, sizeof buf, "F1 %.3f (%ld right, %ld false alarms, %ld missed), count error %.2f per photo",
                m.micro.f1(), m.micro.tp, m.micro.fp, m.micro.fn, m.count_mae);
  return buf;
}

// ---- the PyTorch comparison ----

void write_spec(const fs::path& path, const tv::ModelPlan& plan, const tv::TrainRecipe& r, int classes) {
  const nlohmann::json layers = layers_json(plan);
  const tv::Shape grid = plan.layers[plan.num_layers - 1].out;
  const nlohmann::json spec = {{"height", plan.input.h},   {"width", plan.input.w},
                               {"channels", plan.input.c}, {"classes", classes},
                               {"grid", {grid.h, grid.w}}, {"threshold", plan.desc.detect_threshold},
                               {"layers", layers},         {"recipe", recipe_json(r)}};
  write_json(path, spec);
}

struct TorchFigures {
  double median_1t = 0, median_2t = 0, f1 = -1;
};

// The twin on the same photos, targets and split, 1 and 2 threads (the 2-thread call seeds its runs
// differently, so its F1s are other initialisations).
TorchFigures run_torch(const std::string& python, const tv::ModelPlan& plan, const tvh::DetectionDataset& ds,
                       const tvh::Split& split, const tv::TrainRecipe& r, int runs, double ours_1t, double ours_2t) {
  char tmpl[] = "/tmp/tv_bench_detect_XXXXXX";
  if (!mkdtemp(tmpl)) throw tvh::Error("cannot create a temporary folder for the PyTorch data");
  const fs::path dir = tmpl;
  write_npy(dir / "images.npy", "|u1", {ds.size(), (size_t)ds.height, (size_t)ds.width, (size_t)ds.channels},
            ds.pixels.data(), ds.pixels.size());
  // Each photo's grid of targets, computed by the core (what training uses before a flip mirrors it).
  const tv::Shape grid = plan.layers[plan.num_layers - 1].out;
  std::vector<uint8_t> targets(ds.size() * (size_t)grid.h * (size_t)grid.w);
  std::vector<float> boxes;  // photo, class, cx, cy, w, h
  for (size_t i = 0; i < ds.size(); ++i) {
    tv::grid_targets(ds.boxes[i].data(), (int)ds.boxes[i].size(), grid.h, grid.w,
                     targets.data() + i * (size_t)grid.h * (size_t)grid.w);
    for (const tv::DetectBox& b : ds.boxes[i])
      boxes.insert(boxes.end(), {(float)i, (float)b.label, b.cx, b.cy, b.w, b.h});
  }
  write_npy(dir / "targets.npy", "|u1", {ds.size(), (size_t)grid.h, (size_t)grid.w}, targets.data(), targets.size());
  write_npy(dir / "boxes.npy", "<f4", {boxes.size() / 6, 6}, boxes.data(), boxes.size() * sizeof(float));
  write_indices(dir / "train.npy", split.train);
  write_indices(dir / "val.npy", split.val);
  write_spec(dir / "spec.json", plan, r, (int)ds.classes.size());
  TorchFigures fig;
  std::vector<double> f1s;
  for (int threads : {1, 2}) {
    std::ostringstream cmd;
    cmd << python << " " << TV_SOURCE_DIR "/bench/torch_detect.py " << dir.string() << " --threads " << threads
        << " --runs " << runs << " --seed " << threads;
    const std::string out = run_capture(cmd.str());
    TwinFigures twin;
    if (!twin_figures(out, "val_f1", &twin)) {
      std::printf("PyTorch run failed (%s):\n%s\n", cmd.str().c_str(), out.c_str());
      break;
    }
    std::istringstream runs_text(twin.earlier);
    for (std::string l; std::getline(runs_text, l);) std::printf("  %s\n", l.c_str());
    const double ours = threads == 1 ? ours_1t : ours_2t;
    (threads == 1 ? fig.median_1t : fig.median_2t) = twin.median;
    f1s.push_back(twin.value);
    std::printf(
        "%-12s median %.3f s   min %.3f s   (%d runs)   mean val F1 %.3f   tvtrain is %.1fx faster (medians), "
        "torch %s\n",
        threads == 1 ? "1 thread" : "2 threads", twin.median, twin.min, runs, twin.value, twin.median / ours,
        twin.version.c_str());
  }
  if (!f1s.empty()) fig.f1 = mean(f1s);
  fs::remove_all(dir);
  return fig;
}

int run(const Options& o) {
  const std::string cpu = read_first_line_with("/proc/cpuinfo", "model name");
  std::printf("machine: %s, %u hardware threads, load average %s\n", cpu.c_str(), std::thread::hardware_concurrency(),
              load_average().c_str());
  std::printf("kernels: %s\n\n", tv::fast_kernels_enabled() ? "fast variants (TV_FAST_KERNELS)" : "reference");
  if (!fs::exists(o.dataset)) {
    std::printf("dataset %s not found: skipped\n", o.dataset.c_str());
    return 0;
  }
  tvh::DetectionOptions dopt;
  dopt.path = o.dataset;
  dopt.height = o.height;
  dopt.width = o.width;
  dopt.channels = o.channels;
  dopt.order = o.channels == 1 ? tv::ChannelOrder::GRAY : tv::ChannelOrder::RGB;
  const tvh::DetectionDataset ds = tvh::load_detection_dataset(dopt);
  const tvh::Split split = tvh::detection_split(ds, tvh::TrainSetup().val_fraction, 1);
  // As tvtrain: the detect preset's model and recipe for this input and training set.
  tv::DataShape data;
  data.height = o.height;
  data.width = o.width;
  data.channels = o.channels;
  data.images = (long)split.train.size();
  tv::ModelDesc model;
  tv::TrainRecipe recipe;
  tv::preset_model_for("detect", (int)ds.classes.size() + 1, data, &model);
  tv::preset_recipe_for("detect", data, &recipe);
  const auto plan = tvh::plan_or_throw(model, "the detector");
  const tv::Shape grid = plan->layers[plan->num_layers - 1].out;
  std::printf("dataset: %s (%s): %zu photos (%zu train, %zu val), %d classes, %zu objects\n", o.dataset.c_str(),
              ds.format.c_str(), ds.size(), split.train.size(), split.val.size(), (int)ds.classes.size(),
              ds.object_count());
  std::printf(
      "detector: input %dx%dx%d, grid %dx%d, %zu parameters, %.2f MFLOP per frame; %d epochs, batch %d, lr %g, "
      "object weight %g, %d lanes, keep-best %s\n\n",
      o.height, o.width, o.channels, grid.h, grid.w, plan->param_count, plan->flops_forward / 1e6, recipe.epochs,
      recipe.batch_size, recipe.opt.lr, recipe.opt.object_weight, recipe.opt.lanes, recipe.restore_best ? "on" : "off");

  std::printf("training loop: train_seconds as tvtrain --json reports it (wall time, per-epoch validation excluded)\n");
  const Timing t1 = time_training(*plan, recipe, ds, split, 1, o.runs, nullptr);
  print_timing("1 thread", t1);
  const Timing t2 = time_training(*plan, recipe, ds, split, 2, o.runs, &t1.params);
  print_timing("2 threads", t2);
  std::printf("weights of every run and thread count: %s\n", t1.identical && t2.identical ? "identical" : "DIFFER");
  std::printf("2 threads: %.2fx the speed of 1 thread (medians)\n\n", median(t1.seconds) / median(t2.seconds));

  std::printf("validation F1 (%zu photos, threshold %.2f, the kept epoch's weights):\n", split.val.size(),
              plan->desc.detect_threshold);
  std::vector<double> f1s;
  for (int s = 1; s <= o.seeds; ++s) {
    const Trained tr = s == 1 ? t2.first : train_once(*plan, recipe, ds, split, (uint64_t)s, 2);
    f1s.push_back(tr.metrics.micro.f1());
    std::printf("  seed %d: %s, epoch %d kept\n", s, f1_line(tr.metrics).c_str(), tr.result.best_epoch);
  }
  const double ours_f1 = mean(f1s);
  std::printf("  mean F1 over %d seed(s): %.3f\n\n", o.seeds, ours_f1);

  char summary[400];
  std::snprintf(summary, sizeof summary, "detect %dx%dx%d: tvtrain 1 thread %.3f s, 2 threads %.3f s, val F1 %.3f",
                o.height, o.width, o.channels, median(t1.seconds), median(t2.seconds), ours_f1);
  std::string result = summary;
  if (o.torch) {
    const std::string python = python_with_torch();
    if (python.empty()) {
      std::printf("PyTorch not installed: skipped\n\n");
    } else {
      std::printf(
          "PyTorch (%s; same photos, grids of targets, split, network and recipe; epoch loop only; runs seeded "
          "1000 + r at 1 thread, 2000 + r at 2):\n",
          python.c_str());
      const TorchFigures tf =
          run_torch(python, *plan, ds, split, recipe, o.runs, median(t1.seconds), median(t2.seconds));
      std::printf("\n");
      if (tf.f1 >= 0) {
        std::snprintf(summary, sizeof summary, "; PyTorch 1 thread %.3f s = %.1fx tvtrain", tf.median_1t,
                      tf.median_1t / median(t1.seconds));
        result += summary;
        if (tf.median_2t > 0) {  // the 2-thread run finished
          std::snprintf(summary, sizeof summary, ", 2 threads %.3f s = %.1fx", tf.median_2t,
                        tf.median_2t / median(t2.seconds));
          result += summary;
        }
        std::snprintf(summary, sizeof summary, ", val F1 %.3f (tvtrain - PyTorch: %+.3f)", tf.f1, ours_f1 - tf.f1);
        result += summary;
      }
    }
  }
  std::printf("summary (%s, load average at the end %s):\n  %s\n", cpu.c_str(), load_average().c_str(), result.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each figure as it comes (the PyTorch runs take minutes)
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto value = [&]() -> int {
        if (i + 1 >= argc) throw tvh::Error(a + " needs a value");
        return std::atoi(argv[++i]);
      };
      if (a == "--runs")
        o.runs = std::max(1, value());
      else if (a == "--seeds")
        o.seeds = std::max(1, value());
      else if (a == "--no-torch")
        o.torch = false;
      else if (a == "--input") {
        if (i + 1 >= argc) throw tvh::Error("--input needs a value");
        tvh::parse_input_size(argv[++i], &o.height, &o.width, &o.channels);
      } else if (a == "-h" || a == "--help") {
        std::printf("usage: tv_bench_detect [DATASET] [--runs N] [--seeds N] [--no-torch] [--input HxWxC]\n");
        return 0;
      } else if (!a.empty() && a[0] != '-')
        o.dataset = a;
      else
        throw tvh::Error("unknown option " + a);
    }
    return run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tv_bench_detect: %s\n", e.what());
    return 1;
  }
}
