// The backbones built into every TinyVision program: the default network (tinyvision preset, below
// tv::kWideFromImages images) pretrained on images the project draws (tv/image/procedural.h), one per
// input it is made for. tvtrain --start and the board's weight tier (SD model > baked model > built-in
// backbone > He-init) use the same bytes: the .tvb files beside this header, made by
// scripts/make-backbones.sh and baked as C headers by tvexport (their pretraining heads dropped), so that
// Arduino builds need no build step. docs/few-shot.md has the recipe and its measurements.
#pragma once
#include <stddef.h>
#include <stdint.h>

namespace tv {

struct BuiltinBackbone {
  const char* name;     // "tinyvision-64x64x3": the .tvb file's name without its extension
  const uint8_t* blob;  // a .tvb blob (16-byte aligned): tv::blob_decode reads it
  uint32_t size;
  uint16_t height, width, channels;
};

// The built-in backbone for an input of h x w x c, or null when none is made for it.
const BuiltinBackbone* builtin_backbone(int height, int width, int channels);

}  // namespace tv
