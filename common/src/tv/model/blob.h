// The .tvb weight blob: self-describing, versioned, little-endian, decodable in place.
//
// Layout (every offset from the start of the blob; all multi-byte numbers little-endian):
//   header (32 bytes): "TVB1" | u16 major | u16 minor | u32 total_size | u32 crc32 of bytes
//                      [16, total_size) | u32 section_count | u32 flags | 8 zero bytes
//   sections, each at a 16-byte-aligned offset: u32 tag | u32 payload_size | 8 zero bytes |
//                      payload | zero padding to 16
//   'MODL' the model description (input, preprocessing, layers, class count)
//   'LABL' class labels: u16 count, then per label u16 length + UTF-8 bytes
//   'PROV' provenance: UTF-8 "key=value" lines (tool, version, seed, dataset, ...)
//   'TENS' one tensor: a 64-byte entry (dtype, ndim, exponent, role, layer, exponent count, dims[4],
//          data size, 32-byte NUL-padded name), then per-channel exponents (if any) padded to 16,
//          then the data, which therefore starts 16-byte aligned
//   'QACT' int8 models: the exponent of the input and of every layer output (i8 each)
//   'TASK' (minor 1) a model that is not a classifier: u8 task (1 = detect), 3 zero bytes, f32 the
//          detector's decoding threshold in (0, 1]; without it a model is a classifier
// The decoder checks all of it before reporting success, so a caller never sees a partial load.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "tv/model/model.h"
#include "tv/status.h"

namespace tv {

constexpr uint16_t kBlobMajor = 1;
constexpr uint16_t kBlobMinor = 0;      // what a classifier's blob is written as (every blob before detectors)
constexpr uint16_t kBlobMinorTask = 1;  // a blob with a 'TASK' section (a detector); readers of minor 0 skip it
constexpr size_t kBlobHeaderBytes = 32;
constexpr int kMaxBlobTensors = 2 * kMaxLayers;
constexpr int kMaxLabels = 256;
constexpr int kTensorNameMax = 31;
constexpr uint32_t kBlobFlagInt8 = 1u;  // the blob holds an int8 (quantized) model

enum class DType : uint8_t { F32 = 1, I8 = 2, I32 = 3 };
enum class TensorRole : uint8_t { Weight = 0, Bias = 1 };

// Bytes per element of a dtype.
size_t dtype_size(DType t);
const char* dtype_name(DType t);

// One tensor, as it is encoded or as it sits in a decoded blob.
struct BlobTensor {
  char name[kTensorNameMax + 1] = {0};
  DType dtype = DType::F32;
  TensorRole role = TensorRole::Weight;
  uint16_t layer = 0;  // index of the layer it belongs to
  uint8_t ndim = 0;
  uint32_t dims[4] = {0, 0, 0, 0};
  int8_t exponent = 0;     // int8/int32: real = q * 2^exponent (per tensor)
  uint16_t exp_count = 0;  // >0: per-output-channel exponents (not for the ESP32-S3)
  const int8_t* channel_exps = nullptr;
  const void* data = nullptr;  // 16-byte aligned inside a decoded blob
  uint32_t bytes = 0;
  size_t elements() const;
};

// What goes into a blob.
struct BlobContents {
  const ModelDesc* model = nullptr;
  const char* const* labels = nullptr;  // num_classes labels
  int num_labels = 0;
  const char* provenance = nullptr;  // may be null
  size_t provenance_len = 0;         // its bytes; 0: strlen(provenance)
  const BlobTensor* tensors = nullptr;
  int num_tensors = 0;
  const int8_t* act_exps = nullptr;  // int8 models: input + one per layer
  int num_act_exps = 0;
  uint32_t flags = 0;
};

// A decoded blob: views into the caller's bytes, no copies, no heap.
struct BlobView {
  const uint8_t* base = nullptr;
  size_t size = 0;
  uint16_t major = 0, minor = 0;
  uint32_t flags = 0;
  uint32_t crc = 0;
  ModelDesc model;
  int num_labels = 0;
  const uint8_t* labels = nullptr;  // the LABL payload after its count
  size_t labels_bytes = 0;
  const char* provenance = nullptr;  // not NUL-terminated
  size_t provenance_len = 0;
  int num_tensors = 0;
  BlobTensor tensors[kMaxBlobTensors];
  int num_act_exps = 0;
  int8_t act_exps[kMaxLayers + 1] = {0};
  bool is_int8() const { return (flags & kBlobFlagInt8) != 0; }
};

// Exact encoded size of some contents.
size_t blob_encoded_size(const BlobContents& c);
// Encodes into out (cap bytes; zero-filled padding); *written gets the size.
Status blob_encode(const BlobContents& c, uint8_t* out, size_t cap, size_t* written);
// Validates and decodes a blob in place. Refuses truncated, corrupted, wrong-version and
// wrong-CRC input with a status; never reads outside [data, data + size). A float tensor holding an
// infinite or NaN value is refused with NonFiniteWeight (layer = its layer, a = its index in
// view->tensors, which stays filled so the caller can name it, b = the element); a non-finite input
// scale or offset with NonFiniteWeight, a = -1. Every loader (host tools, the board) goes through here.
Status blob_decode(const uint8_t* data, size_t size, BlobView* view);
// Index of the first infinite or NaN value among n little-endian float32 values at p (any
// alignment), or n when every value is finite.
size_t first_non_finite_f32(const uint8_t* p, size_t n);
// The decoded blob `v` as contents to encode again with other labels (v.num_labels of them): its model,
// provenance, tensors (int8 ones as they are, pointing into v's bytes), activation exponents and flags.
// Encoded with its own labels, a blob blob_encode wrote comes back byte for byte: a class renamed on the
// board or the PC changes nothing else.
BlobContents blob_contents_relabeled(const BlobView& v, const char* const* labels);
// Label i of a decoded blob (not NUL-terminated); false when i is out of range.
bool blob_label(const BlobView& v, int i, const char** text, size_t* len);
// Finds a tensor by layer and role; null when absent.
const BlobTensor* blob_find(const BlobView& v, int layer, TensorRole role);

// Describes the float32 tensors of a model's parameters (names like "l0_conv2d.w"), pointing into
// params. Returns how many were written to out (<= kMaxBlobTensors).
int float_tensors(const ModelPlan& plan, const float* params, BlobTensor* out);
// Copies a float blob's parameters into params (plan.param_count floats) after checking that the
// blob holds exactly `expected`'s model. Nothing is written unless everything checks out.
Status blob_load_float_params(const BlobView& v, const ModelPlan& expected, float* params);

}  // namespace tv
