#include "tvquant.h"

#include <CLI/CLI.hpp>
#include <chrono>
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
#include "host/photos/dataset.h"
#include "host/photos/split.h"
#include "host/quant/prune.h"
#include "host/quant/quantize.h"
#include "host/report/html_report.h"
#include "host/report/quant_report.h"
#include "host/report/report.h"
#include "host/train/config.h"
#include "host/train/evaluate.h"
#include "host/train/init_model.h"
#include "host/train/training.h"
#include "inputs.h"
#include "tools/common/cli.h"
#include "tv/int8/q8_model.h"
#include "tv/train/net.h"

using nlohmann::json;

using tvh::fmt;
using tvh::grouped;
using tvh::join;
using tvh::pct;

namespace {

using tvquant::load_float_model;
using tvquant::load_for_model;

// Calibration sample: enough images that the chosen exponents no longer change (measured on
// Fashion-MNIST and webmcu-b, docs/quantization.md), drawn class-balanced with a fixed seed.
constexpr size_t kDefaultCalibSample = 2000;
constexpr uint64_t kCalibSampleSeed = 1;

json confusion_json(const std::vector<int>& cm, int k) {
  json rows = json::array();
  for (int i = 0; i < k; ++i) rows.push_back(std::vector<int>(cm.begin() + i * k, cm.begin() + (i + 1) * k));
  return rows;
}

// The command line of `tvquant MODEL --calib DATASET -o OUT`.
struct QuantArgs {
  std::string model, calib, output, eval_on, calib_images = "train", acc_check = "worst-case", observer, report_path;
  double percentile = 99.99;
  int val_last = 3, threads = 0;
  size_t calib_sample = kDefaultCalibSample;
  bool per_channel = false, as_json = false, quiet = false, calib_all = false;
  CLI::Option* percentile_opt = nullptr;
  CLI::Option* sample_opt = nullptr;
  // The files the command writes (the report's may be empty).
  std::vector<tvh::NamedPath> outputs() const { return {{"-o", output}, {"--report", report_path}}; }
};

// Every option of tvquant, bound to a.
void define_options(CLI::App& app, QuantArgs& a) {
  app.set_version_flag("--version", std::string("tvquant ") + TV_VERSION);
  app.add_option("model", a.model, "Float model (.tvb, or the reference's raw myWeights.bin)")->required();
  app.add_option("--calib", a.calib, "Calibration dataset (folder or .zip, one sub-folder per class)")->required();
  app.add_option("-o,--output", a.output, "Write the int8 model (.tvb) here")->required();
  app.add_option(
         "--calib-images", a.calib_images,
         "Which calibration images set the activation ranges: train (the split's training images, default) or all")
      ->check(tvcli::one_of({"train", "all"}));
  app.add_option("--val-last", a.val_last,
                 "Reference split: the last N images of each class are validation (default 3)")
      ->check(tvcli::whole(0, 100000));
  app.add_option(
      "--eval-on", a.eval_on,
      "Compare float and int8 on every image of this dataset (default: the calibration dataset's validation split)");
  app.add_option("--calibration", a.observer,
                 "How activation exponents are chosen: mse (default: the smallest rounding plus clipping error over "
                 "the calibration images; the scores keep max|x|), minmax (max|x|) or percentile (see --percentile)")
      ->check(tvcli::one_of({"mse", "minmax", "percentile"}));
  a.percentile_opt =
      app.add_option("--percentile", a.percentile,
                     "Activation ranges from this percentile of |x| (e.g. 99.99; implies --calibration percentile)")
          ->check(tvcli::real(1e-6, 100.0));
  app.add_option("--acc-check", a.acc_check,
                 "20-bit accumulator rule: worst-case (default: exact on the device for any input) or calibrated (the "
                 "calibration images' sums stay a bit below the limit; layers without the guarantee are reported)")
      ->check(tvcli::one_of({"worst-case", "calibrated"}));
  app.add_flag("--per-channel", a.per_channel,
               "One weight exponent per output channel (NOT for the ESP32-S3: ESP-DL runs per-channel exponents on the "
               "P4 only)");
  a.sample_opt =
      app.add_option("--calib-sample", a.calib_sample,
                     "Calibrate on at most N images, a class-balanced sample (seed 1) of the calibration images "
                     "(default " +
                         std::to_string(kDefaultCalibSample) +
                         ": the exponents stop changing well before; see "
                         "docs/quantization.md)")
          ->check(tvcli::whole(1, 100000000));
  app.add_flag("--calib-all", a.calib_all, "Calibrate on every calibration image (no sample)");
  app.add_option("--threads", a.threads,
                 "Threads for decoding and calibration (default: all cores; the result is the same for any count)")
      ->check(tvcli::whole(1, 256));
  app.add_flag("--json", a.as_json, "Print one JSON object with the results on stdout (the report goes to stderr)");
  app.add_option("--report", a.report_path,
                 "Also write an HTML page: float vs int8 per class, the photos they disagree on, exponents and "
                 "accumulator headroom per layer (a separate page beside tvtrain's MODEL.report.html)");
  app.add_flag("-q,--quiet", a.quiet, "Only errors on stderr");
}

// The rules between options (a usage error names the two that clash), and the defaults that follow
// from the others.
void settle_options(QuantArgs& a) {
  if (a.percentile_opt->count() && !a.observer.empty() && a.observer != "percentile")
    throw tvh::UsageError("--percentile sets --calibration percentile, but --calibration " + a.observer +
                          " was given; drop one of the two.");
  if (a.observer.empty()) a.observer = a.percentile_opt->count() ? "percentile" : "mse";
  if (a.calib_all && a.sample_opt->count())
    throw tvh::UsageError("--calib-all uses every image and --calib-sample a sample of them; drop one of the two.");
  if (a.threads == 0) a.threads = (int)std::max(1u, std::thread::hardware_concurrency());
}

// Parses the command line into a: the exit code when parsing ends the run (help, a usage error), else -1.
int parse_options(int argc, char** argv, QuantArgs& a) {
  CLI::App app{
      "tvquant: quantize a float .tvb to power-of-two int8 as ESP-DL runs it on the ESP32-S3, and prune conv "
      "channels.\n"
      "  tvquant model.tvb --calib photos/ -o model.q8.tvb [--json]\n"
      "  tvquant prune model.tvb photos/ --ratio 0.2 -o pruned.tvb   (see tvquant prune --help)"};
  define_options(app, a);
  if (const int rc = tvcli::parse(app, argc, argv, "tvquant"); rc >= 0) return rc;
  settle_options(a);
  return -1;
}

// Validates every input and the output before anything is computed or written; returns the float model.
tvh::LoadedModel check_files_and_load(const QuantArgs& a) {
  tvh::check_output_extension("-o", a.output, {".tvb"}, "a TinyVision int8 model", "name it MODEL.q8.tvb");
  const std::vector<tvh::NamedPath> inputs = {
      {"the float model", a.model}, {"--calib", a.calib}, {"--eval-on", a.eval_on}};
  tvh::check_output({"-o", a.output}, inputs);
  if (!a.report_path.empty()) {
    tvh::check_output_extension("--report", a.report_path, {".html"}, "an HTML page", "name it REPORT.html");
    std::vector<tvh::NamedPath> others = inputs;
    others.push_back({"-o", a.output});
    tvh::check_output({"--report", a.report_path}, others, tvh::kReportMaxBytes);
  }
  tvh::LoadedModel m = load_float_model(a.model);
  // The model and the report (its page cap) together on each file system they land on.
  tvh::check_outputs(a.outputs(), {tvh::blob_bytes_estimate(*m.plan), tvh::kReportMaxBytes}, inputs);
  return m;
}

// The images: the calibration dataset with the indices that calibrate, and those float and int8 are
// compared on (the validation split, or every image of --eval-on).
struct QuantImages {
  tvh::Dataset ds, eval_ds;  // eval_ds: --eval-on's dataset (empty without it)
  bool own_eval_set = false;
  std::vector<int> calib_pool, calib_idx, eval_idx;
  const tvh::Dataset& eval_set() const { return own_eval_set ? eval_ds : ds; }
};

QuantImages load_images(const QuantArgs& a, tvh::LoadedModel& m, const tvcli::StderrLog& log) {
  QuantImages im;
  im.ds = load_for_model(a.calib, m, a.threads, a.outputs());
  for (const auto& w : im.ds.warnings) log("warning: " + w);
  if (!im.ds.skipped.empty()) log(tvh::skipped_text(im.ds.skipped));
  tvh::Split split = tvh::reference_split(im.ds, a.val_last);
  im.calib_pool = a.calib_images == "all" ? tvh::all_indices(im.ds) : split.train;
  im.calib_idx =
      a.calib_all ? im.calib_pool : tvh::class_balanced_sample(im.ds, im.calib_pool, a.calib_sample, kCalibSampleSeed);
  im.eval_idx = split.val;
  if (!a.eval_on.empty()) {
    im.eval_ds = load_for_model(a.eval_on, m, a.threads, a.outputs());
    for (const auto& w : im.eval_ds.warnings) log("warning: " + w);
    im.own_eval_set = true;
    im.eval_idx = tvh::all_indices(im.eval_ds);
  }
  if (im.eval_idx.empty())
    throw tvh::Error(
        (a.eval_on.empty() ? a.calib + ": the validation split is empty (--val-last 0)" : a.eval_on + ": no images") +
        std::string("; nothing to compare float and int8 on."));
  return im;
}

// The int8 model and how it was made.
struct Quantized {
  tvh::QuantOptions qo;
  std::string calibration;  // the observer as the report names it ("mse", "percentile 99.99", ...)
  std::string sampled;      // "a class-balanced sample (seed 1) of " when the calibration images are a sample
  tvh::QuantResult q;
  double calib_seconds = 0;
};

tvh::QuantOptions quant_options(const QuantArgs& a) {
  tvh::QuantOptions qo;
  qo.per_channel = a.per_channel;
  if (!tvh::parse_observer(a.observer, &qo.observer)) qo.observer = tvh::Observer::Mse;
  qo.percentile = a.percentile;
  qo.acc_check = a.acc_check == "calibrated" ? tvh::AccCheck::Calibrated : tvh::AccCheck::WorstCase;
  qo.threads = a.threads;
  return qo;
}

// The provenance lines the int8 model carries.
std::string provenance(const QuantArgs& a, const tvh::LoadedModel& m, const QuantImages& im, const Quantized& z) {
  std::ostringstream prov;
  char crc[16];
  std::snprintf(crc, sizeof crc, "0x%08X", m.crc);
  prov << "tool=tvquant " << TV_VERSION << "\nsource=" << a.model << "\nsource_crc32=" << crc << "\ncalib=" << a.calib
       << "\ncalib_images=" << im.calib_idx.size() << (z.sampled.empty() ? "" : " (class-balanced sample, seed 1)")
       << "\ncalibration=" << z.calibration << "\nacc_check=" << a.acc_check
       << "\nweights=" << (a.per_channel ? "per-channel (not for the ESP32-S3)" : "per-tensor") << "\n";
  const std::string preset = tvh::provenance_value(m.provenance, "preset");
  if (!preset.empty()) prov << "preset=" << preset << "\n";
  return prov.str();
}

// Calibrates the activation exponents on the calibration images and quantizes the model.
Quantized calibrate_and_quantize(const QuantArgs& a, const tvh::LoadedModel& m, const QuantImages& im,
                                 const tvcli::StderrLog& log) {
  Quantized z;
  z.qo = quant_options(a);
  z.calibration = z.qo.observer == tvh::Observer::Percentile ? "percentile " + fmt("%g", a.percentile)
                                                             : tvh::observer_name(z.qo.observer);
  z.sampled = im.calib_idx.size() < im.calib_pool.size()
                  ? "a class-balanced sample (seed " + std::to_string(kCalibSampleSeed) + ") of "
                  : "";
  log("calibrating on " + z.sampled + std::to_string(im.calib_idx.size()) +
      (z.sampled.empty() ? "" : " of the " + std::to_string(im.calib_pool.size())) + " images of " + a.calib + " (" +
      a.calib_images + ", " + z.calibration + ")");
  const auto calib_start = std::chrono::steady_clock::now();
  const tv::ModelPlan& plan = *m.plan;
  tvh::CalibrationStats stats = tvh::calibrate(plan, m.params.data(), im.ds, im.calib_idx, z.qo);
  z.q =
      tvh::quantize_model(plan, m.params.data(), stats, m.labels, provenance(a, m, im, z), z.qo, &im.ds, &im.calib_idx);
  z.calib_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - calib_start).count();
  log("calibrated and quantized in " + fmt("%.2f", z.calib_seconds) + " s on " +
      std::to_string(std::min<size_t>((size_t)a.threads, im.calib_idx.size())) + " thread(s)" +
      (z.sampled.empty() ? std::string() : " (--calib-all uses all " + std::to_string(im.calib_pool.size()) + ")"));
  return z;
}

// Float and int8 on the same images.
struct Comparison {
  std::vector<int> pf, pq;  // each image's class by float and by int8
  tvh::EvalResult ef, eq;
  int agree = 0;
  tv::InferenceMemory fmem;
  tv::Q8Memory qmem;
};

// Each image once through each engine, by the path tvtrain --eval takes (the loaded model's classifier).
Comparison compare(const QuantArgs& a, const tvh::LoadedModel& m, const QuantImages& im, const Quantized& z) {
  Comparison c;
  const tv::ModelPlan& plan = *m.plan;
  tvh::LoadedModel q8 = tvh::decode_model(z.q.blob, a.output);
  const tvh::Dataset& eds = im.eval_set();
  c.pf = tvh::predict(m, eds, im.eval_idx);
  c.pq = tvh::predict(q8, eds, im.eval_idx);
  const int k = plan.desc.num_classes;
  c.ef = tvh::score_predictions(c.pf, eds, im.eval_idx, k);
  c.eq = tvh::score_predictions(c.pq, eds, im.eval_idx, k);
  for (size_t n = 0; n < c.pf.size(); ++n) c.agree += c.pf[n] == c.pq[n];
  c.fmem = tv::inference_memory(plan);
  c.qmem = tv::q8_memory(plan);
  return c;
}

// What the comparison ran on, in words.
std::string eval_name(const QuantArgs& a) {
  return a.eval_on.empty() ? a.calib + " validation split (last " + std::to_string(a.val_last) + " per class)"
                           : a.eval_on + " (every image)";
}

// The text report: exponents per layer, adjustments, accuracy, bytes and memory.
std::string text_report(const QuantArgs& a, const tv::ModelPlan& plan, const QuantImages& im, const Quantized& z,
                        const Comparison& c) {
  const tvh::QuantResult& q = z.q;
  std::string report;
  report += "int8 model " + a.output + " (" + grouped(q.blob.size()) + " bytes), exponents per layer:\n";
  report += tvh::quant_table(plan, q);
  report +=
      "input exponent " + std::to_string(q.act_exps[0]) +
      "; the ESP32-S3 accumulates in 20-bit lanes: |acc| <= 524,287. |acc| bound = the largest running sum any image "
      "can produce (int8 input = the values the layer's input can take); seen = the largest on the " +
      std::to_string(im.calib_idx.size()) + " calibration images\n";
  if (a.per_channel)
    report += "per-channel weight exponents: this model is NOT for the ESP32-S3 (ESP-DL runs them on the P4 only)\n";
  for (const auto& adj : q.adjustments) report += "adjusted: " + adj + "\n";
  if (q.adjustments.empty()) report += "no layer needed an exponent adjustment\n";
  report += "accuracy on " + eval_name(a) + ", " + std::to_string(im.eval_idx.size()) + " images: float " +
            tvh::accuracy_with_interval(c.ef.correct, c.ef.total) + ", int8 " +
            tvh::accuracy_with_interval(c.eq.correct, c.eq.total) + ", same class on " + std::to_string(c.agree) + "/" +
            std::to_string(im.eval_idx.size()) + "\n";
  report += "weights: float " + grouped(q.float_weight_bytes) + " bytes, int8 " + grouped(q.int8_weight_bytes) +
            " bytes (" + fmt("%.2f", (double)q.float_weight_bytes / (double)q.int8_weight_bytes) + "x smaller)\n";
  report += "inference memory: float " + grouped(c.fmem.total_bytes) + " bytes (" + grouped(c.fmem.params_bytes) +
            " + work " + grouped(c.fmem.work_bytes) + "), int8 " + grouped(c.qmem.total_bytes) + " bytes (" +
            grouped(c.qmem.weight_bytes) + " + work " + grouped(c.qmem.work_bytes) + ")\n";
  return report;
}

// The HTML page of --report.
void write_html_report(const QuantArgs& a, int argc, char** argv, const tv::ModelPlan& plan, const QuantImages& im,
                       const Quantized& z, const Comparison& c, const tvcli::StderrLog& log) {
  tvh::QuantReportInput in;
  in.title = a.output + ": int8 of " + a.model;
  in.command = tvh::report_command_line("tvquant", argc, argv);
  in.calibration = z.calibration + " on " + std::to_string(im.calib_idx.size()) + " images of " + a.calib;
  in.ds = &im.eval_set();
  in.compared_on = eval_name(a);
  in.idx = im.eval_idx;
  in.float_pred = c.pf;
  in.int8_pred = c.pq;
  in.plan = &plan;
  in.quant = &z.q;
  in.next_commands = {"tvexport " + tvh::shell_word(a.output) + " -o model.h",
                      "tvexport info " + tvh::shell_word(a.output)};
  tvh::write_file_atomic(a.report_path, tvh::quant_html_report(in));
  log("wrote " + a.report_path);
}

// One layer of --json's "layers".
json layer_json(const tvh::LayerQuant& l) {
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
  return jl;
}

// The --json object.
json result_json(const QuantArgs& a, const tvh::LoadedModel& m, const QuantImages& im, const Quantized& z,
                 const Comparison& c) {
  const tvh::QuantResult& q = z.q;
  bool s3_guaranteed = !a.per_channel;
  for (const auto& l : q.layers) s3_guaranteed = s3_guaranteed && (!l.has_params || l.bound_headroom_bits >= 0);
  json layers = json::array();
  for (const auto& l : q.layers) layers.push_back(layer_json(l));
  const int k = m.plan->desc.num_classes;
  return {{"model", a.model},
          {"output", a.output},
          {"classes", m.labels},
          {"calib", a.calib},
          {"calib_images", im.calib_idx.size()},
          {"calib_pool_images", im.calib_pool.size()},
          {"calib_seconds", z.calib_seconds},
          {"threads", a.threads},
          {"calibration", tvh::observer_name(z.qo.observer)},
          {"percentile", z.qo.observer == tvh::Observer::Percentile ? json(a.percentile) : json(nullptr)},
          {"per_channel", a.per_channel},
          {"acc_check", a.acc_check},
          {"s3_compatible", !a.per_channel},
          {"s3_guaranteed", s3_guaranteed},
          {"eval_on", a.eval_on.empty() ? a.calib : a.eval_on},
          {"eval_split", a.eval_on.empty() ? "validation" : "all"},
          {"eval_images", im.eval_idx.size()},
          {"float_accuracy", c.ef.accuracy()},
          {"int8_accuracy", c.eq.accuracy()},
          {"float_accuracy_interval", tvh::interval_json(c.ef.correct, c.ef.total)},
          {"int8_accuracy_interval", tvh::interval_json(c.eq.correct, c.eq.total)},
          {"float_correct", c.ef.correct},
          {"int8_correct", c.eq.correct},
          {"agreement", (double)c.agree / (double)im.eval_idx.size()},
          {"float_confusion_matrix", confusion_json(c.ef.confusion, k)},
          {"int8_confusion_matrix", confusion_json(c.eq.confusion, k)},
          {"float_weight_bytes", q.float_weight_bytes},
          {"int8_weight_bytes", q.int8_weight_bytes},
          {"infer_bytes_float", c.fmem.total_bytes},
          {"infer_bytes_int8", c.qmem.total_bytes},
          {"int8_blob_bytes", q.blob.size()},
          {"input_exponent", q.act_exps[0]},
          {"act_exps", std::vector<int>(q.act_exps.begin(), q.act_exps.end())},
          {"layers", layers},
          {"adjustments", q.adjustments}};
}

}  // namespace

int tvquant_main(int argc, char** argv) {
  QuantArgs a;
  if (const int rc = parse_options(argc, argv, a); rc >= 0) return rc;
  const tvcli::StderrLog log{a.quiet};
  tvh::LoadedModel m = check_files_and_load(a);
  const QuantImages im = load_images(a, m, log);
  const Quantized z = calibrate_and_quantize(a, m, im, log);
  const Comparison c = compare(a, m, im, z);
  tvh::write_file_atomic(a.output, z.q.blob);
  const std::string report = text_report(a, *m.plan, im, z, c);
  // Every file first, then the results on stdout: a refused stdout (a full disk) loses no file asked for.
  if (!a.report_path.empty()) write_html_report(a, argc, argv, *m.plan, im, z, c, log);
  if (a.as_json) {
    if (!a.quiet) std::fprintf(stderr, "%s", report.c_str());
    tvh::write_stdout(tvh::json_text(result_json(a, m, im, z, c)));
  } else {
    tvh::write_stdout(report);
  }
  log("wrote " + a.output);
  log("next: tvexport " + tvh::shell_word(a.output) +
      " -o model.h   (a C header for the firmware; -o model.espdl for ESP-DL, tvexport info for its memory)");
  return 0;
}
