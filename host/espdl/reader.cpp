// Reading .espdl files into tvh::EspdlModel: the header, the verified FlatBuffer, every table copied
// out with its sizes checked.
#include <flatbuffers/flatbuffers.h>

#include <cctype>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>

#include "espdl_generated.h"
#include "host/base/error.h"
#include "host/base/files.h"
#include "host/espdl/espdl.h"

namespace tvh {

void espdl_fail(const std::string& source, const std::string& what) {
  throw Error(source + ": " + what + ".");
}

namespace {

// Limits that keep a hostile file from asking for absurd allocations or products.
constexpr int64_t kMaxElements = int64_t(1) << 32;
constexpr size_t kMaxDims = 8;

uint32_t read_u32_le(const uint8_t* p) {
  return uint32_t(p[0]) | (uint32_t(p[1]) << 8) | (uint32_t(p[2]) << 16) | (uint32_t(p[3]) << 24);
}

std::string str(const flatbuffers::String* s) {
  return s ? s->str() : std::string();
}

// Copies a FlatBuffers scalar vector bytewise: in a damaged file a vector of 8-byte values may sit
// at a 4-byte boundary (the verifier checks only the length word's alignment). Little-endian host.
template <typename T>
std::vector<T> copy_vector(const flatbuffers::Vector<T>* v) {
  std::vector<T> out;
  if (!v || v->size() == 0) return out;
  out.resize(v->size());
  std::memcpy(out.data(), v->Data(), out.size() * sizeof(T));
  return out;
}

template <typename T>
void append_le(std::vector<uint8_t>& out, T v) {
  uint8_t b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));  // the host is little-endian, as the file is
  out.insert(out.end(), b, b + sizeof(T));
}

// Product of dims, checked: non-negative, at most kMaxDims dims and kMaxElements elements.
int64_t checked_count(const std::vector<int64_t>& dims, const std::string& source, const std::string& what) {
  if (dims.size() > kMaxDims) espdl_fail(source, what + " has " + std::to_string(dims.size()) + " dims");
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) espdl_fail(source, what + " has a negative dim in " + espdl_dims_text(dims));
    if (d != 0 && n > kMaxElements / d) espdl_fail(source, what + " has too many elements " + espdl_dims_text(dims));
    n *= d;
  }
  return n;
}

EspdlTensor convert_tensor(const espdl::Tensor* t, const std::string& source, const char* role) {
  EspdlTensor out;
  if (!t) espdl_fail(source, std::string("a null ") + role + " tensor");
  out.name = str(t->name());
  out.doc = str(t->doc_string());
  out.dtype = EspdlDataType(t->data_type());
  out.dims = copy_vector(t->dims());
  out.exponents = copy_vector(t->exponents());
  const std::string what = std::string(role) + " tensor '" + out.name + "'";
  const int64_t count = checked_count(out.dims, source, what);

  if (t->raw_data() && t->raw_data()->size() > 0) {
    const uint8_t* p = reinterpret_cast<const uint8_t*>(t->raw_data()->Data());
    out.raw.assign(p, p + size_t(t->raw_data()->size()) * 16);
  } else if (t->float_data() && t->float_data()->size() > 0) {
    for (float v : copy_vector(t->float_data())) append_le(out.raw, v);
  } else if (t->int32_data() && t->int32_data()->size() > 0) {
    // ONNX keeps int8/int16/int32 values in int32_data, one per entry.
    const size_t es = espdl_dtype_size(out.dtype);
    for (int32_t v : copy_vector(t->int32_data())) {
      if (es == 1)
        append_le(out.raw, int8_t(v));
      else if (es == 2)
        append_le(out.raw, int16_t(v));
      else
        append_le(out.raw, v);
    }
  } else if (t->int64_data() && t->int64_data()->size() > 0) {
    for (int64_t v : copy_vector(t->int64_data())) append_le(out.raw, v);
  }
  if (t->data_location() == espdl::DataLocation_EXTERNAL)
    espdl_fail(source, what + " keeps its data in an external file, which is not supported");
  const size_t es = espdl_dtype_size(out.dtype);
  if (es == 0 && count > 0 && out.dtype != espdl::TensorDataType_STRING)
    espdl_fail(source, what + " has element type " + std::to_string(int(out.dtype)) +
                           ", which is not a fixed-size number type");
  if (es > 0 && uint64_t(count) * es > out.raw.size())
    espdl_fail(source, what + " holds " + std::to_string(out.raw.size()) + " bytes but its dims " +
                           espdl_dims_text(out.dims) + " need " + std::to_string(uint64_t(count) * es));
  return out;
}

EspdlValueInfo convert_value_info(const espdl::ValueInfo* v, const std::string& source) {
  EspdlValueInfo out;
  if (!v) espdl_fail(source, "a null value_info entry");
  out.name = str(v->name());
  out.exponents = copy_vector(v->exponents());
  const espdl::TypeInfo* ti = v->value_info_type();
  const espdl::TensorTypeAndShape* tt = ti ? ti->value_as_tensor_type() : nullptr;
  if (tt) {
    out.dtype = EspdlDataType(tt->elem_type());
    if (tt->shape() && tt->shape()->dim()) {
      for (const espdl::Dimension* d : *tt->shape()->dim()) {
        const espdl::DimensionValue* dv = d ? d->value() : nullptr;
        out.dims.push_back(dv ? dv->dim_value() : 0);
      }
    }
    checked_count(out.dims, source, "value '" + out.name + "'");
  }
  return out;
}

EspdlAttribute convert_attribute(const espdl::Attribute* a, const std::string& source) {
  EspdlAttribute out;
  if (!a) espdl_fail(source, "a null node attribute");
  out.name = str(a->name());
  out.type = a->attr_type();
  if (a->f()) out.f = a->f()->f();
  if (a->i()) out.i = a->i()->i();
  if (a->s()) out.s.assign(reinterpret_cast<const char*>(a->s()->data()), a->s()->size());
  out.floats = copy_vector(a->floats());
  out.ints = copy_vector(a->ints());
  if (a->strings())
    for (const flatbuffers::String* s : *a->strings()) out.strings.push_back(str(s));
  return out;
}

std::vector<std::string> string_list(const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>* v) {
  std::vector<std::string> out;
  if (v)
    for (const flatbuffers::String* s : *v) out.push_back(str(s));
  return out;
}

}  // namespace

// ---------------------------------------------------------------- reading

EspdlModel espdl_parse(const uint8_t* data, size_t size, const std::string& source) {
  if (size < kEspdlHeaderSize)
    espdl_fail(source, "is " + std::to_string(size) + " bytes long, shorter than the 16-byte .espdl header");
  if (std::memcmp(data, "EDL2", 4) != 0) {
    std::string magic;
    for (int i = 0; i < 4; ++i) {
      const char c = char(data[i]);
      magic += (c >= 32 && c < 127) ? c : '?';
    }
    if (magic == "EDL1" || magic == "PDL1" || magic == "PDL2" || magic == "PDL3")
      espdl_fail(source, "is an ESP-DL '" + magic + "' file; only single-model EDL2 files (ESP-DL v3) are supported");
    espdl_fail(source, "is not an .espdl file (it starts with '" + magic + "', not 'EDL2')");
  }
  const uint32_t mode = read_u32_le(data + 4);
  const uint32_t length = read_u32_le(data + 8);
  if (mode == 1) espdl_fail(source, "is AES-encrypted (mode 1); export the model without encryption to read it here");
  if (mode != 0) espdl_fail(source, "has an unknown mode " + std::to_string(mode) + " in its header");
  if (read_u32_le(data + 12) != 0) espdl_fail(source, "has non-zero reserved header bytes 12..15");
  const size_t available = size - kEspdlHeaderSize;
  if (length > available)
    espdl_fail(source, "is truncated: its header declares a " + std::to_string(length) + "-byte model but only " +
                           std::to_string(available) + " bytes follow");
  if (length < available)
    espdl_fail(source, "has " + std::to_string(available - length) +
                           " bytes after the model that its header does not account for");
  if (length < 8) espdl_fail(source, "declares a model of only " + std::to_string(length) + " bytes");

  // Copy the FlatBuffer to storage that is aligned like the device's (16 bytes): the verifier checks
  // the alignment of every field relative to the buffer start, which the header keeps intact.
  std::vector<uint8_t> body(data + kEspdlHeaderSize, data + size);
  flatbuffers::Verifier verifier(body.data(), body.size(), /*max_depth=*/64, /*max_tables=*/1000000);
  if (!espdl::VerifyModelBuffer(verifier))
    espdl_fail(source, "is corrupt: its FlatBuffer fails verification against the ESP-DL schema");

  const espdl::Model* m = espdl::GetModel(body.data());
  EspdlModel out;
  out.source = source;
  out.ir_version = m->ir_version();
  out.producer_name = str(m->producer_name());
  out.producer_version = str(m->producer_version());
  out.model_version = m->model_version();
  out.doc_string = str(m->doc_string());
  if (m->metadata_props())
    for (const espdl::StringStringEntry* e : *m->metadata_props())
      if (e) out.metadata.emplace_back(str(e->key()), str(e->value()));
  const espdl::Graph* g = m->graph();
  if (!g) espdl_fail(source, "has no graph");
  out.graph_name = str(g->name());
  if (g->node()) {
    for (const espdl::Node* n : *g->node()) {
      if (!n) espdl_fail(source, "has a null node");
      EspdlNode node;
      node.name = str(n->name());
      node.op_type = str(n->op_type());
      node.inputs = string_list(n->input());
      node.outputs = string_list(n->output());
      if (n->attribute())
        for (const espdl::Attribute* a : *n->attribute()) node.attributes.push_back(convert_attribute(a, source));
      out.nodes.push_back(std::move(node));
    }
  }
  if (g->initializer())
    for (const espdl::Tensor* t : *g->initializer())
      out.initializers.push_back(convert_tensor(t, source, "initializer"));
  if (g->input())
    for (const espdl::ValueInfo* v : *g->input()) out.inputs.push_back(convert_value_info(v, source));
  if (g->output())
    for (const espdl::ValueInfo* v : *g->output()) out.outputs.push_back(convert_value_info(v, source));
  if (g->value_info())
    for (const espdl::ValueInfo* v : *g->value_info()) out.value_info.push_back(convert_value_info(v, source));
  if (g->test_inputs_value())
    for (const espdl::Tensor* t : *g->test_inputs_value())
      out.test_inputs.push_back(convert_tensor(t, source, "test input"));
  if (g->test_outputs_value())
    for (const espdl::Tensor* t : *g->test_outputs_value())
      out.test_outputs.push_back(convert_tensor(t, source, "test output"));
  return out;
}

EspdlModel espdl_read_file(const std::string& path) {
  const std::vector<uint8_t> bytes = read_file(path);  // a FIFO or device is refused, never waited on
  return espdl_parse(bytes.data(), bytes.size(), path);
}

}  // namespace tvh
