// What ESP-DL's loader and Model::test() rely on, checked on a parsed .espdl model view (ours or
// Espressif's): espdl_loader_problems.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "espdl_generated.h"
#include "host/espdl/writer.h"

namespace tvh {
namespace {

// The op types ESP-DL's ModuleCreator registers (esp-dl/dl/module/include/dl_module_creator.hpp).
const std::set<std::string>& espdl_registered_ops() {
  static const std::set<std::string> ops = {"Conv",
                                            "Add",
                                            "Sub",
                                            "Mul",
                                            "Div",
                                            "Resize",
                                            "GlobalAveragePool",
                                            "AveragePool",
                                            "Concat",
                                            "Sigmoid",
                                            "Tanh",
                                            "Relu",
                                            "LeakyRelu",
                                            "HardSigmoid",
                                            "HardSwish",
                                            "Gelu",
                                            "LUT",
                                            "Gemm",
                                            "QuantizeLinear",
                                            "DequantizeLinear",
                                            "RequantizeLinear",
                                            "PRelu",
                                            "Clip",
                                            "Flatten",
                                            "Reshape",
                                            "Transpose",
                                            "Exp",
                                            "Log",
                                            "Sqrt",
                                            "Squeeze",
                                            "Unsqueeze",
                                            "Softmax",
                                            "MaxPool",
                                            "Slice",
                                            "Pad",
                                            "MatMul",
                                            "Split",
                                            "Gather",
                                            "Elu",
                                            "Greater",
                                            "GreaterOrEqual",
                                            "Equal",
                                            "Less",
                                            "LessOrEqual",
                                            "ReverseSequence",
                                            "Identity",
                                            "Swish",
                                            "ReduceL1",
                                            "ReduceL2",
                                            "ReduceMin",
                                            "ReduceMax",
                                            "ReduceSum",
                                            "ReduceProd",
                                            "ReduceMean",
                                            "ReduceSumSquare",
                                            "ReduceLogSum",
                                            "ReduceLogSumExp",
                                            "GRU",
                                            "LSTM"};
  return ops;
}

}  // namespace

std::vector<std::string> espdl_loader_problems(const EspdlModel& m) {
  // Each note once: the same sentence is never repeated, and a value missing from value_info is named
  // at its first use only, however many nodes read it.
  std::vector<std::string> problems;
  std::set<std::string> said, missing_values;
  auto problem = [&](const std::string& s) {
    const std::string line = m.source + ": " + s + ".";
    if (said.insert(line).second) problems.push_back(line);
  };
  // ESP-DL's FbsModel looks activations up in graph.value_info only (not in graph.input/output).
  std::map<std::string, const EspdlValueInfo*> values;
  for (const EspdlValueInfo& v : m.value_info) values[v.name] = &v;
  std::set<std::string> inits, produced, node_names;
  for (const EspdlTensor& t : m.initializers) {
    inits.insert(t.name);
    if (t.exponents.empty()) problem("initializer '" + t.name + "' has no exponent");
  }
  auto check_value = [&](const std::string& name, const std::string& where) {
    auto it = values.find(name);
    if (it == values.end()) {
      if (missing_values.insert(name).second)
        problem(where + " uses '" + name + "', which has no value_info entry (shape and exponent)");
      return;
    }
    if (it->second->exponents.empty()) problem("value '" + name + "' has no exponent in value_info");
    if (it->second->dims.empty()) problem("value '" + name + "' has no shape in value_info");
  };
  for (const EspdlValueInfo& v : m.inputs) {
    produced.insert(v.name);
    check_value(v.name, "the graph input");
  }
  if (m.nodes.empty()) problem("has no nodes");
  for (const EspdlNode& n : m.nodes) {
    const std::string where = "node '" + n.name + "' (" + n.op_type + ")";
    if (n.name.empty()) problem("a " + n.op_type + " node has no name");
    if (!node_names.insert(n.name).second) problem("two nodes are named '" + n.name + "'");
    if (!espdl_registered_ops().count(n.op_type)) problem(where + " is an op ESP-DL does not register");
    const EspdlAttribute* q = n.find_attribute("quant_type");
    if (!q)
      problem(where + " has no quant_type attribute");
    else if (q->s != "S8" && q->s != "S16" && q->s != "F32" && q->s != "SYMM_S8" && q->s != "SYMM_S16")
      problem(where + " has the quant_type '" + q->s + "', which ESP-DL does not know");
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const std::string& in = n.inputs[i];
      if (in.empty() || inits.count(in)) continue;
      if (!produced.count(in)) problem(where + " reads '" + in + "' before any node produces it");
      check_value(in, where);
    }
    for (const std::string& out : n.outputs) {
      produced.insert(out);
      check_value(out, where);
    }
    auto require = [&](const char* attr, size_t count) {
      const EspdlAttribute* a = n.find_attribute(attr);
      if (!a)
        problem(where + " lacks the '" + attr + "' attribute, which ESP-DL reads without a default");
      else if (count && a->ints.size() != count)
        problem(where + " has " + std::to_string(a->ints.size()) + " values in '" + attr + "' where ESP-DL reads " +
                std::to_string(count));
    };
    const EspdlValueInfo* in0 =
        n.inputs.empty() ? nullptr : (values.count(n.inputs[0]) ? values[n.inputs[0]] : nullptr);
    const size_t spatial = in0 && in0->dims.size() >= 3 ? in0->dims.size() - 2 : 0;  // 1 or 2
    if (n.op_type == "Conv") {
      require("strides", spatial);
      require("dilations", spatial);
      require("pads", 0);
      if (n.inputs.size() < 2 || !inits.count(n.inputs[1])) problem(where + " has no constant filter");
    } else if (n.op_type == "MaxPool") {
      require("kernel_shape", 2);
      require("strides", 2);
      require("pads", 4);
    } else if (n.op_type == "AveragePool") {
      require("kernel_shape", spatial);
      require("strides", spatial);
    } else if (n.op_type == "Gemm") {
      const EspdlTensor* w = n.inputs.size() >= 2 ? m.find_initializer(n.inputs[1]) : nullptr;
      if (!w)
        problem(where + " has no constant filter");
      else if (w->dims.size() != 4 || w->dims[0] != 1 || w->dims[1] != 1)
        problem(where + " has the filter dims " + espdl_dims_text(w->dims) + ", not [1, 1, in, out]");
    }
    if (const EspdlAttribute* lut = n.find_attribute("lut")) {
      const EspdlTensor* t = m.find_initializer(lut->s);
      if (!t) {
        problem(where + " names the lookup table '" + lut->s + "', which is not an initializer");
      } else {
        if (t->element_count() != 256 && n.attr_string("quant_type", "") == "S8")
          problem(where + " has an int8 lookup table of " + std::to_string(t->element_count()) + " values, not 256");
        auto out = n.outputs.empty() ? values.end() : values.find(n.outputs[0]);
        if (out != values.end() && t->exponents != out->second->exponents)
          problem(where + ": the lookup table's exponent differs from the output's (ESP-DL asserts they are equal)");
      }
    }
  }
  for (const EspdlValueInfo& v : m.outputs)
    if (!produced.count(v.name)) problem("the graph output '" + v.name + "' is produced by no node");
  auto check_test = [&](const EspdlTensor& t, const char* role) {
    auto it = values.find(t.name);
    if (it == values.end()) return;  // reported above or below
    if (t.dims != it->second->dims)
      problem(std::string(role) + " '" + t.name + "' has dims " + espdl_dims_text(t.dims) +
              " but the model's tensor is " + espdl_dims_text(it->second->dims) + " (Model::test() compares shapes)");
    if (t.exponents != it->second->exponents)
      problem(std::string(role) + " '" + t.name + "' has another exponent than the model's tensor");
    if (t.dtype != it->second->dtype)
      problem(std::string(role) + " '" + t.name + "' has another element type than the model's tensor");
  };
  for (const EspdlValueInfo& v : m.inputs) {
    const EspdlTensor* t = nullptr;
    for (const EspdlTensor& x : m.test_inputs)
      if (x.name == v.name) t = &x;
    if (!t)
      problem("the graph input '" + v.name + "' has no test input (Model::test() needs one)");
    else
      check_test(*t, "test input");
  }
  if (m.test_outputs.empty()) problem("has no test outputs (Model::test() asserts there is one)");
  for (const EspdlTensor& t : m.test_outputs) {
    if (!produced.count(t.name)) problem("test output '" + t.name + "' is produced by no node");
    check_test(t, "test output");
  }
  return problems;
}

}  // namespace tvh
