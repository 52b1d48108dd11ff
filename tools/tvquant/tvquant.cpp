#include "tvquant.h"

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "host/config.h"
#include "host/dataset.h"
#include "host/error.h"
#include "host/evaluate.h"
#include "host/files.h"
#include "host/html_report.h"
#include "host/init_model.h"
#include "host/interval.h"
#include "host/json_text.h"
#include "host/model_io.h"
#include "host/prune.h"
#include "host/quant_report.h"
#include "host/quantize.h"
#include "host/report.h"
#include "host/split.h"
#include "host/text.h"
#include "host/text_width.h"
#include "host/training.h"
#include "tools/common/cli.h"
#include "tv/int8/q8_model.h"
#include "tv/net.h"

using nlohmann::json;

using tvh::fmt;
using tvh::grouped;
using tvh::join;
using tvh::pct;

namespace {

// Calibration sample: enough images that the chosen exponents no longer change (measured on
// Fashion-MNIST and webmcu-b, docs/quantization.md), drawn class-balanced with a fixed seed.
constexpr size_t kDefaultCalibSample = 2000;
constexpr uint64_t kCalibSampleSeed = 1;

// A float model to work on; an int8 model is refused with a sentence naming the file.
tvh::LoadedModel load_float_model(const std::string& path) {
  tvh::LoadedModel m = tvh::load_model(path);
  if (m.int8) throw tvh::Error(path + " is already an int8 model; give the float model it was made from.");
  return m;
}

// Loads a dataset at the model's input size with the model's classes (a raw myWeights.bin takes the
// dataset's sorted class names as labels).
// `output` is the file the command writes: refused when it is one of the dataset's images.
tvh::Dataset load_for_model(const std::string& path, tvh::LoadedModel& m, int threads,
                            const std::vector<tvh::NamedPath>& outputs) {
  tvh::DatasetOptions o;
  o.path = path;
  o.outputs = outputs;
  if (m.format == "tvb") o.classes = m.labels;
  o.height = m.plan->input.h;
  o.width = m.plan->input.w;
  o.channels = m.plan->input.c;
  o.order = m.plan->desc.input.order;
  o.threads = threads;
  tvh::Dataset ds = tvh::load_dataset(o);
  if ((int)ds.classes.size() != m.plan->desc.num_classes)
    throw tvh::Error(path + " has " + std::to_string(ds.classes.size()) + " classes " + join(ds.classes) +
                     " but the model has " + std::to_string(m.plan->desc.num_classes) + ".");
  if (m.format != "tvb") m.labels = ds.classes;
  return ds;
}

json confusion_json(const std::vector<int>& cm, int k) {
  json rows = json::array();
  for (int i = 0; i < k; ++i) rows.push_back(std::vector<int>(cm.begin() + i * k, cm.begin() + (i + 1) * k));
  return rows;
}

}  // namespace

int tvquant_main(int argc, char** argv) {
  std::string model, calib, output, eval_on, calib_images = "train", acc_check = "worst-case", observer, report_path;
  double percentile = 99.99;
  int val_last = 3, threads = 0;
  size_t calib_sample = kDefaultCalibSample;
  bool per_channel = false, as_json = false, quiet = false, calib_all = false;
  CLI::App app{
      "tvquant: quantize a float .tvb to power-of-two int8 as ESP-DL runs it on the ESP32-S3, and prune conv "
      "channels.\n"
      "  tvquant model.tvb --calib photos/ -o model.q8.tvb [--json]\n"
      "  tvquant prune model.tvb photos/ --ratio 0.2 -o pruned.tvb   (see tvquant prune --help)"};
  app.set_version_flag("--version", std::string("tvquant ") + TV_VERSION);
  app.add_option("model", model, "Float model (.tvb, or the reference's raw myWeights.bin)")->required();
  app.add_option("--calib", calib, "Calibration dataset (folder or .zip, one sub-folder per class)")->required();
  app.add_option("-o,--output", output, "Write the int8 model (.tvb) here")->required();
  app.add_option(
         "--calib-images", calib_images,
         "Which calibration images set the activation ranges: train (the split's training images, default) or all")
      ->check(tvcli::one_of({"train", "all"}));
  app.add_option("--val-last", val_last, "Reference split: the last N images of each class are validation (default 3)")
      ->check(tvcli::whole(0, 100000));
  app.add_option(
      "--eval-on", eval_on,
      "Compare float and int8 on every image of this dataset (default: the calibration dataset's validation split)");
  app.add_option("--calibration", observer,
                 "How activation exponents are chosen: mse (default: the smallest rounding plus clipping error over "
                 "the calibration images; the scores keep max|x|), minmax (max|x|) or percentile (see --percentile)")
      ->check(tvcli::one_of({"mse", "minmax", "percentile"}));
  CLI::Option* percentile_opt =
      app.add_option("--percentile", percentile,
                     "Activation ranges from this percentile of |x| (e.g. 99.99; implies --calibration percentile)")
          ->check(tvcli::real(1e-6, 100.0));
  app.add_option("--acc-check", acc_check,
                 "20-bit accumulator rule: worst-case (default: exact on the device for any input) or calibrated (the "
                 "calibration images' sums stay a bit below the limit; layers without the guarantee are reported)")
      ->check(tvcli::one_of({"worst-case", "calibrated"}));
  app.add_flag("--per-channel", per_channel,
               "One weight exponent per output channel (NOT for the ESP32-S3: ESP-DL runs per-channel exponents on the "
               "P4 only)");
  CLI::Option* sample_opt =
      app.add_option("--calib-sample", calib_sample,
                     "Calibrate on at most N images, a class-balanced sample (seed 1) of the calibration images "
                     "(default " +
                         std::to_string(kDefaultCalibSample) +
                         ": the exponents stop changing well before; see "
                         "docs/quantization.md)")
          ->check(tvcli::whole(1, 100000000));
  app.add_flag("--calib-all", calib_all, "Calibrate on every calibration image (no sample)");
  app.add_option("--threads", threads,
                 "Threads for decoding and calibration (default: all cores; the result is the same for any count)")
      ->check(tvcli::whole(1, 256));
  app.add_flag("--json", as_json, "Print one JSON object with the results on stdout (the report goes to stderr)");
  app.add_option("--report", report_path,
                 "Also write an HTML page: float vs int8 per class, the photos they disagree on, exponents and "
                 "accumulator headroom per layer (a separate page beside tvtrain's MODEL.report.html)");
  app.add_flag("-q,--quiet", quiet, "Only errors on stderr");
  if (const int rc = tvcli::parse(app, argc, argv, "tvquant"); rc >= 0) return rc;
  const tvcli::StderrLog log{quiet};
  if (percentile_opt->count() && !observer.empty() && observer != "percentile")
    throw tvh::UsageError("--percentile sets --calibration percentile, but --calibration " + observer +
                          " was given; drop one of the two.");
  if (observer.empty()) observer = percentile_opt->count() ? "percentile" : "mse";
  if (calib_all && sample_opt->count())
    throw tvh::UsageError("--calib-all uses every image and --calib-sample a sample of them; drop one of the two.");
  if (threads == 0) threads = (int)std::max(1u, std::thread::hardware_concurrency());

  // Validate every input and the output before anything is computed or written.
  tvh::check_output_extension("-o", output, {".tvb"}, "a TinyVision int8 model", "name it MODEL.q8.tvb");
  const std::vector<tvh::NamedPath> inputs = {{"the float model", model}, {"--calib", calib}, {"--eval-on", eval_on}};
  tvh::check_output({"-o", output}, inputs);
  if (!report_path.empty()) {
    tvh::check_output_extension("--report", report_path, {".html"}, "an HTML page", "name it REPORT.html");
    std::vector<tvh::NamedPath> others = inputs;
    others.push_back({"-o", output});
    tvh::check_output({"--report", report_path}, others, tvh::kReportMaxBytes);
  }
  tvh::LoadedModel m = load_float_model(model);
  // The model and the report (its page cap) together on each file system they land on.
  tvh::check_outputs({{"-o", output}, {"--report", report_path}},
                     {tvh::blob_bytes_estimate(*m.plan), tvh::kReportMaxBytes}, inputs);
  const tv::ModelPlan& plan = *m.plan;
  tvh::Dataset ds = load_for_model(calib, m, threads, {{"-o", output}, {"--report", report_path}});
  for (const auto& w : ds.warnings) log("warning: " + w);
  if (!ds.skipped.empty()) log(tvh::skipped_text(ds.skipped));
  tvh::Split split = tvh::reference_split(ds, val_last);
  const std::vector<int> calib_pool = calib_images == "all" ? tvh::all_indices(ds) : split.train;
  const std::vector<int> calib_idx =
      calib_all ? calib_pool : tvh::class_balanced_sample(ds, calib_pool, calib_sample, kCalibSampleSeed);
  tvh::Dataset eval_ds;
  const tvh::Dataset* eds = &ds;
  std::vector<int> eval_idx = split.val;
  if (!eval_on.empty()) {
    eval_ds = load_for_model(eval_on, m, threads, {{"-o", output}, {"--report", report_path}});
    for (const auto& w : eval_ds.warnings) log("warning: " + w);
    eds = &eval_ds;
    eval_idx = tvh::all_indices(eval_ds);
  }
  if (eval_idx.empty())
    throw tvh::Error(
        (eval_on.empty() ? calib + ": the validation split is empty (--val-last 0)" : eval_on + ": no images") +
        std::string("; nothing to compare float and int8 on."));

  tvh::QuantOptions qo;
  qo.per_channel = per_channel;
  qo.observer = observer == "minmax"       ? tvh::Observer::MinMax
                : observer == "percentile" ? tvh::Observer::Percentile
                                           : tvh::Observer::Mse;
  qo.percentile = percentile;
  const std::string calibration = qo.observer == tvh::Observer::Percentile ? "percentile " + fmt("%g", percentile)
                                                                           : tvh::observer_name(qo.observer);
  qo.acc_check = acc_check == "calibrated" ? tvh::AccCheck::Calibrated : tvh::AccCheck::WorstCase;
  qo.threads = threads;
  const std::string sampled = calib_idx.size() < calib_pool.size()
                                  ? "a class-balanced sample (seed " + std::to_string(kCalibSampleSeed) + ") of "
                                  : "";
  log("calibrating on " + sampled + std::to_string(calib_idx.size()) +
      (sampled.empty() ? "" : " of the " + std::to_string(calib_pool.size())) + " images of " + calib + " (" +
      calib_images + ", " + calibration + ")");
  const auto calib_start = std::chrono::steady_clock::now();
  tvh::CalibrationStats stats = tvh::calibrate(plan, m.params.data(), ds, calib_idx, qo);

  std::ostringstream prov;
  char crc[16];
  std::snprintf(crc, sizeof crc, "0x%08X", m.crc);
  prov << "tool=tvquant " << TV_VERSION << "\nsource=" << model << "\nsource_crc32=" << crc << "\ncalib=" << calib
       << "\ncalib_images=" << calib_idx.size() << (sampled.empty() ? "" : " (class-balanced sample, seed 1)")
       << "\ncalibration=" << calibration << "\nacc_check=" << acc_check
       << "\nweights=" << (per_channel ? "per-channel (not for the ESP32-S3)" : "per-tensor") << "\n";
  const std::string preset = tvh::provenance_value(m.provenance, "preset");
  if (!preset.empty()) prov << "preset=" << preset << "\n";
  tvh::QuantResult q = tvh::quantize_model(plan, m.params.data(), stats, m.labels, prov.str(), qo, &ds, &calib_idx);
  const double calib_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - calib_start).count();
  log("calibrated and quantized in " + fmt("%.2f", calib_seconds) + " s on " +
      std::to_string(std::min<size_t>((size_t)threads, calib_idx.size())) + " thread(s)" +
      (sampled.empty() ? std::string() : " (--calib-all uses all " + std::to_string(calib_pool.size()) + ")"));

  // Float and int8 on the same images, each image once through each engine, by the path tvtrain --eval
  // takes (the loaded model's classifier).
  tvh::LoadedModel q8 = tvh::decode_model(q.blob, output);
  const std::vector<int> pf = tvh::predict(m, *eds, eval_idx), pq = tvh::predict(q8, *eds, eval_idx);
  const int k = plan.desc.num_classes;
  tvh::EvalResult ef = tvh::score_predictions(pf, *eds, eval_idx, k);
  tvh::EvalResult eq = tvh::score_predictions(pq, *eds, eval_idx, k);
  int agree = 0;
  for (size_t n = 0; n < pf.size(); ++n) agree += pf[n] == pq[n];
  const tv::InferenceMemory fmem = tv::inference_memory(plan);
  const tv::Q8Memory qmem = tv::q8_memory(plan);

  tvh::write_file_atomic(output, q.blob);

  bool s3_guaranteed = !per_channel;
  for (const auto& l : q.layers) s3_guaranteed = s3_guaranteed && (!l.has_params || l.bound_headroom_bits >= 0);
  std::string eval_name = eval_on.empty()
                              ? calib + " validation split (last " + std::to_string(val_last) + " per class)"
                              : eval_on + " (every image)";
  std::string report;
  report += "int8 model " + output + " (" + grouped(q.blob.size()) + " bytes), exponents per layer:\n";
  report += tvh::quant_table(plan, q);
  report +=
      "input exponent " + std::to_string(q.act_exps[0]) +
      "; the ESP32-S3 accumulates in 20-bit lanes: |acc| <= 524,287. |acc| bound = the largest running sum any image "
      "can produce (int8 input = the values the layer's input can take); seen = the largest on the " +
      std::to_string(calib_idx.size()) + " calibration images\n";
  if (per_channel)
    report += "per-channel weight exponents: this model is NOT for the ESP32-S3 (ESP-DL runs them on the P4 only)\n";
  for (const auto& a : q.adjustments) report += "adjusted: " + a + "\n";
  if (q.adjustments.empty()) report += "no layer needed an exponent adjustment\n";
  report += "accuracy on " + eval_name + ", " + std::to_string(eval_idx.size()) + " images: float " +
            tvh::accuracy_with_interval(ef.correct, ef.total) + ", int8 " +
            tvh::accuracy_with_interval(eq.correct, eq.total) + ", same class on " + std::to_string(agree) + "/" +
            std::to_string(eval_idx.size()) + "\n";
  report += "weights: float " + grouped(q.float_weight_bytes) + " bytes, int8 " + grouped(q.int8_weight_bytes) +
            " bytes (" + fmt("%.2f", (double)q.float_weight_bytes / (double)q.int8_weight_bytes) + "x smaller)\n";
  report += "inference memory: float " + grouped(fmem.total_bytes) + " bytes (" + grouped(fmem.params_bytes) +
            " + work " + grouped(fmem.work_bytes) + "), int8 " + grouped(qmem.total_bytes) + " bytes (" +
            grouped(qmem.weight_bytes) + " + work " + grouped(qmem.work_bytes) + ")\n";
  // Every file first, then the results on stdout: a refused stdout (a full disk) loses no file asked for.
  if (!report_path.empty()) {
    tvh::QuantReportInput in;
    in.title = output + ": int8 of " + model;
    in.command = tvh::report_command_line("tvquant", argc, argv);
    in.calibration = calibration + " on " + std::to_string(calib_idx.size()) + " images of " + calib;
    in.ds = eds;
    in.compared_on = eval_name;
    in.idx = eval_idx;
    in.float_pred = pf;
    in.int8_pred = pq;
    in.plan = &plan;
    in.quant = &q;
    in.next_commands = {"tvexport " + tvh::shell_word(output) + " -o model.h",
                        "tvexport info " + tvh::shell_word(output)};
    tvh::write_file_atomic(report_path, tvh::quant_html_report(in));
    log("wrote " + report_path);
  }
  if (as_json) {
    if (!quiet) std::fprintf(stderr, "%s", report.c_str());
    json layers = json::array();
    for (const auto& l : q.layers) {
      json jl = {{"index", l.index}, {"name", l.name},   {"type", l.type},
                 {"e_in", l.e_in},   {"e_out", l.e_out}, {"adjustments", l.adjustments}};
      if (l.calib_range > 0) jl["calib_range"] = l.calib_range;
      if (l.has_params) {
        jl["e_w"] = l.e_w;
        if (!l.e_w_channels.empty()) jl["e_w_channels"] = l.e_w_channels;
        jl["e_bias"] = l.e_in + l.e_w;
        jl["shift"] = l.shift_min;
        if (l.shift_max != l.shift_min) jl["shift_max"] = l.shift_max;
        jl["input_range"] = {l.in_lo, l.in_hi};
        jl["acc_bound"] = l.acc_bound;
        jl["headroom_bits"] = l.bound_headroom_bits;
        jl["acc_limit"] = tv::kS3AccLimit;
        jl["worst_acc_any_input"] = l.worst_acc;
        jl["headroom_bits_any_input"] = l.headroom_bits;
        jl["max_abs_bias"] = l.max_abs_bias;
        jl["e_w_initial"] = l.e_w_initial;
        jl["e_out_initial"] = l.e_out_initial;
        jl["observed_acc"] = l.observed_acc;
        jl["observed_headroom_bits"] = l.observed_headroom_bits;
      }
      layers.push_back(jl);
    }
    json j = {{"model", model},
              {"output", output},
              {"classes", m.labels},
              {"calib", calib},
              {"calib_images", calib_idx.size()},
              {"calib_pool_images", calib_pool.size()},
              {"calib_seconds", calib_seconds},
              {"threads", threads},
              {"calibration", tvh::observer_name(qo.observer)},
              {"percentile", qo.observer == tvh::Observer::Percentile ? json(percentile) : json(nullptr)},
              {"per_channel", per_channel},
              {"acc_check", acc_check},
              {"s3_compatible", !per_channel},
              {"s3_guaranteed", s3_guaranteed},
              {"eval_on", eval_on.empty() ? calib : eval_on},
              {"eval_split", eval_on.empty() ? "validation" : "all"},
              {"eval_images", eval_idx.size()},
              {"float_accuracy", ef.accuracy()},
              {"int8_accuracy", eq.accuracy()},
              {"float_accuracy_interval", tvh::interval_json(ef.correct, ef.total)},
              {"int8_accuracy_interval", tvh::interval_json(eq.correct, eq.total)},
              {"float_correct", ef.correct},
              {"int8_correct", eq.correct},
              {"agreement", (double)agree / (double)eval_idx.size()},
              {"float_confusion_matrix", confusion_json(ef.confusion, k)},
              {"int8_confusion_matrix", confusion_json(eq.confusion, k)},
              {"float_weight_bytes", q.float_weight_bytes},
              {"int8_weight_bytes", q.int8_weight_bytes},
              {"infer_bytes_float", fmem.total_bytes},
              {"infer_bytes_int8", qmem.total_bytes},
              {"int8_blob_bytes", q.blob.size()},
              {"input_exponent", q.act_exps[0]},
              {"act_exps", std::vector<int>(q.act_exps.begin(), q.act_exps.end())},
              {"layers", layers},
              {"adjustments", q.adjustments}};
    tvh::write_stdout(tvh::json_text(j));
  } else {
    tvh::write_stdout(report);
  }
  log("wrote " + output);
  log("next: tvexport " + tvh::shell_word(output) +
      " -o model.h   (a C header for the firmware; -o model.espdl for ESP-DL, tvexport info for its memory)");
  return 0;
}

int tvquant_prune_main(int argc, char** argv) {
  std::string model, dataset, output, preset;
  double ratio = 0.2;
  int epochs = 5, threads = 0;
  uint64_t seed = 1;
  bool as_json = false, quiet = false;
  CLI::App app{
      "tvquant prune: remove the least important conv channels (L1 norm of each filter), rebuild the smaller model "
      "and\n"
      "fine-tune it for a few epochs at a tenth of the recipe's learning rate.\n"
      "  tvquant prune model.tvb photos/ --ratio 0.2 -o pruned.tvb"};
  app.name("tvquant prune");
  app.add_option("model", model, "Float model (.tvb)")->required();
  app.add_option("dataset", dataset, "Dataset to fine-tune and evaluate on (folder or .zip)")->required();
  app.add_option("--ratio", ratio, "Fraction of the conv channels to remove (default 0.2)")
      ->check(tvcli::real(0.0, 0.95));
  app.add_option("-o,--output", output, "Write the pruned (and fine-tuned) float model here")->required();
  app.add_option("--epochs", epochs, "Fine-tuning epochs (default 5; 0 = no fine-tuning)")
      ->check(tvcli::whole(0, 100000));
  app.add_option("--preset", preset,
                 "Training recipe for fine-tuning (default: the model's own, from its provenance preset= line)")
      ->check(tvcli::preset_choice());
  app.add_option("--seed", seed, "Seed for shuffling and augmentation while fine-tuning (default 1)")
      ->check(tvcli::whole(0, UINT64_MAX));
  app.add_option("--threads", threads, "Threads (default: all cores; results are identical for any count)")
      ->check(tvcli::whole(1, 256));
  app.add_flag("--json", as_json, "Print one JSON object with the results on stdout (the table goes to stderr)");
  app.add_flag("-q,--quiet", quiet, "Only errors on stderr");
  if (const int rc = tvcli::parse(app, argc, argv, "tvquant prune"); rc >= 0) return rc;
  const tvcli::StderrLog log{quiet};
  if (threads == 0) threads = (int)std::max(1u, std::thread::hardware_concurrency());

  tvh::check_output_extension("-o", output, {".tvb"}, "a TinyVision model", "name it PRUNED.tvb");
  const std::vector<tvh::NamedPath> inputs = {{"the model", model}, {"the dataset", dataset}};
  tvh::check_output({"-o", output}, inputs);
  tvh::LoadedModel m = load_float_model(model);
  tvh::check_output({"-o", output}, inputs, tvh::blob_bytes_estimate(*m.plan));
  if (preset.empty()) preset = tvh::provenance_value(m.provenance, "preset");
  if (preset.empty())
    throw tvh::Error(model + " does not say which preset trained it (no preset= provenance line); give --preset.");
  tvh::TrainSetup setup = tvh::preset_setup(preset);
  tvh::Dataset ds = load_for_model(dataset, m, threads, {{"-o", output}});
  for (const auto& w : ds.warnings) log("warning: " + w);
  // The preset's recipe for this model's input and this dataset (shift, epochs and batch follow them as
  // in tvtrain), not the one for 64x64 photos.
  tv::DataShape data;
  data.height = m.plan->input.h;
  data.width = m.plan->input.w;
  data.channels = m.plan->input.c;
  data.images = (long)ds.size();
  tv::preset_recipe_for(preset.c_str(), data, &setup.recipe);
  tvh::Split split = setup.split == "fraction" ? tvh::fraction_split(ds, setup.val_fraction, seed)
                                               : tvh::reference_split(ds, setup.recipe.val_last_n);
  if (split.val.empty()) throw tvh::Error(dataset + ": the validation split is empty; nothing to measure accuracy on.");
  const tv::ModelPlan& plan = *m.plan;

  struct Row {
    std::string stage;
    int channels;
    size_t params, bytes_float, bytes_int8;
    tvh::EvalResult val, all;  // the validation split, and every image (mostly training images)
  };
  const std::vector<int> every = tvh::all_indices(ds);
  auto row_of = [&](const std::string& stage, const tv::ModelPlan& p, int channels, const float* weights) {
    return Row{stage,
               channels,
               p.param_count,
               p.param_count * 4,
               tv::q8_memory(p).weight_bytes,  // the int8 weight bytes tvquant and the header report
               tvh::evaluate_float(p, weights, ds, split.val),
               tvh::evaluate_float(p, weights, ds, every)};
  };

  tvh::PruneResult pr = tvh::prune_model(plan, m.params.data(), ratio);
  auto small = tvh::plan_or_throw(pr.desc, "the pruned model");
  std::vector<Row> rows;
  rows.push_back(row_of("original", plan, pr.channels_before, m.params.data()));
  rows.push_back(row_of("pruned", *small, pr.channels_after, pr.params.data()));
  for (const auto& l : pr.layers) {
    std::string removed;
    for (int c : l.removed) removed += (removed.empty() ? "" : ",") + std::to_string(c);
    log("layer " + std::to_string(l.index) + " (conv2d): " + std::to_string(l.before) + " -> " +
        std::to_string(l.after) + " channels, removed [" + removed + "] (lowest L1 norm)");
  }

  std::vector<float> final_params = pr.params;
  tv::TrainRecipe recipe = setup.recipe;
  if (epochs > 0) {
    recipe.epochs = epochs;
    recipe.opt.lr /= 10.f;
    recipe.warmup_epochs = 0;
    tvh::TrainRequest req;
    req.plan = small.get();
    req.recipe = recipe;
    req.dataset = &ds;
    req.train = split.train;
    req.val = split.val;
    req.seed = seed;
    req.threads = threads;
    req.init = &pr.params;
    tvh::Progress progress(!quiet);
    req.on_batch = [&](int epoch, int done, int total) { progress.update(epoch, epochs, done, total); };
    req.on_epoch = [&](const tvh::EpochRecord& e) {
      progress.clear();
      log("fine-tune epoch " + std::to_string(e.epoch) + "/" + std::to_string(epochs) + "  loss " +
          fmt("%.4f", e.train_loss) + "  val acc " + fmt("%.1f", 100 * e.val_acc) + " %  lr " + fmt("%.2e", e.lr));
    };
    log("fine-tuning " + std::to_string(epochs) + " epochs with the " + preset + " recipe at lr " +
        fmt("%.2e", recipe.opt.lr) + " on " + std::to_string(split.train.size()) + " images");
    tvh::TrainResult tr = tvh::train_model(req);
    progress.clear();
    final_params = tr.params;
    rows.push_back(row_of("fine-tuned", *small, pr.channels_after, final_params.data()));
  }

  std::ostringstream prov;
  prov << "tool=tvquant prune " << TV_VERSION << "\npreset=" << preset << "\nsource=" << model
       << "\ndataset=" << dataset << "\nratio=" << ratio << "\nconv_channels=" << pr.channels_before << "->"
       << pr.channels_after << "\nfinetune_epochs=" << epochs << "\nseed=" << seed
       << "\nval_accuracy=" << fmt("%.4f", rows.back().val.accuracy()) << "\n";
  tvh::save_float_model(output, *small, final_params.data(), m.labels, prov.str());

  std::string table = "pruning " + model + ": " + std::to_string(pr.channels_before - pr.channels_after) + " of " +
                      std::to_string(pr.channels_before) + " conv channels removed (" +
                      fmt("%.1f", 100.0 * (pr.channels_before - pr.channels_after) / pr.channels_before) +
                      " %); accuracy on the validation split (" + std::to_string(split.val.size()) +
                      " images) and on all " + std::to_string(ds.size()) + " images\n";
  std::vector<std::vector<std::string>> cells = {
      {"model", "channels", "parameters", "float bytes", "int8 bytes", "val accuracy", "all images"}};
  for (const Row& r : rows)
    cells.push_back({r.stage, std::to_string(r.channels), grouped(r.params), grouped(r.bytes_float),
                     grouped(r.bytes_int8), pct(r.val.accuracy()), pct(r.all.accuracy())});
  table += tvh::format_table(cells, "l");
  if (as_json) {
    if (!quiet) std::fprintf(stderr, "%s", table.c_str());
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
      jl.push_back(
          {{"index", l.index}, {"before", l.before}, {"after", l.after}, {"removed", l.removed}, {"l1", l.l1}});
    json j = {{"model", model},
              {"output", output},
              {"preset", preset},
              {"ratio", ratio},
              {"conv_channels_before", pr.channels_before},
              {"conv_channels_after", pr.channels_after},
              {"removed_fraction", (double)(pr.channels_before - pr.channels_after) / pr.channels_before},
              {"finetune_epochs", epochs},
              {"finetune_lr", epochs > 0 ? recipe.opt.lr : 0.f},
              {"rows", jrows},
              {"layers", jl},
              {"accuracy_before", rows[0].val.accuracy()},
              {"accuracy_pruned", rows[1].val.accuracy()},
              {"accuracy_finetuned", rows.back().val.accuracy()}};
    tvh::write_stdout(tvh::json_text(j));
  } else {
    tvh::write_stdout(table);
  }
  log("wrote " + output);
  log("next: tvquant " + tvh::shell_word(output) + " --calib " + tvh::shell_word(dataset) + " -o " +
      tvh::shell_word(tvh::int8_name_for(output)) + "   (int8 for the ESP32-S3)");
  return 0;
}
