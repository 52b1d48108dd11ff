// The spine of the core: one table with one row per layer type, and beside each row the type's unit
// of code (tv/model/layer_unit.h: common/src/tv/layers/<name>.cpp holds the row, the plan checks, the
// float forward and backward, the int8 bind and run and the interval rule). Every part of the
// toolchain that needs to know something about a layer type reads its row or calls its unit's hooks;
// the host keeps one row per type for its config fields, pruning rule and .espdl emission
// (host/layers/layer_host.cpp).
//
// How to add a layer type (the whole list):
//   1. LayerType below: a new enumerator with the next number (it is the byte stored in .tvb files,
//      so never renumber), kLayerTypeCount + 1, its unit's declaration and its entry in kLayerUnits.
//   2. common/src/tv/layers/<name>.cpp: its row (pick the rules that describe it; add a rule value
//      only when none fits) and every hook (the build refuses a unit with a hook left out). Fast
//      kernels stay in tv/ops (large, shared by several types); the unit names them. An activation
//      whose int8 form is a 256-entry table gives the table and takes its int8 hooks from
//      tv/layers/table_activation.h (LeakyReLU, HardSwish).
//      An in-place row's backward sees only its output: a type whose derivative needs its input is
//      not in place (the generic test catches it).
//   3. host/layers/layer_host.cpp: its row (config fields, pruning rule, .espdl emission or refusal).
//   4. docs/config.md: its row in the layer list.
// tests/core/layer_units_test.cpp then checks the new row like every other one.
#pragma once
#include <stdint.h>

#include "tv/build_config.h"

namespace tv {

// The byte stored per layer in a .tvb blob. Numbers are part of the file format.
enum class LayerType : uint8_t {
  Conv2D = 1,
  DepthwiseConv2D = 2,
  MaxPool2D = 3,
  AvgPool2D = 4,
  AdaptiveAvgPool2D = 5,
  GlobalAvgPool = 6,
  Dense = 7,
  ReLU = 8,
  LeakyReLU = 9,
  Flatten = 10,
  Clip = 11,
  Hardswish = 12,
};
constexpr int kLayerTypeCount = 12;  // LayerType runs from 1 to kLayerTypeCount without gaps

// How the output shape follows from the input shape (plan_model).
enum class ShapeRule : uint8_t {
  SlidingWindow,   // kernel/stride/padding over H and W; channels = filters (conv) or the input's
  AdaptiveBins,    // out_h x out_w bins over H and W, channels kept
  GlobalPool,      // 1 x 1 x channels
  FullyConnected,  // 1 x 1 x units (units 0 = the class count)
  Unchanged,       // same shape as the input
  Flatten,         // 1 x 1 x (h * w * c)
};

// How the int8 output exponent is chosen (tvquant) and checked (q8_bind).
enum class Int8Exponent : uint8_t {
  KeepsInput,   // e_out == e_in: the values are a subset of the input's (max, ReLU, clamp, reshape)
  OwnRange,     // its own exponent from the calibrated range of its output (tables and averages)
  WithWeights,  // conv/dense: chosen with the weight exponent so that the shift e_out - e_in - e_w >= 0
};

// What the one-line layer summary (C header comment, tvexport info) shows after the type name.
enum class DetailText : uint8_t {
  None,
  FiltersWindowPadding,  // "8 filters 3x3 stride 1 same"
  WindowPadding,         // "3x3 stride 1 same"
  Window,                // "2x2 stride 2"
  Units,                 // "3 units"
  Alpha,                 // "alpha 0.100000001"
  Range,                 // "[-1, 1]"
};

struct LayerTypeInfo {
  LayerType type;
  const char* name;      // lower-case name used by configs, reports, tensor names and headers
  bool has_params;       // has a weight tensor and a bias tensor
  bool in_place;         // computed on its input buffer (no tensor of its own)
  ShapeRule shape;       // output shape rule
  Int8Exponent int8;     // int8 output exponent rule
  bool int8_fused;       // ESP-DL fuses it into the layer before: that layer's output exponent is
                         // calibrated on this layer's output
  bool keeps_channels;   // output channel c depends on input channel c only (the pruner may remove a
                         // channel on both sides); Flatten counts: the pruner maps its positions
  bool per_channel;      // its int8 weights may carry one exponent per output channel (not on the S3)
  DetailText detail;     // what the layer summary shows
  const char* espdl_op;  // the ESP-DL (ONNX) operator the .espdl exporter emits for it (host/export/espdl_exporter.cpp;
                         // where a layer is folded away or written as another row's op, its host row says so)
};

struct LayerUnit;  // tv/model/layer_unit.h

// Every unit, one per type, in enumerator order (tests/core/model/layer_table_test.cpp checks the order).
namespace units {
extern const LayerUnit kConv2D, kDepthwiseConv2D, kMaxPool2D, kAvgPool2D, kAdaptiveAvgPool2D, kGlobalAvgPool, kDense,
    kReLU, kLeakyReLU, kFlatten, kClip, kHardswish;
}  // namespace units
inline constexpr const LayerUnit* kLayerUnits[] = {
    &units::kConv2D,
    &units::kDepthwiseConv2D,
    &units::kMaxPool2D,
    &units::kAvgPool2D,
    &units::kAdaptiveAvgPool2D,
    &units::kGlobalAvgPool,
    &units::kDense,
    &units::kReLU,
    &units::kLeakyReLU,
    &units::kFlatten,
    &units::kClip,
    &units::kHardswish,
};
static_assert(sizeof(kLayerUnits) / sizeof(kLayerUnits[0]) == kLayerTypeCount,
              "every LayerType needs exactly one unit in kLayerUnits");

// The row of a type. `type` must be a valid LayerType (see layer_type_from_byte).
const LayerTypeInfo& layer_info(LayerType type);
// The type stored as byte `b` in a blob; false for a byte that names no type.
bool layer_type_from_byte(uint8_t b, LayerType* type);
// The type called `name` ("conv2d", ...); false when no row has that name.
bool layer_type_from_name(const char* name, LayerType* type);
// Row i (0 <= i < kLayerTypeCount), in enumerator order: to list every type.
const LayerTypeInfo& layer_row(int i);
// The unit of a type (for a value outside the enumeration: a unit whose hooks refuse it).
const LayerUnit& layer_unit(LayerType type);

// Short lower-case name of a layer type ("conv2d", "leaky_relu", ...).
inline const char* layer_type_name(LayerType type) {
  return layer_info(type).name;
}
// True for layers with weights and biases.
inline bool layer_has_params(LayerType type) {
  return layer_info(type).has_params;
}
// True for layers computed in place on their input buffer (activations, clip, flatten).
inline bool layer_in_place(LayerType type) {
  return layer_info(type).in_place;
}

}  // namespace tv
