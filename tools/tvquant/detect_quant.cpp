// tvquant on a detector (tv::Task::Detect, docs/detection.md): the detection dataset read at the model's
// input and split as tvtrain split it, calibration on its training photos by the classifier's path
// (host/quant through tvh::ImageSet), the int8 detector (its TASK section and threshold kept), and float vs
// int8 F1, precision, recall and count error on the validation photos, found by tvh::detect_photos: the
// objects tvtrain --eval and `tvtrain detect` find.
#include <cstdlib>
#include <string>
#include <vector>

#include "host/base/error.h"
#include "host/base/files.h"
#include "host/base/text.h"
#include "host/base/text_width.h"
#include "host/photos/detection_dataset.h"
#include "host/photos/split.h"
#include "host/report/report.h"
#include "host/train/config.h"
#include "host/train/detect_metrics.h"
#include "host/train/detector.h"
#include "host/train/init_model.h"
#include "quant_run.h"

namespace tvquant {

namespace {

using nlohmann::json;
using tvh::fmt;
using tvh::grouped;

// What a detector's quantization does not take, refused before anything is read.
void refuse_what_detectors_lack(const QuantArgs& a) {
  if (!a.report_path.empty())
    throw tvh::UsageError("--report draws a classifier's page, and " + a.model +
                          " is a detector, whose float-vs-int8 page is not built yet; leave --report out (tvtrain "
                          "DATASET --eval --init INT8.tvb --report R.html draws the int8 detector's photos).");
  if (a.val_last_opt && a.val_last_opt->count())
    throw tvh::UsageError("--val-last splits class folders, and " + a.model +
                          " is a detector, whose photos split as tvtrain split them (the dataset's val photos, else "
                          "a seeded split per photo); leave --val-last out.");
}

// The seed tvtrain split the photos with (the float model's provenance; tvtrain's default 1 without it).
uint64_t split_seed(const tvh::LoadedModel& m) {
  const std::string s = tvh::provenance_value(m.provenance, "seed");
  char* end = nullptr;
  const unsigned long long v = s.empty() ? 1 : std::strtoull(s.c_str(), &end, 10);
  return s.empty() || (end && *end == 0) ? (uint64_t)v : 1;
}

// A detection dataset at the detector's input, with its classes checked against the model's.
tvh::DetectionDataset read_photos(const std::string& option, const std::string& path, const tvh::LoadedModel& m,
                                  const QuantArgs& a, const tvcli::StderrLog& log) {
  if (!tvh::looks_like_detection_dataset(path))
    throw tvh::Error(path + " (" + option +
                     ") holds no labelled boxes (no YOLO labels/ or data.yaml, COCO or Pascal "
                     "VOC file), but " +
                     a.model +
                     " is a detector: give photos with labelled boxes, e.g. the dataset tvtrain trained it on.");
  const tv::ModelPlan& plan = *m.plan;
  tvh::DetectionOptions o;
  o.path = path;
  o.height = plan.input.h;
  o.width = plan.input.w;
  o.channels = plan.input.c;
  o.order = plan.desc.input.order;
  o.threads = a.threads;
  tvh::DetectionDataset ds = tvh::load_detection_dataset(o);
  for (const auto& w : ds.warnings) log("warning: " + w);
  if (!ds.skipped.empty()) log(tvh::skipped_text(ds.skipped));
  tvh::check_detector_fits(plan, ds);
  tvh::check_detector_classes(m, a.model, ds);
  return ds;
}

// Float and int8 on the same photos: the objects' metrics of each, and their grids compared cell by cell.
struct DetectComparison {
  tvh::DetectionMetrics f, q;
  long cells = 0, same_cells = 0;  // grid cells, and those whose most probable channel is the same
  size_t objects = 0;              // labelled objects on the photos
};

DetectComparison compare(const tvh::LoadedModel& m, const tvh::LoadedModel& q8, const tvh::DetectionDataset& ds,
                         const std::vector<int>& idx) {
  DetectComparison c;
  std::vector<std::vector<uint8_t>> fcells, qcells;
  const int classes = (int)ds.classes.size();
  c.f = tvh::detection_metrics(tvh::detect_photos(m, ds, idx, &fcells), classes);
  c.q = tvh::detection_metrics(tvh::detect_photos(q8, ds, idx, &qcells), classes);
  for (size_t n = 0; n < fcells.size(); ++n)
    for (size_t k = 0; k < fcells[n].size(); ++k) {
      ++c.cells;
      c.same_cells += fcells[n][k] == qcells[n][k];
    }
  for (int i : idx) c.objects += ds.boxes[(size_t)i].size();
  return c;
}

std::vector<std::string> metrics_row(const std::string& engine, const tvh::DetectionMetrics& m) {
  return {engine,
          fmt("%.3f", m.micro.f1()) + " (" + fmt("%.3f", m.f1_ci.first) + "-" + fmt("%.3f", m.f1_ci.second) + ")",
          fmt("%.3f", m.micro.precision()),
          fmt("%.3f", m.micro.recall()),
          fmt("%.2f", m.count_mae),
          std::to_string(m.micro.tp),
          std::to_string(m.micro.fp),
          std::to_string(m.micro.fn)};
}

// The comparison in words: a table of float and int8, the per-class F1s and the grid's agreement.
std::string comparison_text(const std::string& compared_on, size_t photos, const tvh::DetectionDataset& ds,
                            float threshold, const DetectComparison& c) {
  std::string s = "detection on " + compared_on + ", " + std::to_string(photos) + " photos, " +
                  std::to_string(c.objects) + " objects (threshold " + fmt("%g", threshold) + "):\n";
  s += tvh::format_table(
      {{"", "F1 (95 % interval)", "precision", "recall", "count error", "right", "false alarms", "missed"},
       metrics_row("float", c.f),
       metrics_row("int8", c.q)},
      "ll");
  s += "F1 per class, float / int8:";
  for (size_t k = 0; k < ds.classes.size(); ++k)
    s += (k ? ", " : " ") + ds.classes[k] + " " + fmt("%.3f", c.f.per_class[k].f1()) + " / " +
         fmt("%.3f", c.q.per_class[k].f1());
  s += "\nint8 - float F1: " + fmt("%+.3f", c.q.micro.f1() - c.f.micro.f1()) +
       "; the same class (background or an "
       "object) in " +
       grouped((uint64_t)c.same_cells) + " of " + grouped((uint64_t)c.cells) + " grid cells (" +
       fmt("%.2f", c.cells ? 100.0 * (double)c.same_cells / (double)c.cells : 100.0) + " %)\n";
  return s;
}

}  // namespace

int quantize_detector(const QuantArgs& a, const tvh::LoadedModel& m, const tvcli::StderrLog& log) {
  refuse_what_detectors_lack(a);
  const tv::ModelPlan& plan = *m.plan;
  const tvh::DetectionDataset ds = read_photos("--calib", a.calib, m, a, log);
  const uint64_t seed = split_seed(m);
  const tvh::Split split = tvh::detection_split(ds, tvh::TrainSetup().val_fraction, seed);
  std::vector<int> every(ds.size());
  for (size_t i = 0; i < ds.size(); ++i) every[i] = (int)i;
  const std::vector<int>& pool = a.calib_images == "all" ? every : split.train;
  CalibImages calib{tvh::ImageSet(ds), a.calib_all ? pool : tvh::seeded_sample(pool, a.calib_sample, kCalibSampleSeed),
                    pool.size(), "seeded"};
  log("detection dataset " + a.calib + ": " + std::to_string(ds.size()) + " photos; train " +
      std::to_string(split.train.size()) + " / val " + std::to_string(split.val.size()) +
      (ds.subset_count("val") ? " as given" : " (the seeded split, seed " + std::to_string(seed) + ", as tvtrain's)"));
  tvh::DetectionDataset eval_ds;
  if (!a.eval_on.empty()) eval_ds = read_photos("--eval-on", a.eval_on, m, a, log);
  const tvh::DetectionDataset& eds = a.eval_on.empty() ? ds : eval_ds;
  std::vector<int> eval_idx = split.val;
  if (!a.eval_on.empty()) {
    eval_idx.resize(eval_ds.size());
    for (size_t i = 0; i < eval_ds.size(); ++i) eval_idx[i] = (int)i;
  }
  if (eval_idx.empty())
    throw tvh::Error(a.calib +
                     ": the split left no validation photo, so float and int8 cannot be compared; give "
                     "--eval-on PHOTOS (a detection dataset labelled with the same classes).");

  const Quantized z = calibrate_and_quantize(a, m, calib, "task=detect\n", log);
  const tvh::LoadedModel q8 = tvh::decode_model(z.q.blob, a.output, tvh::Tasks::Any);
  if (!tvh::is_detector(q8)) throw tvh::Error("internal error: the int8 model of a detector is no detector.");
  const DetectComparison c = compare(m, q8, eds, eval_idx);
  tvh::write_file_atomic(a.output, z.q.blob);

  const std::string compared_on =
      a.eval_on.empty() ? "the validation photos of " + a.calib : "every photo of " + a.eval_on + " (--eval-on)";
  const std::string text = exponents_text(a, plan, calib.idx.size(), z) +
                           comparison_text(compared_on, eval_idx.size(), eds, plan.desc.detect_threshold, c) +
                           weights_and_memory_text(plan, z);
  const std::string prefix = a.eval_on.empty() ? "val_" : "";
  const tv::Shape grid = plan.layers[plan.num_layers - 1].out;
  json j = quantization_json(a, m, calib, z);
  j.update({{"task", "detect"},
            {"threshold", plan.desc.detect_threshold},
            {"grid", {{"height", grid.h}, {"width", grid.w}}},
            {"split_seed", seed},
            {"eval_images", eval_idx.size()},
            {"eval_objects", c.objects},
            {"float_per_class", tvh::detection_per_class_json(eds.classes, c.f)},
            {"int8_per_class", tvh::detection_per_class_json(eds.classes, c.q)},
            {"grid_cells", c.cells},
            {"cell_agreement", c.cells ? (double)c.same_cells / (double)c.cells : 1.0}});
  j.update(tvh::detection_metrics_json("float_" + prefix, c.f));
  j.update(tvh::detection_metrics_json("int8_" + prefix, c.q));
  print_results(a, text, j, log);
  return 0;
}

}  // namespace tvquant
