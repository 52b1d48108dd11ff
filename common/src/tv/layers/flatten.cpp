// Flatten: the same values as 1 x 1 x (h * w * c), in place (only the shape changes).
#include "tv/model/layer_unit.h"
#include "tv/model/model.h"

namespace tv {
namespace units {

extern const LayerUnit kFlatten;
constexpr LayerUnit kFlatten = {{LayerType::Flatten, "flatten", false, true, ShapeRule::Flatten,
                                 Int8Exponent::KeepsInput, false, true, false, DetailText::None, "Flatten"},
                                {no_checks, no_weights},
                                {forward_reshape_only, backward_passes_through},
                                {q8_no_checks, q8_reshape_only, interval_unchanged}};

}  // namespace units
}  // namespace tv
