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
#include "host/error.h"
#include "host/espdl/writer.h"
#include "host/q8_reference.h"
#include "host/s3_limits.h"
#include "tv/blob.h"
#include "tv/int8/int8_ops.h"
#include "tv/int8/q8_model.h"

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

EspdlAttribute attr_int(const std::string& name, int64_t v) {
  EspdlAttribute a;
  a.name = name, a.type = espdl::AttributeType_INT, a.i = v;
  return a;
}
EspdlAttribute attr_float(const std::string& name, float v) {
  EspdlAttribute a;
  a.name = name, a.type = espdl::AttributeType_FLOAT, a.f = v;
  return a;
}
EspdlAttribute attr_string(const std::string& name, const std::string& v) {
  EspdlAttribute a;
  a.name = name, a.type = espdl::AttributeType_STRING, a.s = v;
  return a;
}
EspdlAttribute attr_ints(const std::string& name, const std::vector<int64_t>& v) {
  EspdlAttribute a;
  a.name = name, a.type = espdl::AttributeType_INTS, a.ints = v;
  return a;
}

template <typename T>
EspdlTensor make_tensor(const std::string& name, const std::vector<int64_t>& dims, EspdlDataType type, const T* values,
                        size_t count, int exponent, const std::string& doc) {
  EspdlTensor t;
  t.name = name;
  t.dims = dims;
  t.dtype = type;
  t.raw.assign((count * sizeof(T) + 15) / 16 * 16, 0);
  if (count) std::memcpy(t.raw.data(), values, count * sizeof(T));
  t.exponents = {exponent};
  t.doc = doc;
  return t;
}

std::string fmt_float(float v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.9g", double(v));
  return b;
}

bool is_power_of_two(int64_t v) {
  return v > 0 && (v & (v - 1)) == 0;
}

// Builds the graph layer by layer; `cur` is the tensor the next node reads.
class Exporter {
 public:
  Exporter(const LoadedModel& m, const std::string& source) : m_(m), plan_(*m.plan), source_(source) {}

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
    rename_output(g, "output");
    g.outputs.push_back(value(cur_.name, cur_.dims, cur_.exp));

    test_vectors(options, out);
    metadata(options, out);
    out.bytes = espdl_serialize(g);
    self_check(out);
    return out;
  }

 private:
  struct Cur {
    std::string name;
    std::vector<int64_t> dims;
    int exp = 0;
  };
  const LoadedModel& m_;
  const tv::ModelPlan& plan_;
  std::string source_;
  const tv::BlobView* view_ = nullptr;
  const tv::Q8Model* q8_ = nullptr;
  Cur cur_;
  int lut_count_ = 0;
  std::vector<std::string> notes_;
  std::vector<int64_t> acc_bound_;

  [[noreturn]] void refuse(int layer, const std::string& what) const {
    throw Error(source_ + ": layer " + std::to_string(layer) + " (" + type_name(layer) + ") " + what + ".");
  }
  std::string type_name(int i) const { return tv::layer_type_name(plan_.desc.layers[i].type); }
  std::string base(int i) const { return "l" + std::to_string(i) + "_" + type_name(i); }

  static EspdlValueInfo value(const std::string& name, const std::vector<int64_t>& dims, int exp) {
    EspdlValueInfo v;
    v.name = name;
    v.dims = dims;
    v.dtype = EspdlDataType::Int8;
    v.exponents = {exp};
    return v;
  }

  // The loaded model's decoded view and int8 engine (decoded and bound once, by decode_model).
  void bind() {
    if (!m_.view) throw Error(source_ + ": not a .tvb blob.");
    view_ = m_.view.get();
    // What ESP-DL cannot express, named before q8_bind's shorter refusals: adaptive pools with unequal
    // bins, and per-channel exponents (q8_bind accepts them; the S3 cannot run them).
    for (int i = 0; i < plan_.num_layers; ++i) {
      const tv::LayerPlan& lp = plan_.layers[i];
      if (plan_.desc.layers[i].type == tv::LayerType::AdaptiveAvgPool2D &&
          (lp.in.h % lp.out.h != 0 || lp.in.w % lp.out.w != 0))
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

  // Emits the node(s) of layer i (and of a ReLU fused into it); returns the last layer index consumed.
  int layer(EspdlModel& g, int i, EspdlExport& out) {
    const tv::LayerDesc& d = plan_.desc.layers[i];
    const tv::LayerPlan& lp = plan_.layers[i];
    const int e_in = q8_->act_exps[i];
    const int L = plan_.num_layers;
    const bool relu_next = i + 1 < L && plan_.desc.layers[i + 1].type == tv::LayerType::ReLU;
    switch (d.type) {
      case tv::LayerType::Conv2D:
      case tv::LayerType::DepthwiseConv2D: {
        need_spatial(i);
        const int last = relu_next ? i + 1 : i;
        const tv::Geom2D& geo = lp.geom;
        const bool dw = d.type == tv::LayerType::DepthwiseConv2D;
        const int e_w = q8_->weight_exp[i];
        check_bias(i, lp.bias_count);
        EspdlNode n = node("Conv", base(i), last);
        const std::string wname = base(i) + ".weight", bname = base(i) + ".bias";
        const int8_t* w = q8_->weights[i];
        if (dw) {
          const std::vector<int8_t> packed = ours_depthwise_filter_to_s3(w, geo.k_h, geo.k_w, geo.in_c);
          g.initializers.push_back(make_tensor(wname, {geo.k_h, geo.k_w, geo.in_c, 1}, EspdlDataType::Int8,
                                               packed.data(), packed.size(), e_w,
                                               s3_filter_layout_doc(geo.in_c, false)));
        } else {
          const std::vector<int8_t> packed = ours_conv_filter_to_s3(w, geo.k_h, geo.k_w, geo.in_c, geo.out_c);
          g.initializers.push_back(make_tensor(wname, {geo.k_h, geo.k_w, geo.in_c, geo.out_c}, EspdlDataType::Int8,
                                               packed.data(), packed.size(), e_w,
                                               s3_filter_layout_doc(geo.out_c, false)));
        }
        g.initializers.push_back(make_tensor(bname, {int64_t(lp.bias_count)}, EspdlDataType::Int32, q8_->biases[i],
                                             lp.bias_count, e_in + e_w, "layout ==> UNK"));
        n.inputs = {cur_.name, wname, bname};
        const int pad_bottom = end_pad(i, geo.in_h, geo.k_h, geo.stride_h, geo.pad_top, geo.out_h);
        const int pad_right = end_pad(i, geo.in_w, geo.k_w, geo.stride_w, geo.pad_left, geo.out_w);
        n.attributes = {attr_string("activation", relu_next ? "Relu" : "Linear"),
                        attr_ints("dilations", {1, 1}),
                        attr_int("group", dw ? geo.in_c : 1),
                        attr_ints("kernel_shape", {geo.k_h, geo.k_w}),
                        attr_ints("pads", {geo.pad_top, geo.pad_left, pad_bottom, pad_right}),
                        attr_string("quant_type", "S8"),
                        attr_ints("strides", {geo.stride_h, geo.stride_w})};
        emit(g, std::move(n), {1, geo.out_h, geo.out_w, geo.out_c}, last,
             std::string(dw ? "Conv (depthwise, group " + std::to_string(geo.in_c) + ")" : "Conv") +
                 (relu_next ? ", activation Relu" : ", activation Linear"),
             out);
        return last;
      }
      case tv::LayerType::Dense: {
        const int last = relu_next ? i + 1 : i;
        const int in_n = int(lp.in.size()), out_n = lp.out.c;
        if (cur_.dims.size() != 2) flatten(g, base(i) + "_flatten", i, out, true);
        if (int64_t(espdl_element_count(cur_.dims)) != in_n)
          refuse(i, "reads " + std::to_string(in_n) + " values but its input tensor is " + espdl_dims_text(cur_.dims));
        const int e_w = q8_->weight_exp[i];
        check_bias(i, lp.bias_count);
        const std::string wname = base(i) + ".weight", bname = base(i) + ".bias";
        const std::vector<int8_t> packed = ours_conv_filter_to_s3(q8_->weights[i], 1, 1, in_n, out_n);
        g.initializers.push_back(make_tensor(wname, {1, 1, in_n, out_n}, EspdlDataType::Int8, packed.data(),
                                             packed.size(), e_w, s3_filter_layout_doc(out_n, false)));
        g.initializers.push_back(make_tensor(bname, {out_n}, EspdlDataType::Int32, q8_->biases[i], size_t(out_n),
                                             e_in + e_w, "layout ==> UNK"));
        EspdlNode n = node("Gemm", base(i), last);
        n.inputs = {cur_.name, wname, bname};
        n.attributes = {attr_string("activation", relu_next ? "Relu" : "Linear"), attr_float("alpha", 1.0f),
                        attr_float("beta", 1.0f), attr_string("quant_type", "S8"), attr_int("transB", 0)};
        emit(g, std::move(n), {1, out_n}, last,
             std::string("Gemm (transB 0") + (relu_next ? ", activation Relu)" : ", activation Linear)"), out);
        return last;
      }
      case tv::LayerType::MaxPool2D:
      case tv::LayerType::AvgPool2D: {
        need_spatial(i);
        const tv::Geom2D& geo = lp.geom;
        const bool avg = d.type == tv::LayerType::AvgPool2D;
        pool_node(g, i, avg, geo.k_h, geo.k_w, geo.stride_h, geo.stride_w, {1, geo.out_h, geo.out_w, geo.out_c}, out);
        return i;
      }
      case tv::LayerType::AdaptiveAvgPool2D: {
        need_spatial(i);
        if (lp.out.h == 1 && lp.out.w == 1) {
          global_pool(g, i, out, "GlobalAveragePool (1 x 1 bins)");
          return i;
        }
        const int kh = lp.in.h / lp.out.h, kw = lp.in.w / lp.out.w;
        pool_node(g, i, true, kh, kw, kh, kw, {1, lp.out.h, lp.out.w, lp.out.c}, out);
        return i;
      }
      case tv::LayerType::GlobalAvgPool:
        need_spatial(i);
        global_pool(g, i, out, "GlobalAveragePool");
        return i;
      case tv::LayerType::ReLU: {
        EspdlNode n = node("Relu", base(i), i);
        n.inputs = {cur_.name};
        n.attributes = {attr_string("quant_type", "S8")};
        emit(g, std::move(n), cur_.dims, i, "Relu", out);
        return i;
      }
      case tv::LayerType::LeakyReLU: {
        const int e_out = q8_->act_exps[i + 1];
        const std::string table = "LeakyRelu_lut_" + std::to_string(lut_count_++);
        g.initializers.push_back(make_tensor(table, {256}, EspdlDataType::Int8, q8_->luts[i], 256, e_out, ""));
        EspdlNode n = node("LeakyRelu", base(i), i);
        n.inputs = {cur_.name};
        n.attributes = {attr_float("alpha", d.alpha), attr_string("lut", table), attr_string("quant_type", "S8")};
        emit(g, std::move(n), cur_.dims, i,
             "LeakyRelu (alpha " + fmt_float(d.alpha) + ", 256-entry table " + table + ")", out);
        return i;
      }
      case tv::LayerType::Clip: {
        // The clamp at [quantize(lo), quantize(hi)] of q8_run, as a table (esp-ppq exports Clip as a LUT)
        // with ONNX's min/max inputs beside it (ESP-DL's Clip module reads them when there is no table).
        const int8_t lo = tv::quantize_one_s8(d.lo, e_in), hi = tv::quantize_one_s8(d.hi, e_in);
        if (lo == -128 && hi == 127) {  // the clamp holds all of int8 at this exponent: nothing to run
          out.mapping.push_back(base(i) + " -> (nothing: [" + fmt_float(d.lo) + ", " + fmt_float(d.hi) +
                                "] covers every int8 value at exponent " + std::to_string(e_in) + ")");
          return i;
        }
        int8_t lut[256];
        for (int q = -128; q < 128; ++q) lut[q + 128] = int8_t(q < lo ? lo : (q > hi ? hi : q));
        const std::string table = "Clip_lut_" + std::to_string(lut_count_++);
        const std::string mn = base(i) + ".min", mx = base(i) + ".max";
        g.initializers.push_back(make_tensor(mn, {1}, EspdlDataType::Int8, &lo, 1, e_in, "layout ==> UNK"));
        g.initializers.push_back(make_tensor(mx, {1}, EspdlDataType::Int8, &hi, 1, e_in, "layout ==> UNK"));
        g.initializers.push_back(make_tensor(table, {256}, EspdlDataType::Int8, lut, 256, e_in, ""));
        EspdlNode n = node("Clip", base(i), i);
        n.inputs = {cur_.name, mn, mx};
        n.attributes = {attr_string("lut", table), attr_string("quant_type", "S8")};
        emit(g, std::move(n), cur_.dims, i,
             "Clip (min " + std::to_string(lo) + ", max " + std::to_string(hi) + " at exponent " +
                 std::to_string(e_in) + ", 256-entry table " + table + ")",
             out);
        return i;
      }
      case tv::LayerType::Flatten:
        if (cur_.dims.size() == 2) {
          out.mapping.push_back(base(i) + " -> (nothing: its input is already flat)");
          return i;
        }
        flatten(g, base(i), i, out, false);
        return i;
    }
    refuse(i, "is a layer type ESP-DL export does not know");
  }

  void need_spatial(int i) const {
    if (cur_.dims.size() != 4)
      refuse(i, "works on an image but follows a flattened tensor " + espdl_dims_text(cur_.dims) +
                    "; ESP-DL's window ops need [1, H, W, C]");
  }

  // The end padding that makes ESP-DL's output size (in + begin + end - k) / stride + 1 equal ours.
  int end_pad(int i, int in, int k, int stride, int begin, int out) const {
    int end = (out - 1) * stride + k - in - begin;
    if (end < 0) end = 0;
    if ((in + begin + end - k) / stride + 1 != out)
      refuse(i, "has a window geometry ESP-DL's Conv cannot reproduce (in " + std::to_string(in) + ", kernel " +
                    std::to_string(k) + ", stride " + std::to_string(stride) + ", out " + std::to_string(out) + ")");
    return end;
  }

  void check_bias(int i, size_t count) const {
    const int32_t* b = q8_->biases[i];
    for (size_t k = 0; k < count; ++k)
      if (b[k] < kS3BiasMin || b[k] > kS3BiasMax)
        refuse(i, "has the bias " + std::to_string(b[k]) + " (output " + std::to_string(k) +
                      ") outside the ESP32-S3's 20-bit bias range [-524288, 524287]; re-quantize it with tvquant, "
                      "which keeps biases in range");
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

  EspdlNode node(const std::string& op, const std::string& name, int last_layer) const {
    EspdlNode n;
    n.op_type = op;
    n.name = name;
    n.outputs = {base(last_layer) + "_out"};
    return n;
  }

  void emit(EspdlModel& g, EspdlNode n, const std::vector<int64_t>& dims, int last_layer, const std::string& what,
            EspdlExport& out) {
    const int exp = q8_->act_exps[last_layer + 1];
    std::string line = n.name;
    if (n.name != base(last_layer)) line += " + " + base(last_layer);  // a fused ReLU
    out.mapping.push_back(line + " -> " + what);
    cur_ = {n.outputs[0], dims, exp};
    g.value_info.push_back(value(cur_.name, dims, exp));
    g.nodes.push_back(std::move(n));
  }

  void flatten(EspdlModel& g, const std::string& name, int i, EspdlExport& out, bool inserted) {
    EspdlNode n;
    n.op_type = "Flatten";
    n.name = name;
    n.outputs = {name + "_out"};
    n.inputs = {cur_.name};
    n.attributes = {attr_int("axis", 1), attr_string("quant_type", "S8")};
    const std::vector<int64_t> dims = {1, int64_t(espdl_element_count(cur_.dims))};
    out.mapping.push_back(name + " -> Flatten (axis 1" + std::string(inserted ? ", inserted: Gemm reads [1, N]" : "") +
                          "; NHWC order = our HWC columns)");
    cur_ = {n.outputs[0], dims, cur_.exp};  // Flatten keeps the exponent
    g.value_info.push_back(value(cur_.name, dims, cur_.exp));
    g.nodes.push_back(std::move(n));
    (void)i;
  }

  void pool_node(EspdlModel& g, int i, bool avg, int kh, int kw, int sh, int sw, const std::vector<int64_t>& dims,
                 EspdlExport& out) {
    EspdlNode n = node(avg ? "AveragePool" : "MaxPool", base(i), i);
    n.inputs = {cur_.name};
    n.attributes = {attr_int("ceil_mode", 0)};
    if (avg) n.attributes.push_back(attr_int("count_include_pad", 1));
    n.attributes.push_back(attr_ints("kernel_shape", {kh, kw}));
    n.attributes.push_back(attr_ints("pads", {0, 0, 0, 0}));
    n.attributes.push_back(attr_string("quant_type", "S8"));
    n.attributes.push_back(attr_ints("strides", {sh, sw}));
    if (avg) area_note(i, int64_t(kh) * kw);
    emit(g, std::move(n), dims, i,
         std::string(avg ? "AveragePool " : "MaxPool ") + std::to_string(kh) + "x" + std::to_string(kw) + " stride " +
             std::to_string(sh) + "x" + std::to_string(sw),
         out);
  }

  void global_pool(EspdlModel& g, int i, EspdlExport& out, const std::string& what) {
    EspdlNode n = node("GlobalAveragePool", base(i), i);
    n.inputs = {cur_.name};
    n.attributes = {attr_string("quant_type", "S8")};
    area_note(i, cur_.dims[1] * cur_.dims[2]);
    emit(g, std::move(n), {1, 1, 1, cur_.dims[3]}, i, what, out);
  }

  void area_note(int i, int64_t area) {
    if (!is_power_of_two(area))
      notes_.push_back("layer " + std::to_string(i) + " (" + type_name(i) + ") averages over " + std::to_string(area) +
                       " cells, not a power of two: the S3 assembly multiplies by an approximation of 1/" +
                       std::to_string(area) + " and may differ by one step from this file's test output");
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

    // The independent reference interpreter must agree, and the accumulations this input reaches must
    // fit the S3's 20-bit lanes for Model::test() to be able to match on the board.
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
    out.test_class = int(std::max_element(out.test_output.begin(), out.test_output.end()) - out.test_output.begin());

    EspdlModel& g = out.model;
    g.test_inputs.push_back(
        make_tensor("input", g.inputs[0].dims, EspdlDataType::Int8, out.test_input.data(), n_in, e0, ""));
    g.test_outputs.push_back(
        make_tensor(cur_.name, cur_.dims, EspdlDataType::Int8, out.test_output.data(), n_out, cur_.exp, ""));
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
    g.doc_string = "TinyVision int8 classifier (" + std::to_string(plan_.desc.num_classes) +
                   " classes). Input 'input': int8 " + espdl_dims_text(g.inputs[0].dims) + " NHWC " +
                   tv::channel_order_name(in.order) + ", q = round(pixel * " + fmt_float(in.scale) + " + " +
                   fmt_float(in.offset) + ") at exponent " + std::to_string(q8_->act_exps[0]) + ". Output '" +
                   cur_.name + "': int8 logits " + espdl_dims_text(cur_.dims) + " at exponent " +
                   std::to_string(cur_.exp) + " (argmax = class; no Softmax).";
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
