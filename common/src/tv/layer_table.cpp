#include "tv/layer_table.h"

#include <string.h>

namespace tv {

namespace {

using S = ShapeRule;
using E = Int8Exponent;
using D = DetailText;

// One row per type, in enumerator order.
// clang-format off
constexpr LayerTypeInfo kLayerTable[] = {
//  type                          name                  params in_place shape               int8 exponent   fused  channels detail                    ESP-DL op
    {LayerType::Conv2D,            "conv2d",             true,  false, S::SlidingWindow,  E::WithWeights, false, false, D::FiltersWindowPadding, "Conv"},
    {LayerType::DepthwiseConv2D,   "depthwise_conv2d",   true,  false, S::SlidingWindow,  E::WithWeights, false, true,  D::WindowPadding,        "Conv"},
    {LayerType::MaxPool2D,         "maxpool2d",          false, false, S::SlidingWindow,  E::KeepsInput,  false, true,  D::Window,               "MaxPool"},
    {LayerType::AvgPool2D,         "avgpool2d",          false, false, S::SlidingWindow,  E::OwnRange,    false, true,  D::Window,               "AveragePool"},
    {LayerType::AdaptiveAvgPool2D, "adaptive_avgpool2d", false, false, S::AdaptiveBins,   E::OwnRange,    false, true,  D::None,                 "AveragePool"},
    {LayerType::GlobalAvgPool,     "global_avgpool",     false, false, S::GlobalPool,     E::OwnRange,    false, true,  D::None,                 "GlobalAveragePool"},
    {LayerType::Dense,             "dense",              true,  false, S::FullyConnected, E::WithWeights, false, false, D::Units,                "Gemm"},
    {LayerType::ReLU,              "relu",               false, true,  S::Unchanged,      E::KeepsInput,  true,  true,  D::None,                 "Relu"},
    {LayerType::LeakyReLU,         "leaky_relu",         false, true,  S::Unchanged,      E::OwnRange,    false, true,  D::Alpha,                "LeakyRelu"},
    {LayerType::Flatten,           "flatten",            false, true,  S::Flatten,        E::KeepsInput,  false, true,  D::None,                 "Flatten"},
    {LayerType::Clip,              "clip",               false, true,  S::Unchanged,      E::KeepsInput,  true,  true,  D::Range,                "Clip"},
};
// clang-format on

constexpr int kRows = (int)(sizeof(kLayerTable) / sizeof(kLayerTable[0]));
static_assert(kRows == kLayerTypeCount, "every LayerType needs exactly one row in kLayerTable");

constexpr bool rows_in_enum_order() {
  for (int i = 0; i < kRows; ++i)
    if ((int)kLayerTable[i].type != i + 1) return false;
  return true;
}
static_assert(rows_in_enum_order(), "kLayerTable rows must follow LayerType's numbering (row i is type i + 1)");

// What layer_info answers for a value outside the enumeration (never produced by a checked blob or
// config): no parameters, not in place, a shape rule plan_model refuses.
constexpr LayerTypeInfo kUnknownRow = {LayerType(0),  "unknown", false, false,   S::Unchanged,
                                       E::KeepsInput, false,     false, D::None, ""};

}  // namespace

const LayerTypeInfo& layer_info(LayerType type) {
  const int i = (int)type - 1;
  return i >= 0 && i < kRows ? kLayerTable[i] : kUnknownRow;
}

bool layer_type_from_byte(uint8_t b, LayerType* type) {
  if (b < 1 || b > kLayerTypeCount) return false;
  *type = (LayerType)b;
  return true;
}

bool layer_type_from_name(const char* name, LayerType* type) {
  for (const LayerTypeInfo& row : kLayerTable)
    if (strcmp(row.name, name) == 0) {
      *type = row.type;
      return true;
    }
  return false;
}

const LayerTypeInfo& layer_row(int i) {
  return i >= 0 && i < kRows ? kLayerTable[i] : kUnknownRow;
}

}  // namespace tv
