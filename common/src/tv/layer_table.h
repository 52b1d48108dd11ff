// The spine of the core: one table with one row per layer type. Every part of the toolchain that
// needs to know something about a layer type reads its row (the blob check, the config parser, the
// planner, the quantizer, the header and .espdl writers, the pruner) or dispatches over LayerType in
// a switch that names every type and has no `default:` (the build turns -Wswitch into an error, so a
// type missing from a dispatch does not compile).
//
// How to add a layer type (the whole list; the compiler points at every dispatch you miss):
//   1. LayerType below: a new enumerator with the next number (it is the byte stored in .tvb files,
//      so never renumber), and kLayerTypeCount + 1.
//   2. kLayerTable in layer_table.cpp: its row, in enumerator order (a static_assert checks both the
//      count and the order). Pick the rules that describe it; add a new rule value only when none fits.
//   3. A builder in model.h/.cpp (e.g. relu_layer()), the layer's fields in LayerDesc if it has new
//      ones (their bytes in blob.cpp's layer record, their comparison in same_model()), its case in
//      plan_model() (checks) and in weight_dims() (the weight tensor's shape; its bias has one value
//      per output channel).
//   4. Its float kernels: common/src/tv/ops/<name>.cpp (forward + backward, declared in tv/ops.h) and
//      their cases in net.cpp (forward_layer, trainer_sample's backward; he_init when its parameters
//      are not filters, e.g. a scale that starts at 1).
//   5. Its int8 kernel: common/src/tv/int8/int8_<name>.cpp (declared in tv/int8/int8_ops.h) and its
//      cases in q8_model.cpp (q8_bind's checks, q8_run), the host reference (host/q8_reference.cpp),
//      the reachable-interval rule (host/s3_limits.cpp, read by tvquant and the .espdl exporter) and
//      the .espdl writer's node (host/espdl/writer.cpp).
//      A type the int8 engine cannot run returns StatusCode::NotSupported from q8_bind, never a
//      silent identity.
//   6. Its config fields: parse_layer() in host/config.cpp (the name comes from the row).
//   7. Tests: a finite-difference gradient check of the float kernel, the int8 kernel against its
//      float twin, a config round trip, and a blob round trip (tests/core/ops, tests/core/int8: one test file per
//      kernel).
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
};
constexpr int kLayerTypeCount = 11;  // LayerType runs from 1 to kLayerTypeCount without gaps

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
  DetailText detail;     // what the layer summary shows
  const char* espdl_op;  // the ESP-DL (ONNX) operator the .espdl writer emits ("" = none: folded away)
};

// The row of a type. `type` must be a valid LayerType (see layer_type_from_byte).
const LayerTypeInfo& layer_info(LayerType type);
// The type stored as byte `b` in a blob; false for a byte that names no type.
bool layer_type_from_byte(uint8_t b, LayerType* type);
// The type called `name` ("conv2d", ...); false when no row has that name.
bool layer_type_from_name(const char* name, LayerType* type);
// Row i (0 <= i < kLayerTypeCount), in enumerator order: to list every type.
const LayerTypeInfo& layer_row(int i);

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
