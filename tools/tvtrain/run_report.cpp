#include "run_report.h"

#include <ctime>

#include "host/base/files.h"
#include "host/base/text.h"

namespace tvtrain {

RunReport::RunReport(int argc, char** argv) : t0_(std::chrono::steady_clock::now()) {
  command_ = tvh::report_command_line("tvtrain", argc, argv);
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  started_ = buf;
}

tvh::ReportInput RunReport::input(const tvh::Dataset& ds, const tvh::TrainSetup& setup, uint64_t seed) const {
  tvh::ReportInput in;
  in.ds = &ds;
  in.command = command_;
  in.started = started_;
  in.preset = setup.preset;
  in.recipe = recipe_words(setup.recipe);
  in.seed = seed;
  return in;
}

tvh::ReportInput RunReport::for_training(const tvh::Dataset& ds, const tvh::TrainSetup& setup, uint64_t seed,
                                         const std::string& output, const std::string& dataset,
                                         const tvh::TrainResult& r, const tvh::Split& split,
                                         const tv::ModelPlan& plan) const {
  tvh::ReportInput in = input(ds, setup, seed);
  in.title = output + ": " + setup.preset + " on " + dataset;
  in.evaluated = "validation images";
  in.eval = &r.val_eval;
  in.history = &r.history;
  in.kept_epoch = r.best_epoch;
  in.warnings = tvh::split_warnings(ds, split);
  in.plan = &plan;
  in.params = r.params.data();
  in.next_commands = next_commands_after_training(output, dataset);
  return in;
}

tvh::ReportInput RunReport::for_eval(const tvh::Dataset& ds, const tvh::TrainSetup& setup, uint64_t seed,
                                     const std::string& model, const std::string& dataset, const tvh::EvalResult& r,
                                     const tvh::LoadedModel& init) const {
  tvh::ReportInput in = input(ds, setup, seed);
  in.title = model + " on " + dataset + " (every image)";
  in.evaluated = "every image";
  in.eval = &r;
  if (!init.int8) in.plan = init.plan.get(), in.params = init.params.data();
  in.next_commands = {"# train on these photos:", "tvtrain " + tvh::shell_word(dataset) + " -o model.tvb"};
  return in;
}

tvh::ReportInput RunReport::for_kfold(const tvh::Dataset& ds, const tvh::TrainSetup& setup, uint64_t seed,
                                      const std::string& dataset, int kfold, const tvh::EvalResult& oof,
                                      const std::vector<tvh::SuspectLabel>& suspects, const tv::ModelPlan& plan,
                                      const std::vector<float>& params) const {
  tvh::ReportInput in = input(ds, setup, seed);
  in.title = setup.preset + " on " + dataset + ", " + std::to_string(kfold) + "-fold cross-validation";
  in.evaluated = "out-of-fold predictions of " + std::to_string(kfold) + " folds";
  in.eval = &oof;
  in.kfold = true;
  in.suspects = suspects;
  in.plan = &plan;
  in.params = params.data();
  in.next_commands = {"# after checking the likely label mistakes, train the model on every photo:",
                      "tvtrain " + tvh::shell_word(dataset) + " --preset " + setup.preset + " -o model.tvb"};
  return in;
}

void add_out_of_fold(const tvh::Dataset& ds, const tvh::EvalResult& fold_val, tvh::EvalResult* oof) {
  const int k = (int)ds.classes.size();
  for (size_t n = 0; n < fold_val.index.size(); ++n) {
    const int i = fold_val.index[n];
    oof->add(i, ds.labels[(size_t)i], fold_val.probs.data() + n * (size_t)k, k);
  }
}

void RunReport::write(const std::string& path, tvh::ReportInput in) const {
  in.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  tvh::write_file_atomic(path, tvh::with_side_output_marker(tvh::html_report(in)));
}

void RunReport::write_detect(const std::string& path, tvh::DetectReportInput in) const {
  in.command = command_;
  tvh::write_file_atomic(path, tvh::with_side_output_marker(tvh::detect_html_report(in)));
}

std::string recipe_words(const tv::TrainRecipe& r) {
  std::string s = std::to_string(r.epochs) + " epochs, batch " + std::to_string(r.batch_size) + ", learning rate " +
                  tvh::fmt("%g", r.opt.lr) + ", " + std::to_string(r.opt.lanes) + " lane(s)";
  std::vector<std::string> aug;
  if (r.aug_flip) aug.push_back("flip");
  if (r.aug_shift) aug.push_back("shift " + std::to_string(r.aug_shift) + " px");
  if (r.aug_shift_cells) aug.push_back("shift " + std::to_string(r.aug_shift_cells) + " grid cells");
  if (r.aug_brightness > 0) aug.push_back("brightness " + tvh::fmt("%g", r.aug_brightness));
  s += aug.empty() ? ", no augmentation" : ", augmentation: ";
  for (size_t i = 0; i < aug.size(); ++i) s += (i ? ", " : "") + aug[i];
  if (r.restore_best) s += ", keeps the best validation epoch";
  return s;
}

std::vector<tvh::SuspectLabel> suspects_of(const tvh::Dataset& ds, const tvh::EvalResult& oof) {
  std::vector<int> labels;
  for (int i : oof.index) labels.push_back(ds.labels[(size_t)i]);
  std::vector<tvh::SuspectLabel> s = tvh::find_suspect_labels(labels, oof.probs, (int)ds.classes.size());
  for (auto& x : s) x.index = oof.index[(size_t)x.index];
  return s;
}

nlohmann::json suspects_json(const tvh::Dataset& ds, const std::vector<tvh::SuspectLabel>& suspects) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& x : suspects)
    list.push_back({{"path", ds.paths[(size_t)x.index]},
                    {"given", ds.classes[(size_t)x.given]},
                    {"suggested", ds.classes[(size_t)x.suggested]},
                    {"p_given", x.p_given},
                    {"p_suggested", x.p_suggested}});
  return list;
}

std::vector<std::string> next_commands_after_training(const std::string& model, const std::string& dataset) {
  const std::string q8 = tvh::int8_name_for(model);
  return {"# int8 for the board (calibrated on the same photos):",
          "tvquant " + tvh::shell_word(model) + " --calib " + tvh::shell_word(dataset) + " -o " + tvh::shell_word(q8),
          "# a C header to bake into the firmware (copy it as model.h next to the sketch and rebuild):",
          "tvexport " + tvh::shell_word(q8) + " -o model.h",
          "# or copy " + q8 + " to the board's SD card as /header/model.tvb (firmware/README.md)",
          "# check its size and memory on the board:",
          "tvexport info " + tvh::shell_word(q8)};
}

}  // namespace tvtrain
