// The .espdl model view's helpers (host/espdl/espdl.h): data types, tensor values, node attributes,
// lookups, and the text and size of a dims list.
#include <cstring>
#include <sstream>

#include "espdl_generated.h"
#include "host/base/error.h"
#include "host/espdl/espdl.h"

namespace tvh {

std::string espdl_dims_text(const std::vector<int64_t>& dims) {
  std::ostringstream o;
  o << "[";
  for (size_t i = 0; i < dims.size(); ++i) o << (i ? ", " : "") << dims[i];
  o << "]";
  return o.str();
}

size_t espdl_element_count(const std::vector<int64_t>& dims) {
  size_t n = 1;
  for (int64_t d : dims) n *= size_t(d < 0 ? 0 : d);
  return n;
}

// ---------------------------------------------------------------- data types

size_t espdl_dtype_size(EspdlDataType t) {
  switch (t) {
    case espdl::TensorDataType_FLOAT: return 4;
    case espdl::TensorDataType_UINT8: return 1;
    case espdl::TensorDataType_INT8: return 1;
    case espdl::TensorDataType_UINT16: return 2;
    case espdl::TensorDataType_INT16: return 2;
    case espdl::TensorDataType_INT32: return 4;
    case espdl::TensorDataType_INT64: return 8;
    case espdl::TensorDataType_BOOL: return 1;
    case espdl::TensorDataType_FLOAT16: return 2;
    case espdl::TensorDataType_DOUBLE: return 8;
    case espdl::TensorDataType_UINT32: return 4;
    case espdl::TensorDataType_UINT64: return 8;
    default: return 0;
  }
}

const char* espdl_dtype_name(EspdlDataType t) {
  switch (t) {
    case espdl::TensorDataType_UNDEFINED: return "UNDEFINED";
    case espdl::TensorDataType_FLOAT: return "FLOAT";
    case espdl::TensorDataType_UINT8: return "UINT8";
    case espdl::TensorDataType_INT8: return "INT8";
    case espdl::TensorDataType_UINT16: return "UINT16";
    case espdl::TensorDataType_INT16: return "INT16";
    case espdl::TensorDataType_INT32: return "INT32";
    case espdl::TensorDataType_INT64: return "INT64";
    case espdl::TensorDataType_STRING: return "STRING";
    case espdl::TensorDataType_BOOL: return "BOOL";
    case espdl::TensorDataType_FLOAT16: return "FLOAT16";
    case espdl::TensorDataType_DOUBLE: return "DOUBLE";
    case espdl::TensorDataType_UINT32: return "UINT32";
    case espdl::TensorDataType_UINT64: return "UINT64";
  }
  return "UNKNOWN";
}

// ---------------------------------------------------------------- EspdlTensor

size_t EspdlTensor::element_count() const {
  size_t n = 1;
  for (int64_t d : dims) n *= size_t(d);
  return n;
}

int EspdlTensor::exponent() const {
  if (exponents.size() != 1)
    throw Error("tensor '" + name + "' has " + std::to_string(exponents.size()) +
                " exponents where exactly one is needed.");
  if (exponents[0] < -kMaxExponent || exponents[0] > kMaxExponent)
    throw Error("tensor '" + name + "' has the implausible exponent " + std::to_string(exponents[0]) + ".");
  return int(exponents[0]);
}

namespace {
template <typename T>
std::vector<T> tensor_values(const EspdlTensor& t, EspdlDataType want) {
  if (t.dtype != want)
    throw Error("tensor '" + t.name + "' is " + espdl_dtype_name(t.dtype) + ", not " + espdl_dtype_name(want) + ".");
  const size_t n = t.element_count();
  if (t.raw.size() < n * sizeof(T)) throw Error("tensor '" + t.name + "' holds fewer bytes than its dims need.");
  std::vector<T> out(n);
  if (n) std::memcpy(out.data(), t.raw.data(), n * sizeof(T));
  return out;
}
}  // namespace

std::vector<int8_t> EspdlTensor::as_int8() const {
  return tensor_values<int8_t>(*this, espdl::TensorDataType_INT8);
}
std::vector<int32_t> EspdlTensor::as_int32() const {
  return tensor_values<int32_t>(*this, espdl::TensorDataType_INT32);
}
std::vector<int64_t> EspdlTensor::as_int64() const {
  return tensor_values<int64_t>(*this, espdl::TensorDataType_INT64);
}
std::vector<float> EspdlTensor::as_float() const {
  return tensor_values<float>(*this, espdl::TensorDataType_FLOAT);
}

// ---------------------------------------------------------------- EspdlNode / EspdlModel

const EspdlAttribute* EspdlNode::find_attribute(const std::string& attr) const {
  for (const EspdlAttribute& a : attributes)
    if (a.name == attr) return &a;
  return nullptr;
}

int64_t EspdlNode::attr_int(const std::string& attr, int64_t fallback) const {
  const EspdlAttribute* a = find_attribute(attr);
  return a ? a->i : fallback;
}

float EspdlNode::attr_float(const std::string& attr, float fallback) const {
  const EspdlAttribute* a = find_attribute(attr);
  return a ? a->f : fallback;
}

std::string EspdlNode::attr_string(const std::string& attr, const std::string& fallback) const {
  const EspdlAttribute* a = find_attribute(attr);
  return a ? a->s : fallback;
}

std::vector<int64_t> EspdlNode::attr_ints(const std::string& attr) const {
  const EspdlAttribute* a = find_attribute(attr);
  return a ? a->ints : std::vector<int64_t>();
}

const EspdlTensor* EspdlModel::find_initializer(const std::string& name) const {
  for (const EspdlTensor& t : initializers)
    if (t.name == name) return &t;
  return nullptr;
}

const EspdlValueInfo* EspdlModel::find_value_info(const std::string& name) const {
  for (const auto* list : {&value_info, &inputs, &outputs})
    for (const EspdlValueInfo& v : *list)
      if (v.name == name) return &v;
  return nullptr;
}

std::string EspdlModel::target() const {
  for (const auto& kv : metadata)
    if (kv.first == "target") return kv.second;
  return "";
}

bool EspdlModel::for_p4() const {
  auto lower = [](std::string t) {
    for (char& c : t) c = (char)std::tolower((unsigned char)c);
    return t;
  };
  const std::string t = lower(target());
  if (!t.empty()) return t.compare(0, 7, "esp32p4") == 0;
  return lower(source).find("esp32p4") != std::string::npos;
}

}  // namespace tvh
