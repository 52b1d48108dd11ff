// The reference firmware's raw weight file (myWeights.bin): headerless little-endian float32
// conv1_w(108) conv1_b(4) conv2_w(288) conv2_b(8) dense_w(6728*K) dense_b(K), in its own index
// layouts (conv2 [f][c][ky][kx], dense columns over [filter][y][x]); only the webmcu preset.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "tv/c_text.h"
#include "tv/model/model.h"
#include "tv/status.h"

namespace tv {

// Size in bytes of a raw file for the webmcu model with num_classes classes.
size_t raw_weights_size(int num_classes);
// The class count a raw file of `bytes` bytes holds; 0 when no class count fits.
int raw_weights_classes_for_size(size_t bytes);
// True when the plan is the webmcu network at 64x64x3 (the only one the raw format describes).
bool raw_weights_compatible(const ModelPlan& plan);
// Reads a raw file into our parameter layout. Checks size, model and that every value is finite
// (NonFiniteWeight, layer = whose tensor, b = the float index in the file) first; writes nothing on failure.
Status raw_weights_import(const uint8_t* data, size_t size, const ModelPlan& plan, float* params);
// Writes our parameters in the raw layout; out must hold raw_weights_size(classes) bytes.
Status raw_weights_export(const ModelPlan& plan, const float* params, uint8_t* out, size_t cap);

// Writes the reference firmware's myWeights.h from the bytes of a raw myWeights.bin (raw layout,
// see tv/formats/raw_weights.h) and the class labels (NUL-terminated; one per class). Refusals:
//   InvalidArgument (null pointers), RawWeightsSizeMismatch (size fits no class count),
//   ClassCountMismatch (label count differs, a = labels, b = classes), BadParameter (a value is
//   infinite or NaN: a = -1, b = its float index in the file).
Status write_webmcu_header_raw(const uint8_t* raw, size_t size, const char* const* labels, int num_labels,
                               const TextSink& sink);

}  // namespace tv
