// What a layer type is: its number (the byte stored in .tvb files) and its row's fields, the rules
// that describe it (shape, int8 exponent, fusing, pruning, summary text, ESP-DL operator). The table of
// every type's row and unit is tv/model/layer_table.h; the hooks of a unit, tv/model/layer_unit.h.
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

}  // namespace tv
