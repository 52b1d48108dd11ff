#include "host/export/export.h"

#include <cctype>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "host/base/error.h"
#include "host/base/json_text.h"
#include "host/base/text.h"
#include "host/train/init_model.h"
#include "host/train/update_info.h"
#include "tv/crc32.h"
#include "tv/formats/header_writer.h"
#include "tv/formats/raw_weights.h"
#include "tv/int8/q8_model.h"
#include "tv/names.h"
#include "tv/train/backbone.h"
#include "tv/train/net.h"

namespace tvh {
namespace {

void append_to_string(void* ctx, const char* s, size_t n) {
  static_cast<std::string*>(ctx)->append(s, n);
}

// One sentence for a header writer refusal.
std::string writer_message(const tv::Status& st, const tv::BlobView* view, const std::string& source) {
  if (st.code == tv::StatusCode::BadParameter && st.a == -1 && view)
    return source + ": the input scale or offset is infinite or NaN, which a C header cannot hold.";
  if (st.code == tv::StatusCode::BadParameter && view && st.a >= 0 && st.a < view->num_tensors)
    return source + ": tensor " + view->tensors[st.a].name + " holds an infinite or NaN value at index " +
           std::to_string(st.b) + ", which a C header cannot hold.";
  if (st.code == tv::StatusCode::BadParameter)
    return source + ": weight " + std::to_string(st.b) + " is infinite or NaN, which a C header cannot hold.";
  return source + ": cannot write the header: " + status_message(st, view ? &view->model : nullptr) + ".";
}

std::string layer_detail(const tv::LayerDesc& d, const tv::LayerPlan& lp) {
  char text[96];
  tv::layer_detail_text(d, lp.out, text, (int)sizeof text);
  return text;
}

// Everything the info report shows, computed once for both renderings.
struct InfoReport {
  struct Layer {
    int index;
    std::string type, detail;
    tv::Shape out;
    size_t params, bytes_float, bytes_int8;
  };
  std::vector<Layer> layers;
  size_t params = 0, bytes_float = 0, bytes_int8 = 0;
  uint32_t crc = 0;
  size_t size = 0;
  tv::InferenceMemory infer{};
  tv::TrainMemory train1{}, train2{};
  bool int8 = false;
};

InfoReport gather(const LoadedModel& m) {
  InfoReport f;
  const tv::ModelPlan& plan = *m.plan;
  for (int i = 0; i < plan.num_layers; ++i) {
    const tv::LayerPlan& lp = plan.layers[i];
    const tv::LayerDesc& d = plan.desc.layers[i];
    InfoReport::Layer l{i,
                        tv::layer_type_name(d.type),
                        layer_detail(d, lp),
                        lp.out,
                        lp.weight_count + lp.bias_count,
                        (lp.weight_count + lp.bias_count) * sizeof(float),
                        tv::q8_layer_weight_bytes(lp)};
    f.params += l.params;
    f.bytes_float += l.bytes_float;
    f.bytes_int8 += l.bytes_int8;
    f.layers.push_back(l);
  }
  f.size = m.view ? m.view->size : m.blob.size();
  f.crc = m.crc;
  // The engine that runs the model: an int8 model's figures are the int8 engine's.
  f.infer = tv::inference_memory(plan);
  if (m.int8) {
    const tv::Q8Memory q = tv::q8_memory(plan);
    f.infer = tv::InferenceMemory{q.weight_bytes, q.work_bytes, q.total_bytes};
  }
  tv::TrainOptions opt;
  opt.lanes = 1;
  f.train1 = tv::training_memory(plan, opt);
  opt.lanes = 2;
  f.train2 = tv::training_memory(plan, opt);
  f.int8 = m.int8;
  return f;
}

}  // namespace

std::vector<uint8_t> export_blob_bytes(const LoadedModel& m, const std::string& version) {
  if (m.format == "tvb") return m.blob;
  std::string prov = "tool=tvexport\nversion=" + version + "\nsource=raw myWeights.bin (webmcu preset)\n";
  return encode_float_blob(*m.plan, m.params.data(), m.labels, prov);
}

std::string tinyvision_header(const LoadedModel& m, const std::string& source, const std::string& prefix,
                              const std::string& version) {
  // A .tvb is written as loaded (its view and CRC, computed once); a raw myWeights.bin becomes a blob first.
  LoadedModel encoded;
  const LoadedModel& blob = m.view ? m : (encoded = decode_model(export_blob_bytes(m, version), source));
  const tv::BlobView* view = blob.view.get();
  tv::HeaderOptions opt;
  opt.prefix = prefix.c_str();
  opt.tool = "tvexport";
  opt.version = version.c_str();
  std::string text;
  tv::TextSink sink{&text, append_to_string};
  tv::Status st = tv::write_tinyvision_header(*view, blob.crc, opt, sink, blob.plan.get());
  if (st.code == tv::StatusCode::InvalidArgument)
    throw Error("--name " + prefix + ": not a C identifier (letters, digits and '_', not starting with a digit).");
  if (!st.ok()) throw Error(writer_message(st, view, source));
  return text;
}

LoadedModel backbone_for_board(LoadedModel m, const std::string& source, int* dropped) {
  *dropped = 0;
  if (!m.plan || provenance_value(m.provenance, "role") != "backbone") return m;
  if (m.int8) throw Error(source + ": a backbone is baked as float weights (the board trains from it); this is int8.");
  tv::ModelDesc desc = m.plan->desc;
  desc.num_classes = (uint16_t)tv::kBoardMinClasses;
  const std::unique_ptr<tv::ModelPlan> body = plan_or_throw(desc, source + " without its pretraining head");
  std::vector<float> params(body->param_count);
  if (!tv::backbone_params(*m.plan, m.params.data(), *body, params.data()).ok())
    throw Error(source + ": its last layer with weights is not the dense layer of the logits, so it is no backbone.");
  const std::vector<std::string> labels(m.labels.begin(), m.labels.begin() + tv::kBoardMinClasses);
  *dropped = m.plan->desc.num_classes;
  return decode_model(
      encode_float_blob(*body, params.data(), labels,
                        m.provenance + "head=dropped (" + std::to_string(*dropped) + " pretraining classes; the " +
                            std::to_string(tv::kBoardMinClasses) + " rows left are zero: a start makes them again)\n"),
      source);
}

std::string webmcu_header(const LoadedModel& m, const std::string& source) {
  if (m.int8) throw Error(source + ": the webmcu header style holds float weights only, and this is an int8 model.");
  if (!tv::raw_weights_compatible(*m.plan))
    throw Error(source +
                ": the webmcu header style only holds the webmcu network (64x64x3, conv 4, conv 8, dense), "
                "and this model is a different network.");
  std::vector<uint8_t> raw(tv::raw_weights_size(m.plan->desc.num_classes));
  tv::Status st = tv::raw_weights_export(*m.plan, m.params.data(), raw.data(), raw.size());
  if (!st.ok()) throw Error(source + ": " + status_message(st, &m.plan->desc) + ".");
  std::vector<const char*> labels;
  for (const auto& l : m.labels) labels.push_back(l.c_str());
  std::string text;
  tv::TextSink sink{&text, append_to_string};
  st = tv::write_webmcu_header_raw(raw.data(), raw.size(), labels.data(), (int)labels.size(), sink);
  if (!st.ok()) throw Error(writer_message(st, nullptr, source));
  return text;
}

size_t parse_budget(const std::string& text) {
  const std::string bad = "--budget " + text + ": not a byte count (use e.g. 300000, 512K or 1M).";
  size_t i = 0;
  uint64_t v = 0;
  while (i < text.size() && std::isdigit((unsigned char)text[i])) {
    v = v * 10 + (uint64_t)(text[i] - '0');
    if (v > (uint64_t(1) << 40)) throw UsageError(bad);
    ++i;
  }
  if (i == 0) throw UsageError(bad);
  std::string suffix;
  for (; i < text.size(); ++i) suffix += (char)std::tolower((unsigned char)text[i]);
  uint64_t mul = 1;
  if (suffix.empty() || suffix == "b")
    mul = 1;
  else if (suffix == "k" || suffix == "kb" || suffix == "kib")
    mul = 1024;
  else if (suffix == "m" || suffix == "mb" || suffix == "mib")
    mul = 1024 * 1024;
  else
    throw UsageError(bad);
  if (v == 0) throw UsageError("--budget " + text + ": the budget must be more than zero bytes.");
  return (size_t)(v * mul);
}

// The update modes' figures with the trainer's defaults (2 lanes, Adam).
static std::vector<UpdateModeFigures> update_modes_of(const tv::ModelPlan& plan) {
  return update_mode_figures(plan, tv::TrainOptions());
}

std::string info_text(const LoadedModel& m, const InfoRequest& req) {
  const InfoReport f = gather(m);
  const tv::ModelPlan& plan = *m.plan;
  const tv::InputDesc& in = plan.desc.input;
  std::string s;
  char line[256];
  s += "model: " + one_line(req.source) + "\n";
  s += "format: " + std::string(m.format == "tvb" ? ".tvb blob" : "raw myWeights.bin (webmcu preset)") + ", " +
       (m.int8 ? "int8" : "float32") + ", " + grouped(f.size) + " bytes, CRC-32 " + hex32(f.crc) + "\n";
  s += "input: " + std::to_string(in.height) + "x" + std::to_string(in.width) + "x" + std::to_string(in.channels) +
       " " + tv::channel_order_name(in.order) + ", value = pixel * " + g9(in.scale) + " + " + g9(in.offset) + "\n";
  s += "classes: " + std::to_string(plan.desc.num_classes) + ":";
  for (size_t i = 0; i < m.labels.size(); ++i) s += (i ? ", " : " ") + one_line(m.labels[i]);
  if (is_detector(m)) {
    const tv::Shape& grid = plan.layers[plan.num_layers - 1].out;
    s += "\ntask: detect (a grid of " + std::to_string(grid.h) + "x" + std::to_string(grid.w) +
         " cells, channel 0 the background; an object at probability " + g9(plan.desc.detect_threshold) + " or more)";
  }
  s += "\nlayers:\n";
  std::snprintf(line, sizeof line, "  %3s  %-38s %-12s %10s %12s %12s\n", "#", "layer", "output", "params",
                "float bytes", "int8 bytes");
  s += line;
  for (const auto& l : f.layers) {
    std::string what = l.type + (l.detail.empty() ? "" : " " + l.detail);
    std::string shape = std::to_string(l.out.h) + "x" + std::to_string(l.out.w) + "x" + std::to_string(l.out.c);
    std::snprintf(line, sizeof line, "  %3d  %-38s %-12s %10s %12s %12s\n", l.index, what.c_str(), shape.c_str(),
                  grouped(l.params).c_str(), grouped(l.bytes_float).c_str(), grouped(l.bytes_int8).c_str());
    s += line;
  }
  std::snprintf(line, sizeof line, "  %3s  %-38s %-12s %10s %12s %12s\n", "", "total", "", grouped(f.params).c_str(),
                grouped(f.bytes_float).c_str(), grouped(f.bytes_int8).c_str());
  s += line;
  s += "forward pass: " + grouped(plan.flops_forward) + " FLOPs\n";
  s += std::string("memory on the ESP32-S3 (bytes; ") + (m.int8 ? "int8" : "float") + " engine" +
       (m.int8 ? ", training figures of the float model it came from" : "") + "):\n";
  s += "  inference: work arena " + grouped(f.infer.work_bytes) + " + weights " + grouped(f.infer.params_bytes) +
       " = " + grouped(f.infer.total_bytes) + "\n";
  s += "  training, 1 lane: " + grouped(f.train1.total_bytes) + "\n";
  s += "  training, 2 lanes: " + grouped(f.train2.total_bytes) + " (the default)\n";
  s += "training per update mode (tvtrain --update; 2 lanes, Adam):\n" + update_modes_text(update_modes_of(plan), "  ");
  s += "provenance:";
  if (m.provenance.empty()) {
    s += " (none)\n";
  } else {
    s += "\n";
    size_t pos = 0;
    while (pos < m.provenance.size()) {
      size_t nl = m.provenance.find('\n', pos);
      if (nl == std::string::npos) nl = m.provenance.size();
      std::string l = m.provenance.substr(pos, nl - pos);
      while (!l.empty() && l.back() == '\0') l.pop_back();
      if (!l.empty()) s += "  " + l + "\n";
      pos = nl + 1;
    }
  }
  if (req.budget) {
    auto verdict = [&](size_t need) { return need <= req.budget ? std::string("FITS") : std::string("DOES NOT FIT"); };
    s += "budget " + req.budget_text + " = " + grouped(req.budget) + " bytes: " + verdict(f.infer.total_bytes) +
         " (inference, weights in RAM)\n";
    s += "  inference " + grouped(f.infer.total_bytes) + ": " + verdict(f.infer.total_bytes) + "\n";
    s += "  training, 1 lane " + grouped(f.train1.total_bytes) + ": " + verdict(f.train1.total_bytes) + "\n";
    s += "  training, 2 lanes " + grouped(f.train2.total_bytes) + ": " + verdict(f.train2.total_bytes) + "\n";
  }
  return s;
}

bool info_fits(const LoadedModel& m, const InfoRequest& req) {
  return req.budget == 0 || gather(m).infer.total_bytes <= req.budget;
}

std::string info_json(const LoadedModel& m, const InfoRequest& req) {
  using json = nlohmann::ordered_json;
  const InfoReport f = gather(m);
  const tv::ModelPlan& plan = *m.plan;
  const tv::InputDesc& in = plan.desc.input;
  json j;
  j["file"] = req.source;
  j["format"] = m.format;
  j["dtype"] = m.int8 ? "int8" : "float32";
  j["size_bytes"] = f.size;
  j["crc32"] = hex32(f.crc);
  j["input"] = {{"height", in.height},     {"width", in.width},
                {"channels", in.channels}, {"order", tv::channel_order_name(in.order)},
                {"scale", in.scale},       {"offset", in.offset}};
  j["num_classes"] = plan.desc.num_classes;
  j["labels"] = m.labels;
  if (is_detector(m)) {  // a classifier's JSON keeps its keys
    const tv::Shape& grid = plan.layers[plan.num_layers - 1].out;
    j["task"] = "detect";
    j["grid"] = {{"height", grid.h}, {"width", grid.w}};
    j["threshold"] = plan.desc.detect_threshold;
  }
  json layers = json::array();
  for (const auto& l : f.layers)
    layers.push_back({{"index", l.index},
                      {"type", l.type},
                      {"detail", l.detail},
                      {"output", {l.out.h, l.out.w, l.out.c}},
                      {"params", l.params},
                      {"bytes_float", l.bytes_float},
                      {"bytes_int8", l.bytes_int8}});
  j["layers"] = layers;
  j["params"] = f.params;
  j["bytes_float"] = f.bytes_float;
  j["bytes_int8"] = f.bytes_int8;
  j["flops_forward"] = plan.flops_forward;
  auto train = [](const tv::TrainMemory& t, int lanes) {
    return json{{"lanes", lanes},
                {"total_bytes", t.total_bytes},
                {"params_bytes", t.params_bytes},
                {"grad_bytes", t.grad_bytes},
                {"optimizer_bytes", t.optimizer_bytes},
                {"activation_bytes", t.activation_bytes},
                {"scratch_bytes", t.scratch_bytes}};
  };
  j["memory"] = {{"target", "esp32-s3"},
                 {"float_engine", !m.int8},
                 {"engine", m.int8 ? "int8" : "float"},
                 {"inference",
                  {{"work_bytes", f.infer.work_bytes},
                   {"params_bytes", f.infer.params_bytes},
                   {"total_bytes", f.infer.total_bytes}}},
                 {"training_1_lane", train(f.train1, 1)},
                 {"training_2_lanes", train(f.train2, 2)}};
  j["update_modes"] = update_modes_json(update_modes_of(plan));
  std::string prov = m.provenance;
  while (!prov.empty() && prov.back() == '\0') prov.pop_back();
  j["provenance"] = prov;
  if (req.budget) {
    j["budget"] = {{"bytes", req.budget},
                   {"fits", f.infer.total_bytes <= req.budget},
                   {"inference_fits", f.infer.total_bytes <= req.budget},
                   {"training_1_lane_fits", f.train1.total_bytes <= req.budget},
                   {"training_2_lanes_fits", f.train2.total_bytes <= req.budget}};
  } else {
    j["budget"] = nullptr;
  }
  return json_text(j);
}

}  // namespace tvh
