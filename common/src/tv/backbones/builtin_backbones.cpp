#include "tv/backbones/builtin_backbones.h"

#include "tv/backbones/tinyvision_64x64x1.h"
#include "tv/backbones/tinyvision_64x64x3.h"

namespace tv {

namespace {

const BuiltinBackbone kBackbones[] = {
    {"tinyvision-64x64x3", TV_BACKBONE_64X64X3_blob, TV_BACKBONE_64X64X3_BLOB_SIZE, 64, 64, 3},
    {"tinyvision-64x64x1", TV_BACKBONE_64X64X1_blob, TV_BACKBONE_64X64X1_BLOB_SIZE, 64, 64, 1},
};

}  // namespace

const BuiltinBackbone* builtin_backbone(int height, int width, int channels) {
  for (const BuiltinBackbone& b : kBackbones)
    if (b.height == height && b.width == width && b.channels == channels) return &b;
  return nullptr;
}

}  // namespace tv
