#include "tv/model/layer_table.h"

#include <string.h>

#include "tv/model/layer_unit.h"

namespace tv {

namespace {

constexpr int kRows = kLayerTypeCount;

// What layer_info answers for a value outside the enumeration (never produced by a checked blob or
// config): no parameters, not in place, a shape rule plan_model refuses.
constexpr LayerTypeInfo kUnknownRow = {
    LayerType(0), "unknown",        false, false, ShapeRule::Unchanged, Int8Exponent::KeepsInput, false, false,
    false,        DetailText::None, ""};

Status unknown_check(const LayerDesc&, int layer) {
  return status_plain(StatusCode::UnknownLayer, layer);
}
Status unknown_q8_bind(const BlobView&, const ModelPlan&, int i, Q8Model*) {
  return status_plain(StatusCode::UnknownLayer, i);
}
Status unknown_q8_run(const Q8Model&, int i, const int8_t*, int8_t*) {
  return status_plain(StatusCode::UnknownLayer, i);
}

// The unit of a value outside the enumeration: every hook refuses it or does nothing.
constexpr LayerUnit kUnknownUnit = {kUnknownRow,
                                    {unknown_check, units::no_weights},
                                    {units::forward_reshape_only, units::backward_passes_through},
                                    {unknown_q8_bind, unknown_q8_run, units::interval_from_weights}};

}  // namespace

const LayerUnit& layer_unit(LayerType type) {
  const int i = (int)type - 1;
  return i >= 0 && i < kRows ? *kLayerUnits[i] : kUnknownUnit;
}

const LayerTypeInfo& layer_info(LayerType type) {
  return layer_unit(type).row;
}

bool layer_type_from_byte(uint8_t b, LayerType* type) {
  if (b < 1 || b > kLayerTypeCount) return false;
  *type = (LayerType)b;
  return true;
}

bool layer_type_from_name(const char* name, LayerType* type) {
  for (const LayerUnit* unit : kLayerUnits)
    if (strcmp(unit->row.name, name) == 0) {
      *type = unit->row.type;
      return true;
    }
  return false;
}

const LayerTypeInfo& layer_row(int i) {
  return i >= 0 && i < kRows ? kLayerUnits[i]->row : kUnknownRow;
}

}  // namespace tv
