// Running an .espdl file's embedded test vectors through the TinyVision int8 kernels.
//
// Tensors keep ESP-DL's channels-last storage ([N, W, C] for 1-D, [N, H, W, C] for 2-D data), so
// Flatten/Reshape are plain copies, exactly as on the device; the exporter inserts Transpose nodes
// where ONNX semantics need them.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <numeric>
#include <sstream>

#include "host/base/error.h"
#include "host/espdl/espdl.h"
#include "host/model/model_io.h"
#include "tv/int8/int8_ops.h"

namespace tvh {
namespace {

struct Value {
  std::vector<int64_t> dims;
  int exponent = 0;
  bool is_float = false;
  std::vector<int8_t> q;  // int8 payload (when !is_float)
  std::vector<float> f;   // float payload (Softmax output)
};

// Window parameters of a 1-D or 2-D Conv / pool node, in (h, w) order; 1-D data has h = 1.
struct Window {
  int kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  int pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
};

// Spatial layout of a channels-last value: batch, height, width, channels.
struct Spatial {
  int n = 1, h = 1, w = 1, c = 1;
};

class Runner {
 public:
  explicit Runner(const EspdlModel& m) : m_(m) {}

  EspdlRunReport run() {
    EspdlRunReport report;
    if (m_.test_inputs.empty() || m_.test_outputs.empty())
      throw Error(m_.source + ": has no embedded test vectors (test_inputs_value / test_outputs_value).");
    for (const EspdlTensor& t : m_.test_inputs) {
      if (t.dtype != espdl::TensorDataType_INT8)
        throw Error(m_.source + ": test input '" + t.name + "' is " + espdl_dtype_name(t.dtype) +
                    "; only INT8 test inputs are supported.");
      Value v;
      v.dims = t.dims;
      v.exponent = t.exponent();
      v.q = t.as_int8();
      values_[t.name] = std::move(v);
    }
    for (const EspdlNode& n : m_.nodes) {
      if (!run_node(n, report)) return report;  // a lookup table differs: reported already
      report.ops_run.push_back(n.op_type);
    }
    for (const EspdlTensor& t : m_.test_outputs) {
      auto it = values_.find(t.name);
      if (it == values_.end()) throw Error(m_.source + ": test output '" + t.name + "' is not produced by any node.");
      if (!compare(t, it->second, report)) return report;
      ++report.tensors_compared;
    }
    report.passed = true;
    report.message = "all " + std::to_string(report.tensors_compared) + " test outputs of " + m_.source +
                     " match after " + std::to_string(report.ops_run.size()) + " nodes";
    return report;
  }

 private:
  const EspdlModel& m_;
  std::map<std::string, Value> values_;

  [[noreturn]] void fail(const EspdlNode& n, const std::string& what) const {
    throw Error(m_.source + ": node '" + n.name + "' (" + n.op_type + ") " + what + ".");
  }

  void check(const EspdlNode& n, tv::Status s) const {
    if (!s.ok())
      fail(n, std::string("was refused by the int8 kernel: ") + tv::status_text(s.code) + status_figures_text(s));
  }

  // Refuses buffers beyond 2^26 elements (64 MiB; an ESP32-S3 has 8 MiB of PSRAM): a damaged file
  // must not drive the host out of memory.
  void check_size(const EspdlNode& n, double elements, const char* what) const {
    if (elements > double(size_t(1) << 26))
      fail(n, std::string("would need a ") + what + " of " + std::to_string(int64_t(elements)) +
                  " elements, more than this interpreter allows");
  }

  const Value& input(const EspdlNode& n, size_t i) const {
    if (i >= n.inputs.size()) fail(n, "lacks input " + std::to_string(i));
    auto it = values_.find(n.inputs[i]);
    if (it == values_.end()) fail(n, "reads '" + n.inputs[i] + "', which no earlier node produced");
    if (it->second.is_float) fail(n, "reads the float tensor '" + n.inputs[i] + "'; only int8 inputs are supported");
    return it->second;
  }

  const EspdlValueInfo* out_info(const EspdlNode& n) const {
    if (n.outputs.empty()) fail(n, "has no output");
    return m_.find_value_info(n.outputs[0]);
  }

  int out_exponent(const EspdlNode& n) const {
    const EspdlValueInfo* vi = out_info(n);
    if (!vi || vi->exponents.size() != 1)
      fail(n, "has no single exponent for its output '" + n.outputs[0] + "' in value_info");
    if (vi->exponents[0] < -kMaxExponent || vi->exponents[0] > kMaxExponent)
      fail(n, "has the implausible output exponent " + std::to_string(vi->exponents[0]));
    return int(vi->exponents[0]);
  }

  std::vector<int64_t> out_dims_hint(const EspdlNode& n) const {
    const EspdlValueInfo* vi = out_info(n);
    return vi ? vi->dims : std::vector<int64_t>();
  }

  void store(const EspdlNode& n, Value v) {
    const std::vector<int64_t> hint = out_dims_hint(n);
    if (!hint.empty() && espdl_element_count(hint) == espdl_element_count(v.dims)) v.dims = hint;
    values_[n.outputs[0]] = std::move(v);
  }

  // Output of an op that must keep its input's exponent (MaxPool, Flatten, Transpose, ...).
  int same_exponent(const EspdlNode& n, int e_in) const {
    const int e_out = out_exponent(n);
    if (e_out != e_in)
      fail(n, "changes the exponent from " + std::to_string(e_in) + " to " + std::to_string(e_out) +
                  ", which this op never does on ESP-DL");
    return e_out;
  }

  Spatial spatial(const EspdlNode& n, const Value& v) const {
    Spatial s;
    for (int64_t d : v.dims)
      if (d <= 0 || d > (int64_t(1) << 24)) fail(n, "has an input of dims " + espdl_dims_text(v.dims));
    if (v.dims.size() == 3) {
      s.n = int(v.dims[0]);
      s.w = int(v.dims[1]);
      s.c = int(v.dims[2]);
    } else if (v.dims.size() == 4) {
      s.n = int(v.dims[0]);
      s.h = int(v.dims[1]);
      s.w = int(v.dims[2]);
      s.c = int(v.dims[3]);
    } else {
      fail(n, "needs a 3-D [N, W, C] or 4-D [N, H, W, C] input, not " + espdl_dims_text(v.dims));
    }
    return s;
  }

  // `filter`: a Conv's filter, whose dims give the kernel size when the node has no kernel_shape (ESP-DL's
  // Conv reads it from the weights; pools need the attribute).
  Window window(const EspdlNode& n, bool two_d, const EspdlFilter* filter = nullptr) const {
    const std::string auto_pad = n.attr_string("auto_pad", "NOTSET");
    if (!auto_pad.empty() && auto_pad != "NOTSET") fail(n, "uses auto_pad = " + auto_pad);
    const size_t rank = two_d ? 2 : 1;
    auto pick = [&](const char* attr, size_t count, int64_t fallback) {
      std::vector<int64_t> v = n.attr_ints(attr);
      if (v.empty()) v.assign(count, fallback);
      if (v.size() != count)
        fail(n, std::string("has ") + std::to_string(v.size()) + " values in '" + attr + "' where " +
                    std::to_string(count) + " are expected");
      for (int64_t x : v)
        if (x < 0 || x > 4096) fail(n, std::string("has an out-of-range '") + attr + "' value");
      return v;
    };
    std::vector<int64_t> k = pick("kernel_shape", rank, 0);
    if (filter && n.attr_ints("kernel_shape").empty()) {
      if (two_d)
        k = {filter->kh, filter->kw};
      else
        k = {filter->kw};
    }
    const std::vector<int64_t> s = pick("strides", rank, 1);
    const std::vector<int64_t> d = pick("dilations", rank, 1);
    const std::vector<int64_t> p = pick("pads", 2 * rank, 0);  // ONNX: all begins, then all ends
    Window w;
    if (two_d) {
      w.kh = int(k[0]), w.kw = int(k[1]), w.sh = int(s[0]), w.sw = int(s[1]), w.dh = int(d[0]), w.dw = int(d[1]);
      w.pad_top = int(p[0]), w.pad_left = int(p[1]), w.pad_bottom = int(p[2]), w.pad_right = int(p[3]);
    } else {
      w.kw = int(k[0]), w.sw = int(s[0]), w.dw = int(d[0]);
      w.pad_left = int(p[0]), w.pad_right = int(p[1]);
    }
    if (w.kh <= 0 || w.kw <= 0 || w.sh <= 0 || w.sw <= 0 || w.dh <= 0 || w.dw <= 0)
      fail(n, "has a zero kernel size, stride or dilation");
    return w;
  }

  static int out_size(int in, int pad_begin, int pad_end, int k_eff, int stride, bool ceil_mode) {
    const int span = in + pad_begin + pad_end - k_eff;
    if (span < 0) return 0;
    int out = span / stride + 1;
    if (ceil_mode) {  // ONNX ceil mode; a window starting in the end padding is dropped
      out = (span + stride - 1) / stride + 1;
      if ((out - 1) * stride >= in + pad_begin) --out;
    }
    return out;
  }

  tv::Geom2D geom(const EspdlNode& n, const Spatial& s, const Window& w, int out_c, bool ceil_mode) const {
    tv::Geom2D g;
    g.in_h = s.h, g.in_w = s.w, g.in_c = s.c;
    g.k_h = w.dh * (w.kh - 1) + 1;
    g.k_w = w.dw * (w.kw - 1) + 1;
    g.out_h = out_size(s.h, w.pad_top, w.pad_bottom, g.k_h, w.sh, ceil_mode);
    g.out_w = out_size(s.w, w.pad_left, w.pad_right, g.k_w, w.sw, ceil_mode);
    g.out_c = out_c;
    g.stride_h = w.sh, g.stride_w = w.sw;
    g.pad_top = w.pad_top, g.pad_left = w.pad_left;
    if (g.out_h <= 0 || g.out_w <= 0) fail(n, "has a window larger than its padded input");
    return g;
  }

  static std::vector<int64_t> spatial_dims(size_t rank, const Spatial& s, const tv::Geom2D& g) {
    if (rank == 3) return {s.n, g.out_w, g.out_c};
    return {s.n, g.out_h, g.out_w, g.out_c};
  }

  // ---------------------------------------------------------------- ops

  // The requantization of a Conv or Gemm node: its exponents and fused activation (Linear or Relu).
  tv::Q8Layer fused_requant(const EspdlNode& n, const Value& x, const EspdlFilter& f) {
    const std::string act = n.attr_string("activation", "Linear");
    if (act != "Linear" && act != "Relu")
      fail(n, "has the fused activation '" + act + "'; only Linear and Relu are supported");
    tv::Q8Layer q;
    q.e_in = x.exponent, q.e_w = f.exponent, q.e_out = out_exponent(n), q.relu = act == "Relu";
    return q;
  }

  void op_conv(const EspdlNode& n) {
    const Value& x = input(n, 0);
    const Spatial s = spatial(n, x);
    EspdlFilter f = espdl_node_filter(m_, n);
    const Window w = window(n, x.dims.size() == 4, &f);
    if (f.kh != w.kh || f.kw != w.kw) fail(n, "has kernel_shape that disagrees with its filter's dims");
    if (f.cin != s.c)
      fail(n, "has a filter for " + std::to_string(f.cin) + " input channels but its input has " + std::to_string(s.c));
    const std::vector<int32_t> bias = read_bias(n, f.cout, x.exponent + f.exponent);
    tv::Q8Layer q = fused_requant(n, x, f);
    if (q.shift() < 0)
      fail(n, "needs a negative shift (e_out " + std::to_string(q.e_out) + " < e_in + e_w " +
                  std::to_string(q.e_in + q.e_w) + "), which the ESP-DL contract excludes");
    const tv::Geom2D g = geom(n, s, w, f.cout, false);
    // Dilation: spread the taps into a dense kernel with zeros between them (exact: zeros add 0).
    check_size(n, double(s.n) * g.out_h * g.out_w * g.out_c, "conv output");
    std::vector<int8_t> wk = f.weights;
    if (w.dh != 1 || w.dw != 1) {
      check_size(n, double(f.depthwise ? 1 : f.cout) * g.k_h * g.k_w * f.cin, "dilated kernel");
      const size_t per_out = f.depthwise ? 1 : size_t(f.cin);
      const size_t groups = f.depthwise ? 1 : size_t(f.cout);
      const size_t lanes = f.depthwise ? size_t(f.cin) : per_out;
      wk.assign(groups * g.k_h * g.k_w * lanes, 0);
      for (size_t o = 0; o < groups; ++o)
        for (int ky = 0; ky < f.kh; ++ky)
          for (int kx = 0; kx < f.kw; ++kx)
            for (size_t c = 0; c < lanes; ++c)
              wk[((o * g.k_h + size_t(ky) * w.dh) * g.k_w + size_t(kx) * w.dw) * lanes + c] =
                  f.weights[((o * f.kh + ky) * f.kw + kx) * lanes + c];
    }
    Value y;
    y.dims = spatial_dims(x.dims.size(), s, g);
    y.exponent = q.e_out;
    const size_t in_plane = size_t(s.h) * s.w * s.c, out_plane = size_t(g.out_h) * g.out_w * g.out_c;
    y.q.assign(out_plane * s.n, 0);
    for (int b = 0; b < s.n; ++b) {
      const int8_t* xin = x.q.data() + b * in_plane;
      int8_t* yout = y.q.data() + b * out_plane;
      const int32_t* bp = bias.empty() ? nullptr : bias.data();
      check(n, f.depthwise ? tv::depthwise_conv2d_s8(g, xin, wk.data(), bp, q, yout)
                           : tv::conv2d_s8(g, xin, wk.data(), bp, q, yout));
    }
    store(n, std::move(y));
  }

  std::vector<int32_t> read_bias(const EspdlNode& n, int count, int expected_exponent) const {
    if (n.inputs.size() < 3 || n.inputs[2].empty()) return {};
    const EspdlTensor* b = m_.find_initializer(n.inputs[2]);
    if (!b) fail(n, "reads its bias '" + n.inputs[2] + "' from a non-constant");
    std::vector<int32_t> v = b->as_int32();
    if (int(v.size()) != count)
      fail(n, "has " + std::to_string(v.size()) + " biases for " + std::to_string(count) + " outputs");
    if (b->exponents.size() == 1 && b->exponents[0] != expected_exponent)
      fail(n, "has a bias at exponent " + std::to_string(b->exponents[0]) +
                  " instead of e_in + e_w = " + std::to_string(expected_exponent));
    return v;
  }

  void op_gemm(const EspdlNode& n) {
    const Value& x = input(n, 0);
    if (n.attr_float("alpha", 1.0f) != 1.0f || n.attr_float("beta", 1.0f) != 1.0f)
      fail(n, "has alpha or beta other than 1");
    EspdlFilter f = espdl_node_filter(m_, n);
    if (x.dims.empty() || x.dims[0] <= 0) fail(n, "has an input of dims " + espdl_dims_text(x.dims));
    const size_t batch = size_t(x.dims[0]);
    if (x.q.size() != batch * size_t(f.cin))
      fail(n, "has a filter for " + std::to_string(f.cin) + " inputs but its input is " + espdl_dims_text(x.dims));
    const std::vector<int32_t> bias = read_bias(n, f.cout, x.exponent + f.exponent);
    tv::Q8Layer q = fused_requant(n, x, f);
    Value y;
    y.dims = {int64_t(batch), f.cout};
    y.exponent = q.e_out;
    y.q.assign(batch * f.cout, 0);
    for (size_t b = 0; b < batch; ++b)
      check(n, tv::dense_s8(f.cin, f.cout, x.q.data() + b * f.cin, f.weights.data(),
                            bias.empty() ? nullptr : bias.data(), q, y.q.data() + b * f.cout));
    store(n, std::move(y));
  }

  void op_pool(const EspdlNode& n, bool average) {
    const Value& x = input(n, 0);
    const Spatial s = spatial(n, x);
    const Window w = window(n, x.dims.size() == 4);
    if (w.dh != 1 || w.dw != 1) fail(n, "has dilations, which pooling does not support here");
    const bool ceil_mode = n.attr_int("ceil_mode", 0) != 0;
    const tv::Geom2D g = geom(n, s, w, s.c, ceil_mode);
    const bool padded = w.pad_top || w.pad_left || w.pad_bottom || w.pad_right || ceil_mode;
    if (average && padded && n.attr_int("count_include_pad", 0) == 0)
      fail(n, "averages with count_include_pad = 0 over padding; ESP-DL's rule is not defined for it");
    check_size(n, double(s.n) * g.out_h * g.out_w * g.out_c, "pool output");
    Value y;
    y.dims = spatial_dims(x.dims.size(), s, g);
    y.exponent = average ? out_exponent(n) : same_exponent(n, x.exponent);
    const size_t in_plane = size_t(s.h) * s.w * s.c, out_plane = size_t(g.out_h) * g.out_w * g.out_c;
    y.q.assign(out_plane * s.n, 0);
    for (int b = 0; b < s.n; ++b)
      check(n, average
                   ? tv::avgpool2d_s8(g, x.q.data() + b * in_plane, x.exponent, y.exponent, y.q.data() + b * out_plane)
                   : tv::maxpool2d_s8(g, x.q.data() + b * in_plane, y.q.data() + b * out_plane));
    store(n, std::move(y));
  }

  void op_global_avg(const EspdlNode& n) {
    const Value& x = input(n, 0);
    const Spatial s = spatial(n, x);
    Value y;
    y.dims = x.dims.size() == 3 ? std::vector<int64_t>{s.n, 1, s.c} : std::vector<int64_t>{s.n, 1, 1, s.c};
    y.exponent = out_exponent(n);
    y.q.assign(size_t(s.n) * s.c, 0);
    const size_t plane = size_t(s.h) * s.w * s.c;
    for (int b = 0; b < s.n; ++b)
      check(n, tv::global_avgpool_s8(s.h, s.w, s.c, x.q.data() + b * plane, x.exponent, y.exponent,
                                     y.q.data() + size_t(b) * s.c));
    store(n, std::move(y));
  }

  void op_relu(const EspdlNode& n) {
    Value y = input(n, 0);
    tv::relu_s8(y.q.data(), y.q.size());
    const int e_out = out_exponent(n);
    tv::rescale_s8(y.q.data(), y.q.size(), y.exponent, e_out, y.q.data());
    y.exponent = e_out;
    store(n, std::move(y));
  }

  // The file's 256-entry table named by the node's "lut" attribute; null when there is none.
  const EspdlTensor* lut_table(const EspdlNode& n, int e_out) const {
    const EspdlAttribute* a = n.find_attribute("lut");
    if (!a) return nullptr;
    const EspdlTensor* t = m_.find_initializer(a->s);
    if (!t) fail(n, "names the lookup table '" + a->s + "', which the file lacks");
    if (t->dtype != espdl::TensorDataType_INT8 || t->element_count() != 256)
      fail(n, "has a lookup table '" + a->s + "' that is not 256 int8 values");
    if (t->exponents.size() == 1 && t->exponents[0] != e_out)
      fail(n, "has a lookup table at exponent " + std::to_string(t->exponents[0]) + " but an output at " +
                  std::to_string(e_out));
    return t;
  }

  // Applies our own table; when the file carries one too, it must be identical. Returns false
  // (with the report filled) when they differ.
  bool op_lut(const EspdlNode& n, EspdlRunReport& report) {
    Value y = input(n, 0);
    const int e_out = out_exponent(n);
    const EspdlTensor* file_table = lut_table(n, e_out);
    int8_t ours[256];
    bool have_ours = true;
    if (n.op_type == "LeakyRelu")
      tv::leaky_relu_table_s8(n.attr_float("alpha", 0.01f), y.exponent, e_out, ours);
    else if (n.op_type == "Sigmoid")
      tv::sigmoid_table_s8(y.exponent, e_out, ours);
    else
      have_ours = false;
    if (!have_ours && !file_table) fail(n, "is not supported without a lookup table ('lut' attribute)");
    if (have_ours && file_table) {
      const std::vector<int8_t> theirs = file_table->as_int8();
      for (int i = 0; i < 256; ++i) {
        if (theirs[i] != ours[i]) {
          report.mismatch_tensor = file_table->name;
          report.mismatch_index = size_t(i);
          report.expected = theirs[i];
          report.got = ours[i];
          report.message = m_.source + ": our " + n.op_type + " table for node '" + n.name +
                           "' differs from the file's '" + file_table->name + "' at q = " + std::to_string(i - 128) +
                           ": expected " + std::to_string(theirs[i]) + ", got " + std::to_string(ours[i]);
          return false;
        }
      }
    }
    if (!have_ours) {
      const std::vector<int8_t> theirs = file_table->as_int8();
      std::memcpy(ours, theirs.data(), 256);
    }
    tv::lut_s8(ours, y.q.data(), y.q.size(), y.q.data());
    y.exponent = e_out;
    store(n, std::move(y));
    return true;
  }

  void op_binary(const EspdlNode& n, bool add) {
    const Value& a = input(n, 0);
    const Value& b = input(n, 1);
    if (a.dims != b.dims)
      fail(n, "combines " + espdl_dims_text(a.dims) + " with " + espdl_dims_text(b.dims) +
                  "; broadcasting is not supported");
    Value y;
    y.dims = a.dims;
    y.exponent = out_exponent(n);
    y.q.assign(a.q.size(), 0);
    if (add)
      tv::add_s8(a.q.data(), a.exponent, b.q.data(), b.exponent, a.q.size(), y.exponent, y.q.data());
    else
      tv::mul_s8(a.q.data(), a.exponent, b.q.data(), b.exponent, a.q.size(), y.exponent, y.q.data());
    store(n, std::move(y));
  }

  void op_reshape(const EspdlNode& n) {
    Value y = input(n, 0);
    y.exponent = same_exponent(n, y.exponent);
    std::vector<int64_t> dims = out_dims_hint(n);
    if (dims.empty() || espdl_element_count(dims) != y.q.size()) {
      if (n.op_type == "Flatten") {
        int64_t axis = n.attr_int("axis", 1);
        if (axis < 0) axis += int64_t(y.dims.size());
        if (axis < 0 || axis > int64_t(y.dims.size())) fail(n, "has an out-of-range axis");
        int64_t outer = 1;
        for (int64_t i = 0; i < axis; ++i) outer *= y.dims[size_t(i)];
        dims = {outer, int64_t(y.q.size()) / (outer ? outer : 1)};
      } else {  // Reshape: the shape input, with ONNX's 0 (copy that dim) and -1 (infer one dim)
        dims = const_ints(n, 1);
        int64_t known = 1;
        int infer = -1;
        for (size_t i = 0; i < dims.size(); ++i) {
          if (dims[i] == 0 && i < y.dims.size()) dims[i] = y.dims[i];
          if (dims[i] == -1 && infer < 0) {
            infer = int(i);
            continue;
          }
          if (dims[i] <= 0) fail(n, "has an invalid target shape");
          known *= dims[i];
          if (known > int64_t(y.q.size())) fail(n, "has a target shape larger than its input");
        }
        if (infer >= 0) dims[size_t(infer)] = known ? int64_t(y.q.size()) / known : 0;
        if (dims.empty() || espdl_element_count(dims) != y.q.size())
          fail(n, "reshapes " + espdl_dims_text(y.dims) + " to a shape of a different size");
      }
    }
    y.dims = dims;
    values_[n.outputs[0]] = std::move(y);
  }

  void op_transpose(const EspdlNode& n) {
    const Value& x = input(n, 0);
    const size_t r = x.dims.size();
    std::vector<int64_t> perm = n.attr_ints("perm");
    if (perm.empty())
      for (size_t i = 0; i < r; ++i) perm.push_back(int64_t(r - 1 - i));
    if (perm.size() != r) fail(n, "has a perm of the wrong length");
    std::vector<bool> seen(r, false);
    for (int64_t p : perm) {
      if (p < 0 || p >= int64_t(r) || seen[size_t(p)]) fail(n, "has an invalid perm");
      seen[size_t(p)] = true;
    }
    Value y;
    y.exponent = same_exponent(n, x.exponent);
    for (int64_t p : perm) y.dims.push_back(x.dims[size_t(p)]);
    std::vector<size_t> in_stride(r, 1);
    for (size_t i = r; i-- > 1;) in_stride[i - 1] = in_stride[i] * size_t(x.dims[i]);
    y.q.assign(x.q.size(), 0);
    std::vector<int64_t> idx(r, 0);  // output index
    for (size_t o = 0; o < y.q.size(); ++o) {
      size_t src = 0;
      for (size_t i = 0; i < r; ++i) src += size_t(idx[i]) * in_stride[size_t(perm[i])];
      y.q[o] = x.q[src];
      for (size_t i = r; i-- > 0;) {
        if (++idx[i] < y.dims[i]) break;
        idx[i] = 0;
      }
    }
    values_[n.outputs[0]] = std::move(y);  // shapes are the permuted ones, whatever value_info says
  }

  std::vector<int64_t> const_ints(const EspdlNode& n, size_t i) const {
    if (i >= n.inputs.size() || n.inputs[i].empty()) return {};
    const EspdlTensor* t = m_.find_initializer(n.inputs[i]);
    if (!t) fail(n, "reads '" + n.inputs[i] + "' from a non-constant");
    if (t->dtype == espdl::TensorDataType_INT32) {
      const std::vector<int32_t> v = t->as_int32();
      return std::vector<int64_t>(v.begin(), v.end());
    }
    return t->as_int64();
  }

  void op_slice(const EspdlNode& n) {
    const Value& x = input(n, 0);
    const size_t r = x.dims.size();
    const std::vector<int64_t> starts = const_ints(n, 1), ends = const_ints(n, 2);
    std::vector<int64_t> axes = const_ints(n, 3), steps = const_ints(n, 4);
    if (starts.size() != ends.size()) fail(n, "has starts and ends of different lengths");
    if (axes.empty())
      for (size_t i = 0; i < starts.size(); ++i) axes.push_back(int64_t(i));
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (axes.size() != starts.size() || steps.size() != starts.size()) fail(n, "has inconsistent slice inputs");
    std::vector<int64_t> begin(r, 0), step(r, 1), out_dims = x.dims;
    for (size_t k = 0; k < starts.size(); ++k) {
      int64_t ax = axes[k] < 0 ? axes[k] + int64_t(r) : axes[k];
      if (ax < 0 || ax >= int64_t(r)) fail(n, "slices an axis the input does not have");
      const int64_t dim = x.dims[size_t(ax)], st = steps[k];
      if (st == 0) fail(n, "has a zero step");
      int64_t s = starts[k] < 0 ? starts[k] + dim : starts[k];
      int64_t e = ends[k] < 0 ? ends[k] + dim : ends[k];
      int64_t count;
      // ceil(span / |step|) as (span - 1) / |step| + 1: no sum that a step near 2^63 overflows
      if (st > 0) {
        s = std::min(std::max(s, int64_t(0)), dim);
        e = std::min(std::max(e, int64_t(0)), dim);
        count = e > s ? (e - s - 1) / st + 1 : 0;
      } else {
        const int64_t mag = st == std::numeric_limits<int64_t>::min() ? std::numeric_limits<int64_t>::max() : -st;
        s = std::min(std::max(s, int64_t(-1)), dim - 1);
        e = std::min(std::max(e, int64_t(-1)), dim - 1);
        count = s > e ? (s - e - 1) / mag + 1 : 0;
      }
      begin[size_t(ax)] = s;
      step[size_t(ax)] = st;
      out_dims[size_t(ax)] = count;
    }
    Value y;
    y.exponent = same_exponent(n, x.exponent);
    y.dims = out_dims;
    y.q.assign(espdl_element_count(out_dims), 0);
    std::vector<size_t> in_stride(r, 1);
    for (size_t i = r; i-- > 1;) in_stride[i - 1] = in_stride[i] * size_t(x.dims[i]);
    std::vector<int64_t> idx(r, 0);
    for (size_t o = 0; o < y.q.size(); ++o) {
      size_t src = 0;
      for (size_t i = 0; i < r; ++i) src += size_t(begin[i] + idx[i] * step[i]) * in_stride[i];
      y.q[o] = x.q[src];
      for (size_t i = r; i-- > 0;) {
        if (++idx[i] < out_dims[i]) break;
        idx[i] = 0;
      }
    }
    values_[n.outputs[0]] = std::move(y);
  }

  void op_softmax(const EspdlNode& n) {
    const Value& x = input(n, 0);
    const size_t r = x.dims.size();
    int64_t axis = n.attr_int("axis", -1);
    if (axis < 0) axis += int64_t(r);
    if (axis < 0 || axis >= int64_t(r)) fail(n, "has an out-of-range axis");
    size_t outer = 1, inner = 1;
    for (size_t i = 0; i < size_t(axis); ++i) outer *= size_t(x.dims[i]);
    for (size_t i = size_t(axis) + 1; i < r; ++i) inner *= size_t(x.dims[i]);
    const int len = int(x.dims[size_t(axis)]);
    Value y;
    y.dims = x.dims;
    y.is_float = true;
    y.f.assign(x.q.size(), 0.0f);
    std::vector<int8_t> lane(static_cast<size_t>(len));
    std::vector<float> probs(static_cast<size_t>(len));
    for (size_t o = 0; o < outer; ++o)
      for (size_t i = 0; i < inner; ++i) {
        for (int k = 0; k < len; ++k) lane[size_t(k)] = x.q[(o * size_t(len) + size_t(k)) * inner + i];
        tv::softmax_s8(lane.data(), len, x.exponent, probs.data());
        for (int k = 0; k < len; ++k) y.f[(o * size_t(len) + size_t(k)) * inner + i] = probs[size_t(k)];
      }
    values_[n.outputs[0]] = std::move(y);
  }

  bool run_node(const EspdlNode& n, EspdlRunReport& report) {
    if (n.outputs.empty()) fail(n, "has no output");
    const std::string& op = n.op_type;
    const std::string quant = n.attr_string("quant_type", "S8");
    if (quant != "S8") fail(n, "is quantised as '" + quant + "'; only S8 (int8) is supported");
    if (op == "Conv")
      op_conv(n);
    else if (op == "Gemm")
      op_gemm(n);
    else if (op == "MaxPool")
      op_pool(n, false);
    else if (op == "AveragePool")
      op_pool(n, true);
    else if (op == "GlobalAveragePool")
      op_global_avg(n);
    else if (op == "Relu")
      op_relu(n);
    else if (op == "LeakyRelu" || n.find_attribute("lut"))
      return op_lut(n, report);
    else if (op == "Add")
      op_binary(n, true);
    else if (op == "Mul")
      op_binary(n, false);
    else if (op == "Flatten" || op == "Reshape")
      op_reshape(n);
    else if (op == "Transpose")
      op_transpose(n);
    else if (op == "Slice")
      op_slice(n);
    else if (op == "Softmax")
      op_softmax(n);
    else
      fail(n, "is an op the int8 interpreter does not support");
    return true;
  }

  bool compare(const EspdlTensor& t, const Value& v, EspdlRunReport& report) const {
    auto differ = [&](size_t i, double want, double got, const std::string& why) {
      report.mismatch_tensor = t.name;
      report.mismatch_index = i;
      report.expected = want;
      report.got = got;
      report.message = m_.source + ": test output '" + t.name + "' " + why;
      return false;
    };
    if (t.dtype == espdl::TensorDataType_INT8) {
      if (v.is_float) return differ(0, 0, 0, "is int8 in the file but float here");
      if (t.exponents.size() == 1 && t.exponents[0] != v.exponent)
        return differ(0, double(t.exponents[0]), v.exponent,
                      "has exponent " + std::to_string(t.exponents[0]) + " in the file but " +
                          std::to_string(v.exponent) + " here");
      const std::vector<int8_t> want = t.as_int8();
      if (want.size() != v.q.size())
        return differ(
            0, double(want.size()), double(v.q.size()),
            "has " + std::to_string(want.size()) + " values in the file but " + std::to_string(v.q.size()) + " here");
      for (size_t i = 0; i < want.size(); ++i)
        if (want[i] != v.q[i])
          return differ(i, want[i], v.q[i],
                        "differs first at index " + std::to_string(i) + ": expected " + std::to_string(want[i]) +
                            ", got " + std::to_string(v.q[i]));
      return true;
    }
    if (t.dtype == espdl::TensorDataType_FLOAT) {
      if (!v.is_float) return differ(0, 0, 0, "is float in the file but int8 here");
      const std::vector<float> want = t.as_float();
      if (want.size() != v.f.size()) return differ(0, double(want.size()), double(v.f.size()), "has a different size");
      for (size_t i = 0; i < want.size(); ++i)
        if (!(std::fabs(double(want[i]) - double(v.f[i])) <= 1e-6))
          return differ(i, want[i], v.f[i], "differs first at index " + std::to_string(i) + " by more than 1e-6");
      return true;
    }
    throw Error(m_.source + ": test output '" + t.name + "' is " + espdl_dtype_name(t.dtype) +
                "; only INT8 and FLOAT outputs can be compared.");
  }
};

}  // namespace

EspdlRunReport espdl_run_test_vectors(const EspdlModel& model) {
  EspdlRunReport r = Runner(model).run();
  if (r.passed) return r;
  if (model.for_p4())
    throw Error(model.source +
                ": is built for the ESP32-P4, whose int8 ops round half to even; P4 rounding not supported, so "
                "its test outputs cannot be checked here (with the ESP32-S3's half-up rounding, " +
                (r.message.compare(0, model.source.size() + 2, model.source + ": ") == 0
                     ? r.message.substr(model.source.size() + 2)
                     : r.message) +
                ").");
  if (model.target().empty())
    r.message +=
        " (the file names no target: if it was built for the ESP32-P4, which rounds half to even, this "
        "check does not apply)";
  return r;
}

}  // namespace tvh
