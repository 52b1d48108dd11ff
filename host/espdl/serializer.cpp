// Serialising a model view (tvh::EspdlModel) into the bytes of an .espdl file: the 16-byte "EDL2"
// header and a FlatBuffer built with our schema (host/espdl/espdl.fbs).
#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <cstring>

#include "espdl_generated.h"
#include "host/base/error.h"
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
    // Every string is written with its length (a name may hold a NUL), in the order flatc's *Direct
    // helpers would create them, so the bytes are those of the earlier writer for NUL-free models.
    const auto nodes_v = fbb_.CreateVector(nodes);
    const auto graph_name = str(m_.graph_name);
    const auto inits_v = fbb_.CreateVector(inits);
    const auto in_v = fbb_.CreateVector(in), out_v = fbb_.CreateVector(out), values_v = fbb_.CreateVector(values);
    const auto test_in_v = fbb_.CreateVector(test_in), test_out_v = fbb_.CreateVector(test_out);
    const auto graph =
        espdl::CreateGraph(fbb_, nodes_v, graph_name, inits_v, 0, in_v, out_v, values_v, 0, test_in_v, test_out_v);
    std::vector<Offset<espdl::StringStringEntry>> meta;
    for (const auto& kv : m_.metadata) {
      const auto key = str(kv.first);
      const auto value = str(kv.second);
      meta.push_back(espdl::CreateStringStringEntry(fbb_, key, value));
    }
    const std::vector<Offset<espdl::OperatorSetId>> opsets;  // empty, as in esp-ppq's files
    const auto opsets_v = fbb_.CreateVector(opsets);
    const auto producer_name = optional(m_.producer_name);
    const auto producer_version = optional(m_.producer_version);
    const auto doc = optional(m_.doc_string);
    const auto meta_v = meta.empty() ? 0 : fbb_.CreateVector(meta);
    const auto model = espdl::CreateModel(fbb_, m_.ir_version, opsets_v, producer_name, producer_version, 0,
                                          m_.model_version, doc, graph, meta_v);
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

  flatbuffers::Offset<flatbuffers::String> str(const std::string& s) { return fbb_.CreateString(s.data(), s.size()); }
  // An empty string is left out.
  flatbuffers::Offset<flatbuffers::String> optional(const std::string& s) { return s.empty() ? 0 : str(s); }

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
    const auto dims = fbb_.CreateVector(t.dims);
    const auto name = str(t.name);
    const auto doc = optional(t.doc);
    const auto raw = fbb_.CreateVectorOfStructs(blocks);
    const auto exponents = fbb_.CreateVector(t.exponents);
    return espdl::CreateTensor(fbb_, dims, espdl::TensorDataType(t.dtype), 0, 0, 0, 0, name, doc, raw, 0,
                               espdl::DataLocation_DEFAULT, 0, 0, exponents);
  }

  flatbuffers::Offset<espdl::ValueInfo> value_info(const EspdlValueInfo& v) {
    std::vector<flatbuffers::Offset<espdl::Dimension>> dims;
    for (int64_t d : v.dims)
      dims.push_back(
          espdl::CreateDimension(fbb_, espdl::CreateDimensionValue(fbb_, espdl::DimensionValueType_VALUE, d)));
    const auto shape = espdl::CreateTensorShapeDirect(fbb_, &dims);
    const auto tts = espdl::CreateTensorTypeAndShape(fbb_, espdl::TensorDataType(v.dtype), shape);
    const auto type = espdl::CreateTypeInfo(fbb_, espdl::TypeInfoValue_tensor_type, tts.Union());
    const auto name = str(v.name);
    const auto exponents = fbb_.CreateVector(v.exponents);
    return espdl::CreateValueInfo(fbb_, name, type, 0, exponents);
  }

  flatbuffers::Offset<espdl::Attribute> attribute(const EspdlAttribute& a) {
    // Only the member the type names is written (ONNX AttributeType numbering).
    const espdl::AttributeF f(a.f);
    const espdl::AttributeI i(a.i);
    const std::vector<uint8_t> s(a.s.begin(), a.s.end());
    std::vector<flatbuffers::Offset<flatbuffers::String>> strings;
    if (a.type == espdl::AttributeType_STRINGS)
      for (const std::string& x : a.strings) strings.push_back(fbb_.CreateString(x));
    const auto name = str(a.name);
    const auto s_v = a.type == espdl::AttributeType_STRING ? fbb_.CreateVector(s) : 0;
    const auto floats_v = a.type == espdl::AttributeType_FLOATS ? fbb_.CreateVector(a.floats) : 0;
    const auto ints_v = a.type == espdl::AttributeType_INTS ? fbb_.CreateVector(a.ints) : 0;
    const auto strings_v = a.type == espdl::AttributeType_STRINGS ? fbb_.CreateVector(strings) : 0;
    return espdl::CreateAttribute(
        fbb_, name, 0, 0, espdl::AttributeType(a.type), a.type == espdl::AttributeType_FLOAT ? &f : nullptr,
        a.type == espdl::AttributeType_INT ? &i : nullptr, s_v, 0, 0, 0, floats_v, ints_v, strings_v);
  }

  flatbuffers::Offset<espdl::Node> node(const EspdlNode& n) {
    std::vector<flatbuffers::Offset<espdl::Attribute>> attrs;
    for (const EspdlAttribute& a : n.attributes) attrs.push_back(attribute(a));
    std::vector<flatbuffers::Offset<flatbuffers::String>> in, out;
    for (const std::string& s : n.inputs) in.push_back(fbb_.CreateString(s));
    for (const std::string& s : n.outputs) out.push_back(fbb_.CreateString(s));
    const auto in_v = fbb_.CreateVector(in), out_v = fbb_.CreateVector(out);
    const auto name = str(n.name), op_type = str(n.op_type);
    const auto attrs_v = fbb_.CreateVector(attrs);
    return espdl::CreateNode(fbb_, in_v, out_v, name, op_type, 0, attrs_v);
  }
};

}  // namespace

std::vector<uint8_t> espdl_serialize(const EspdlModel& model) {
  return Serializer(model).run();
}

}  // namespace tvh
