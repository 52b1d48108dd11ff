// tvtrain's modes that write no model: --eval (a model on every image) and --kfold (the recipe
// measured by cross-validation); and the --json pieces every mode shares.
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "host/base/error.h"
#include "host/base/interval.h"
#include "host/base/json_text.h"
#include "host/base/text.h"
#include "host/photos/split.h"
#include "host/train/evaluate.h"
#include "run.h"
#include "tv/train/train_session.h"

using nlohmann::json;
using tvh::fmt;

namespace tvtrain {

json confusion_json(const std::vector<int>& cm, int k) {
  json rows = json::array();
  for (int i = 0; i < k; ++i) rows.push_back(std::vector<int>(cm.begin() + i * k, cm.begin() + (i + 1) * k));
  return rows;
}

json results_json(const tvh::Dataset& ds, const tvh::EvalResult& r) {
  json per_class = json::array();
  const auto m = tvh::class_metrics(r.confusion, ds.classes.size());
  const std::vector<double> loss = tvh::class_losses(ds, r);
  for (size_t c = 0; c < m.size(); ++c) {
    per_class.push_back({{"class", ds.classes[c]},
                         {"precision", m[c].precision},
                         {"recall", m[c].recall},
                         {"f1", m[c].f1},
                         {"images", m[c].support},
                         {"predicted", m[c].predicted},
                         {"loss", m[c].support ? json(loss[c]) : json(nullptr)}});
  }
  json wrong = json::array();
  for (size_t i = 0; i < r.index.size(); ++i) {
    const size_t d = (size_t)r.index[i];
    if (r.predicted[i] == ds.labels[d]) continue;
    wrong.push_back({{"path", ds.paths[d]},
                     {"true", ds.classes[(size_t)ds.labels[d]]},
                     {"predicted", ds.classes[(size_t)r.predicted[i]]},
                     {"confidence", r.confidence[i]}});
  }
  return {{"per_class", per_class}, {"misclassified", wrong}};
}

json dataset_json(const tvh::Dataset& ds) {
  json files = json::array();
  std::map<std::string, size_t> by_reason;
  for (const auto& s : ds.skipped) {
    files.push_back({{"path", s.path}, {"reason", s.reason}, {"message", s.message}});
    ++by_reason[s.reason];
  }
  return {{"images", ds.size()},
          {"skipped_images", ds.skipped.size()},
          {"skipped_by_reason", by_reason},
          {"skipped_files", files},
          {"ignored_junk", ds.ignored_junk},
          {"scaled_decodes", ds.scaled_decodes},
          {"exif_rotated", ds.exif_rotated},
          {"decode_threads", ds.decode_threads},
          {"decode_seconds", ds.decode_seconds}};
}

tvh::TrainRequest make_request(const Run& run, const tvh::Split& sp, tvh::Progress& progress,
                               std::vector<float>* start) {
  tvh::TrainRequest req = tvh::train_request(*run.plan, run.setup.recipe, run.ds, sp, run.a.seed, run.a.threads);
  req.init = run.init.plan ? &run.init.params : nullptr;
  if (run.start == tv::StartMode::Backbone) {
    *start =
        tvh::backbone_start(*run.backbone.plan, run.backbone.params, run.backbone_name, *run.plan, run.ds, sp.train);
    req.init = start;
  }
  req.update = run.update;
  req.keep_rows = run.match.missing_rows;
  if (!run.match.added.empty()) {
    req.first_new_class = run.match.model_classes;
    req.samples = tvh::training_samples(req);
  }
  if (run.distill && !run.match.added.empty() &&
      req.recipe.epochs > 0)  // the old classes keep the starting model's soft targets
    tv::distill_new_classes(&req.recipe, (int)run.match.model_classes, run.plan->desc.num_classes);
  const int epochs = run.setup.recipe.epochs;
  req.on_batch = [&progress, epochs](int epoch, int done, int total) { progress.update(epoch, epochs, done, total); };
  return req;
}

// --eval: the --init model on every image, no training.
int run_eval(Run& run) {
  const Args& a = run.a;
  const tvh::Dataset& ds = run.ds;
  const tvh::LoadedModel& init = run.init;
  const tvh::TrainSetup& setup = run.setup;
  const std::string &confusion = run.out.confusion, &report = run.out.report;
  const auto& log = run.log;
  tvh::EvalResult r = tvh::evaluate_model(init, ds, tvh::all_indices(ds));
  log("evaluated " + a.init + " on " + std::to_string(r.total) + " images: accuracy " +
      tvh::accuracy_with_interval(r.correct, r.total));
  if (!a.quiet) std::fprintf(stderr, "%s", tvh::confusion_text(ds.classes, r.confusion).c_str());
  if (!a.quiet) std::fprintf(stderr, "%s", tvh::class_metrics_text(ds.classes, r.confusion).c_str());
  const std::string wrong = tvh::misclassified_text(ds, r);
  if (!wrong.empty()) log(wrong);
  if (!confusion.empty()) {
    tvh::write_file_atomic(confusion, tvh::with_side_output_marker(tvh::confusion_svg(
                                          ds.classes, r.confusion, a.init + " on " + a.dataset + " (every image)")));
    log("wrote " + confusion);
  }
  if (!report.empty()) {
    run.run_report.write(report, run.run_report.for_eval(ds, setup, a.seed, a.init, a.dataset, r, init));
    log("wrote " + report);
  }
  if (a.json) {
    json j = {{"model", a.init},
              {"int8", init.int8},
              {"classes", ds.classes},
              {"accuracy", r.accuracy()},
              {"accuracy_interval", tvh::interval_json(r.correct, r.total)},
              {"correct", r.correct},
              {"total", r.total},
              {"loss", r.loss},
              {"confusion_matrix", confusion_json(r.confusion, (int)ds.classes.size())}};
    j.update(results_json(ds, r));
    j.update(dataset_json(ds));
    tvh::write_stdout(tvh::json_text(j));
  }
  return 0;
}

// --kfold K: the recipe trained K times, each fold validated once; no model written.
int run_kfold(Run& run) {
  const Args& a = run.a;
  const tvh::Dataset& ds = run.ds;
  const tvh::TrainSetup& setup = run.setup;
  const tv::ModelPlan* plan = run.plan.get();
  const std::string& report = run.out.report;
  const auto& log = run.log;
  tvh::Progress progress(!a.quiet);
  if (setup.recipe.restore_best)
    throw tvh::Error(
        "--kfold with restore_best would pick each fold's weights on its own test images; set "
        "\"restore_best\": false for cross-validation.");
  if (!run.match.added.empty())
    throw tvh::Error("--kfold with classes " + a.init + " lacks (" + tvh::join(run.match.added) +
                     ") is not supported: each fold would imprint them from its own photos; train once, or drop them.");
  if ((size_t)a.kfold > ds.size())
    throw tvh::Error(a.dataset + ": --kfold " + std::to_string(a.kfold) + " needs at least that many images.");
  std::vector<tvh::Split> folds = tvh::kfold_splits(ds, a.kfold, a.seed);
  std::vector<double> accs;
  long pooled_correct = 0, pooled_total = 0;  // every image validated once over the folds
  json fold_json = json::array();
  double train_seconds = 0;
  tv::TrainMemory kf_mem{};
  tv::InferenceMemory kf_imem{};
  tvh::EvalResult oof;  // every image's out-of-fold prediction
  std::vector<float> last_params;
  for (size_t f = 0; f < folds.size(); ++f) {
    std::vector<float> start;
    tvh::TrainResult r = tvh::train_model(make_request(run, folds[f], progress, &start));
    tvtrain::add_out_of_fold(ds, r.val_eval, &oof);
    last_params = std::move(r.params);
    kf_mem = r.memory;
    kf_imem = r.infer_memory;
    progress.clear();
    accs.push_back(r.val_eval.accuracy());
    train_seconds += r.train_seconds;
    log("fold " + std::to_string(f + 1) + "/" + std::to_string(folds.size()) + ": validation accuracy " +
        tvh::accuracy_with_interval(r.val_eval.correct, r.val_eval.total));
    pooled_correct += r.val_eval.correct;
    pooled_total += r.val_eval.total;
    fold_json.push_back({{"val_accuracy", r.val_eval.accuracy()},
                         {"val_accuracy_interval", tvh::interval_json(r.val_eval.correct, r.val_eval.total)},
                         {"val_correct", r.val_eval.correct},
                         {"val_images", r.val_eval.total},
                         {"train_seconds", r.train_seconds}});
  }
  double mean = 0, sd = 0;
  for (double x : accs) mean += x;
  mean /= accs.size();
  for (double x : accs) sd += (x - mean) * (x - mean);
  sd = accs.size() > 1 ? std::sqrt(sd / (accs.size() - 1)) : 0;
  log(std::to_string(a.kfold) + "-fold cross-validation: " + fmt("%.2f", 100 * mean) + " % +- " +
      fmt("%.2f", 100 * sd) +
      " % (sample sd); every image once: " + tvh::accuracy_with_interval(pooled_correct, pooled_total));
  const std::vector<tvh::SuspectLabel> suspects = tvtrain::suspects_of(ds, oof);
  if (!suspects.empty()) log(tvh::suspects_text(ds, suspects));
  if (!report.empty()) {
    run.run_report.write(
        report, run.run_report.for_kfold(ds, setup, a.seed, a.dataset, a.kfold, oof, suspects, *plan, last_params));
    log("wrote " + report);
  }
  if (a.json) {
    json j = {{"classes", ds.classes},
              {"preset", setup.preset},
              {"kfold", a.kfold},
              {"cv_accuracy_mean", mean},
              {"cv_accuracy_sd", sd},
              {"cv_accuracy_pooled", pooled_total ? (double)pooled_correct / (double)pooled_total : 0.0},
              {"cv_accuracy_interval", tvh::interval_json(pooled_correct, pooled_total)},
              {"folds", fold_json},
              {"epochs", setup.recipe.epochs},
              {"train_seconds", train_seconds},
              {"params", plan->param_count},
              {"memory",
               {{"train_bytes", kf_mem.total_bytes},
                {"infer_bytes", kf_imem.total_bytes},
                {"lanes", setup.recipe.opt.lanes}}},
              {"suspect_labels", tvtrain::suspects_json(ds, suspects)}};
    j.update(dataset_json(ds));
    tvh::write_stdout(tvh::json_text(j));
  }
  return 0;
}

}  // namespace tvtrain
