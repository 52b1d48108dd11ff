// The ESP32-S3 export of a TinyVision int8 model (espdl_export) and the synthetic test picture.
#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <set>

#include "espdl_generated.h"
#include "host/base/error.h"
#include "host/espdl/export_graph.h"
#include "host/espdl/writer.h"
#include "host/layers/layer_host.h"
#include "host/model/s3_limits.h"
#include "host/quant/q8_reference.h"
#include "tv/int8/int8_ops.h"
#include "tv/int8/q8_model.h"
#include "tv/model/blob.h"

namespace tvh {

std::vector<uint8_t> espdl_synthetic_image(int height, int width, int channels) {
  if (height <= 0 || width <= 0 || channels <= 0) return {};
  std::vector<uint8_t> img(size_t(height) * width * channels);
  const int cy = height / 2, cx = width / 2, r = std::max(1, std::min(height, width) / 4);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      int rgb[3] = {width > 1 ? x * 255 / (width - 1) : 128, height > 1 ? y * 255 / (height - 1) : 128,
                    (width + height > 2) ? (x + y) * 255 / (width + height - 2) : 128};
      rgb[2] = 255 - rgb[2];
      const int dy = y - cy, dx = x - cx;
      if (dy * dy + dx * dx <= r * r) rgb[0] = 250, rgb[1] = 220, rgb[2] = 40;  // a bright disc
      if (y >= height * 3 / 4 && y < height * 3 / 4 + std::max(1, height / 10))
        rgb[0] = rgb[1] = rgb[2] = 15;  // a dark bar
      uint8_t* px = img.data() + (size_t(y) * width + x) * channels;
      if (channels == 1) {
        px[0] = tv::luma_u8(uint8_t(rgb[0]), uint8_t(rgb[1]), uint8_t(rgb[2]));
      } else {
        for (int c = 0; c < channels; ++c) px[c] = uint8_t(rgb[c % 3]);
      }
    }
  return img;
}

namespace {

// Builds the graph layer by layer; `cur` is the tensor the next node reads.
class Exporter : public ExportGraph {
 public:
  Exporter(const LoadedModel& m, const std::string& source) : ExportGraph(*m.plan, source), m_(m) {}

  EspdlExport run(const EspdlExportOptions& options) {
    if (!m_.int8)
      throw Error(source_ +
                  ": is a float model; an .espdl needs an int8 model, so quantize it first "
                  "(tvquant " +
                  source_ + " --calib DATASET -o MODEL.q8.tvb).");
    bind();
    EspdlExport out;
    EspdlModel& g = out.model;
    g.source = source_;
    g.ir_version = 8;  // esp-ppq's ONNX_VERSION
    g.producer_name = "TinyVision tvexport";
    g.producer_version = options.version;
    g.model_version = 1;
    g.graph_name = "tinyvision";
    const tv::InputDesc& in = plan_.desc.input;
    const int e0 = q8_->act_exps[0];
    cur_ = {"input", {1, in.height, in.width, in.channels}, e0};
    EspdlValueInfo input_info = value("input", cur_.dims, e0);
    g.inputs.push_back(input_info);
    g.value_info.push_back(input_info);

    const int L = plan_.num_layers;
    for (int i = 0; i < L; ++i) i = layer(g, i, out);
    if (g.nodes.empty()) throw Error(source_ + ": has no layer that ESP-DL would run (only Flatten of a flat tensor).");
    // A classifier's logits are "output"; a detector's grid of per-cell logits is "grid".
    const bool detector = plan_.desc.task == tv::Task::Detect;
    rename_output(g, detector ? "grid" : "output");
    g.outputs.push_back(value(cur_.name, cur_.dims, cur_.exp));

    test_vectors(options, out);
    metadata(options, out);
    out.bytes = espdl_serialize(g);
    self_check(out);
    return out;
  }

 private:
  const LoadedModel& m_;
  const tv::BlobView* view_ = nullptr;
  std::vector<int64_t> acc_bound_;

  // The loaded model's decoded view and int8 engine (decoded and bound once, by decode_model).
  void bind() {
    if (!m_.view) throw Error(source_ + ": not a .tvb blob.");
    view_ = m_.view.get();
    // What ESP-DL cannot express, named before q8_bind's shorter refusals: adaptive pools with unequal
    // bins, and per-channel exponents (q8_bind accepts them; the S3 cannot run them).
    for (int i = 0; i < plan_.num_layers; ++i) {
      const tv::LayerPlan& lp = plan_.layers[i];
      if (plan_.desc.layers[i].type == tv::LayerType::AdaptiveAvgPool2D && !tv::equal_bins(lp))
        refuse(i, "has bins of unequal size (" + std::to_string(lp.in.h) + "x" + std::to_string(lp.in.w) + " into " +
                      std::to_string(lp.out.h) + "x" + std::to_string(lp.out.w) +
                      "), which no single ESP-DL AveragePool expresses");
      if (!tv::layer_has_params(plan_.desc.layers[i].type)) continue;
      const tv::BlobTensor* w = tv::blob_find(*view_, i, tv::TensorRole::Weight);
      if (w && w->exp_count > 0)
        refuse(i,
               "has one weight exponent per output channel, which the ESP32-S3 cannot run (ESP-DL has "
               "per-channel exponents only on the P4); quantize it per tensor (tvquant without --per-channel)");
    }
    if (!m_.engine)
      throw Error(source_ + ": the int8 model cannot run: " + status_message(m_.engine_status, &plan_.desc) + ".");
    q8_ = m_.engine.get();
    accumulation_notes();
  }

  // Emits the node(s) of layer i (and of a ReLU fused into it): its host row's emission (host/layers/layer_host.cpp);
  // returns the last layer index consumed.
  int layer(EspdlModel& g, int i, EspdlExport& out) {
    return host_layer(plan_.desc.layers[i].type).espdl(*this, g, i, out);
  }

  // The running sums any input image can produce, layer by layer, from the int8 values each tensor
  // can hold (pixels 0..255 at the input; [0, 127] after ReLU; a table's range; ...): with the input
  // interval widened to contain 0 (padding and skipped taps), every running sum of output o lies in
  // [min(b, 0) + sum_i min(w_i lo, w_i hi), max(b, 0) + sum_i max(w_i lo, w_i hi)], whatever the order.
  // A layer whose bound leaves the S3's 20-bit lanes gets a note (tvquant's default never writes one).
  void accumulation_notes() {
    Int8Interval iv = input_interval(plan_.desc.input, q8_->act_exps[0]);
    acc_bound_.assign(size_t(plan_.num_layers), 0);
    for (int i = 0; i < plan_.num_layers; ++i) {
      const tv::LayerDesc& d = plan_.desc.layers[i];
      const tv::LayerPlan& lp = plan_.layers[i];
      const int e_in = q8_->act_exps[i], e_out = q8_->act_exps[i + 1];
      if (!tv::layer_has_params(d.type)) {
        iv = parameterless_interval(d, e_in, e_out, iv);
        continue;
      }
      // Filters as rows of `taps` weights per output; a depthwise filter [taps][C] is strided by C.
      const bool dw = d.type == tv::LayerType::DepthwiseConv2D;
      const size_t outs = lp.bias_count, taps = lp.weight_count / outs;
      const int shift = e_out - e_in - q8_->weight_exp[i];
      const int8_t* w = q8_->weights[i];
      int64_t bound = 0, out_lo = 127, out_hi = -128;
      for (size_t o = 0; o < outs; ++o) {
        const FilterSums s = filter_sums(
            q8_->biases[i][o], int(taps), [&](int t) { return w[dw ? t * outs + o : o * taps + t]; }, iv);
        bound = std::max(bound, s.bound);
        out_lo = std::min<int64_t>(out_lo, tv::requantize_s8(s.end_lo, shift));
        out_hi = std::max<int64_t>(out_hi, tv::requantize_s8(s.end_hi, shift));
      }
      acc_bound_[size_t(i)] = bound;
      if (bound > tv::kS3AccLimit)
        notes_.push_back("layer " + std::to_string(i) + " (" + type_name(i) +
                         "): some input image can drive a running sum to " + std::to_string(bound) +
                         ", beyond the S3's 20-bit lanes (524287), and the board may then compute another "
                         "result than our engine");
      iv = Int8Interval{out_lo, out_hi};
    }
  }

  void rename_output(EspdlModel& g, const std::string& name) {
    const std::string old = cur_.name;
    for (EspdlNode& n : g.nodes)
      for (std::string& o : n.outputs)
        if (o == old) o = name;
    for (EspdlValueInfo& v : g.value_info)
      if (v.name == old) v.name = name;
    cur_.name = name;
  }

  void test_vectors(const EspdlExportOptions& options, EspdlExport& out) {
    const tv::InputDesc& in = plan_.desc.input;
    const size_t n_in = plan_.input.size();
    std::vector<uint8_t> image = options.test_image;
    if (image.empty()) image = espdl_synthetic_image(in.height, in.width, in.channels);
    if (image.size() != n_in)
      throw Error(source_ + ": the test image holds " + std::to_string(image.size()) + " bytes, not the " +
                  std::to_string(n_in) + " of a " + std::to_string(in.height) + "x" + std::to_string(in.width) + "x" +
                  std::to_string(in.channels) + " input.");
    // The input exactly as tv::q8_infer_u8 quantizes a camera frame.
    const int e0 = q8_->act_exps[0];
    out.test_input.resize(n_in);
    for (size_t k = 0; k < n_in; ++k)
      out.test_input[k] = tv::quantize_one_s8(float(image[k]) * in.scale + in.offset, e0);
    std::vector<int8_t> work(tv::q8_memory(plan_).work_bytes + 16);
    const int8_t* y = nullptr;
    const tv::Status run = tv::q8_run(*q8_, out.test_input.data(), work.data(), &y);
    if (!run.ok()) throw Error(source_ + ": the int8 model failed: " + status_message(run, &plan_.desc) + ".");
    const size_t n_out = plan_.layers[plan_.num_layers - 1].out.size();
    out.test_output.assign(y, y + n_out);
    if (n_out != espdl_element_count(cur_.dims))
      throw Error(source_ + ": internal error: the graph output " + espdl_dims_text(cur_.dims) + " does not hold the " +
                  std::to_string(n_out) + " outputs of the model.");

    // The reference interpreter (its own conv / dense accumulators) must agree, and the accumulations this input
    // reaches must fit the S3's 20-bit lanes for Model::test() to be able to match on the board.
    const Q8Reference ref = q8_reference_load(*view_, plan_);
    std::vector<AccObserved> observed(size_t(plan_.num_layers));
    const std::vector<int8_t> y_ref = q8_reference_run(ref, out.test_input.data(), 0, &observed);
    if (y_ref != out.test_output)
      throw Error(source_ +
                  ": internal error: the int8 engine and the reference interpreter disagree on the test "
                  "image.");
    for (int i = 0; i < plan_.num_layers; ++i)
      if (observed[size_t(i)].max_partial > tv::kS3AccLimit)
        notes_.push_back("the test image drives layer " + std::to_string(i) + " (" + type_name(i) +
                         ")'s running sum to " + std::to_string(observed[size_t(i)].max_partial) +
                         ", beyond the S3's 20-bit lanes: expect Model::test() to fail on the board for that reason");
    if (plan_.desc.task == tv::Task::Classify)  // a detector's grid has no one class
      out.test_class = int(std::max_element(out.test_output.begin(), out.test_output.end()) - out.test_output.begin());

    EspdlModel& g = out.model;
    g.test_inputs.push_back(
        make_tensor("input", g.inputs[0].dims, espdl::TensorDataType_INT8, out.test_input.data(), n_in, e0, ""));
    g.test_outputs.push_back(
        make_tensor(cur_.name, cur_.dims, espdl::TensorDataType_INT8, out.test_output.data(), n_out, cur_.exp, ""));
  }

  void metadata(const EspdlExportOptions& options, EspdlExport& out) {
    EspdlModel& g = out.model;
    const tv::InputDesc& in = plan_.desc.input;
    std::string labels;
    for (size_t k = 0; k < m_.labels.size(); ++k) labels += (k ? "\n" : "") + m_.labels[k];
    char crc[16];
    std::snprintf(crc, sizeof crc, "0x%08X", unsigned(m_.crc));
    const std::string shape =
        std::to_string(in.height) + "x" + std::to_string(in.width) + "x" + std::to_string(in.channels);
    const bool detector = plan_.desc.task == tv::Task::Detect;
    const std::string input_text = "Input 'input': int8 " + espdl_dims_text(g.inputs[0].dims) + " NHWC " +
                                   tv::channel_order_name(in.order) + ", q = round(pixel * " + fmt_float(in.scale) +
                                   " + " + fmt_float(in.offset) + ") at exponent " + std::to_string(q8_->act_exps[0]);
    if (detector)
      g.doc_string = "TinyVision int8 detector (background + " + std::to_string(plan_.desc.num_classes - 1) +
                     " object classes, the whole frame resized to the input, never cropped). " + input_text +
                     ". Output '" + cur_.name + "': int8 logits " + espdl_dims_text(cur_.dims) + " at exponent " +
                     std::to_string(cur_.exp) + ", a grid of cells of 8x8 input pixels, channel 0 the background " +
                     "(no Softmax node: a softmax per cell, then a cell is an object when its most probable object " +
                     "class reaches the threshold " + fmt_float(plan_.desc.detect_threshold) +
                     "; touching cells of one class are one object, tv::grid_objects).";
    else
      g.doc_string = "TinyVision int8 classifier (" + std::to_string(plan_.desc.num_classes) + " classes). " +
                     input_text + ". Output '" + cur_.name + "': int8 logits " + espdl_dims_text(cur_.dims) +
                     " at exponent " + std::to_string(cur_.exp) + " (argmax = class; no Softmax).";
    out.notes = notes_;
    out.acc_bound = acc_bound_;
    g.metadata = {{"target", "esp32s3"},
                  {"labels", labels},
                  {"input_shape_hwc", shape},
                  {"input_channel_order", tv::channel_order_name(in.order)},
                  {"input_scale", fmt_float(in.scale)},
                  {"input_offset", fmt_float(in.offset)},
                  {"input_exponent", std::to_string(q8_->act_exps[0])},
                  {"output_exponent", std::to_string(cur_.exp)},
                  {"test_image", options.test_image_source},
                  {"source_crc32", crc}};
    if (detector) {
      g.metadata.emplace_back("task", "detect");
      g.metadata.emplace_back("detect_threshold", fmt_float(plan_.desc.detect_threshold));
      g.metadata.emplace_back("grid_hw", std::to_string(cur_.dims[1]) + "x" + std::to_string(cur_.dims[2]));
    }
    for (const std::string& note : notes_) g.metadata.emplace_back("note", note);
  }

  // Reads the bytes back as any .espdl and checks them the way `tvexport verify` does.
  void self_check(const EspdlExport& out) const {
    const EspdlModel back = espdl_parse(out.bytes.data(), out.bytes.size(), source_ + " (.espdl written)");
    const std::vector<std::string> problems = espdl_loader_problems(back);
    if (!problems.empty()) throw Error("internal error: " + problems[0]);
    const EspdlRunReport r = espdl_run_test_vectors(back);
    if (!r.passed) throw Error("internal error: " + r.message + ".");
  }
};

}  // namespace

EspdlExport espdl_export(const LoadedModel& m, const std::string& source, const EspdlExportOptions& options) {
  return Exporter(m, source).run(options);
}

}  // namespace tvh
