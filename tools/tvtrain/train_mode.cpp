// tvtrain's training mode: the split, the session (host/train/training.cpp), the results said, and the
// model and its side outputs written.
#include <algorithm>
#include <sstream>

#include "host/base/error.h"
#include "host/base/interval.h"
#include "host/base/json_text.h"
#include "host/base/text.h"
#include "host/photos/split.h"
#include "host/train/evaluate.h"
#include "run.h"
#include "tv/formats/raw_weights.h"
#include "tv/train/train_session.h"
#include "update_options.h"

using nlohmann::json;
using tvh::fmt;

namespace tvtrain {

namespace {

// The validation split the setup names, with a warning for each class the reference split cannot
// validate as asked and for what the split leaves thin.
tvh::Split split_of(const Run& run) {
  const Args& a = run.a;
  const tvh::Dataset& ds = run.ds;
  const tvh::TrainSetup& setup = run.setup;
  const auto& log = run.log;
  tvh::Split split = setup.split == "fraction" ? tvh::fraction_split(ds, setup.val_fraction, a.seed)
                                               : tvh::reference_split(ds, setup.recipe.val_last_n);
  if (setup.split != "fraction") {
    // The reference split keeps at least one training image per class: a class with no more images than
    // --val-last validates on fewer (none with one image). Said, not silent.
    const int last_n = setup.recipe.val_last_n;
    const std::vector<size_t> counts = ds.class_counts();
    std::vector<size_t> validated(counts.size());
    for (int i : split.val) validated[(size_t)ds.labels[(size_t)i]]++;
    for (size_t c = 0; c < counts.size(); ++c) {
      if (last_n == 0 || counts[c] == 0 || counts[c] > (size_t)last_n) continue;
      const size_t n_val = validated[c];
      log("warning: class '" + ds.classes[c] + "' has " + std::to_string(counts[c]) + " image" +
          (counts[c] == 1 ? "" : "s") + ", not more than --val-last " + std::to_string(last_n) + ": " +
          (n_val == 0 ? std::string("it only trains, nothing of it is validated")
                      : std::to_string(n_val) + " validate" + (n_val == 1 ? "s" : "") + " instead of " +
                            std::to_string(last_n) + ", " + std::to_string(counts[c] - n_val) + " train" +
                            (counts[c] - n_val == 1 ? "s" : "")) +
          " (add images, or use --kfold to measure on every image).");
    }
  }
  for (const auto& w : tvh::split_warnings(ds, split)) log("warning: " + w);
  return split;
}

// The per-epoch line.
void log_epoch(const Run& run, tvh::Progress& progress, const tvh::EpochRecord& e) {
  const tvh::TrainSetup& setup = run.setup;
  const auto& log = run.log;
  progress.clear();
  std::string line = "epoch " + std::to_string(e.epoch) + "/" + std::to_string(setup.recipe.epochs) + "  loss " +
                     fmt("%.4f", e.train_loss) + "  train acc " + fmt("%.1f", 100 * e.train_acc) + " %";
  if (e.val_loss >= 0) line += "  val loss " + fmt("%.4f", e.val_loss);
  if (e.val_acc >= 0) line += "  val acc " + fmt("%.1f", 100 * e.val_acc) + " %";
  line += "  lr " + fmt("%.2e", e.lr);
  if (e.skipped_batches) line += "  (" + std::to_string(e.skipped_batches) + " batches dropped: NaN/Inf gradient)";
  log(line);
}

// What the trained weights do on the training and validation images, and the memory on the device.
void log_results(const Run& run, const tvh::TrainResult& r) {
  const Args& a = run.a;
  const tvh::Dataset& ds = run.ds;
  const auto& log = run.log;
  log("training loop " + fmt("%.3f", r.train_seconds) + " s (" +
      fmt("%.1f", r.history.empty() ? 0.0 : 1e3 * r.train_seconds / r.history.size()) + " ms/epoch)");
  log("train accuracy " + tvh::accuracy_with_interval(r.train_eval.correct, r.train_eval.total) + ", " +
      (r.val_eval.total == 0
           ? std::string("no validation accuracy: no image was kept for validation (every class is too small for "
                         "--val-last; add images or use --kfold)")
           : "validation accuracy " + tvh::accuracy_with_interval(r.val_eval.correct, r.val_eval.total)) +
      (r.best_epoch ? " with the weights of epoch " + std::to_string(r.best_epoch) : std::string()));
  if (!tvh::wide_interval_hint(r.val_eval.correct, r.val_eval.total).empty())
    log("note: " + tvh::wide_interval_hint(r.val_eval.correct, r.val_eval.total));
  if (!a.quiet && r.val_eval.total) {
    std::fprintf(stderr, "validation images:\n%s", tvh::confusion_text(ds.classes, r.val_eval.confusion).c_str());
    std::fprintf(stderr, "%s", tvh::class_metrics_text(ds.classes, r.val_eval.confusion).c_str());
    const std::string wrong = tvh::misclassified_text(ds, r.val_eval);
    if (!wrong.empty()) log(wrong);
  }
  log("memory on the device: training " + std::to_string(r.memory.total_bytes) + " bytes (" +
      tvh::human_bytes(r.memory.total_bytes) + "), inference " + std::to_string(r.infer_memory.total_bytes) +
      " bytes (" + tvh::human_bytes(r.infer_memory.total_bytes) + ")");
}

// The model (.tvb), the raw weights, the curve, the confusion picture and the report.
void write_results(const Run& run, const tvh::TrainResult& r, const tvh::Split& split) {
  const Args& a = run.a;
  const tvh::Dataset& ds = run.ds;
  const tvh::TrainSetup& setup = run.setup;
  const tv::ModelPlan* plan = run.plan.get();
  const std::string &curve = run.out.curve, &confusion = run.out.confusion, &report = run.out.report;
  const auto& log = run.log;
  std::ostringstream prov;
  prov << "tool=tvtrain " << TV_VERSION << "\npreset=" << setup.preset << "\ndataset=" << a.dataset
       << "\nseed=" << a.seed << "\nepochs=" << setup.recipe.epochs << "\ntrain_images=" << split.train.size()
       << "\nval_images=" << split.val.size() << "\nval_accuracy=" << fmt("%.4f", r.val_eval.accuracy()) << "\n";
  if (!a.init.empty()) prov << "init=" << a.init << "\nupdate=" << update_name(run.update) << "\n";
  if (run.start == tv::StartMode::Backbone)
    prov << "start=backbone\nbackbone=" << run.backbone_name << "\nupdate=" << update_name(run.update) << "\n";
  if (run.is_pretraining)  // its classes mean nothing: it is a backbone (tv/train/backbone.h)
    prov << "role=backbone\ngenerator=" << tvh::procedural_source_text(run.pretraining) << "\n";
  if (!run.match.added.empty() && setup.recipe.epochs > 0)  // distillation (the board's Learn writes the same)
    prov << "distill="
         << (r.distill_outputs
                 ? "temperature " + fmt("%g", tv::kDistillTemperature) + ", weight " + fmt("%g", tv::kDistillWeight)
                 : std::string("off"))
         << "\n";
  tvh::save_float_model(a.output, *plan, r.params.data(), ds.classes, prov.str());
  log("wrote " + a.output);
  if (!a.raw_out.empty()) {
    tvh::save_raw_weights(a.raw_out, *plan, r.params.data());
    log("wrote " + a.raw_out);
  }
  if (!curve.empty()) {
    tvh::write_file_atomic(curve, tvh::with_side_output_marker(
                                      tvh::curve_svg(r.history, setup.preset + " on " + a.dataset, r.best_epoch)));
    log("wrote " + curve);
  }
  if (!confusion.empty() && r.val_eval.total) {
    tvh::write_file_atomic(
        confusion, tvh::with_side_output_marker(tvh::confusion_svg(
                       ds.classes, r.val_eval.confusion, setup.preset + " on " + a.dataset + " (validation images)")));
    log("wrote " + confusion);
  }
  if (!report.empty()) {
    run.run_report.write(report, run.run_report.for_training(ds, setup, a.seed, a.output, a.dataset, r, split, *plan));
    log("wrote " + report);
  }
}

// --json for a training run.
json training_json(const Run& run, const tvh::TrainResult& r, const tvh::Split& split) {
  const Args& a = run.a;
  const tvh::Dataset& ds = run.ds;
  const tvh::TrainSetup& setup = run.setup;
  const tv::ModelPlan* plan = run.plan.get();
  json hist = json::array();
  for (const auto& e : r.history)
    hist.push_back({{"epoch", e.epoch},
                    {"loss", e.train_loss},
                    {"train_accuracy", e.train_acc},
                    {"val_accuracy", e.val_acc},
                    {"val_loss", e.val_loss},
                    {"lr", e.lr}});
  json j = {{"classes", ds.classes},
            {"preset", setup.preset},
            {"train_images", split.train.size()},
            {"val_images", split.val.size()},
            {"epochs", setup.recipe.epochs},
            {"train_seconds", r.train_seconds},
            {"train_accuracy", r.train_eval.accuracy()},
            {"val_accuracy", r.val_eval.total ? json(r.val_eval.accuracy()) : json(nullptr)},  // null: none validated
            {"val_correct", r.val_eval.correct},
            {"val_accuracy_interval",
             r.val_eval.total ? tvh::interval_json(r.val_eval.correct, r.val_eval.total) : json(nullptr)},
            {"confusion_matrix", confusion_json(r.val_eval.confusion, (int)ds.classes.size())},
            {"params", plan->param_count},
            {"memory",
             {{"train_bytes", r.memory.total_bytes},
              {"infer_bytes", r.infer_memory.total_bytes},
              {"lanes", setup.recipe.opt.lanes}}},
            {"seed", a.seed},
            {"threads", a.threads},
            {"history", hist},
            {"kept_epoch", r.best_epoch ? r.best_epoch : (int)r.history.size()},
            {"augment",
             {{"flip", setup.recipe.aug_flip},
              {"shift", setup.recipe.aug_shift},
              {"brightness", setup.recipe.aug_brightness}}},
            {"start", tv::start_mode_name(run.start)},
            {"output", a.output}};
  add_update_json(&j, run.update, r, run.match);
  j.update(results_json(ds, r.val_eval));
  j.update(dataset_json(ds));
  return j;
}

// Room for every result, known now that the model is, before training: the .tvb, the raw file and the
// pictures (an upper bound of their SVG size) and the report (its page cap), together on each file
// system their targets are on.
void check_room_for_results(const Run& run) {
  const Args& a = run.a;
  const tv::ModelPlan* plan = run.plan.get();
  const uint64_t model_bytes = tvh::blob_bytes_estimate(*plan);
  const uint64_t k = run.ds.classes.size();
  tvh::check_outputs({{"-o", a.output},
                      {"--raw-out", a.raw_out},
                      {"the curve", run.out.curve},
                      {"the confusion picture", run.out.confusion},
                      {"the report", run.out.report}},
                     {model_bytes, model_bytes,
                      std::min<uint64_t>(8192 + 512 * (uint64_t)run.setup.recipe.epochs, tvh::kCurveSvgMaxBytes),
                      std::min<uint64_t>(8192 + 1024 * k * k, tvh::kConfusionSvgMaxBytes), tvh::kReportMaxBytes},
                     run.inputs);
}

}  // namespace

int run_train(Run& run) {
  const Args& a = run.a;
  const tvh::TrainSetup& setup = run.setup;
  const auto& log = run.log;
  tvh::Progress progress(!a.quiet);
  const tvh::Split split = split_of(run);
  check_update_fits(run.update, *run.plan);
  if (!run.match.added.empty())  // the new classes' rows, from their training photos
    tvh::grow_and_imprint(*run.init.plan, run.init.params, a.init, run.ds, run.match.model_classes, split.train,
                          &run.plan, &run.init.params);
  const tv::ModelPlan* plan = run.plan.get();
  if (!a.raw_out.empty() && !tv::raw_weights_compatible(*plan))
    throw tvh::Error("--raw-out " + a.raw_out +
                     ": the raw myWeights.bin format only holds the webmcu network at 64x64x3.");
  std::vector<float> start;
  tvh::TrainRequest req = make_request(run, split, progress, &start);
  req.on_epoch = [&](const tvh::EpochRecord& e) { log_epoch(run, progress, e); };
  check_room_for_results(run);
  if (!req.samples.empty())
    log("the new classes' training photos repeat up to the old classes' mean count: " +
        std::to_string(req.samples.size()) + " samples per epoch from " + std::to_string(split.train.size()) +
        " images");
  log("training " + setup.preset + " (" + std::to_string(plan->param_count) + " parameters) on " +
      std::to_string(split.train.size()) + " images, validating on " + std::to_string(split.val.size()) + "; " +
      std::to_string(setup.recipe.epochs) + " epochs, batch " + std::to_string(setup.recipe.batch_size) + ", seed " +
      std::to_string(a.seed) + ", " + std::to_string(a.threads) + " thread(s), " +
      std::to_string(setup.recipe.opt.lanes) + " lane(s)");
  const tvh::TrainResult r = tvh::train_model(req);
  progress.clear();
  log(update_text(run.update, r, *plan));
  const std::string distilled = distill_text(r, run.match, setup.recipe.epochs);
  if (!distilled.empty()) log(distilled);
  log(cost_text(r));
  log_results(run, r);
  write_results(run, r, split);
  if (a.json) tvh::write_stdout(tvh::json_text(training_json(run, r, split)));
  log("next: tvquant " + tvh::shell_word(a.output) + " --calib " + tvh::shell_word(a.dataset) + " -o " +
      tvh::shell_word(tvh::int8_name_for(a.output)) + "   (int8 for the ESP32-S3; or tvexport " +
      tvh::shell_word(a.output) + " -o model.h for a float header)");
  return 0;
}

}  // namespace tvtrain
