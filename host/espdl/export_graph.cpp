#include "host/espdl/export_graph.h"

#include <cstdio>

#include "espdl_generated.h"
#include "host/base/error.h"
#include "host/model/s3_limits.h"

namespace tvh {

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

std::string fmt_float(float v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.9g", double(v));
  return b;
}

namespace {

bool is_power_of_two(int64_t v) {
  return v > 0 && (v & (v - 1)) == 0;
}

}  // namespace

bool ExportGraph::relu_next(int i) const {
  return i + 1 < plan_.num_layers && plan_.desc.layers[i + 1].type == tv::LayerType::ReLU;
}

void ExportGraph::refuse(int layer, const std::string& what) const {
  throw Error(source_ + ": layer " + std::to_string(layer) + " (" + type_name(layer) + ") " + what + ".");
}

std::string ExportGraph::type_name(int i) const {
  return tv::layer_type_name(plan_.desc.layers[i].type);
}

std::string ExportGraph::base(int i) const {
  return "l" + std::to_string(i) + "_" + type_name(i);
}

EspdlValueInfo ExportGraph::value(const std::string& name, const std::vector<int64_t>& dims, int exp) {
  EspdlValueInfo v;
  v.name = name;
  v.dims = dims;
  v.dtype = espdl::TensorDataType_INT8;
  v.exponents = {exp};
  return v;
}

void ExportGraph::need_spatial(int i) const {
  if (cur_.dims.size() != 4)
    refuse(i, "works on an image but follows a flattened tensor " + espdl_dims_text(cur_.dims) +
                  "; ESP-DL's window ops need [1, H, W, C]");
}

// The end padding that makes ESP-DL's output size (in + begin + end - k) / stride + 1 equal ours.
int ExportGraph::end_pad(int i, int in, int k, int stride, int begin, int out) const {
  int end = (out - 1) * stride + k - in - begin;
  if (end < 0) end = 0;
  if ((in + begin + end - k) / stride + 1 != out)
    refuse(i, "has a window geometry ESP-DL's Conv cannot reproduce (in " + std::to_string(in) + ", kernel " +
                  std::to_string(k) + ", stride " + std::to_string(stride) + ", out " + std::to_string(out) + ")");
  return end;
}

void ExportGraph::check_bias(int i, size_t count) const {
  const int32_t* b = q8_->biases[i];
  for (size_t k = 0; k < count; ++k)
    if (b[k] < kS3BiasMin || b[k] > kS3BiasMax)
      refuse(i, "has the bias " + std::to_string(b[k]) + " (output " + std::to_string(k) +
                    ") outside the ESP32-S3's 20-bit bias range [-524288, 524287]; re-quantize it with tvquant, "
                    "which keeps biases in range");
}

EspdlNode ExportGraph::node(const std::string& op, const std::string& name, int last_layer) const {
  EspdlNode n;
  n.op_type = op;
  n.name = name;
  n.outputs = {base(last_layer) + "_out"};
  return n;
}

void ExportGraph::emit(EspdlModel& g, EspdlNode n, const std::vector<int64_t>& dims, int last_layer,
                       const std::string& what, EspdlExport& out) {
  const int exp = q8_->act_exps[last_layer + 1];
  std::string line = n.name;
  if (n.name != base(last_layer)) line += " + " + base(last_layer);  // a fused ReLU
  out.mapping.push_back(line + " -> " + what);
  cur_ = {n.outputs[0], dims, exp};
  g.value_info.push_back(value(cur_.name, dims, exp));
  g.nodes.push_back(std::move(n));
}

void ExportGraph::flatten(EspdlModel& g, const std::string& name, int i, EspdlExport& out, bool inserted) {
  EspdlNode n;
  n.op_type = tv::layer_info(tv::LayerType::Flatten).espdl_op;
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

void ExportGraph::pool_node(EspdlModel& g, int i, bool avg, int kh, int kw, int sh, int sw,
                            const std::vector<int64_t>& dims, EspdlExport& out) {
  const std::string op = tv::layer_info(plan_.desc.layers[i].type).espdl_op;  // AveragePool or MaxPool
  EspdlNode n = node(op, base(i), i);
  n.inputs = {cur_.name};
  n.attributes = {attr_int("ceil_mode", 0)};
  if (avg) n.attributes.push_back(attr_int("count_include_pad", 1));
  n.attributes.push_back(attr_ints("kernel_shape", {kh, kw}));
  n.attributes.push_back(attr_ints("pads", {0, 0, 0, 0}));
  n.attributes.push_back(attr_string("quant_type", "S8"));
  n.attributes.push_back(attr_ints("strides", {sh, sw}));
  if (avg) area_note(i, int64_t(kh) * kw);
  emit(g, std::move(n), dims, i,
       op + " " + std::to_string(kh) + "x" + std::to_string(kw) + " stride " + std::to_string(sh) + "x" +
           std::to_string(sw),
       out);
}

void ExportGraph::global_pool(EspdlModel& g, int i, EspdlExport& out, const std::string& what) {
  EspdlNode n = node(tv::layer_info(tv::LayerType::GlobalAvgPool).espdl_op, base(i), i);
  n.inputs = {cur_.name};
  n.attributes = {attr_string("quant_type", "S8")};
  area_note(i, cur_.dims[1] * cur_.dims[2]);
  emit(g, std::move(n), {1, 1, 1, cur_.dims[3]}, i, what, out);
}

void ExportGraph::area_note(int i, int64_t area) {
  if (!is_power_of_two(area))
    notes_.push_back("layer " + std::to_string(i) + " (" + type_name(i) + ") averages over " + std::to_string(area) +
                     " cells, not a power of two: the S3 assembly multiplies by an approximation of 1/" +
                     std::to_string(area) + " and may differ by one step from this file's test output");
}
}  // namespace tvh
