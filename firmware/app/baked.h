// The model compiled into the firmware (the "baked" tier): the .tvb blob from a header that
// tvexport wrote, selected at build time with -DTV_BAKED_HEADER="path/model.h".
#pragma once
#include <stddef.h>
#include <stdint.h>

namespace tvfw {

struct BakedModel {
  const uint8_t* blob = nullptr;  // null when no header was compiled in
  size_t size = 0;
  const char* source = "";  // the header's file name, for the boot log
};

// The compiled-in model, or an empty one.
BakedModel baked_model();

}  // namespace tvfw
