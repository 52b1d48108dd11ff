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

// What a status's two numbers (Status::a, Status::b) are. Every status comes from one of the named
// constructors below, which set it, so that a message can say what each number is.
enum class StatusFigures : uint8_t {
  None = 0,       // no number
  FoundLimit,     // a: the value found; b: the largest the code accepts
  FoundMinimum,   // a: the value found; b: the smallest the code accepts
  FoundExpected,  // a: the value found; b: the value it has to be
  HaveNeed,       // a: the size there is (bytes, floats, samples); b: the size needed
  TensorElement,  // a: the tensor's index in the blob (-1: the input scale/offset or a raw file); b: the element
  Element,        // a: the element index
  ClassPair,      // a, b: two class indices
  Value,          // a: the offending value (a count, a shift, a class)
  ChannelValue,   // a: the channel; b: its offending value (a shift)
  PlanFigure,     // a: which of the plan's figures (tv::PlanFigure, named by plan_figure_name)
};

// A status: what went wrong, at which layer (-1 when not about a layer), and up to two numbers
// that explain it (their meaning: figures). Ok when code == StatusCode::Ok.
struct Status {
  StatusCode code = StatusCode::Ok;
  StatusFigures figures = StatusFigures::None;
  int16_t layer = -1;
  int32_t a = 0;
  int32_t b = 0;
  bool ok() const { return code == StatusCode::Ok; }
};

inline Status ok_status() {
  return Status{};
}
// The one builder behind the named constructors.
inline Status make_status_of(StatusFigures figures, StatusCode code, int layer, int32_t a, int32_t b) {
  Status s;
  s.code = code;
  s.figures = figures;
  s.layer = (int16_t)layer;
  s.a = a;
  s.b = b;
  return s;
}

// The named constructors: a status whose numbers say what they are.
// No number.
inline Status status_plain(StatusCode code, int layer = -1) {
  return make_status_of(StatusFigures::None, code, layer, 0, 0);
}
// `found` is more than `limit`, the largest accepted.
inline Status status_over_limit(StatusCode code, int layer, int32_t found, int32_t limit) {
  return make_status_of(StatusFigures::FoundLimit, code, layer, found, limit);
}
// `found` where `expected` is required.
inline Status status_not_expected(StatusCode code, int layer, int32_t found, int32_t expected) {
  return make_status_of(StatusFigures::FoundExpected, code, layer, found, expected);
}
// `found` is less than `minimum`, the smallest accepted.
inline Status status_under_minimum(StatusCode code, int layer, int32_t found, int32_t minimum) {
  return make_status_of(StatusFigures::FoundMinimum, code, layer, found, minimum);
}
// `have` (bytes, floats, samples) where `need` are needed.
inline Status status_too_small(StatusCode code, int layer, int32_t have, int32_t need) {
  return make_status_of(StatusFigures::HaveNeed, code, layer, have, need);
}
// Element `element` of the blob's tensor `tensor` (-1: the input scale/offset, or a raw file).
inline Status status_at_tensor_element(StatusCode code, int layer, int32_t tensor, int32_t element) {
  return make_status_of(StatusFigures::TensorElement, code, layer, tensor, element);
}
// Element `element` of the layer's output.
inline Status status_at_element(StatusCode code, int layer, int32_t element) {
  return make_status_of(StatusFigures::Element, code, layer, element, 0);
}
// Classes `first` and `second`.
inline Status status_classes(StatusCode code, int32_t first, int32_t second) {
  return make_status_of(StatusFigures::ClassPair, code, -1, first, second);
}
// The offending `value`.
inline Status status_value(StatusCode code, int layer, int32_t value) {
  return make_status_of(StatusFigures::Value, code, layer, value, 0);
}

// Channel `channel`'s offending `value`.
inline Status status_channel_value(StatusCode code, int layer, int32_t channel, int32_t value) {
  return make_status_of(StatusFigures::ChannelValue, code, layer, channel, value);
}
// status_plan_figure (the plan's figure that overflows) is in tv/model/model.h, beside PlanFigure.

// One short English phrase for a status code ("kernel larger than its input", ...).
const char* status_text(StatusCode code);

}  // namespace tv
