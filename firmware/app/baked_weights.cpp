// The baked tier: compiled once per firmware build, with or without -DTV_BAKED_HEADER="model.h"
// (a header written by tvexport, or by the device itself after training). The header's prefix is
// TV_MODEL unless the build says otherwise with -DTV_BAKED_BLOB=PREFIX_blob.
#include "baked.h"

#ifdef TV_BAKED_HEADER
#include TV_BAKED_HEADER
#ifndef TV_BAKED_BLOB
#define TV_BAKED_BLOB TV_MODEL_blob
#endif

namespace tvfw {
BakedModel baked_model() {
  BakedModel m;
  m.blob = (const uint8_t*)TV_BAKED_BLOB;
  m.size = sizeof TV_BAKED_BLOB;
  m.source = TV_BAKED_HEADER;
  return m;
}
}  // namespace tvfw

#else

namespace tvfw {
BakedModel baked_model() {
  return BakedModel();
}
}  // namespace tvfw

#endif
