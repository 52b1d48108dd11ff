// Reading ESP-DL (v3) model files (.espdl) into a plain C++ view, converting ESP-DL's filter layouts
// to and from ours, and running a file's embedded test vectors through our int8 kernels.
//
// File layout (facts in docs/espdl.md and ../shared/espdl-golden/README.md, schema in host/espdl/espdl.fbs):
//   bytes 0..3  "EDL2"; 4..7 u32 mode (0 = plain; 1 = AES-encrypted, refused); 8..11 u32 length of
//   the FlatBuffer; 12..15 zero; then the FlatBuffer (root espdl.Model, no file identifier).
// Every error is a tvh::Error whose message is one sentence naming the file.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

#include "espdl_generated.h"

namespace tvh {

// The file header: "EDL2", u32 mode, u32 FlatBuffer length, 4 zero bytes.
constexpr size_t kEspdlHeaderSize = 16;

// ---------------------------------------------------------------- the model view

// Element types (ONNX numbering, as stored in the file): the schema's own enum, so that the numbers are
// written once, in host/espdl/espdl.fbs (espdl::TensorDataType_INT8, ...).
using EspdlDataType = espdl::TensorDataType;

// Bytes per element of a fixed-size type; 0 for UNDEFINED/STRING.
size_t espdl_dtype_size(EspdlDataType t);
// "[1, 8, 8, 3]": a dims list as messages show it.
std::string espdl_dims_text(const std::vector<int64_t>& dims);
// The number of elements of a dims list (a negative dim counts as 0).
size_t espdl_element_count(const std::vector<int64_t>& dims);
// "INT8", "FLOAT", ... for messages.
const char* espdl_dtype_name(EspdlDataType t);

// Exponents beyond +-kMaxExponent are refused as damage (int8 models use roughly -20..5).
constexpr int64_t kMaxExponent = 100;

// A constant (initializer) or an embedded test tensor.
struct EspdlTensor {
  std::string name;
  std::vector<int64_t> dims;
  EspdlDataType dtype = espdl::TensorDataType_UNDEFINED;
  std::vector<uint8_t> raw;        // raw_data, the 16-byte blocks concatenated (may end in padding)
  std::vector<int64_t> exponents;  // power-of-two exponent(s); one on the S3
  std::string doc;                 // doc_string, e.g. "layout ==> (N/16)HWC16"

  // Product of dims (1 for a scalar).
  size_t element_count() const;
  // The single exponent; throws when there is not exactly one or it is beyond +-kMaxExponent.
  int exponent() const;
  // The payload as values; throw when the type differs or raw holds fewer bytes than dims need.
  std::vector<int8_t> as_int8() const;
  std::vector<int32_t> as_int32() const;
  std::vector<int64_t> as_int64() const;
  std::vector<float> as_float() const;
};

// Name, shape and exponent(s) of a graph input, output or intermediate tensor. ESP-DL stores
// activation shapes channels-last: [N, W, C] for 1-D and [N, H, W, C] for 2-D data.
struct EspdlValueInfo {
  std::string name;
  std::vector<int64_t> dims;  // empty when the file gives no shape
  EspdlDataType dtype = espdl::TensorDataType_UNDEFINED;
  std::vector<int64_t> exponents;
};

// One node attribute; `type` is the ONNX AttributeType number (1 FLOAT, 2 INT, 3 STRING, 6 FLOATS,
// 7 INTS, 8 STRINGS); only the member it names is meaningful.
struct EspdlAttribute {
  std::string name;
  int32_t type = 0;
  float f = 0.0f;
  int64_t i = 0;
  std::string s;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
};

struct EspdlNode {
  std::string name;
  std::string op_type;  // ONNX name: Conv, Gemm, ...
  std::vector<std::string> inputs, outputs;
  std::vector<EspdlAttribute> attributes;

  const EspdlAttribute* find_attribute(const std::string& attr) const;
  // Typed look-ups with a default for an absent attribute.
  int64_t attr_int(const std::string& attr, int64_t fallback) const;
  float attr_float(const std::string& attr, float fallback) const;
  std::string attr_string(const std::string& attr, const std::string& fallback) const;
  std::vector<int64_t> attr_ints(const std::string& attr) const;  // empty when absent
};

struct EspdlModel {
  std::string source;  // file name (or the label given to espdl_parse) used in messages
  int32_t ir_version = 0;
  std::string producer_name;
  std::string producer_version;
  int64_t model_version = 0;  // ESP-DL logs it with the graph name when it loads the model
  std::string doc_string;     // the model's description (ESP-DL logs it too)
  std::vector<std::pair<std::string, std::string>> metadata;  // metadata_props, e.g. target=esp32s3
  std::string graph_name;
  std::vector<EspdlNode> nodes;  // in execution order
  std::vector<EspdlTensor> initializers;
  std::vector<EspdlValueInfo> inputs, outputs, value_info;
  std::vector<EspdlTensor> test_inputs, test_outputs;

  const EspdlTensor* find_initializer(const std::string& name) const;
  // Looks in value_info, then inputs, then outputs.
  const EspdlValueInfo* find_value_info(const std::string& name) const;
  // metadata "target" ("esp32s3", "c", ...); "" when absent.
  std::string target() const;
  // True when the file is for the ESP32-P4 family: its target metadata says so or, as Espressif's own
  // files often carry no target, its path names "esp32p4" (e.g. deploy_streaming_model/esp32p4/...).
  bool for_p4() const;
};

// ---------------------------------------------------------------- reading

// Parses the bytes of an .espdl file; `source` names it in error messages. Checks the header,
// runs the FlatBuffers verifier and that every tensor's payload covers its dims.
EspdlModel espdl_parse(const uint8_t* data, size_t size, const std::string& source);
// Reads and parses a file.
EspdlModel espdl_read_file(const std::string& path);
// Throws the reader's refusal: "SOURCE: WHAT." (an Error).
[[noreturn]] void espdl_fail(const std::string& source, const std::string& what);

// ---------------------------------------------------------------- filter layouts

// How a Conv/Gemm filter is stored.
enum class EspdlFilterLayout {
  Ours,      // plain C target: conv [out][kh][kw][in] ("NHWC"/"NWC"), depthwise [kh][kw][c]
             // ("HWCN"/"WCN"), Gemm [out][in]: our own layouts, no conversion
  S3Packed,  // S3 int8: "(N/16)HWC16" / "(N/16)WC16", "_UNALIGNED" when out % 16 != 0
};

// Decides from the tensor's doc string ("layout ==> ..."); throws on an unknown or int16 layout.
EspdlFilterLayout espdl_filter_layout(const EspdlTensor& filter, const std::string& source);

// S3 packing of a regular conv filter (Gemm: kh = kw = 1, cin = in, cout = out): for each block of
// 16 output channels, [kh][kw][cin][16] (the 16 outputs fastest); then the cout % 16 remaining
// filters one after another in our layout [n][kh][kw][cin]. The file's dims stay [kh, kw, cin, cout]
// ([kw, cin, cout] for 1-D). `packed` and the result hold kh*kw*cin*cout values.
std::vector<int8_t> s3_conv_filter_to_ours(const int8_t* packed, int kh, int kw, int cin, int cout);
std::vector<int8_t> ours_conv_filter_to_s3(const int8_t* ours, int kh, int kw, int cin, int cout);
// S3 packing of a depthwise filter ([kh, kw, c, 1] in the file): for each block of 16 channels
// [kh][kw][16]; then the c % 16 remaining channels as [kh][kw][rem]. Ours is [kh][kw][c].
std::vector<int8_t> s3_depthwise_filter_to_ours(const int8_t* packed, int kh, int kw, int c);
std::vector<int8_t> ours_depthwise_filter_to_s3(const int8_t* ours, int kh, int kw, int c);
// The doc string a writer stores with an S3-packed filter of `cout` outputs, 2-D or 1-D:
// "layout ==> (N/16)HWC16", "layout ==> (N/16)WC16_UNALIGNED", ...
std::string s3_filter_layout_doc(int cout, bool one_dimensional);

// A Conv or Gemm node's filter in our layout, with what the kernels need to know.
struct EspdlFilter {
  bool depthwise = false;
  int kh = 1, kw = 1, cin = 1, cout = 1;  // depthwise: cin = cout = channels
  std::vector<int8_t> weights;            // ours: [cout][kh][kw][cin], depthwise [kh][kw][c]
  int exponent = 0;
};
// Reads input 1 of a Conv (1-D or 2-D, group 1 or depthwise) or Gemm node (transB = 0) and converts
// it to our layout; throws naming the node on anything else.
EspdlFilter espdl_node_filter(const EspdlModel& model, const EspdlNode& node);

// ---------------------------------------------------------------- running the test vectors

struct EspdlRunReport {
  bool passed = false;
  std::vector<std::string> ops_run;  // op_type of each node executed, in order
  int tensors_compared = 0;
  // First difference (when !passed): the tensor, the flat index and both values.
  std::string mismatch_tensor;
  size_t mismatch_index = 0;
  double expected = 0.0, got = 0.0;
  std::string message;  // one sentence: "all N test outputs match" or where the first difference is
};

// Runs the embedded test inputs through our int8 kernels (tv/int8/int8_ops.h) node by node and
// compares every embedded test output: int8 outputs exactly, float outputs (Softmax) within 1e-6.
// The kernels round as the ESP32-S3 does (half up). An ESP32-P4 file (for_p4) rounds half to even: it
// passes when every output is reproduced anyway, and otherwise is refused ("P4 rounding not
// supported", a tvh::Error) instead of reporting a mismatch that may be the rounding's. A mismatch of
// a file that names no target says that it may be a P4 file.
// Supported ops: Conv (1-D/2-D, group 1 or depthwise, any dilation), Gemm, MaxPool, AveragePool,
// GlobalAveragePool, Relu, LeakyRelu, Sigmoid/Tanh/... given as an int8 lookup table ("lut"
// attribute), Add, Mul (same shapes), Flatten, Reshape, Transpose, Slice, Softmax. Throws a tvh::Error
// naming the node for an unsupported op or attribute, and when the file has no test vectors.
EspdlRunReport espdl_run_test_vectors(const EspdlModel& model);

}  // namespace tvh
