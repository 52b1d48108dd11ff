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
#include "quant_run.h"
#include "tools/common/cli.h"
#include "tv/int8/q8_model.h"
#include "tv/train/net.h"

using nlohmann::json;

using tvh::fmt;
using tvh::grouped;
using tvh::join;
using tvh::pct;

namespace {

using tvquant::CalibImages;
using tvquant::kCalibSampleSeed;
using tvquant::kDefaultCalibSample;
using tvquant::load_float_model;
using tvquant::load_for_model;
using tvquant::QuantArgs;
using tvquant::Quantized;

json confusion_json(const std::vector<int>& cm, int k) {
  json rows = json::array();
  for (int i = 0; i < k; ++i) rows.push_back(std::vector<int>(cm.begin() + i * k, cm.begin() + (i + 1) * k));
  return rows;
}

// Every option of tvquant, bound to a.
void define_options(CLI::App& app, QuantArgs& a) {
  app.set_version_flag("--version", std::string("tvquant ") + TV_VERSION);
  app.add_option("model", a.model, "Float model (.tvb, or the reference's raw myWeights.bin)")->required();
  app.add_option("--calib", a.calib,
                 "Calibration dataset (folder or .zip): one sub-folder per class, or for a detector its photos with "
                 "labelled boxes (YOLO, COCO, Pascal VOC; tvtrain's split: the training photos calibrate, the "
                 "validation photos compare float and int8 F1)")
      ->required();
  app.add_option("-o,--output", a.output, "Write the int8 model (.tvb) here")->required();
  app.add_option(
         "--calib-images", a.calib_images,
         "Which calibration images set the activation ranges: train (the split's training images, default) or all")
      ->check(tvcli::one_of({"train", "all"}));
  a.val_last_opt = app.add_option("--val-last", a.val_last,
                                  "Reference split: the last N images of each class are validation (default 3; a "
                                  "detector's photos split as tvtrain split them)")
                       ->check(tvcli::whole(0, 100000));
  app.add_option(
      "--eval-on", a.eval_on,
      "Compare float and int8 on every image of this dataset (default: the calibration dataset's validation split; "
      "a detector: photos with labelled boxes)");
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
                     "Calibrate on at most N images, a class-balanced sample (seed 1; a detector's: a seeded sample) "
                     "of the calibration images "
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
      "  tvquant det.tvb --calib boxes/ -o det.q8.tvb   (a detector: float vs int8 F1, precision, recall, count "
      "error)\n"
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
  tvh::LoadedModel m = load_float_model(a.model, tvh::Tasks::Any);
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

// The calibration images of a classification dataset, as the shared quantization step takes them.
CalibImages calib_images(const QuantImages& im) {
  return {tvh::ImageSet(im.ds), im.calib_idx, im.calib_pool.size(), "class-balanced"};
}

// Float and int8 on the same images.
struct Comparison {
  std::vector<int> pf, pq;  // each image's class by float and by int8
  tvh::EvalResult ef, eq;
  int agree = 0;
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
  return tvquant::exponents_text(a, plan, im.calib_idx.size(), z) + "accuracy on " + eval_name(a) + ", " +
         std::to_string(im.eval_idx.size()) + " images: float " +
         tvh::accuracy_with_interval(c.ef.correct, c.ef.total) + ", int8 " +
         tvh::accuracy_with_interval(c.eq.correct, c.eq.total) + ", same class on " + std::to_string(c.agree) + "/" +
         std::to_string(im.eval_idx.size()) + "\n" + tvquant::weights_and_memory_text(plan, z);
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

// The --json object.
json result_json(const QuantArgs& a, const tvh::LoadedModel& m, const QuantImages& im, const Quantized& z,
                 const Comparison& c) {
  const int k = m.plan->desc.num_classes;
  json j = tvquant::quantization_json(a, m, calib_images(im), z);
  j.update({{"eval_images", im.eval_idx.size()},
            {"float_accuracy", c.ef.accuracy()},
            {"int8_accuracy", c.eq.accuracy()},
            {"float_accuracy_interval", tvh::interval_json(c.ef.correct, c.ef.total)},
            {"int8_accuracy_interval", tvh::interval_json(c.eq.correct, c.eq.total)},
            {"float_correct", c.ef.correct},
            {"int8_correct", c.eq.correct},
            {"agreement", (double)c.agree / (double)im.eval_idx.size()},
            {"float_confusion_matrix", confusion_json(c.ef.confusion, k)},
            {"int8_confusion_matrix", confusion_json(c.eq.confusion, k)}});
  return j;
}

}  // namespace

int tvquant_main(int argc, char** argv) {
  QuantArgs a;
  if (const int rc = parse_options(argc, argv, a); rc >= 0) return rc;
  const tvcli::StderrLog log{a.quiet};
  tvh::LoadedModel m = check_files_and_load(a);
  if (tvh::is_detector(m)) return tvquant::quantize_detector(a, m, log);
  const QuantImages im = load_images(a, m, log);
  const Quantized z = tvquant::calibrate_and_quantize(a, m, calib_images(im), "", log);
  const Comparison c = compare(a, m, im, z);
  tvh::write_file_atomic(a.output, z.q.blob);
  // Every file first, then the results on stdout.
  if (!a.report_path.empty()) write_html_report(a, argc, argv, *m.plan, im, z, c, log);
  tvquant::print_results(a, text_report(a, *m.plan, im, z, c), result_json(a, m, im, z, c), log);
  return 0;
}
