#include "tvtrain.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <sstream>
#include <thread>

#include "host/base/error.h"
#include "host/base/files.h"
#include "host/base/text.h"
#include "host/model/model_io.h"
#include "host/photos/dataset.h"
#include "host/photos/detection_dataset.h"
#include "host/photos/layout_check.h"
#include "host/photos/procedural_dataset.h"
#include "host/report/report.h"
#include "host/train/config.h"
#include "run.h"
#include "tv/backbones/builtin_backbones.h"
#include "tv/train/train_session.h"
#include "update_options.h"

using tvh::fmt;
using tvh::join;
using tvtrain::Args;
using tvtrain::Run;

// Where training starts without --start, and what a backbone start updates without --update
// (measured in docs/few-shot.md).
constexpr const char* kDefaultStart = "auto";
constexpr const char* kBackboneUpdate = "full";

// tvtrain_main's steps: the options, the usage and output checks, the setup, the starting model and
// the dataset; then one of the three modes (run.h).
namespace {

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

// --augment: "none", or a comma list of flip, shift[=PIXELS], brightness[=FRACTION]; what is not listed
// is off. A listed kind without a value keeps the recipe's amount (or 4 pixels / 0.2 when it had none).
void apply_augment(const std::string& text, tv::TrainRecipe* r) {
  const int shift = r->aug_shift;
  const float brightness = r->aug_brightness;
  r->aug_flip = false;
  r->aug_shift = 0;
  r->aug_brightness = 0.f;
  if (text == "none") return;
  for (const std::string& item : split_list(text)) {
    if (item == "none")
      throw tvh::UsageError("--augment " + text +
                            ": none turns augmentation off and cannot be combined with other kinds; give either none "
                            "or a list such as flip,shift.");
    const size_t eq = item.find('=');
    const std::string name = item.substr(0, eq);
    const std::string value = eq == std::string::npos ? std::string() : item.substr(eq + 1);
    char* end = nullptr;
    const double v = value.empty() ? 0.0 : std::strtod(value.c_str(), &end);
    if (!value.empty() && (end == value.c_str() || *end != '\0'))
      throw tvh::UsageError("--augment " + text + ": '" + value + "' is not a number.");
    if (name == "flip" && value.empty()) {
      r->aug_flip = true;
    } else if (name == "shift") {
      if (!value.empty() && (v < 1 || v > 64 || v != (int)v))
        throw tvh::UsageError("--augment shift=" + value + ": the shift must be a whole number of pixels, 1..64.");
      r->aug_shift = value.empty() ? (shift > 0 ? shift : 4) : (int)v;
    } else if (name == "brightness") {
      if (!value.empty() && !(v > 0 && v <= 0.9))
        throw tvh::UsageError("--augment brightness=" + value +
                              ": the brightness change must be above 0, at most 0.9.");
      r->aug_brightness = value.empty() ? (brightness > 0 ? brightness : 0.2f) : (float)v;
    } else {
      throw tvh::UsageError("--augment " + text + ": '" + item +
                            "' is not one of none, flip, shift[=PIXELS], brightness[=FRACTION] (e.g. --augment "
                            "shift,brightness for pictures whose left and right differ).");
    }
  }
}

// The smallest square input (side) with `channels` channels that the model accepts, 0 when none up to 1024.
int smallest_input_side(tv::ModelDesc desc, int channels) {
  for (int side = 1; side <= 1024; ++side) {
    tv::set_input(&desc, side, side, channels);
    tv::ModelPlan plan;
    if (tv::plan_model(desc, &plan).ok()) return side;
  }
  return 0;
}

// A file written beside the model: `--NAME FILE` and its `--no-NAME` flag.
void add_side_file(CLI::App& app, const std::string& option, std::string& path, const std::string& help, bool& off,
                   const std::string& off_help) {
  app.add_option(option, path, help);
  app.add_flag("--no-" + option.substr(2), off, off_help);
}

// tvtrain's options, into `a`.
void define_options(CLI::App& app, Args& a) {
  app.set_version_flag("--version", std::string("tvtrain ") + TV_VERSION);
  app.add_option("dataset", a.dataset,
                 "Dataset folder or .zip (one sub-folder per class), or a pretraining set drawn in memory: "
                 "procedural:FAMILY[,classes=N][,images=M][,seed=S] (FAMILY fractal, leaves or mixed; the model is "
                 "a backbone, docs/few-shot.md)")
      ->required();
  app.add_option("-o,--output", a.output, "Write the trained model (.tvb) here");
  app.add_option("--preset", a.preset, "Model and recipe: tinyvision (default, recommended) or webmcu (the reference)")
      ->check(tvcli::preset_choice());
  app.add_option("--config", a.config, "JSON model/training config (format: docs/config.md)");
  app.add_option("--input", a.input, "Model input HxWxC, e.g. 28x28x1 or 96x96x3 (every layer follows)");
  app.add_option("--epochs", a.epochs, "Override the recipe's epochs (0 with --init: only add new classes)")
      ->check(tvcli::whole(0, 100000));
  app.add_option("--batch", a.batch, "Override the recipe's batch size")->check(tvcli::whole(1, 4096));
  app.add_option("--lr", a.lr, "Override the recipe's learning rate")->check(tvcli::real(1e-9, 10.0));
  app.add_option("--lanes", a.lanes, "Gradient lanes (fixes the summation order; threads never change results)")
      ->check(tvcli::whole(1, 8));
  app.add_option("--threshold", a.threshold,
                 "Detection datasets: the probability a cell's class must reach to be an object, in (0, 1] (default "
                 "0.5); stored in the detector, or with --eval the one to evaluate at")
      ->check(CLI::Range(1e-6, 1.0));
  app.add_option("--seed", a.seed, "Seed for initialization, shuffling, splits and augmentation (default 1)")
      ->check(tvcli::whole(0, UINT64_MAX));
  app.add_option("--threads", a.threads,
                 "Threads for decoding and training (default: all cores; results are identical for any count)")
      ->check(tvcli::whole(1, 256));
  app.add_option("--classes", a.classes, "Explicit class list a,b,c (default: sorted folder names)");
  app.add_option("--split", a.split, "Validation split: reference (last N per class, default) or fraction")
      ->check(tvcli::one_of({"reference", "fraction"}));
  app.add_option("--val-last", a.val_last, "N for the reference split (default 3)")->check(tvcli::whole(0, 100000));
  app.add_option("--val-fraction", a.val_fraction, "Fraction for --split fraction (default 0.2)")
      ->check(tvcli::real(0.0, 0.95));
  app.add_option("--kfold", a.kfold, "K-fold cross-validation: report mean and sd of validation accuracy")
      ->check(tvcli::whole(2, 1000));
  app.add_option("--init", a.init, "Start from a model (.tvb, or the reference's raw myWeights.bin)");
  app.add_flag("--eval", a.eval, "With --init: evaluate the model on every image, no training");
  app.add_option("--rename", a.rename,
                 "With --init: OLD=NEW[,OLD=NEW...] calls the model's class OLD NEW (a class folder renamed on the "
                 "PC, such as the board's automatic class7); --epochs 0 only renames");
  app.add_option("--update", a.update,
                 "What trains: full (every layer), head (the last layer with weights, on features computed once "
                 "per photo) or sparse[=K] (the last K layers with weights); default full, with --init " +
                     std::string(tvtrain::kInitDefaultUpdate) + " (docs/on-device-learning.md)");
  app.add_option("--start", a.start,
                 "Where training starts: backbone (the weights pretrained on drawn images, a new head imprinted from "
                 "the photos), scratch (He-init) or auto (backbone for few photos per class; the default); "
                 "docs/few-shot.md")
      ->check(tvcli::one_of({"backbone", "scratch", "auto"}));
  app.add_option("--backbone", a.backbone,
                 "With --start backbone or auto: this backbone .tvb (tvtrain procedural:... writes one) instead of "
                 "the built-in one");
  app.add_option("--distill", a.distill,
                 "With --init adding classes: on (default) keeps the starting model's soft targets on the old "
                 "classes' photos while training (distillation), off trains on the labels alone")
      ->check(tvcli::one_of({"on", "off"}));
  app.add_option("--raw-out", a.raw_out, "Also write the reference firmware's raw myWeights.bin (webmcu preset)");
  app.add_flag("--json", a.json, "Print one JSON object with the results on stdout");
  add_side_file(app, "--curve", a.curve,
                "Write the loss/accuracy curve (SVG) here; default MODEL.curve.svg next to -o MODEL.tvb, which "
                "replaces only a curve an earlier run wrote (any other file of that name is refused)",
                a.no_curve, "Do not write the loss/accuracy curve");
  add_side_file(app, "--confusion", a.confusion,
                "Write the validation confusion matrix as an SVG picture here; default MODEL.confusion.svg next to -o "
                "MODEL.tvb (same replacement rule as the curve); with --eval only when given",
                a.no_confusion, "Do not write the confusion matrix picture");
  add_side_file(app, "--report", a.report,
                "Write the HTML report (photos, mistakes, likely label mistakes with --kfold) here; default "
                "MODEL.report.html next to -o MODEL.tvb (same replacement rule as the curve); with --eval and "
                "--kfold only when given",
                a.no_report, "Do not write the HTML report");
  app.add_option("--augment", a.augment,
                 "Training augmentation: none, or a list of flip, shift[=PIXELS], brightness[=FRACTION] "
                 "(default: the recipe's; flips break direction-sensitive classes such as arrows, digits, text)");
  app.add_flag("-q,--quiet", a.quiet, "Only errors on stderr");
}

// The usage errors: flags that contradict each other or lack what they go with.
void check_usage(const Args& a) {
  if (a.eval && a.init.empty()) throw tvh::UsageError("--eval needs --init MODEL (the model to evaluate).");
  if (!a.rename.empty() && a.init.empty())
    throw tvh::UsageError("--rename needs --init MODEL (the model whose classes it renames).");
  if (a.epochs_given && a.epochs == 0 && a.init.empty() && a.start != "backbone")
    throw tvh::UsageError(
        "--epochs 0 only adds classes by imprinting, to an --init model or with --start backbone; give at least 1 "
        "epoch.");
  if (!a.eval && a.kfold == 0 && a.output.empty())
    throw tvh::UsageError("give -o MODEL.tvb (where to write the trained model).");
  if (a.kfold && !a.output.empty())
    throw tvh::UsageError("--kfold only evaluates the recipe and writes no model; drop -o.");
  if (a.kfold && a.eval) throw tvh::UsageError("--kfold and --eval cannot be combined.");
  if (a.eval && !a.output.empty()) throw tvh::UsageError("--eval writes no model; drop -o.");
  if (!a.start.empty() && !a.init.empty())
    throw tvh::UsageError("--start goes with training a new model; --init " + a.init + " already starts from a model.");
  if (!a.backbone.empty() && (!a.init.empty() || a.start == "scratch"))
    throw tvh::UsageError("--backbone goes with --start backbone or auto.");
  if (!a.curve.empty() && a.no_curve) throw tvh::UsageError("--curve and --no-curve contradict each other.");
  if (!a.confusion.empty() && a.no_confusion)
    throw tvh::UsageError("--confusion and --no-confusion contradict each other.");
  if (!a.confusion.empty() && a.output.empty() && !a.eval)
    throw tvh::UsageError("--confusion goes with -o MODEL.tvb (training) or --eval.");
  if (!a.report.empty() && a.no_report) throw tvh::UsageError("--report and --no-report contradict each other.");
  if (a.output.empty() && (!a.curve.empty() || !a.raw_out.empty()))
    throw tvh::UsageError(std::string(a.curve.empty() ? "--raw-out" : "--curve") +
                          " goes with -o MODEL.tvb (training).");
}

// Every output checked before the long work (decoding, training): right kind, never an input, a
// writable folder. The curve named by nobody (MODEL.curve.svg) replaces only a curve we wrote.
tvtrain::Outputs check_outputs_first(const Args& a, std::vector<tvh::NamedPath>* inputs_out) {
  const std::string curve = a.no_curve || a.output.empty() ? std::string()
                            : a.curve.empty()              ? tvh::curve_path_for(a.output)
                                                           : a.curve;
  const std::string confusion = a.no_confusion         ? std::string()
                                : !a.confusion.empty() ? a.confusion
                                : a.output.empty()     ? std::string()
                                                       : tvh::confusion_path_for(a.output);
  const std::string report = a.no_report         ? std::string()
                             : !a.report.empty() ? a.report
                             : a.output.empty()  ? std::string()
                                                 : tvh::report_path_for(a.output);
  const std::vector<tvh::NamedPath> inputs = {
      {"the dataset", a.dataset}, {"--init", a.init}, {"--config", a.config}, {"--backbone", a.backbone}};
  auto others_than = [&](const std::string& role) {
    std::vector<tvh::NamedPath> v = inputs;
    if (role != "-o") v.push_back({"-o", a.output});
    if (role != "--raw-out") v.push_back({"--raw-out", a.raw_out});
    if (role != "--curve") v.push_back({"the curve", curve});
    if (role != "--confusion") v.push_back({"the confusion picture", confusion});
    if (role != "--report") v.push_back({"the report", report});
    return v;
  };
  // An output named on the command line: the right extension, not one of the other files.
  auto check_named = [&](const std::string& flag, const std::string& path, const std::string& ext,
                         const std::string& what, const std::string& hint) {
    if (path.empty()) return false;
    tvh::check_output_extension(flag, path, {ext}, what, hint);
    tvh::check_output({flag, path}, others_than(flag));
    return true;
  };
  check_named("-o", a.output, ".tvb", "a TinyVision model", "name it MODEL.tvb");
  check_named("--raw-out", a.raw_out, ".bin", "a raw myWeights.bin", "name it myWeights.bin");
  if (!check_named("--curve", a.curve, ".svg", "an SVG picture", "name it CURVE.svg") && !curve.empty())
    tvh::check_side_output({"the training curve", curve}, others_than("--curve"),
                           "give --curve PATH to name it or --no-curve to skip it");
  if (!check_named("--confusion", a.confusion, ".svg", "an SVG picture", "name it CONFUSION.svg") && !confusion.empty())
    tvh::check_side_output({"the confusion picture", confusion}, others_than("--confusion"),
                           "give --confusion PATH to name it or --no-confusion to skip it");
  if (!check_named("--report", a.report, ".html", "an HTML page", "name it REPORT.html") && !report.empty())
    tvh::check_side_output({"the report", report}, others_than("--report"),
                           "give --report PATH to name it or --no-report to skip it");
  try {  // room for the largest report (the page is capped at kReportMaxBytes)
    if (!report.empty()) tvh::check_output({"the report", report}, others_than("--report"), tvh::kReportMaxBytes);
  } catch (const tvh::Error& e) {
    throw tvh::Error(std::string(e.what()) + " (--no-report skips the report)");
  }
  *inputs_out = inputs;
  return {curve, confusion, report};
}

// The command line's overrides of the recipe and the split (again after a preset adapts to the data).
void apply_overrides(const Args& a, tvh::TrainSetup* setup) {
  if (a.epochs_given) setup->recipe.epochs = a.epochs;
  if (a.batch) setup->recipe.batch_size = a.batch;
  if (a.lr > 0) setup->recipe.opt.lr = (float)a.lr;
  if (a.lanes) setup->recipe.opt.lanes = a.lanes;
  if (a.val_last >= 0) setup->recipe.val_last_n = a.val_last;
  if (a.split_given) setup->split = a.split;
  if (a.val_fraction >= 0) setup->val_fraction = a.val_fraction;
  if (!a.augment.empty()) apply_augment(a.augment, &setup->recipe);
}

// The setup: preset, then config file, then command-line overrides.
tvh::TrainSetup setup_of(const Args& a) {
  tvh::TrainSetup setup = tvh::preset_setup(a.preset);
  if (!a.config.empty()) tvh::apply_config_file(a.config, &setup);
  apply_overrides(a, &setup);
  return setup;
}

// A starting model fixes the architecture and (for .tvb) the class list.
void load_init(Run& run) {
  const Args& a = run.a;
  tvh::TrainSetup& setup = run.setup;
  tvh::LoadedModel& init = run.init;
  std::vector<std::string>& classes = run.classes;
  if (!a.init.empty()) {
    if (!a.input.empty()) throw tvh::UsageError("--input cannot change the shape of an --init model (" + a.init + ").");
    tvh::RawOptions raw;
    raw.labels = classes;
    init = tvh::load_model(a.init, raw);
    if (!a.rename.empty()) tvh::rename_classes(&init.labels, a.rename, a.init);
    // It continues with the recipe it names (as the board does) unless --preset or --config says otherwise.
    if (!run.preset_given && a.config.empty()) tvtrain::continue_recipe(init, &setup);
    setup.model = init.plan->desc;
    apply_overrides(a, &setup);
    if (init.format == "tvb" && a.eval && !classes.empty() && classes != init.labels)
      throw tvh::Error("--classes " + join(classes) + " differs from " + a.init + "'s classes " + join(init.labels) +
                       ".");
  } else if (!a.input.empty()) {
    int h, w, c;
    tvh::parse_input_size(a.input, &h, &w, &c);
    tv::set_input(&setup.model, h, w, c);
  }
}

// A preset's model and recipe follow the data (depth from the input, scale from the image count); the
// command-line options still override the recipe.
void adapt_to(const Args& a, size_t images, tvh::TrainSetup* setup) {
  tv::DataShape data;
  data.height = setup->model.input.height;
  data.width = setup->model.input.width;
  data.channels = setup->model.input.channels;
  data.images = (long)images;
  tv::preset_model_for(setup->preset.c_str(), 2, data, &setup->model);
  tv::preset_recipe_for(setup->preset.c_str(), data, &setup->recipe);
  if (setup->model.task == tv::Task::Detect)
    throw tvh::Error("--preset " + setup->preset + " makes a detector, but " + a.dataset +
                     " holds class folders (one class per photo): use a classifier preset (" +
                     "tinyvision, webmcu), or give photos with labelled boxes (YOLO, COCO or Pascal VOC).");
  apply_overrides(a, setup);
}

// The plan of the setup's model; an --input too small for it names the smallest that works.
std::unique_ptr<tv::ModelPlan> plan_of(const Args& a, const tvh::TrainSetup& setup) {
  tv::ModelPlan probe;
  if (!tv::plan_model(setup.model, &probe).ok() && !a.input.empty()) {
    const int side = smallest_input_side(setup.model, setup.model.input.channels);
    const int c = setup.model.input.channels;
    try {
      tvh::plan_or_throw(setup.model, "--input " + a.input);
    } catch (const tvh::Error& e) {
      throw tvh::Error(std::string(e.what()) +
                       (side ? " The " + setup.preset + " model needs an input of at least " + std::to_string(side) +
                                   "x" + std::to_string(side) + ": try --input " + std::to_string(side) + "x" +
                                   std::to_string(side) + "x" + std::to_string(c) + " or larger."
                             : " No input size up to 1024x1024 works for this model: check the --config layers."));
    }
  }
  return tvh::plan_or_throw(setup.model, a.input.empty() ? "the model" : "--input " + a.input);
}

// Refuses a dataset whose decoded images, training and decoding would not fit in memory (with the
// figures), and gives each decoding thread its share of what is left.
void check_memory(const Run& run, const tvh::DatasetListing& listing, tvh::DatasetOptions* dopt_out) {
  const Args& a = run.a;
  const tv::ModelPlan* plan = run.plan.get();
  const tvh::TrainSetup& setup = run.setup;
  tvh::DatasetOptions& dopt = *dopt_out;
  const uint64_t cache = listing.cache_bytes(dopt);
  // Training: the session's memory with every listed image on both sides of the split (an upper
  // bound: the split is not known yet), and the final evaluation's.
  const int listed = (int)std::min<size_t>(listing.images.size(), INT32_MAX);
  const uint64_t arena = a.eval ? tv::inference_memory(*plan).total_bytes
                                : tv::session_memory(*plan, setup.recipe, listed, listed).total_bytes +
                                      tv::inference_memory(*plan).total_bytes;
  // Each decoding thread holds one file and its decoded picture: about 48 MB for a 12-megapixel photo.
  const uint64_t decoding = (uint64_t)std::min<size_t>((size_t)a.threads, listing.images.size()) * (48ull << 20);
  const uint64_t need = cache + arena + decoding, avail = tvh::available_memory_bytes();
  if (avail && need > avail) {
    throw tvh::Error(
        "not enough memory: " + std::to_string(listing.images.size()) + " images at " + std::to_string(dopt.height) +
        "x" + std::to_string(dopt.width) + "x" + std::to_string(dopt.channels) + " need " + tvh::human_bytes(cache) +
        " decoded, plus " + tvh::human_bytes(arena) + " for the model's " + (a.eval ? "inference" : "training") +
        " and " + tvh::human_bytes(decoding) + " for decoding, " + tvh::human_bytes(need) + " in all, but only " +
        tvh::human_bytes(avail) + " is available: choose a smaller --input, fewer images or fewer --threads.");
  }
  // What is left is each decoding thread's share: an image that needs more (a 40-megapixel PNG) is
  // skipped with the figures instead of exhausting memory.
  if (avail && a.threads > 0) dopt.decode_budget_bytes = (avail - cache - arena) / (uint64_t)a.threads;
}

// Decodes the listed images (with a progress line), says what was skipped, and checks the classes
// against the starting model's.
void decode(Run& run, const tvh::DatasetListing& listing, tvh::DatasetOptions dopt) {
  const Args& a = run.a;
  tvh::LoadedModel& init = run.init;
  const auto& log = run.log;
  tvh::Progress decode_progress(!a.quiet);
  dopt.on_progress = [&](size_t done, size_t total) { decode_progress.update_items("decoding images", done, total); };
  run.ds = tvh::decode_dataset(listing, dopt);
  const tvh::Dataset& ds = run.ds;
  decode_progress.clear();
  for (const auto& w : ds.warnings) log("warning: " + w);
  if (!ds.skipped.empty()) log(tvh::skipped_text(ds.skipped));
  log("dataset " + a.dataset + ": " + std::to_string(ds.size()) + " images, classes " + join(ds.classes) +
      ", decoded in " + fmt("%.3f", ds.decode_seconds) + " s on " + std::to_string(ds.decode_threads) + " thread(s)" +
      (ds.scaled_decodes
           ? "; " + std::to_string(ds.scaled_decodes) + " larger than the board decodes took the fast scaled-DCT path"
           : std::string()) +
      (ds.exif_rotated ? "; " + std::to_string(ds.exif_rotated) + " turned upright by EXIF" : std::string()));
  if (!init.plan && ds.classes.size() < 2) throw tvh::Error(a.dataset + ": needs at least two classes with images.");
  if (init.plan && init.format == "tvb" && a.eval && ds.classes != init.labels)
    throw tvh::Error(a.dataset + " has classes " + join(ds.classes) + " but " + a.init + " was trained on " +
                     join(init.labels) + ".");
  // Training from a .tvb: its classes by name, the dataset's others appended (imprinted once split).
  if (init.plan && init.format == "tvb" && !a.eval)
    run.match = tvtrain::match_init_classes(&run.ds, init, a.init, &run.plan, log);
  if (init.plan && run.match.model_classes == 0 && (int)ds.classes.size() != init.plan->desc.num_classes)
    throw tvh::Error(a.dataset + " has " + std::to_string(ds.classes.size()) + " classes " + join(ds.classes) +
                     " but " + a.init + " has " + std::to_string(init.plan->desc.num_classes) + ".");
  if (init.plan && init.format != "tvb") init.labels = ds.classes;
}

// A pretraining set drawn in memory (procedural:...): the preset's network for a small dataset (the
// backbone serves few photos), the recipe for the images drawn.
void draw_pretraining_set(Run& run) {
  const Args& a = run.a;
  tvh::TrainSetup& setup = run.setup;
  if (run.init.plan)
    throw tvh::UsageError("a pretraining set (" + a.dataset + ") trains a backbone from scratch; drop --init.");
  if (!run.classes.empty()) throw tvh::UsageError("--classes does not apply to a pretraining set (" + a.dataset + ").");
  tvh::ProceduralSpec& spec = run.pretraining;
  spec.height = setup.model.input.height;
  spec.width = setup.model.input.width;
  spec.channels = setup.model.input.channels;
  spec.threads = a.threads;
  run.ds = tvh::procedural_dataset(spec);
  if (setup.adapt) {
    adapt_to(a, 0, &setup);
    tv::DataShape data;
    data.height = spec.height;
    data.width = spec.width;
    data.channels = spec.channels;
    data.images = (long)run.ds.size();
    tv::preset_recipe_for(setup.preset.c_str(), data, &setup.recipe);
    apply_overrides(a, &setup);
  }
  setup.model.num_classes = (uint16_t)run.ds.classes.size();
  run.plan = plan_of(a, setup);
  run.log("pretraining set " + tvh::procedural_source_text(spec) + ": " + std::to_string(run.ds.size()) +
          " images drawn in memory at " + std::to_string(spec.height) + "x" + std::to_string(spec.width) + "x" +
          std::to_string(spec.channels) + " on " + std::to_string(run.ds.decode_threads) + " thread(s)");
}

// Lists the dataset, sizes the model to it, checks the memory, decodes, and plans the final model.
void load_dataset(Run& run) {
  const Args& a = run.a;
  tvh::TrainSetup& setup = run.setup;
  const auto& log = run.log;
  if (run.is_pretraining) return draw_pretraining_set(run);
  tvh::DatasetOptions dopt;
  dopt.path = a.dataset;
  dopt.classes = run.classes;
  dopt.height = setup.model.input.height;
  dopt.width = setup.model.input.width;
  dopt.channels = setup.model.input.channels;
  dopt.order = setup.model.input.order;
  dopt.threads = a.threads;
  dopt.outputs = {{"-o", a.output},
                  {"--raw-out", a.raw_out},
                  {"the curve", run.out.curve},
                  {"the confusion picture", run.out.confusion},
                  {"the report", run.out.report}};
  // List first, then know the model and the memory it all takes, then decode.
  tvh::DatasetListing listing = tvh::list_dataset(dopt);
  // The likely mistakes (the parent of a dataset, a photo library's folders as classes) before decoding.
  for (const auto& w : tvh::check_layout(listing, {!run.classes.empty(), !run.init.plan})) log("warning: " + w);
  // Sized first from the listed files (for the memory estimate: an upper bound), then again from the
  // images that decoded.
  const bool adapt = setup.adapt && !run.init.plan;
  if (adapt) adapt_to(a, listing.images.size(), &setup);
  if (!run.init.plan) setup.model.num_classes = (uint16_t)std::max<size_t>(2, listing.classes.size());
  run.plan = run.init.plan ? std::make_unique<tv::ModelPlan>(*run.init.plan) : plan_of(a, setup);
  check_memory(run, listing, &dopt);
  decode(run, listing, dopt);
  const tvh::Dataset& ds = run.ds;
  const bool resized = adapt && ds.size() != listing.images.size();  // some files were no images
  if (resized) adapt_to(a, ds.size(), &setup);
  if (run.match.model_classes) setup.model = run.plan->desc;  // the starting model, grown by new classes
  if (resized || setup.model.num_classes != ds.classes.size()) {
    setup.model.num_classes = (uint16_t)ds.classes.size();
    run.plan = tvh::plan_or_throw(setup.model, a.input.empty() ? "the model" : "--input " + a.input);
  }
}

// Where training starts (--start): scratch, or the backbone when one fits the model and (auto) the
// core's rule says it helps with this many photos per class; said in the log.
void choose_start(Run& run) {
  const Args& a = run.a;
  tv::StartMode mode = tv::StartMode::Scratch;
  if (!tv::parse_start_mode(a.start.empty() ? kDefaultStart : a.start.c_str(), &mode) || run.init.plan ||
      run.is_pretraining || a.eval || mode == tv::StartMode::Scratch)
    return;
  const bool asked = mode == tv::StartMode::Backbone;
  const std::vector<size_t> counts = run.ds.classes.empty() ? std::vector<size_t>{0} : run.ds.class_counts();
  const size_t fewest = *std::min_element(counts.begin(), counts.end());
  if (!asked && !tv::backbone_helps((int)std::min<size_t>(fewest, INT32_MAX))) {
    run.log("start: scratch (" + std::to_string(fewest) + " photos in the smallest class; the backbone helps up to " +
            std::to_string(tv::kBackboneMaxPhotosPerClass) + ")");
    return;
  }
  const tv::InputDesc& in = run.plan->desc.input;
  const tv::BuiltinBackbone* builtin = tv::builtin_backbone(in.height, in.width, in.channels);
  if (a.backbone.empty() && !builtin) {
    const std::string why = "no backbone is built in for a " + std::to_string(in.height) + "x" +
                            std::to_string(in.width) + "x" + std::to_string(in.channels) + " input";
    if (asked) throw tvh::Error(why + "; give --backbone FILE (tvtrain procedural:... makes one) or --start scratch.");
    run.log("start: scratch (" + why + ")");
    return;
  }
  run.backbone_name = a.backbone.empty() ? "built-in " + std::string(builtin->name) : a.backbone;
  run.backbone =
      a.backbone.empty()
          ? tvh::decode_model(std::vector<uint8_t>(builtin->blob, builtin->blob + builtin->size), run.backbone_name)
          : tvh::load_model(a.backbone);
  if (tvh::provenance_value(run.backbone.provenance, "role") != "backbone")
    throw tvh::Error(a.backbone +
                     " is not a backbone (its provenance has no role=backbone line): a backbone is "
                     "pretrained by tvtrain procedural:...; to continue a trained model use --init.");
  run.backbone.params = tvh::float_params_of(run.backbone, run.backbone_name);
  if (!tv::backbone_fits(*run.backbone.plan, *run.plan)) {
    const std::string why = run.backbone_name + " was pretrained for another network than this model's";
    if (asked) throw tvh::Error(why + ": give a backbone of this preset and input, or --start scratch.");
    run.log("start: scratch (" + why + ")");
    run.backbone = tvh::LoadedModel();
    return;
  }
  run.start = tv::StartMode::Backbone;
  if (a.update.empty()) run.update = tvtrain::update_option(kBackboneUpdate, true, false, a.augment);
  run.log("start: backbone " + run.backbone_name + " (a new head imprinted from the photos, then update " +
          tvtrain::update_name(run.update) + ")");
}

}  // namespace

int tvtrain_main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "classify") return tvtrain_classify(argc - 1, argv + 1);
  if (argc > 1 && std::string(argv[1]) == "detect") return tvtrain_detect(argc - 1, argv + 1);
  Run run(argc, argv);
  Args& a = run.a;
  CLI::App app{
      "tvtrain: train a small CNN on a folder of photos (one sub-folder per class) or a .zip of one.\n"
      "  Images: .jpg/.jpeg/.png at any depth below a class folder, turned upright by their EXIF orientation;\n"
      "  transparent PNG pixels are composited on white. Every file not used is named (all in --json).\n"
      "  tvtrain photos/ -o model.tvb\n"
      "  tvtrain photos/ --preset webmcu -o model.tvb --raw-out myWeights.bin\n"
      "  tvtrain photos/ --eval --init model.tvb\n"
      "  tvtrain classify model.tvb photo.jpg ...   (label and probabilities per file; tvtrain classify --help)\n"
      "  tvtrain detect det.tvb photo.jpg ...       (a detector's objects per file; tvtrain detect --help)"};
  define_options(app, a);
  if (const int rc = tvcli::parse(app, argc, argv, "tvtrain"); rc >= 0) return rc;
  a.split_given = app.count("--split") > 0;
  a.epochs_given = app.count("--epochs") > 0;
  run.preset_given = app.count("--preset") > 0;
  run.log = tvcli::StderrLog{a.quiet};
  if (a.threads == 0) a.threads = (int)std::max(1u, std::thread::hardware_concurrency());
  check_usage(a);
  run.update = tvtrain::update_option(a.update, !a.init.empty(), a.eval, a.augment);
  run.distill = tvtrain::distill_option(a.distill, !a.init.empty(), a.eval);
  run.out = check_outputs_first(a, &run.inputs);
  run.setup = setup_of(a);
  run.classes = split_list(a.classes);
  run.is_pretraining = tvh::parse_procedural_source(a.dataset, &run.pretraining);
  if (!run.is_pretraining && tvh::looks_like_detection_dataset(a.dataset))
    return tvtrain::run_detect(run, [&a](tvh::TrainSetup* setup) { apply_overrides(a, setup); });
  load_init(run);
  load_dataset(run);
  choose_start(run);
  if (a.eval) return tvtrain::run_eval(run);
  if (run.init.plan) run.init.params = tvh::float_params_of(run.init, a.init);  // int8: dequantized as the board does
  if (a.kfold) return tvtrain::run_kfold(run);
  return tvtrain::run_train(run);
}
