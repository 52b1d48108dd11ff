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

// The checks, in the order ESP-DL meets what they check; each note said once (the same sentence is never
// repeated, and a value missing from value_info is named at its first use only, however many nodes read it).
class LoaderChecks {
 public:
  explicit LoaderChecks(const EspdlModel& m) : m_(m) {
    // ESP-DL's FbsModel looks activations up in graph.value_info only (not in graph.input/output).
    for (const EspdlValueInfo& v : m.value_info) values_[v.name] = &v;
  }

  std::vector<std::string> run() {
    check_initializers();
    for (const EspdlValueInfo& v : m_.inputs) {
      produced_.insert(v.name);
      check_value(v.name, "the graph input");
    }
    if (m_.nodes.empty()) problem("has no nodes");
    for (const EspdlNode& n : m_.nodes) check_node(n);
    for (const EspdlValueInfo& v : m_.outputs)
      if (!produced_.count(v.name)) problem("the graph output '" + v.name + "' is produced by no node");
    check_test_vectors();
    return problems_;
  }

 private:
  void problem(const std::string& s) {
    const std::string line = m_.source + ": " + s + ".";
    if (said_.insert(line).second) problems_.push_back(line);
  }

  const EspdlValueInfo* value(const std::string& name) const {
    auto it = values_.find(name);
    return it == values_.end() ? nullptr : it->second;
  }

  void check_initializers() {
    for (const EspdlTensor& t : m_.initializers) {
      inits_.insert(t.name);
      if (t.exponents.empty()) problem("initializer '" + t.name + "' has no exponent");
    }
  }

  void check_value(const std::string& name, const std::string& where) {
    const EspdlValueInfo* v = value(name);
    if (!v) {
      if (missing_values_.insert(name).second)
        problem(where + " uses '" + name + "', which has no value_info entry (shape and exponent)");
      return;
    }
    if (v->exponents.empty()) problem("value '" + name + "' has no exponent in value_info");
    if (v->dims.empty()) problem("value '" + name + "' has no shape in value_info");
  }

  void check_node(const EspdlNode& n) {
    const std::string where = "node '" + n.name + "' (" + n.op_type + ")";
    if (n.name.empty()) problem("a " + n.op_type + " node has no name");
    if (!node_names_.insert(n.name).second) problem("two nodes are named '" + n.name + "'");
    if (!espdl_registered_ops().count(n.op_type)) problem(where + " is an op ESP-DL does not register");
    const EspdlAttribute* q = n.find_attribute("quant_type");
    if (!q)
      problem(where + " has no quant_type attribute");
    else if (q->s != "S8" && q->s != "S16" && q->s != "F32" && q->s != "SYMM_S8" && q->s != "SYMM_S16")
      problem(where + " has the quant_type '" + q->s + "', which ESP-DL does not know");
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const std::string& in = n.inputs[i];
      if (in.empty() || inits_.count(in)) continue;
      if (!produced_.count(in)) problem(where + " reads '" + in + "' before any node produces it");
      check_value(in, where);
    }
    for (const std::string& out : n.outputs) {
      produced_.insert(out);
      check_value(out, where);
    }
    check_op_attributes(n, where);
    check_lookup_table(n, where);
  }

  // The attributes ESP-DL reads without a default, per op, and the constant filters it needs.
  void check_op_attributes(const EspdlNode& n, const std::string& where) {
    auto require = [&](const char* attr, size_t count) {
      const EspdlAttribute* a = n.find_attribute(attr);
      if (!a)
        problem(where + " lacks the '" + attr + "' attribute, which ESP-DL reads without a default");
      else if (count && a->ints.size() != count)
        problem(where + " has " + std::to_string(a->ints.size()) + " values in '" + attr + "' where ESP-DL reads " +
                std::to_string(count));
    };
    const EspdlValueInfo* in0 = n.inputs.empty() ? nullptr : value(n.inputs[0]);
    const size_t spatial = in0 && in0->dims.size() >= 3 ? in0->dims.size() - 2 : 0;  // 1 or 2
    if (n.op_type == "Conv") {
      require("strides", spatial);
      require("dilations", spatial);
      require("pads", 0);
      if (n.inputs.size() < 2 || !inits_.count(n.inputs[1])) problem(where + " has no constant filter");
    } else if (n.op_type == "MaxPool") {
      require("kernel_shape", 2);
      require("strides", 2);
      require("pads", 4);
    } else if (n.op_type == "AveragePool") {
      require("kernel_shape", spatial);
      require("strides", spatial);
    } else if (n.op_type == "Gemm") {
      const EspdlTensor* w = n.inputs.size() >= 2 ? m_.find_initializer(n.inputs[1]) : nullptr;
      if (!w)
        problem(where + " has no constant filter");
      else if (w->dims.size() != 4 || w->dims[0] != 1 || w->dims[1] != 1)
        problem(where + " has the filter dims " + espdl_dims_text(w->dims) + ", not [1, 1, in, out]");
    }
  }

  void check_lookup_table(const EspdlNode& n, const std::string& where) {
    const EspdlAttribute* lut = n.find_attribute("lut");
    if (!lut) return;
    const EspdlTensor* t = m_.find_initializer(lut->s);
    if (!t) {
      problem(where + " names the lookup table '" + lut->s + "', which is not an initializer");
      return;
    }
    if (t->element_count() != 256 && n.attr_string("quant_type", "") == "S8")
      problem(where + " has an int8 lookup table of " + std::to_string(t->element_count()) + " values, not 256");
    const EspdlValueInfo* out = n.outputs.empty() ? nullptr : value(n.outputs[0]);
    if (out && t->exponents != out->exponents)
      problem(where + ": the lookup table's exponent differs from the output's (ESP-DL asserts they are equal)");
  }

  // A test vector against the model's tensor of its name (Model::test() compares shapes).
  void check_test(const EspdlTensor& t, const char* role) {
    const EspdlValueInfo* v = value(t.name);
    if (!v) return;  // reported above or below
    if (t.dims != v->dims)
      problem(std::string(role) + " '" + t.name + "' has dims " + espdl_dims_text(t.dims) +
              " but the model's tensor is " + espdl_dims_text(v->dims) + " (Model::test() compares shapes)");
    if (t.exponents != v->exponents)
      problem(std::string(role) + " '" + t.name + "' has another exponent than the model's tensor");
    if (t.dtype != v->dtype)
      problem(std::string(role) + " '" + t.name + "' has another element type than the model's tensor");
  }

  void check_test_vectors() {
    for (const EspdlValueInfo& v : m_.inputs) {
      const EspdlTensor* t = nullptr;
      for (const EspdlTensor& x : m_.test_inputs)
        if (x.name == v.name) t = &x;
      if (!t)
        problem("the graph input '" + v.name + "' has no test input (Model::test() needs one)");
      else
        check_test(*t, "test input");
    }
    if (m_.test_outputs.empty()) problem("has no test outputs (Model::test() asserts there is one)");
    for (const EspdlTensor& t : m_.test_outputs) {
      if (!produced_.count(t.name)) problem("test output '" + t.name + "' is produced by no node");
      check_test(t, "test output");
    }
  }

  const EspdlModel& m_;
  std::vector<std::string> problems_;
  std::set<std::string> said_, missing_values_;
  std::map<std::string, const EspdlValueInfo*> values_;
  std::set<std::string> inits_, produced_, node_names_;
};

}  // namespace

std::vector<std::string> espdl_loader_problems(const EspdlModel& m) {
  return LoaderChecks(m).run();
}

}  // namespace tvh
