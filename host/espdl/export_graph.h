// The .espdl graph as the exporter (host/export/espdl_exporter.cpp) builds it, node by node: what a layer
// type's host row (host/layers/layer_host.cpp) uses to emit its node(s), or to refuse the layer.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "host/espdl/espdl.h"
#include "host/espdl/writer.h"
#include "tv/int8/q8_model.h"

namespace tvh {

EspdlAttribute attr_int(const std::string& name, int64_t v);
EspdlAttribute attr_float(const std::string& name, float v);
EspdlAttribute attr_string(const std::string& name, const std::string& v);
EspdlAttribute attr_ints(const std::string& name, const std::vector<int64_t>& v);
// "%.9g": the float's exact value back when read.
std::string fmt_float(float v);

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

class ExportGraph {
 public:
  ExportGraph(const tv::ModelPlan& plan, const std::string& source) : plan_(plan), source_(source) {}

  // The tensor the next node reads.
  struct Cur {
    std::string name;
    std::vector<int64_t> dims;
    int exp = 0;
  };

  [[noreturn]] void refuse(int layer, const std::string& what) const;
  std::string type_name(int i) const;
  // "l3_conv2d": the name of layer i's node and tensors.
  std::string base(int i) const;
  static EspdlValueInfo value(const std::string& name, const std::vector<int64_t>& dims, int exp);
  // True when a ReLU follows layer i (ESP-DL fuses it into a Conv or Gemm).
  bool relu_next(int i) const;
  // Refuses a window op after a Flatten.
  void need_spatial(int i) const;
  int end_pad(int i, int in, int k, int stride, int begin, int out) const;
  // Refuses a bias outside the S3's 20-bit range.
  void check_bias(int i, size_t count) const;
  // A node of layer i (up to last_layer when a ReLU is fused into it) that reads nothing yet.
  EspdlNode node(const std::string& op, const std::string& name, int last_layer) const;
  // Appends the node; its output becomes the current tensor, at last_layer's output exponent.
  void emit(EspdlModel& g, EspdlNode n, const std::vector<int64_t>& dims, int last_layer, const std::string& what,
            EspdlExport& out);
  void flatten(EspdlModel& g, const std::string& name, int i, EspdlExport& out, bool inserted);
  void pool_node(EspdlModel& g, int i, bool avg, int kh, int kw, int sh, int sw, const std::vector<int64_t>& dims,
                 EspdlExport& out);
  void global_pool(EspdlModel& g, int i, EspdlExport& out, const std::string& what);
  void area_note(int i, int64_t area);
  // A fresh name for a lookup table of `op` ("LeakyRelu_lut_0", ...).
  std::string lut_name(const std::string& op) { return op + "_lut_" + std::to_string(lut_count_++); }

  const tv::ModelPlan& plan_;
  std::string source_;
  const tv::Q8Model* q8_ = nullptr;
  Cur cur_;
  std::vector<std::string> notes_;

 private:
  int lut_count_ = 0;
};

}  // namespace tvh
