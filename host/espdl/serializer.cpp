// Serialising a model view (tvh::EspdlModel) into the bytes of an .espdl file: the 16-byte "EDL2"
// header and a FlatBuffer built with our schema (host/espdl/espdl.fbs).
#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <cstring>

#include "espdl_generated.h"
#include "host/error.h"
#include "host/espdl/writer.h"

namespace tvh {
namespace {

void put_u32_le(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = uint8_t(v >> (8 * i));
}

class Serializer {
 public:
  explicit Serializer(const EspdlModel& m) : m_(m), fbb_(size_t(1) << 16) {}

  std::vector<uint8_t> run() {
    using flatbuffers::Offset;
    std::vector<Offset<espdl::Node>> nodes;
    for (const EspdlNode& n : m_.nodes) nodes.push_back(node(n));
    std::vector<Offset<espdl::Tensor>> inits, test_in, test_out;
    for (const EspdlTensor& t : m_.initializers) inits.push_back(tensor(t, "initializer"));
    std::vector<Offset<espdl::ValueInfo>> in, out, values;
    for (const EspdlValueInfo& v : m_.inputs) in.push_back(value_info(v));
    for (const EspdlValueInfo& v : m_.outputs) out.push_back(value_info(v));
    for (const EspdlValueInfo& v : m_.value_info) values.push_back(value_info(v));
    for (const EspdlTensor& t : m_.test_inputs) test_in.push_back(tensor(t, "test input"));
    for (const EspdlTensor& t : m_.test_outputs) test_out.push_back(tensor(t, "test output"));
    const auto graph = espdl::CreateGraphDirect(fbb_, &nodes, m_.graph_name.c_str(), &inits, nullptr, &in, &out,
                                                &values, nullptr, &test_in, &test_out);
    std::vector<Offset<espdl::StringStringEntry>> meta;
    for (const auto& kv : m_.metadata)
      meta.push_back(espdl::CreateStringStringEntryDirect(fbb_, kv.first.c_str(), kv.second.c_str()));
    const std::vector<Offset<espdl::OperatorSetId>> opsets;  // empty, as in esp-ppq's files
    const auto model = espdl::CreateModelDirect(fbb_, m_.ir_version, &opsets, optional(m_.producer_name),
                                                optional(m_.producer_version), nullptr, m_.model_version,
                                                optional(m_.doc_string), graph, meta.empty() ? nullptr : &meta);
    fbb_.Finish(model);
    const size_t body = fbb_.GetSize();
    if (body > 0xFFFFFFFFu) throw Error(m_.source + ": the model is too large for an .espdl file (4 GiB).");
    std::vector<uint8_t> file(kEspdlHeaderSize + body, 0);
    std::memcpy(file.data(), "EDL2", 4);
    put_u32_le(file.data() + 4, 0);  // mode 0: plain
    put_u32_le(file.data() + 8, uint32_t(body));
    std::memcpy(file.data() + kEspdlHeaderSize, fbb_.GetBufferPointer(), body);
    return file;
  }

 private:
  const EspdlModel& m_;
  flatbuffers::FlatBufferBuilder fbb_;

  static const char* optional(const std::string& s) { return s.empty() ? nullptr : s.c_str(); }

  flatbuffers::Offset<espdl::Tensor> tensor(const EspdlTensor& t, const char* role) {
    const size_t need = espdl_element_count(t.dims) * espdl_dtype_size(t.dtype);
    if (t.raw.size() < need)
      throw Error(m_.source + ": " + role + " tensor '" + t.name + "' holds " + std::to_string(t.raw.size()) +
                  " bytes but its dims " + espdl_dims_text(t.dims) + " need " + std::to_string(need) + ".");
    std::vector<espdl::AlignedBytes> blocks((t.raw.size() + 15) / 16);
    for (size_t b = 0; b < blocks.size(); ++b) {
      uint8_t chunk[16] = {0};
      std::memcpy(chunk, t.raw.data() + b * 16, std::min<size_t>(16, t.raw.size() - b * 16));
      blocks[b] = espdl::AlignedBytes(flatbuffers::span<const uint8_t, 16>(chunk, 16));
    }
    return espdl::CreateTensorDirect(fbb_, &t.dims, espdl::TensorDataType(t.dtype), nullptr, nullptr, nullptr, nullptr,
                                     t.name.c_str(), optional(t.doc), &blocks, nullptr, espdl::DataLocation_DEFAULT,
                                     nullptr, nullptr, &t.exponents);
  }

  flatbuffers::Offset<espdl::ValueInfo> value_info(const EspdlValueInfo& v) {
    std::vector<flatbuffers::Offset<espdl::Dimension>> dims;
    for (int64_t d : v.dims)
      dims.push_back(
          espdl::CreateDimension(fbb_, espdl::CreateDimensionValue(fbb_, espdl::DimensionValueType_VALUE, d)));
    const auto shape = espdl::CreateTensorShapeDirect(fbb_, &dims);
    const auto tts = espdl::CreateTensorTypeAndShape(fbb_, espdl::TensorDataType(v.dtype), shape);
    const auto type = espdl::CreateTypeInfo(fbb_, espdl::TypeInfoValue_tensor_type, tts.Union());
    return espdl::CreateValueInfoDirect(fbb_, v.name.c_str(), type, nullptr, &v.exponents);
  }

  flatbuffers::Offset<espdl::Attribute> attribute(const EspdlAttribute& a) {
    // Only the member the type names is written (ONNX AttributeType numbering).
    const espdl::AttributeF f(a.f);
    const espdl::AttributeI i(a.i);
    const std::vector<uint8_t> s(a.s.begin(), a.s.end());
    std::vector<flatbuffers::Offset<flatbuffers::String>> strings;
    if (a.type == espdl::AttributeType_STRINGS)
      for (const std::string& x : a.strings) strings.push_back(fbb_.CreateString(x));
    return espdl::CreateAttributeDirect(fbb_, a.name.c_str(), nullptr, nullptr, espdl::AttributeType(a.type),
                                        a.type == espdl::AttributeType_FLOAT ? &f : nullptr,
                                        a.type == espdl::AttributeType_INT ? &i : nullptr,
                                        a.type == espdl::AttributeType_STRING ? &s : nullptr, 0, 0, 0,
                                        a.type == espdl::AttributeType_FLOATS ? &a.floats : nullptr,
                                        a.type == espdl::AttributeType_INTS ? &a.ints : nullptr,
                                        a.type == espdl::AttributeType_STRINGS ? &strings : nullptr);
  }

  flatbuffers::Offset<espdl::Node> node(const EspdlNode& n) {
    std::vector<flatbuffers::Offset<espdl::Attribute>> attrs;
    for (const EspdlAttribute& a : n.attributes) attrs.push_back(attribute(a));
    std::vector<flatbuffers::Offset<flatbuffers::String>> in, out;
    for (const std::string& s : n.inputs) in.push_back(fbb_.CreateString(s));
    for (const std::string& s : n.outputs) out.push_back(fbb_.CreateString(s));
    return espdl::CreateNodeDirect(fbb_, &in, &out, n.name.c_str(), n.op_type.c_str(), nullptr, &attrs);
  }
};

}  // namespace

std::vector<uint8_t> espdl_serialize(const EspdlModel& model) {
  return Serializer(model).run();
}

}  // namespace tvh
