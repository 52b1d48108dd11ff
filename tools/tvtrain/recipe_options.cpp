#include "recipe_options.h"

#include <cstdlib>
#include <sstream>

#include "host/error.h"

namespace tvtrain {

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

void apply_augment(const std::string& text, tv::TrainRecipe* r) {
  const int shift = r->aug_shift;
  const float brightness = r->aug_brightness;
  r->aug_flip = false;
  r->aug_shift = 0;
  r->aug_brightness = 0.f;
  if (text == "none") return;
  for (const std::string& item : split_list(text)) {
    if (item == "none")
      throw tvh::UsageError("--augment " + text +
                            ": none turns augmentation off and cannot be combined with other kinds; give either none "
                            "or a list such as flip,shift.");
    const size_t eq = item.find('=');
    const std::string name = item.substr(0, eq);
    const std::string value = eq == std::string::npos ? std::string() : item.substr(eq + 1);
    char* end = nullptr;
    const double v = value.empty() ? 0.0 : std::strtod(value.c_str(), &end);
    if (!value.empty() && (end == value.c_str() || *end != '\0'))
      throw tvh::UsageError("--augment " + text + ": '" + value + "' is not a number.");
    if (name == "flip" && value.empty()) {
      r->aug_flip = true;
    } else if (name == "shift") {
      if (!value.empty() && (v < 1 || v > 64 || v != (int)v))
        throw tvh::UsageError("--augment shift=" + value + ": the shift must be a whole number of pixels, 1..64.");
      r->aug_shift = value.empty() ? (shift > 0 ? shift : 4) : (int)v;
    } else if (name == "brightness") {
      if (!value.empty() && !(v > 0 && v <= 0.9))
        throw tvh::UsageError("--augment brightness=" + value +
                              ": the brightness change must be above 0, at most 0.9.");
      r->aug_brightness = value.empty() ? (brightness > 0 ? brightness : 0.2f) : (float)v;
    } else {
      throw tvh::UsageError("--augment " + text + ": '" + item +
                            "' is not one of none, flip, shift[=PIXELS], brightness[=FRACTION] (e.g. --augment "
                            "shift,brightness for pictures whose left and right differ).");
    }
  }
}

}  // namespace tvtrain
