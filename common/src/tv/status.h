// Status values returned by the core instead of exceptions.
#pragma once
#include <stdint.h>

#include "tv/build_config.h"

namespace tv {

enum class StatusCode : uint8_t {
  Ok = 0,
  InvalidArgument,         // a null pointer or an out-of-range argument
  NoLayers,                // the model has no layers
  TooManyLayers,           // more than kMaxLayers
  ZeroDimension,           // a size or channel count of zero
  KernelTooLarge,          // a window larger than its (padded) input: the layer has no output
  BadStride,               // a stride of zero
  Overflow,                // sizes whose product overflows
  UnknownLayer,            // a layer type this build does not know
  ChannelMismatch,         // e.g. a pool or activation that would change channel count
  ClassCountMismatch,      // the model's output size differs from its class count
  BadParameter,            // e.g. LeakyReLU alpha outside [0, 1), clip lo > hi
  ArenaTooSmall,           // the buffer handed in is smaller than the plan needs
  Misaligned,              // a buffer is not aligned as required
  BlobTruncated,           // the blob ends before its declared content
  BlobBadMagic,            // not a .tvb blob
  BlobBadVersion,          // a format version this build cannot read
  BlobBadCrc,              // the CRC-32 does not match the content
  BlobCorrupt,             // a section or tensor entry is inconsistent
  BlobModelMismatch,       // the blob's model differs from what the caller expects
  BlobMissingTensor,       // a tensor the model needs is absent
  BlobTooSmall,            // the output buffer is too small to encode into
  RawWeightsSizeMismatch,  // a raw myWeights.bin whose size fits no class count
  NotSupported,            // the operation is not available for this model
  NonFiniteWeight,         // a float weight, bias or input scale is infinite or NaN (a: tensor index, or -1
                           // for the input scale/offset or a raw file; b: element index)
  NonFiniteActivation,     // a layer's output holds an infinite or NaN value although its weights are finite
                           // (they overflow float on this input; layer: which, a: the element index)
  BlobDuplicateLabel,      // two classes have the same label (a, b: their indices)
};

// A status: what went wrong, at which layer (-1 when not about a layer), and up to two numbers
// that explain it (e.g. the kernel size and the input size). Ok when code == StatusCode::Ok.
struct Status {
  StatusCode code = StatusCode::Ok;
  int16_t layer = -1;
  int32_t a = 0;
  int32_t b = 0;
  bool ok() const { return code == StatusCode::Ok; }
};

inline Status ok_status() {
  return Status{};
}
inline Status make_status(StatusCode code, int layer = -1, int32_t a = 0, int32_t b = 0) {
  Status s;
  s.code = code;
  s.layer = (int16_t)layer;
  s.a = a;
  s.b = b;
  return s;
}

// One short English phrase for a status code ("kernel larger than its input", ...).
const char* status_text(StatusCode code);

}  // namespace tv
