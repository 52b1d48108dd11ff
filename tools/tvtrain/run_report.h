// tvtrain's HTML report (host/report/html_report.h) and suspect labels: what the three modes (train, --eval,
// --kfold) share, kept out of tvtrain.cpp.
#pragma once
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "host/model/model_io.h"
#include "host/photos/split.h"
#include "host/report/detect_report.h"
#include "host/report/html_report.h"
#include "host/train/config.h"
#include "host/train/suspects.h"

namespace tvtrain {

// The run as the report names it: the command line, when it started.
class RunReport {
 public:
  RunReport(int argc, char** argv);
  // The report's common fields for a run on `ds` with `setup` (preset, recipe in words) and `seed`.
  tvh::ReportInput input(const tvh::Dataset& ds, const tvh::TrainSetup& setup, uint64_t seed) const;
  // The report of each mode (the pointers in it point into the arguments).
  tvh::ReportInput for_training(const tvh::Dataset& ds, const tvh::TrainSetup& setup, uint64_t seed,
                                const std::string& output, const std::string& dataset, const tvh::TrainResult& r,
                                const tvh::Split& split, const tv::ModelPlan& plan) const;
  tvh::ReportInput for_eval(const tvh::Dataset& ds, const tvh::TrainSetup& setup, uint64_t seed,
                            const std::string& model, const std::string& dataset, const tvh::EvalResult& r,
                            const tvh::LoadedModel& init) const;
  tvh::ReportInput for_kfold(const tvh::Dataset& ds, const tvh::TrainSetup& setup, uint64_t seed,
                             const std::string& dataset, int kfold, const tvh::EvalResult& oof,
                             const std::vector<tvh::SuspectLabel>& suspects, const tv::ModelPlan& plan,
                             const std::vector<float>& params) const;
  // Writes the page to `path` (with the side-output marker, atomically); the run's time is measured now.
  void write(const std::string& path, tvh::ReportInput in) const;
  // A detector's page (its command line filled in), the same way.
  void write_detect(const std::string& path, tvh::DetectReportInput in) const;

 private:
  std::string command_, started_;
  std::chrono::steady_clock::time_point t0_;
};

// The recipe in words: "30 epochs, batch 32, learning rate 0.01, augment flip, shift 4".
std::string recipe_words(const tv::TrainRecipe& r);

// Adds a fold's validation predictions (probs filled) to the out-of-fold predictions of every image.
void add_out_of_fold(const tvh::Dataset& ds, const tvh::EvalResult& fold_val, tvh::EvalResult* oof);

// The suspects of out-of-fold predictions `oof` (every image evaluated once, probs filled), with
// dataset indices.
std::vector<tvh::SuspectLabel> suspects_of(const tvh::Dataset& ds, const tvh::EvalResult& oof);

// --json's "suspect_labels": [{"path", "given", "suggested", "p_given"}, ...] in rank order.
nlohmann::json suspects_json(const tvh::Dataset& ds, const std::vector<tvh::SuspectLabel>& suspects);

// The next commands after writing `model` from `dataset` (tvquant, tvexport, the board).
std::vector<std::string> next_commands_after_training(const std::string& model, const std::string& dataset);

}  // namespace tvtrain
