#include "tvtrain.h"

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "host/config.h"
#include "host/dataset.h"
#include "host/error.h"
#include "host/evaluate.h"
#include "host/files.h"
#include "host/interval.h"
#include "host/json_text.h"
#include "host/layout_check.h"
#include "host/model_io.h"
#include "host/report.h"
#include "host/split.h"
#include "host/text.h"
#include "host/training.h"
#include "recipe_options.h"
#include "run_report.h"
#include "tools/common/cli.h"
#include "tv/raw_weights.h"
#include "tv/train_session.h"
#include "update_options.h"

using nlohmann::json;

using tvh::fmt;
using tvh::join;

namespace {

struct Args {
  std::string dataset, output, preset = "tinyvision", config, input, init, raw_out, split = "reference", classes, curve,
                               augment, confusion, report, update;
  int epochs = 0, batch = 0, lanes = 0, threads = 0, kfold = 0, val_last = -1;
  double lr = 0, val_fraction = -1;
  uint64_t seed = 1;
  bool eval = false, json = false, no_curve = false, no_confusion = false, no_report = false, quiet = false;
};

// [lo, hi]: the Wilson 95 % interval of an accuracy, for --json.
json confusion_json(const std::vector<int>& cm, int k) {
  json rows = json::array();
  for (int i = 0; i < k; ++i) rows.push_back(std::vector<int>(cm.begin() + i * k, cm.begin() + (i + 1) * k));
  return rows;
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

// Per-class figures and every misclassified image of an evaluation, for --json.
json results_json(const tvh::Dataset& ds, const tvh::EvalResult& r) {
  json per_class = json::array();
  const auto m = tvh::class_metrics(r.confusion, ds.classes.size());
  for (size_t c = 0; c < m.size(); ++c) {
    per_class.push_back({{"class", ds.classes[c]},
                         {"precision", m[c].precision},
                         {"recall", m[c].recall},
                         {"f1", m[c].f1},
                         {"images", m[c].support},
                         {"predicted", m[c].predicted}});
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

// What the dataset report adds to every --json object: each unused file named, with its reason.
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

}  // namespace

int tvtrain_main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "classify") return tvtrain_classify(argc - 1, argv + 1);
  Args a;
  CLI::App app{
      "tvtrain: train a small CNN on a folder of photos (one sub-folder per class) or a .zip of one.\n"
      "  Images: .jpg/.jpeg/.png at any depth below a class folder, turned upright by their EXIF orientation;\n"
      "  transparent PNG pixels are composited on white. Every file not used is named (all in --json).\n"
      "  tvtrain photos/ -o model.tvb\n"
      "  tvtrain photos/ --preset webmcu -o model.tvb --raw-out myWeights.bin\n"
      "  tvtrain photos/ --eval --init model.tvb\n"
      "  tvtrain classify model.tvb photo.jpg ...   (label and probabilities per file; tvtrain classify --help)"};
  app.set_version_flag("--version", std::string("tvtrain ") + TV_VERSION);
  app.add_option("dataset", a.dataset, "Dataset folder or .zip (one sub-folder per class)")->required();
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
  app.add_option("--update", a.update,
                 "What trains: full (every layer), head (the last layer with weights, on features computed once "
                 "per photo) or sparse[=K] (the last K layers with weights); default full, with --init " +
                     std::string(tvtrain::kInitDefaultUpdate) + " (docs/on-device-learning.md)");
  app.add_option("--raw-out", a.raw_out, "Also write the reference firmware's raw myWeights.bin (webmcu preset)");
  app.add_flag("--json", a.json, "Print one JSON object with the results on stdout");
  app.add_option("--curve", a.curve,
                 "Write the loss/accuracy curve (SVG) here; default MODEL.curve.svg next to -o MODEL.tvb, which "
                 "replaces only a curve an earlier run wrote (any other file of that name is refused)");
  app.add_flag("--no-curve", a.no_curve, "Do not write the loss/accuracy curve");
  app.add_option("--confusion", a.confusion,
                 "Write the validation confusion matrix as an SVG picture here; default MODEL.confusion.svg next to -o "
                 "MODEL.tvb (same replacement rule as the curve); with --eval only when given");
  app.add_flag("--no-confusion", a.no_confusion, "Do not write the confusion matrix picture");
  app.add_option("--report", a.report,
                 "Write the HTML report (photos, mistakes, likely label mistakes with --kfold) here; default "
                 "MODEL.report.html next to -o MODEL.tvb (same replacement rule as the curve); with --eval and "
                 "--kfold only when given");
  app.add_flag("--no-report", a.no_report, "Do not write the HTML report");
  app.add_option("--augment", a.augment,
                 "Training augmentation: none, or a list of flip, shift[=PIXELS], brightness[=FRACTION] "
                 "(default: the recipe's; flips break direction-sensitive classes such as arrows, digits, text)");
  app.add_flag("-q,--quiet", a.quiet, "Only errors on stderr");
  if (const int rc = tvcli::parse(app, argc, argv, "tvtrain"); rc >= 0) return rc;
  const tvcli::StderrLog log{a.quiet};
  if (a.threads == 0) a.threads = (int)std::max(1u, std::thread::hardware_concurrency());
  const tvtrain::RunReport run_report(argc, argv);

  if (a.eval && a.init.empty()) throw tvh::UsageError("--eval needs --init MODEL (the model to evaluate).");
  if (app.count("--epochs") && a.epochs == 0 && a.init.empty())
    throw tvh::UsageError("--epochs 0 only adds new classes to an --init model; give at least 1 epoch.");
  const tv::UpdateSpec update = tvtrain::update_option(a.update, !a.init.empty(), a.eval, a.augment);
  if (!a.eval && a.kfold == 0 && a.output.empty())
    throw tvh::UsageError("give -o MODEL.tvb (where to write the trained model).");
  if (a.kfold && !a.output.empty())
    throw tvh::UsageError("--kfold only evaluates the recipe and writes no model; drop -o.");
  if (a.kfold && a.eval) throw tvh::UsageError("--kfold and --eval cannot be combined.");
  if (a.eval && !a.output.empty()) throw tvh::UsageError("--eval writes no model; drop -o.");
  if (!a.curve.empty() && a.no_curve) throw tvh::UsageError("--curve and --no-curve contradict each other.");
  if (!a.confusion.empty() && a.no_confusion)
    throw tvh::UsageError("--confusion and --no-confusion contradict each other.");
  if (!a.confusion.empty() && a.output.empty() && !a.eval)
    throw tvh::UsageError("--confusion goes with -o MODEL.tvb (training) or --eval.");
  if (!a.report.empty() && a.no_report) throw tvh::UsageError("--report and --no-report contradict each other.");
  if (a.output.empty() && (!a.curve.empty() || !a.raw_out.empty()))
    throw tvh::UsageError(std::string(a.curve.empty() ? "--raw-out" : "--curve") +
                          " goes with -o MODEL.tvb (training).");

  // Every output checked before the long work (decoding, training): right kind, never an input, a
  // writable folder. The curve named by nobody (MODEL.curve.svg) replaces only a curve we wrote.
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
  const std::vector<tvh::NamedPath> inputs = {{"the dataset", a.dataset}, {"--init", a.init}, {"--config", a.config}};
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

  // The setup: preset, then config file, then command-line overrides.
  tvh::TrainSetup setup = tvh::preset_setup(a.preset);
  if (!a.config.empty()) tvh::apply_config_file(a.config, &setup);
  auto apply_overrides = [&]() {
    if (app.count("--epochs")) setup.recipe.epochs = a.epochs;
    if (a.batch) setup.recipe.batch_size = a.batch;
    if (a.lr > 0) setup.recipe.opt.lr = (float)a.lr;
    if (a.lanes) setup.recipe.opt.lanes = a.lanes;
    if (a.val_last >= 0) setup.recipe.val_last_n = a.val_last;
    if (app.count("--split")) setup.split = a.split;
    if (a.val_fraction >= 0) setup.val_fraction = a.val_fraction;
    if (!a.augment.empty()) tvtrain::apply_augment(a.augment, &setup.recipe);
  };
  apply_overrides();

  // A starting model fixes the architecture and (for .tvb) the class list.
  tvh::LoadedModel init;
  std::vector<std::string> classes = tvtrain::split_list(a.classes);
  if (!a.init.empty()) {
    if (!a.input.empty()) throw tvh::UsageError("--input cannot change the shape of an --init model (" + a.init + ").");
    tvh::RawOptions raw;
    raw.labels = classes;
    init = tvh::load_model(a.init, raw);
    // It continues with the recipe it names (as the board does) unless --preset or --config says otherwise.
    if (!app.count("--preset") && a.config.empty()) tvtrain::continue_recipe(init, &setup);
    setup.model = init.plan->desc;
    apply_overrides();
    if (init.format == "tvb" && a.eval && !classes.empty() && classes != init.labels)
      throw tvh::Error("--classes " + join(classes) + " differs from " + a.init + "'s classes " + join(init.labels) +
                       ".");
  } else if (!a.input.empty()) {
    int h, w, c;
    tvh::parse_input_size(a.input, &h, &w, &c);
    tv::set_input(&setup.model, h, w, c);
  }

  tvh::DatasetOptions dopt;
  dopt.path = a.dataset;
  dopt.classes = classes;
  dopt.height = setup.model.input.height;
  dopt.width = setup.model.input.width;
  dopt.channels = setup.model.input.channels;
  dopt.order = setup.model.input.order;
  dopt.threads = a.threads;
  dopt.outputs = {{"-o", a.output},
                  {"--raw-out", a.raw_out},
                  {"the curve", curve},
                  {"the confusion picture", confusion},
                  {"the report", report}};
  // List first, then know the model and the memory it all takes, then decode.
  tvh::DatasetListing listing = tvh::list_dataset(dopt);
  // The likely mistakes (the parent of a dataset, a photo library's folders as classes) before decoding.
  for (const auto& w : tvh::check_layout(listing, {!classes.empty(), !init.plan})) log("warning: " + w);
  // A preset's model and recipe follow the data (depth from the input, scale from the image count);
  // the command-line options still override the recipe. Sized first from the listed files (for the
  // memory estimate: an upper bound), then again from the images that decoded.
  const bool adapt = setup.adapt && !init.plan;
  auto adapt_to = [&](size_t images) {
    tv::DataShape data;
    data.height = setup.model.input.height;
    data.width = setup.model.input.width;
    data.channels = setup.model.input.channels;
    data.images = (long)images;
    tv::preset_model_for(setup.preset.c_str(), 2, data, &setup.model);
    tv::preset_recipe_for(setup.preset.c_str(), data, &setup.recipe);
    apply_overrides();
  };
  if (adapt) adapt_to(listing.images.size());
  setup.model.num_classes = (uint16_t)std::max<size_t>(2, listing.classes.size());
  std::unique_ptr<tv::ModelPlan> plan;
  {
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
    plan = tvh::plan_or_throw(setup.model, a.input.empty() ? "the model" : "--input " + a.input);
  }
  {
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
  tvh::Progress decode_progress(!a.quiet);
  dopt.on_progress = [&](size_t done, size_t total) { decode_progress.update_items("decoding images", done, total); };
  tvh::Dataset ds = tvh::decode_dataset(listing, dopt);
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
  tvh::ClassMatch match;
  if (init.plan && init.format == "tvb" && !a.eval) {
    match = tvtrain::match_init_classes(&ds, init, a.init, &plan, log);
    setup.model = plan->desc;
  }
  if (init.plan && match.model_classes == 0 && (int)ds.classes.size() != init.plan->desc.num_classes)
    throw tvh::Error(a.dataset + " has " + std::to_string(ds.classes.size()) + " classes " + join(ds.classes) +
                     " but " + a.init + " has " + std::to_string(init.plan->desc.num_classes) + ".");
  if (init.plan && init.format != "tvb") init.labels = ds.classes;

  const bool resized = adapt && ds.size() != listing.images.size();  // some files were no images
  if (resized) adapt_to(ds.size());
  if (resized || setup.model.num_classes != ds.classes.size()) {
    setup.model.num_classes = (uint16_t)ds.classes.size();
    plan = tvh::plan_or_throw(setup.model, a.input.empty() ? "the model" : "--input " + a.input);
  }

  // ---- --eval: every image, no training ----
  if (a.eval) {
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
      run_report.write(report, run_report.for_eval(ds, setup, a.seed, a.init, a.dataset, r, init));
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
                {"confusion_matrix", confusion_json(r.confusion, (int)ds.classes.size())}};
      j.update(results_json(ds, r));
      j.update(dataset_json(ds));
      tvh::write_stdout(tvh::json_text(j));
    }
    return 0;
  }

  if (init.plan) init.params = tvh::float_params_of(init, a.init);  // int8: dequantized as the board does
  if (!match.added.empty() && a.kfold)
    throw tvh::Error("--kfold with classes " + a.init + " lacks (" + join(match.added) +
                     ") is not supported: each fold would imprint them from its own photos; train once, or drop them.");
  tvh::Progress progress(!a.quiet);
  auto make_request = [&](const tvh::Split& sp) {
    tvh::TrainRequest req;
    req.plan = plan.get();
    req.recipe = setup.recipe;
    req.dataset = &ds;
    req.train = sp.train;
    req.val = sp.val;
    req.seed = a.seed;
    req.threads = a.threads;
    req.init = init.plan ? &init.params : nullptr;
    req.update = update;
    req.keep_rows = match.missing_rows;
    req.on_batch = [&](int epoch, int done, int total) { progress.update(epoch, setup.recipe.epochs, done, total); };
    return req;
  };

  // ---- --kfold K ----
  if (a.kfold) {
    if (setup.recipe.restore_best)
      throw tvh::Error(
          "--kfold with restore_best would pick each fold's weights on its own test images; set "
          "\"restore_best\": false for cross-validation.");
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
      tvh::TrainResult r = tvh::train_model(make_request(folds[f]));
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
      run_report.write(report,
                       run_report.for_kfold(ds, setup, a.seed, a.dataset, a.kfold, oof, suspects, *plan, last_params));
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

  // ---- train ----
  if (!a.raw_out.empty() && !tv::raw_weights_compatible(*plan))
    throw tvh::Error("--raw-out " + a.raw_out +
                     ": the raw myWeights.bin format only holds the webmcu network at 64x64x3.");
  tvh::Split split = setup.split == "fraction" ? tvh::fraction_split(ds, setup.val_fraction, a.seed)
                                               : tvh::reference_split(ds, setup.recipe.val_last_n);
  if (setup.split != "fraction") {
    // The reference split keeps at least one training image per class: a class with no more images than
    // --val-last validates on fewer (none with one image). Said, not silent.
    const int last_n = setup.recipe.val_last_n;
    const std::vector<size_t> counts = ds.class_counts();
    for (size_t c = 0; c < counts.size(); ++c) {
      if (last_n == 0 || counts[c] == 0 || counts[c] > (size_t)last_n) continue;
      const size_t n_val = counts[c] - 1;
      log("warning: class '" + ds.classes[c] + "' has " + std::to_string(counts[c]) + " image" +
          (counts[c] == 1 ? "" : "s") + ", not more than --val-last " + std::to_string(last_n) + ": " +
          (n_val == 0 ? std::string("it only trains, nothing of it is validated")
                      : std::to_string(n_val) + " validate" + (n_val == 1 ? "s" : "") + " instead of " +
                            std::to_string(last_n) + ", 1 trains") +
          " (add images, or use --kfold to measure on every image).");
    }
  }
  for (const auto& w : tvh::split_warnings(ds, split)) log("warning: " + w);
  tvtrain::check_update_fits(update, *plan);
  if (!match.added.empty())
    tvh::grow_and_imprint(*init.plan, init.params, a.init, ds, match.model_classes, split.train, &plan, &init.params);
  tvh::TrainRequest req = make_request(split);
  req.on_epoch = [&](const tvh::EpochRecord& e) {
    progress.clear();
    std::string line = "epoch " + std::to_string(e.epoch) + "/" + std::to_string(setup.recipe.epochs) + "  loss " +
                       fmt("%.4f", e.train_loss) + "  train acc " + fmt("%.1f", 100 * e.train_acc) + " %";
    if (e.val_loss >= 0) line += "  val loss " + fmt("%.4f", e.val_loss);
    if (e.val_acc >= 0) line += "  val acc " + fmt("%.1f", 100 * e.val_acc) + " %";
    line += "  lr " + fmt("%.2e", e.lr);
    if (e.skipped_batches) line += "  (" + std::to_string(e.skipped_batches) + " batches dropped: NaN/Inf gradient)";
    log(line);
  };
  // Room for every result, known now that the model is, before training: the .tvb, the raw file and the
  // pictures (an upper bound of their SVG size) and the report (its page cap), together on each file
  // system their targets are on.
  const uint64_t model_bytes = tvh::blob_bytes_estimate(*plan);
  const uint64_t k = ds.classes.size();
  tvh::check_outputs(
      {{"-o", a.output},
       {"--raw-out", a.raw_out},
       {"the curve", curve},
       {"the confusion picture", confusion},
       {"the report", report}},
      {model_bytes, model_bytes, 8192 + 512 * (uint64_t)setup.recipe.epochs, 8192 + 1024 * k * k, tvh::kReportMaxBytes},
      inputs);
  log("training " + setup.preset + " (" + std::to_string(plan->param_count) + " parameters) on " +
      std::to_string(split.train.size()) + " images, validating on " + std::to_string(split.val.size()) + "; " +
      std::to_string(setup.recipe.epochs) + " epochs, batch " + std::to_string(setup.recipe.batch_size) + ", seed " +
      std::to_string(a.seed) + ", " + std::to_string(a.threads) + " thread(s), " +
      std::to_string(setup.recipe.opt.lanes) + " lane(s)");
  tvh::TrainResult r = tvh::train_model(req);
  progress.clear();
  log(tvtrain::update_text(update, r, *plan));
  log(tvtrain::cost_text(r));
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

  std::ostringstream prov;
  prov << "tool=tvtrain " << TV_VERSION << "\npreset=" << setup.preset << "\ndataset=" << a.dataset
       << "\nseed=" << a.seed << "\nepochs=" << setup.recipe.epochs << "\ntrain_images=" << split.train.size()
       << "\nval_images=" << split.val.size() << "\nval_accuracy=" << fmt("%.4f", r.val_eval.accuracy()) << "\n";
  if (!a.init.empty()) prov << "init=" << a.init << "\nupdate=" << tvtrain::update_name(update) << "\n";
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
    run_report.write(report, run_report.for_training(ds, setup, a.seed, a.output, a.dataset, r, split, *plan));
    log("wrote " + report);
  }
  if (a.json) {
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
              {"output", a.output}};
    tvtrain::add_update_json(&j, update, r, match);
    j.update(results_json(ds, r.val_eval));
    j.update(dataset_json(ds));
    tvh::write_stdout(tvh::json_text(j));
  }
  log("next: tvquant " + tvh::shell_word(a.output) + " --calib " + tvh::shell_word(a.dataset) + " -o " +
      tvh::shell_word(tvh::int8_name_for(a.output)) + "   (int8 for the ESP32-S3; or tvexport " +
      tvh::shell_word(a.output) + " -o model.h for a float header)");
  return 0;
}
