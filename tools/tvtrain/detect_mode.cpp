// tvtrain on a detection dataset (photos with labelled boxes: YOLO, COCO, Pascal VOC): read it at the
// detector's input, split it (the layout's val photos, else a seeded split per photo), train the detect
// preset through the core's session, measure the centroids' precision, recall, F1 and count error on the
// validation photos, write the detector (.tvb with its TASK section). docs/detection.md.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <memory>
#include <sstream>

#include "host/base/interval.h"
#include "host/base/json_text.h"
#include "host/base/text.h"
#include "host/photos/detection_dataset.h"
#include "host/report/report.h"
#include "host/train/detect_metrics.h"
#include "host/train/detect_training.h"
#include "host/train/detector.h"
#include "run.h"
#include "tv/detect/grid.h"
#include "tv/int8/q8_model.h"

namespace tvtrain {

namespace {

using nlohmann::json;
using tvh::fmt;

// The input a detector trains at when --input does not say: FOMO's published size, in colour.
constexpr int kDetectDefaultSide = 96;
// The label of a detector's channel 0 (a name no class folder may have: tv/names.h).
constexpr const char* kBackgroundLabel = "_background";

// What detection does not do yet, refused before anything is read.
void refuse_what_detection_lacks(const Run& run) {
  const Args& a = run.a;
  const auto refuse = [&](bool given, const std::string& option) {
    if (given)
      throw tvh::UsageError(option + " is not available for a detection dataset yet (" + a.dataset +
                            " holds labelled boxes); leave it out (docs/detection.md says what comes next).");
  };
  refuse(!a.init.empty() && !a.eval, "--init without --eval");
  refuse(!a.raw_out.empty(), "--raw-out");
  refuse(!a.classes.empty(), "--classes");
  refuse(!a.update.empty(), "--update");
  refuse(!a.start.empty() && a.start != "scratch", "--start " + a.start);
  refuse(!a.backbone.empty(), "--backbone");
  refuse(!a.config.empty(), "--config");
  if (run.preset_given && a.preset != "detect")
    throw tvh::UsageError("--preset " + a.preset + " makes a classifier, but " + a.dataset +
                          " holds labelled boxes: leave --preset out (or give --preset detect).");
}

tvh::DetectionDataset read_detection_dataset(const Run& run, int h, int w, int c) {
  tvh::DetectionOptions o;
  o.path = run.a.dataset;
  o.height = h;
  o.width = w;
  o.channels = c;
  o.order = c == 1 ? tv::ChannelOrder::GRAY : tv::ChannelOrder::RGB;
  o.threads = run.a.threads;
  tvh::DetectionDataset ds = tvh::load_detection_dataset(o);
  for (const auto& warning : ds.warnings) run.log("warning: " + warning);
  const size_t shown = std::min<size_t>(ds.skipped.size(), 20);
  for (size_t i = 0; i < shown; ++i) run.log("skipped: " + ds.skipped[i].message);
  if (ds.skipped.size() > shown) run.log("skipped: " + std::to_string(ds.skipped.size() - shown) + " more file(s)");
  return ds;
}

void log_dataset(const Run& run, const tvh::DetectionDataset& ds, const tvh::Split& split) {
  std::string format = ds.format;
  std::transform(format.begin(), format.end(), format.begin(), [](unsigned char ch) { return (char)std::toupper(ch); });
  const size_t test = ds.subset_count("test");
  run.log("detection dataset (" + format + "): " + std::to_string(ds.size()) + " photos, " +
          std::to_string(ds.classes.size()) + (ds.classes.size() == 1 ? " class, " : " classes, ") +
          std::to_string(ds.object_count()) + " objects; train " + std::to_string(split.train.size()) + " / val " +
          std::to_string(split.val.size()) + (ds.subset_count("val") ? " as given" : " (seeded split)") +
          (test ? "; test " + std::to_string(test) + " (not used)" : std::string()) + "; " +
          std::to_string(ds.skipped.size()) + " file(s) left out");
}

std::string counts_text(const tvh::DetectionCounts& c) {
  return std::to_string(c.tp) + " right, " + std::to_string(c.fp) + " false alarm" + (c.fp == 1 ? "" : "s") + ", " +
         std::to_string(c.fn) + " missed";
}

void log_metrics(const Run& run, const tvh::DetectionDataset& ds, const tvh::DetectionMetrics& m,
                 const std::string& what) {
  const auto& c = m.micro;
  run.log(what + " (" + std::to_string(m.photos) + " photos): F1 " + fmt("%.3f", c.f1()) + " (95 % interval " +
          fmt("%.3f", m.f1_ci.first) + "-" + fmt("%.3f", m.f1_ci.second) + "), precision " +
          fmt("%.3f", c.precision()) + ", recall " + fmt("%.3f", c.recall()) + " (" + counts_text(c) +
          "); count error " + fmt("%.2f", m.count_mae) + " objects per photo");
  for (size_t k = 0; k < ds.classes.size(); ++k)
    run.log("  " + ds.classes[k] + ": F1 " + fmt("%.3f", m.per_class[k].f1()) + ", precision " +
            fmt("%.3f", m.per_class[k].precision()) + ", recall " + fmt("%.3f", m.per_class[k].recall()) + " (" +
            counts_text(m.per_class[k]) + ")");
}

// The figures of a set of photos, under `prefix` ("val_" after training, "" for --eval), and per class.
json metrics_json(const std::string& prefix, const tvh::DetectionDataset& ds, const tvh::DetectionMetrics& m) {
  json j = tvh::detection_metrics_json(prefix, m);
  j["per_class"] = tvh::detection_per_class_json(ds.classes, m);
  return j;
}

json detection_json(const Run& run, const tvh::DetectionDataset& ds, const tvh::Split& split, const tv::ModelPlan& plan,
                    const tvh::DetectTrainResult& r, const tvh::DetectionMetrics& m) {
  json hist = json::array();
  for (const auto& e : r.history)
    hist.push_back({{"epoch", e.epoch},
                    {"loss", e.train_loss},
                    {"val_f1", e.val_f1 >= 0 ? json(e.val_f1) : json()},
                    {"lr", e.lr}});
  json j = {
      {"task", "detect"},
      {"format", ds.format},
      {"classes", ds.classes},
      {"preset", "detect"},
      {"input", {{"height", plan.input.h}, {"width", plan.input.w}, {"channels", plan.input.c}}},
      {"grid", {{"height", plan.layers[plan.num_layers - 1].out.h}, {"width", plan.layers[plan.num_layers - 1].out.w}}},
      {"threshold", plan.desc.detect_threshold},
      {"train_images", split.train.size()},
      {"val_images", split.val.size()},
      {"objects", ds.object_count()},
      {"epochs", run.setup.recipe.epochs},
      {"kept_epoch", r.best_epoch ? r.best_epoch : (int)r.history.size()},
      {"train_seconds", r.train_seconds},
      {"params", plan.param_count},
      {"flops_per_frame", plan.flops_forward},
      {"memory",
       {{"train_bytes", r.memory.total_bytes},
        {"infer_bytes", r.infer_memory.total_bytes},
        {"int8_weight_bytes", tv::q8_memory(plan).weight_bytes},
        {"int8_work_bytes", tv::q8_memory(plan).work_bytes}}},
      {"seed", run.a.seed},
      {"threads", run.a.threads},
      {"history", hist},
      {"skipped", ds.skipped.size()},
      {"output", run.a.output}};
  j.update(metrics_json("val_", ds, m));
  return j;
}

void write_detector(const Run& run, const tvh::DetectionDataset& ds, const tvh::Split& split, const tv::ModelPlan& plan,
                    const tvh::DetectTrainResult& r, const tvh::DetectionMetrics& m) {
  std::ostringstream prov;
  prov << "tool=tvtrain " << TV_VERSION << "\npreset=detect\ntask=detect\ndataset=" << run.a.dataset
       << "\nformat=" << ds.format << "\nseed=" << run.a.seed << "\nepochs=" << run.setup.recipe.epochs
       << "\ntrain_images=" << split.train.size() << "\nval_images=" << split.val.size()
       << "\nval_f1=" << fmt("%.4f", m.micro.f1()) << "\n";
  std::vector<std::string> labels = {kBackgroundLabel};
  labels.insert(labels.end(), ds.classes.begin(), ds.classes.end());
  tvh::save_float_model(run.a.output, plan, r.params.data(), labels, prov.str());
  run.log("wrote " + run.a.output + " (a detector: the curve and confusion pictures are for classifiers)");
}

std::vector<std::string> detector_next_commands(const std::string& model, const std::string& dataset) {
  const std::string q8 = tvh::int8_name_for(model);
  return {"# the objects of a photo (the line the board prints):",
          "tvtrain detect " + tvh::shell_word(model) + " photo.jpg",
          "# photos it has never seen, labelled the same way:",
          "tvtrain other-photos/ --eval --init " + tvh::shell_word(model),
          "# int8 for the board (calibrated on the same photos):",
          "tvquant " + tvh::shell_word(model) + " --calib " + tvh::shell_word(dataset) + " -o " + tvh::shell_word(q8)};
}

void write_report(const Run& run, const std::string& path, const tvh::DetectionDataset& ds, const tv::ModelPlan& plan,
                  bool int8, const std::string& evaluated, const std::vector<int>& idx,
                  const std::vector<tvh::PhotoDetections>& found, const tvh::DetectionMetrics& m,
                  const std::string& title, const std::vector<std::string>& next) {
  tvh::DetectReportInput in;
  in.ds = &ds;
  in.title = title;
  in.evaluated = evaluated;
  in.idx = idx;
  in.photos = &found;
  in.metrics = &m;
  in.plan = &plan;
  in.int8 = int8;
  in.next_commands = next;
  run.run_report.write_detect(path, in);
}

// --eval --init DETECTOR: the detector (float or int8) on every photo of the dataset, no training.
int run_detect_eval(const Run& run) {
  const Args& a = run.a;
  if (!a.input.empty()) throw tvh::UsageError("--input cannot change the shape of an --init model (" + a.init + ").");
  tvh::LoadedModel model = tvh::load_model(a.init, tvh::RawOptions(), tvh::Tasks::Any);
  if (!tvh::is_detector(model))
    throw tvh::UsageError(
        a.init + " is a classifier, but " + a.dataset +
        " holds labelled boxes: --eval on it needs a detector (one tvtrain wrote from such a dataset).");
  if (a.threshold > 0) model.plan->desc.detect_threshold = a.threshold;
  const tv::ModelPlan& plan = *model.plan;
  const tvh::DetectionDataset ds = read_detection_dataset(run, plan.input.h, plan.input.w, plan.input.c);
  tvh::check_detector_classes(model, a.init, ds);
  std::vector<int> every((size_t)ds.size());
  for (size_t i = 0; i < ds.size(); ++i) every[i] = (int)i;
  const std::vector<tvh::PhotoDetections> found = tvh::detect_photos(model, ds, every);
  const tvh::DetectionMetrics m = tvh::detection_metrics(found, (int)ds.classes.size(), a.seed);
  log_metrics(run, ds, m, "evaluated " + a.init + (model.int8 ? " (int8)" : "") + " on every photo of " + a.dataset);
  if (!run.out.report.empty()) {
    write_report(run, run.out.report, ds, plan, model.int8, "every photo", every, found, m, a.init + " on " + a.dataset,
                 {});
    run.log("wrote " + run.out.report);
  }
  if (a.json) {
    json j = {{"task", "detect"},
              {"model", a.init},
              {"int8", model.int8},
              {"format", ds.format},
              {"classes", ds.classes},
              {"photos", ds.size()},
              {"objects", ds.object_count()},
              {"threshold", plan.desc.detect_threshold},
              {"skipped", ds.skipped.size()}};
    j.update(metrics_json("", ds, m));
    tvh::write_stdout(tvh::json_text(j));
  }
  return 0;
}

// The detector's input: --input, or FOMO's 96 x 96 x 3; refused before any photo is read when the grid
// cannot cover it.
void detector_input(const Args& a, int* h, int* w, int* c) {
  *h = *w = kDetectDefaultSide;
  *c = 3;
  if (!a.input.empty()) tvh::parse_input_size(a.input, h, w, c);
  for (int side : {*h, *w})
    if (side < tv::kDetectMinSide || side > tv::kDetectMaxSide || side % tv::kGridStride != 0)
      throw tvh::UsageError("--input " + a.input + ": a detector's input sides are multiples of " +
                            std::to_string(tv::kGridStride) + " (its grid's cells) from " +
                            std::to_string(tv::kDetectMinSide) + " to " + std::to_string(tv::kDetectMaxSide) +
                            " pixels; try --input " + std::to_string(kDetectDefaultSide) + "x" +
                            std::to_string(kDetectDefaultSide) + "x" + std::to_string(*c) + ".");
}

// The detect preset's network and recipe for a dataset of `train_photos` training photos, with the
// command line's overrides.
std::unique_ptr<tv::ModelPlan> detector_setup(Run& run, const tvh::DetectionDataset& ds, size_t train_photos,
                                              const std::function<void(tvh::TrainSetup*)>& apply_overrides) {
  tv::DataShape data;
  data.height = ds.height;
  data.width = ds.width;
  data.channels = ds.channels;
  data.images = (long)train_photos;
  tvh::TrainSetup& setup = run.setup;
  setup.preset = "detect";
  tv::preset_model_for("detect", (int)ds.classes.size() + 1, data, &setup.model);
  tv::preset_recipe_for("detect", data, &setup.recipe);
  apply_overrides(&setup);
  if (run.a.threshold > 0) setup.model.detect_threshold = run.a.threshold;
  return tvh::plan_or_throw(setup.model, run.a.input.empty() ? "the detector" : "--input " + run.a.input);
}

tvh::DetectTrainRequest train_request(const Run& run, const tvh::DetectionDataset& ds, const tv::ModelPlan& plan,
                                      const tvh::Split& split, tvh::Progress& progress) {
  const int epochs = run.setup.recipe.epochs;
  tvh::DetectTrainRequest req = tvh::detect_train_request(plan, run.setup.recipe, ds, split, run.a.seed, run.a.threads);
  req.on_batch = [&progress, epochs](int epoch, int done, int total) { progress.update(epoch, epochs, done, total); };
  return req;
}

// --kfold K: the recipe trained K times, each photo validated once, no model written. Each fold trains its
// whole schedule (keep-best would choose the epoch on the fold's own validation photos).
int run_detect_kfold(Run& run, const tvh::DetectionDataset& ds,
                     const std::function<void(tvh::TrainSetup*)>& apply_overrides) {
  const Args& a = run.a;
  const std::vector<tvh::Split> folds = tvh::detection_kfold_splits(ds, a.kfold, a.seed);
  const auto plan = detector_setup(run, ds, folds[0].train.size(), apply_overrides);
  run.setup.recipe.restore_best = false;
  run.setup.recipe.opt.keep_best = false;
  run.log(std::to_string(a.kfold) + "-fold cross-validation of the detector on " + ds.source + ": " +
          std::to_string(folds[0].train.size() + folds[0].val.size()) + " photos, " +
          std::to_string(run.setup.recipe.epochs) + " epochs a fold, seed " + std::to_string(a.seed));
  tvh::Progress progress(!a.quiet);
  std::vector<tvh::PhotoDetections> pooled;
  std::vector<double> f1s;
  json fold_json = json::array();
  double train_seconds = 0;
  for (size_t f = 0; f < folds.size(); ++f) {
    tvh::Split train_only{folds[f].train, {}};
    const tvh::DetectTrainResult r = tvh::train_detector(train_request(run, ds, *plan, train_only, progress));
    progress.clear();
    const std::vector<tvh::PhotoDetections> found =
        tvh::detect_photos(tvh::float_detector(*plan, r.params.data()), ds, folds[f].val);
    const tvh::DetectionMetrics m = tvh::detection_metrics(found, (int)ds.classes.size(), a.seed);
    pooled.insert(pooled.end(), found.begin(), found.end());
    f1s.push_back(m.micro.f1());
    train_seconds += r.train_seconds;
    log_metrics(run, ds, m, "fold " + std::to_string(f + 1) + "/" + std::to_string(folds.size()));
    json fj = {{"val_images", folds[f].val.size()}, {"train_seconds", r.train_seconds}};
    fj.update(metrics_json("val_", ds, m));
    fj.erase("per_class");
    fold_json.push_back(fj);
  }
  double mean = 0, sd = 0;
  for (double x : f1s) mean += x;
  mean /= (double)f1s.size();
  for (double x : f1s) sd += (x - mean) * (x - mean);
  sd = f1s.size() > 1 ? std::sqrt(sd / (double)(f1s.size() - 1)) : 0;
  const tvh::DetectionMetrics all = tvh::detection_metrics(pooled, (int)ds.classes.size(), a.seed);
  log_metrics(run, ds, all,
              std::to_string(a.kfold) + "-fold cross-validation: F1 " + fmt("%.3f", mean) + " +- " + fmt("%.3f", sd) +
                  " (sample sd over folds); every photo once");
  if (a.json) {
    json j = {{"task", "detect"},
              {"format", ds.format},
              {"classes", ds.classes},
              {"preset", "detect"},
              {"kfold", a.kfold},
              {"cv_f1_mean", mean},
              {"cv_f1_sd", sd},
              {"folds", fold_json},
              {"epochs", run.setup.recipe.epochs},
              {"train_seconds", train_seconds},
              {"params", plan->param_count},
              {"seed", a.seed}};
    j.update(metrics_json("cv_", ds, all));
    tvh::write_stdout(tvh::json_text(j));
  }
  return 0;
}

}  // namespace

int run_detect(Run& run, const std::function<void(tvh::TrainSetup*)>& apply_overrides) {
  const Args& a = run.a;
  refuse_what_detection_lacks(run);
  if (a.eval) return run_detect_eval(run);
  int h, w, c;
  detector_input(a, &h, &w, &c);
  const tvh::DetectionDataset ds = read_detection_dataset(run, h, w, c);
  if (a.kfold) return run_detect_kfold(run, ds, apply_overrides);
  const tvh::Split split = tvh::detection_split(ds, run.setup.val_fraction, run.a.seed);
  log_dataset(run, ds, split);
  const auto plan = detector_setup(run, ds, split.train.size(), apply_overrides);
  const tvh::TrainSetup& setup = run.setup;
  tvh::check_outputs({{"-o", a.output}}, {tvh::blob_bytes_estimate(*plan)}, run.inputs);
  tvh::Progress progress(!a.quiet);
  tvh::DetectTrainRequest req = train_request(run, ds, *plan, split, progress);
  req.on_epoch = [&](const tvh::DetectEpochRecord& e) {
    progress.clear();
    run.log("epoch " + std::to_string(e.epoch) + "/" + std::to_string(setup.recipe.epochs) + "  loss " +
            fmt("%.4f", e.train_loss) + (e.val_f1 >= 0 ? "  val F1 " + fmt("%.3f", e.val_f1) : std::string()) +
            "  lr " + fmt("%.2e", e.lr));
  };
  run.log("training a detector (" + std::to_string(plan->param_count) + " parameters, input " + std::to_string(h) +
          "x" + std::to_string(w) + "x" + std::to_string(c) + ", grid " +
          std::to_string(plan->layers[plan->num_layers - 1].out.h) + "x" +
          std::to_string(plan->layers[plan->num_layers - 1].out.w) + ") on " + std::to_string(split.train.size()) +
          " photos, validating on " + std::to_string(split.val.size()) + "; " + std::to_string(setup.recipe.epochs) +
          " epochs, seed " + std::to_string(a.seed) + ", " + std::to_string(a.threads) + " thread(s)");
  const tvh::DetectTrainResult r = tvh::train_detector(req);
  progress.clear();
  const std::vector<tvh::PhotoDetections> found =
      tvh::detect_photos(tvh::float_detector(*plan, r.params.data()), ds, split.val);
  const tvh::DetectionMetrics m = tvh::detection_metrics(found, (int)ds.classes.size(), a.seed);
  run.log("training loop " + fmt("%.3f", r.train_seconds) + " s");
  if (split.val.empty())
    run.log("no validation: the split kept no photo for it (add photos, or a val/ folder)");
  else
    log_metrics(
        run, ds, m,
        "validation" + (r.best_epoch ? ", the weights of epoch " + std::to_string(r.best_epoch) : std::string()));
  write_detector(run, ds, split, *plan, r, m);
  if (!run.out.report.empty() && !split.val.empty()) {
    write_report(run, run.out.report, ds, *plan, false, "validation photos", split.val, found, m,
                 a.output + ": the detector on " + a.dataset, detector_next_commands(a.output, a.dataset));
    run.log("wrote " + run.out.report);
  }
  if (a.json) tvh::write_stdout(tvh::json_text(detection_json(run, ds, split, *plan, r, m)));
  return 0;
}

}  // namespace tvtrain
