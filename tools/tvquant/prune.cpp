// tvquant prune: remove the least important conv channels, rebuild the smaller model and fine-tune it.
#include "host/quant/prune.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "host/base/error.h"
#include "host/base/files.h"
#include "host/base/interval.h"
#include "host/base/json_text.h"
#include "host/base/text.h"
#include "host/base/text_width.h"
#include "host/model/model_io.h"
#include "host/photos/split.h"
#include "host/report/report.h"
#include "host/train/config.h"
#include "host/train/evaluate.h"
#include "host/train/init_model.h"
#include "host/train/training.h"
#include "inputs.h"
#include "tools/common/cli.h"
#include "tv/int8/q8_model.h"
#include "tvquant.h"

using nlohmann::json;

using tvh::fmt;
using tvh::grouped;
using tvh::pct;

namespace {

// The command line of `tvquant prune MODEL DATASET`.
struct PruneArgs {
  std::string model, dataset, output, preset;
  double ratio = 0.2;
  int epochs = -1, threads = 0;  // epochs -1: kFinetuneShare of the recipe's
  uint64_t seed = 1;
  bool as_json = false, quiet = false;
};

// Every option of tvquant prune, bound to a.
void define_prune_options(CLI::App& app, PruneArgs& a) {
  app.name("tvquant prune");
  app.add_option("model", a.model, "Float model (.tvb)")->required();
  app.add_option("dataset", a.dataset, "Dataset to fine-tune and evaluate on (folder or .zip)")->required();
  app.add_option("--ratio", a.ratio, "Fraction of the conv channels to remove (default 0.2)")
      ->check(tvcli::real(0.0, 0.95));
  app.add_option("-o,--output", a.output, "Write the pruned (and fine-tuned) float model here")->required();
  app.add_option("--epochs", a.epochs,
                 "Fine-tuning epochs (default: half the recipe's for this dataset, at least 5; 0 = no fine-tuning)")
      ->check(tvcli::whole(0, 100000));
  app.add_option("--preset", a.preset,
                 "Training recipe for fine-tuning (default: the model's own, from its provenance preset= line)")
      ->check(tvcli::preset_choice());
  app.add_option("--seed", a.seed, "Seed for shuffling and augmentation while fine-tuning (default 1)")
      ->check(tvcli::whole(0, UINT64_MAX));
  app.add_option("--threads", a.threads, "Threads (default: all cores; results are identical for any count)")
      ->check(tvcli::whole(1, 256));
  app.add_flag("--json", a.as_json, "Print one JSON object with the results on stdout (the table goes to stderr)");
  app.add_flag("-q,--quiet", a.quiet, "Only errors on stderr");
}

// Parses the command line into a: the exit code when parsing ends the run (help, a usage error), else -1.
int parse_options(int argc, char** argv, PruneArgs& a) {
  CLI::App app{
      "tvquant prune: remove the least important conv channels (L1 norm of each filter), rebuild the smaller model "
      "and\n"
      "fine-tune it for a few epochs at a tenth of the recipe's learning rate.\n"
      "  tvquant prune model.tvb photos/ --ratio 0.2 -o pruned.tvb"};
  define_prune_options(app, a);
  if (const int rc = tvcli::parse(app, argc, argv, "tvquant prune"); rc >= 0) return rc;
  if (a.threads == 0) a.threads = (int)std::max(1u, std::thread::hardware_concurrency());
  return -1;
}

// Validates the output before anything is computed; returns the float model, and settles the preset
// (the model's own when --preset is not given).
tvh::LoadedModel check_files_and_load(PruneArgs& a) {
  tvh::check_output_extension("-o", a.output, {".tvb"}, "a TinyVision model", "name it PRUNED.tvb");
  const std::vector<tvh::NamedPath> inputs = {{"the model", a.model}, {"the dataset", a.dataset}};
  tvh::check_output({"-o", a.output}, inputs);
  tvh::LoadedModel m = tvquant::load_float_model(a.model, tvh::Tasks::Any);
  // Pruning fine-tunes on class folders with the classifier's loss: a detector's grid is not that.
  if (tvh::is_detector(m))
    throw tvh::Error(a.model +
                     " is a detector (a grid of objects), and pruning fine-tunes classifiers on class folders; "
                     "quantize it without pruning: tvquant " +
                     tvh::shell_word(a.model) + " --calib DETECTION_DATASET -o MODEL.q8.tvb.");
  tvh::check_output({"-o", a.output}, inputs, tvh::blob_bytes_estimate(*m.plan));
  if (a.preset.empty()) a.preset = tvh::provenance_value(m.provenance, "preset");
  if (a.preset.empty())
    throw tvh::Error(a.model + " does not say which preset trained it (no preset= provenance line); give --preset.");
  return m;
}

// Fits the preset's recipe to this model's input and this dataset (shift, epochs and batch follow them
// as in tvtrain), not the one for 64x64 photos.
void fit_recipe_to_data(const PruneArgs& a, const tv::ModelPlan& plan, const tvh::Dataset& ds, tvh::TrainSetup* setup) {
  tv::DataShape data;
  data.height = plan.input.h;
  data.width = plan.input.w;
  data.channels = plan.input.c;
  data.images = (long)ds.size();
  tv::preset_recipe_for(a.preset.c_str(), data, &setup->recipe);
}

// The model, the dataset, the recipe fitted to both and the split fine-tuning and accuracy use.
struct PruneInputs {
  tvh::LoadedModel model;
  tvh::TrainSetup setup;
  tvh::Dataset ds;
  tvh::Split split;
};

PruneInputs load_inputs(PruneArgs& a, const tvcli::StderrLog& log) {
  PruneInputs in;
  in.model = check_files_and_load(a);
  in.setup = tvh::preset_setup(a.preset);
  in.ds = tvquant::load_for_model(a.dataset, in.model, a.threads, {{"-o", a.output}});
  for (const auto& w : in.ds.warnings) log("warning: " + w);
  fit_recipe_to_data(a, *in.model.plan, in.ds, &in.setup);
  in.split = in.setup.split == "fraction" ? tvh::fraction_split(in.ds, in.setup.val_fraction, a.seed)
                                          : tvh::reference_split(in.ds, in.setup.recipe.val_last_n);
  if (in.split.val.empty())
    throw tvh::Error(a.dataset + ": the validation split is empty; nothing to measure accuracy on.");
  return in;
}

// One row of the table: a model and its accuracy.
struct Row {
  std::string stage;
  int channels;
  size_t params, bytes_float, bytes_int8;
  tvh::EvalResult val, all;  // the validation split, and every image (mostly training images)
};

Row row_of(const std::string& stage, const tv::ModelPlan& p, int channels, const float* weights, const tvh::Dataset& ds,
           const tvh::Split& split) {
  return Row{stage,
             channels,
             p.param_count,
             p.param_count * 4,
             tv::q8_memory(p).weight_bytes,  // the int8 weight bytes tvquant and the header report
             tvh::evaluate_float(p, weights, ds, split.val),
             tvh::evaluate_float(p, weights, ds, tvh::all_indices(ds))};
}

void log_removed_channels(const tvh::PruneResult& pr, const tvcli::StderrLog& log) {
  for (const auto& l : pr.layers) {
    std::string removed;
    for (int c : l.removed) removed += (removed.empty() ? "" : ",") + std::to_string(c);
    log("layer " + std::to_string(l.index) + " (conv2d): " + std::to_string(l.before) + " -> " +
        std::to_string(l.after) + " channels, removed [" + removed + "] (lowest L1 norm)");
  }
}

// The fine-tuning recipe: the preset's, for --epochs at a tenth of its learning rate, no warm-up.
tv::TrainRecipe finetune_recipe(const PruneArgs& a, const tvh::TrainSetup& setup) {
  tv::TrainRecipe recipe = setup.recipe;
  if (a.epochs > 0) {
    recipe.epochs = a.epochs;
    recipe.opt.lr /= 10.f;
    recipe.warmup_epochs = 0;
  }
  return recipe;
}

// Fine-tunes the pruned model from its pruned weights; returns the trained weights.
std::vector<float> finetune(const PruneArgs& a, const tv::ModelPlan& small, const tv::TrainRecipe& recipe,
                            const tvh::PruneResult& pr, const tvh::Dataset& ds, const tvh::Split& split,
                            const tvcli::StderrLog& log) {
  tvh::TrainRequest req = tvh::train_request(small, recipe, ds, split, a.seed, a.threads);
  req.init = &pr.params;
  tvh::Progress progress(!a.quiet);
  const int epochs = a.epochs;
  req.on_batch = [&](int epoch, int done, int total) { progress.update(epoch, epochs, done, total); };
  req.on_epoch = [&](const tvh::EpochRecord& e) {
    progress.clear();
    log("fine-tune epoch " + std::to_string(e.epoch) + "/" + std::to_string(epochs) + "  loss " +
        fmt("%.4f", e.train_loss) + "  val acc " + fmt("%.1f", 100 * e.val_acc) + " %  lr " + fmt("%.2e", e.lr));
  };
  log("fine-tuning " + std::to_string(epochs) + " epochs with the " + a.preset + " recipe at lr " +
      fmt("%.2e", recipe.opt.lr) + " on " + std::to_string(split.train.size()) + " images");
  tvh::TrainResult tr = tvh::train_model(req);
  progress.clear();
  return tr.params;
}

std::string provenance(const PruneArgs& a, const tvh::PruneResult& pr, const std::vector<Row>& rows) {
  std::ostringstream prov;
  prov << "tool=tvquant prune " << TV_VERSION << "\npreset=" << a.preset << "\nsource=" << a.model
       << "\ndataset=" << a.dataset << "\nratio=" << a.ratio << "\nconv_channels=" << pr.channels_before << "->"
       << pr.channels_after << "\nfinetune_epochs=" << a.epochs << "\nseed=" << a.seed
       << "\nval_accuracy=" << fmt("%.4f", rows.back().val.accuracy()) << "\n";
  return prov.str();
}

// The table of the original, pruned and fine-tuned models.
std::string table_text(const PruneArgs& a, const tvh::PruneResult& pr, const std::vector<Row>& rows,
                       const tvh::Dataset& ds, const tvh::Split& split) {
  std::string table = "pruning " + a.model + ": " + std::to_string(pr.channels_before - pr.channels_after) + " of " +
                      std::to_string(pr.channels_before) + " conv channels removed (" +
                      fmt("%.1f", 100.0 * (pr.channels_before - pr.channels_after) / pr.channels_before) +
                      " %); accuracy on the validation split (" + std::to_string(split.val.size()) +
                      " images) and on all " + std::to_string(ds.size()) + " images\n";
  std::vector<std::vector<std::string>> cells = {
      {"model", "channels", "parameters", "float bytes", "int8 bytes", "val accuracy", "all images"}};
  for (const Row& r : rows)
    cells.push_back({r.stage, std::to_string(r.channels), grouped(r.params), grouped(r.bytes_float),
                     grouped(r.bytes_int8), pct(r.val.accuracy()), pct(r.all.accuracy())});
  return table + tvh::format_table(cells, "l");
}

// The --json object.
json result_json(const PruneArgs& a, const tvh::PruneResult& pr, const std::vector<Row>& rows,
                 const tv::TrainRecipe& recipe) {
  json jrows = json::array();
  for (const Row& r : rows)
    jrows.push_back({{"stage", r.stage},
                     {"conv_channels", r.channels},
                     {"params", r.params},
                     {"float_bytes", r.bytes_float},
                     {"int8_bytes", r.bytes_int8},
                     {"val_accuracy", r.val.accuracy()},
                     {"val_accuracy_interval", tvh::interval_json(r.val.correct, r.val.total)},
                     {"val_correct", r.val.correct},
                     {"val_images", r.val.total},
                     {"all_accuracy", r.all.accuracy()},
                     {"all_images", r.all.total}});
  json jl = json::array();
  for (const auto& l : pr.layers)
    jl.push_back({{"index", l.index}, {"before", l.before}, {"after", l.after}, {"removed", l.removed}, {"l1", l.l1}});
  return {{"model", a.model},
          {"output", a.output},
          {"preset", a.preset},
          {"ratio", a.ratio},
          {"conv_channels_before", pr.channels_before},
          {"conv_channels_after", pr.channels_after},
          {"removed_fraction", (double)(pr.channels_before - pr.channels_after) / pr.channels_before},
          {"finetune_epochs", a.epochs},
          {"finetune_lr", a.epochs > 0 ? recipe.opt.lr : 0.f},
          {"rows", jrows},
          {"layers", jl},
          {"accuracy_before", rows[0].val.accuracy()},
          {"accuracy_pruned", rows[1].val.accuracy()},
          {"accuracy_finetuned", rows.back().val.accuracy()}};
}

}  // namespace

int tvquant_prune_main(int argc, char** argv) {
  PruneArgs a;
  if (const int rc = parse_options(argc, argv, a); rc >= 0) return rc;
  const tvcli::StderrLog log{a.quiet};
  PruneInputs in = load_inputs(a, log);
  // A model started from the backbone uses all its channels: 5 epochs left it 40 points down on webmcu-b
  // where half the recipe's (30) recovered it (docs/quantization.md).
  if (a.epochs < 0) a.epochs = std::max(5, in.setup.recipe.epochs / 2);
  const tvh::LoadedModel& m = in.model;
  const tvh::Dataset& ds = in.ds;
  const tvh::Split& split = in.split;
  const tv::ModelPlan& plan = *m.plan;
  tvh::PruneResult pr = tvh::prune_model(plan, m.params.data(), a.ratio);
  auto small = tvh::plan_or_throw(pr.desc, "the pruned model");
  std::vector<Row> rows;
  rows.push_back(row_of("original", plan, pr.channels_before, m.params.data(), ds, split));
  rows.push_back(row_of("pruned", *small, pr.channels_after, pr.params.data(), ds, split));
  log_removed_channels(pr, log);
  std::vector<float> final_params = pr.params;
  const tv::TrainRecipe recipe = finetune_recipe(a, in.setup);
  if (a.epochs > 0) {
    final_params = finetune(a, *small, recipe, pr, ds, split, log);
    rows.push_back(row_of("fine-tuned", *small, pr.channels_after, final_params.data(), ds, split));
  }
  tvh::save_float_model(a.output, *small, final_params.data(), m.labels, provenance(a, pr, rows));

  const std::string table = table_text(a, pr, rows, ds, split);
  if (a.as_json) {
    if (!a.quiet) std::fprintf(stderr, "%s", table.c_str());
    tvh::write_stdout(tvh::json_text(result_json(a, pr, rows, recipe)));
  } else {
    tvh::write_stdout(table);
  }
  log("wrote " + a.output);
  log("next: tvquant " + tvh::shell_word(a.output) + " --calib " + tvh::shell_word(a.dataset) + " -o " +
      tvh::shell_word(tvh::int8_name_for(a.output)) + "   (int8 for the ESP32-S3)");
  return 0;
}
