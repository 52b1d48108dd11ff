// The spine of the core: one table with one row per layer type, and beside each row the type's unit
// of code (tv/model/layer_unit.h: common/src/tv/layers/<name>.cpp holds the row, the plan checks, the
// float forward and backward, the int8 bind and run and the interval rule). Every part of the
// toolchain that needs to know something about a layer type reads its row or calls its unit's hooks;
// the host keeps one row per type for its config fields, pruning rule and .espdl emission
// (host/layers/layer_host.cpp).
//
// How to add a layer type (the whole list):
//   1. LayerType (tv/model/layer_types.h): a new enumerator with the next number (it is the byte
//      stored in .tvb files, so never renumber) and kLayerTypeCount + 1; below, its unit's
//      declaration and its entry in kLayerUnits.
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

#include "tv/model/layer_types.h"

namespace tv {

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
