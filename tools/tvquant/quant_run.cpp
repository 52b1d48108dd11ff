#include "quant_run.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>

#include "host/base/json_text.h"
#include "host/base/text.h"
#include "host/train/init_model.h"
#include "tv/int8/q8_model.h"
#include "tv/train/net.h"

namespace tvquant {

using nlohmann::json;
using tvh::fmt;
using tvh::grouped;

namespace {

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
std::string provenance(const QuantArgs& a, const tvh::LoadedModel& m, const CalibImages& c, const Quantized& z,
                       const std::string& extra) {
  std::ostringstream prov;
  char crc[16];
  std::snprintf(crc, sizeof crc, "0x%08X", m.crc);
  prov << "tool=tvquant " << TV_VERSION << "\nsource=" << a.model << "\nsource_crc32=" << crc << "\ncalib=" << a.calib
       << "\ncalib_images=" << c.idx.size()
       << (z.sampled.empty() ? "" : " (" + c.sample_kind + " sample, seed " + std::to_string(kCalibSampleSeed) + ")")
       << "\ncalibration=" << z.calibration << "\nacc_check=" << a.acc_check
       << "\nweights=" << (a.per_channel ? "per-channel (not for the ESP32-S3)" : "per-tensor") << "\n";
  const std::string preset = tvh::provenance_value(m.provenance, "preset");
  if (!preset.empty()) prov << "preset=" << preset << "\n";
  prov << extra;
  return prov.str();
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

}  // namespace

Quantized calibrate_and_quantize(const QuantArgs& a, const tvh::LoadedModel& m, const CalibImages& c,
                                 const std::string& extra_provenance, const tvcli::StderrLog& log) {
  Quantized z;
  z.qo = quant_options(a);
  z.calibration = z.qo.observer == tvh::Observer::Percentile ? "percentile " + fmt("%g", a.percentile)
                                                             : tvh::observer_name(z.qo.observer);
  z.sampled =
      c.idx.size() < c.pool ? "a " + c.sample_kind + " sample (seed " + std::to_string(kCalibSampleSeed) + ") of " : "";
  log("calibrating on " + z.sampled + std::to_string(c.idx.size()) +
      (z.sampled.empty() ? "" : " of the " + std::to_string(c.pool)) + " images of " + a.calib + " (" + a.calib_images +
      ", " + z.calibration + ")");
  const auto calib_start = std::chrono::steady_clock::now();
  const tv::ModelPlan& plan = *m.plan;
  tvh::CalibrationStats stats = tvh::calibrate(plan, m.params.data(), c.images, c.idx, z.qo);
  z.q = tvh::quantize_model(plan, m.params.data(), stats, m.labels, provenance(a, m, c, z, extra_provenance), z.qo,
                            &c.images, &c.idx);
  z.calib_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - calib_start).count();
  log("calibrated and quantized in " + fmt("%.2f", z.calib_seconds) + " s on " +
      std::to_string(std::min<size_t>((size_t)a.threads, c.idx.size())) + " thread(s)" +
      (z.sampled.empty() ? std::string() : " (--calib-all uses all " + std::to_string(c.pool) + ")"));
  return z;
}

std::string exponents_text(const QuantArgs& a, const tv::ModelPlan& plan, size_t calib_images, const Quantized& z) {
  const tvh::QuantResult& q = z.q;
  std::string report;
  report += "int8 model " + a.output + " (" + grouped(q.blob.size()) + " bytes), exponents per layer:\n";
  report += tvh::quant_table(plan, q);
  report +=
      "input exponent " + std::to_string(q.act_exps[0]) +
      "; the ESP32-S3 accumulates in 20-bit lanes: |acc| <= 524,287. |acc| bound = the largest running sum any image "
      "can produce (int8 input = the values the layer's input can take); seen = the largest on the " +
      std::to_string(calib_images) + " calibration images\n";
  if (a.per_channel)
    report += "per-channel weight exponents: this model is NOT for the ESP32-S3 (ESP-DL runs them on the P4 only)\n";
  for (const auto& adj : q.adjustments) report += "adjusted: " + adj + "\n";
  if (q.adjustments.empty()) report += "no layer needed an exponent adjustment\n";
  return report;
}

std::string weights_and_memory_text(const tv::ModelPlan& plan, const Quantized& z) {
  const tvh::QuantResult& q = z.q;
  const tv::InferenceMemory fmem = tv::inference_memory(plan);
  const tv::Q8Memory qmem = tv::q8_memory(plan);
  return "weights: float " + grouped(q.float_weight_bytes) + " bytes, int8 " + grouped(q.int8_weight_bytes) +
         " bytes (" + fmt("%.2f", (double)q.float_weight_bytes / (double)q.int8_weight_bytes) + "x smaller)\n" +
         "inference memory: float " + grouped(fmem.total_bytes) + " bytes (" + grouped(fmem.params_bytes) + " + work " +
         grouped(fmem.work_bytes) + "), int8 " + grouped(qmem.total_bytes) + " bytes (" + grouped(qmem.weight_bytes) +
         " + work " + grouped(qmem.work_bytes) + ")\n";
}

json quantization_json(const QuantArgs& a, const tvh::LoadedModel& m, const CalibImages& c, const Quantized& z) {
  const tvh::QuantResult& q = z.q;
  bool s3_guaranteed = !a.per_channel;
  for (const auto& l : q.layers) s3_guaranteed = s3_guaranteed && (!l.has_params || l.bound_headroom_bits >= 0);
  json layers = json::array();
  for (const auto& l : q.layers) layers.push_back(layer_json(l));
  const tv::ModelPlan& plan = *m.plan;
  return {{"model", a.model},
          {"output", a.output},
          {"classes", m.labels},
          {"calib", a.calib},
          {"calib_images", c.idx.size()},
          {"calib_pool_images", c.pool},
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
          {"float_weight_bytes", q.float_weight_bytes},
          {"int8_weight_bytes", q.int8_weight_bytes},
          {"infer_bytes_float", tv::inference_memory(plan).total_bytes},
          {"infer_bytes_int8", tv::q8_memory(plan).total_bytes},
          {"int8_blob_bytes", q.blob.size()},
          {"input_exponent", q.act_exps[0]},
          {"act_exps", std::vector<int>(q.act_exps.begin(), q.act_exps.end())},
          {"layers", layers},
          {"adjustments", q.adjustments}};
}

void print_results(const QuantArgs& a, const std::string& text, const json& j, const tvcli::StderrLog& log) {
  if (a.as_json) {
    if (!a.quiet) std::fprintf(stderr, "%s", text.c_str());
    tvh::write_stdout(tvh::json_text(j));
  } else {
    tvh::write_stdout(text);
  }
  log("wrote " + a.output);
  log("next: tvexport " + tvh::shell_word(a.output) +
      " -o model.h   (a C header for the firmware; -o model.espdl for ESP-DL, tvexport info for its memory)");
}

}  // namespace tvquant
