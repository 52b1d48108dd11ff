// tvtrain's options that change the recipe or list things: --augment and comma lists. Kept out of
// tvtrain.cpp.
#pragma once
#include <string>
#include <vector>

#include "tv/presets.h"

namespace tvtrain {

// The non-empty items of a comma-separated list.
std::vector<std::string> split_list(const std::string& s);

// --augment: "none", or a comma list of flip, shift[=PIXELS], brightness[=FRACTION]; what is not listed
// is off. A listed kind without a value keeps the recipe's amount (or 4 pixels / 0.2 when it had none).
void apply_augment(const std::string& text, tv::TrainRecipe* r);

}  // namespace tvtrain
