// What tvtrain's steps share: the command line, the outputs it names, the setup, the starting model,
// the decoded dataset and the model's plan. tvtrain.cpp fills it (options, checks, dataset); modes.cpp
// runs --eval and --kfold on it, train_mode.cpp the training.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "host/base/files.h"
#include "host/model/model_io.h"
#include "host/photos/dataset.h"
#include "host/photos/procedural_dataset.h"
#include "host/photos/split.h"
#include "host/report/report.h"
#include "host/train/config.h"
#include "host/train/init_model.h"
#include "host/train/training.h"
#include "run_report.h"
#include "tools/common/cli.h"
#include "tv/train/backbone.h"
#include "tv/train/update.h"

namespace tvtrain {

// The command line as parsed.
struct Args {
  std::string dataset, output, preset = "tinyvision", config, input, init, raw_out, split = "reference", classes, curve,
                               augment, confusion, report, update, rename, start, backbone;
  int epochs = 0, batch = 0, lanes = 0, threads = 0, kfold = 0, val_last = -1;
  double lr = 0, val_fraction = -1;
  uint64_t seed = 1;
  float threshold = 0;  // a detector's decoding threshold (0: the preset's, or the --init model's)
  bool eval = false, json = false, no_curve = false, no_confusion = false, no_report = false, quiet = false;
  bool split_given = false;   // --split was on the command line
  bool epochs_given = false;  // --epochs was (0 is allowed with --init: only new classes are added)
  std::string distill;        // --distill on|off ("": on)
};

// The side outputs: their paths (empty: not written), decided from the flags and -o.
struct Outputs {
  std::string curve, confusion, report;
};

struct Run {
  Run(int argc, char** argv) : run_report(argc, argv) {}
  Args a;
  tvcli::StderrLog log{false};
  RunReport run_report;
  Outputs out;
  std::vector<tvh::NamedPath> inputs;  // the dataset, --init, --config: never written
  tvh::TrainSetup setup;
  std::vector<std::string> classes;  // --classes
  tvh::LoadedModel init;             // --init (plan null without)
  tvh::Dataset ds;
  std::unique_ptr<tv::ModelPlan> plan;
  tv::UpdateSpec update;      // --update (tv/train/update.h)
  tvh::ClassMatch match;      // a .tvb --init's classes against the dataset's (host/train/init_model.h)
  bool distill = true;        // --distill: distillation in an update that adds classes (tv::distill_new_classes)
  bool preset_given = false;  // --preset was on the command line
  tv::StartMode start = tv::StartMode::Scratch;  // where training starts, once chosen (choose_start)
  tvh::LoadedModel backbone;                     // the backbone it starts from (plan null without)
  std::string backbone_name;                     // its file, or the built-in one's name
  bool is_pretraining = false;                   // the dataset is a pretraining set drawn in memory (procedural:...)
  tvh::ProceduralSpec pretraining;               // its spec
};

// The training request of a split: the run's plan, recipe, dataset, seed, threads and starting weights
// (a backbone's are made for the split's training photos into *start), with a progress bar.
tvh::TrainRequest make_request(const Run& run, const tvh::Split& sp, tvh::Progress& progress,
                               std::vector<float>* start);

// The modes, once the dataset is decoded; each returns the exit code.
int run_eval(Run& r);
int run_kfold(Run& r);
int run_train(Run& r);
// A detection dataset (photos with labelled boxes): the detect preset, adjusted by the command line's
// recipe options (apply_overrides), trained and measured (detect_mode.cpp).
int run_detect(Run& r, const std::function<void(tvh::TrainSetup*)>& apply_overrides);

// --json pieces every mode shares: the confusion matrix as rows; per-class figures and every
// misclassified image of an evaluation; what the dataset report adds (each unused file, its reason).
nlohmann::json confusion_json(const std::vector<int>& cm, int k);
nlohmann::json results_json(const tvh::Dataset& ds, const tvh::EvalResult& r);
nlohmann::json dataset_json(const tvh::Dataset& ds);

}  // namespace tvtrain
