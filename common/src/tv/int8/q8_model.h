// Running an int8 (.tvb with kBlobFlagInt8) model: the layer-by-layer glue over the int8 kernels.
//
// The int8 blob convention (written by tvquant, read here, by tvexport and by the firmware):
// - act_exps holds num_layers + 1 exponents: [0] the input's, [i + 1] layer i's output's.
//   MaxPool, ReLU, Clip and Flatten keep their input's exponent.
// - Every conv / depthwise / dense layer has an I8 weight tensor (one exponent, or per-output-channel
//   exponents: not for the ESP32-S3) and an I32 bias tensor at exponent e_in + e_w (per channel:
//   e_in + e_w[c]). The requantization shift e_out - e_in - e_w must be >= 0.
// - ReLU after a conv/dense is applied to the int8 output, which equals ESP-DL's fused ReLU.
// - LeakyReLU runs as a 256-entry table built from alpha and its exponents; Clip clamps the integers
//   at [quantize(lo), quantize(hi)]; AvgPool and GlobalAvgPool round as ESP-DL does; an
//   AdaptiveAvgPool2D whose bins are all equal runs as an AvgPool, otherwise it is refused.
// - The final layer's output is turned into probabilities by softmax in float (tv::math::exp).
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "tv/int8/int8_ops.h"
#include "tv/model/blob.h"
#include "tv/model/model.h"

namespace tv {

struct Q8Model {
  const ModelPlan* plan = nullptr;
  const int8_t* weights[kMaxLayers] = {nullptr};
  const int32_t* biases[kMaxLayers] = {nullptr};
  int8_t weight_exp[kMaxLayers] = {0};
  const int8_t* channel_exps[kMaxLayers] = {nullptr};  // per-output-channel weight exponents, or null
  int8_t act_exps[kMaxLayers + 1] = {0};
  int8_t luts[kMaxLayers][256];  // the tables of table activations (tv/layers/table_activation.h)
};

// The exponents of layer i as the conv / dense kernels take them (no fused ReLU).
inline Q8Layer q8_layer(const Q8Model& m, int i) {
  Q8Layer q;
  q.e_in = m.act_exps[i];
  q.e_w = m.weight_exp[i];
  q.e_out = m.act_exps[i + 1];
  return q;
}

// The bytes of one layer's parameters on the int8 engine: its int8 weights padded to 16 bytes (every
// array 16-byte aligned) plus its int32 biases. The one definition of "int8 weight bytes".
size_t q8_layer_weight_bytes(const LayerPlan& layer);

struct Q8Memory {
  size_t weight_bytes;  // sum of q8_layer_weight_bytes over the layers
  size_t work_bytes;    // int8 activation work buffer
  size_t total_bytes;
};
Q8Memory q8_memory(const ModelPlan& plan);

// Checks an int8 blob against its plan (dtypes, element counts, exponents, shifts >= 0, supported
// ops, the kernels' fan-in and pooling-area limits) and points the model at the blob's tensors (the
// blob must outlive it). NotSupported (a = the size, b = the limit) for what the kernels cannot run.
Status q8_bind(const BlobView& view, const ModelPlan& plan, Q8Model* model);

// Runs one uint8 HWC image (already at the input size): normalizes, quantizes at act_exps[0], runs
// every layer in `work` (q8_memory().work_bytes), writes num_classes probabilities when probs is not
// null (a detector: plan_outputs, a softmax per grid cell) and the final int8 outputs (at
// act_exps[num_layers], plan_outputs bytes) when logits is not null. Returns the
// first failing kernel's status (layer = its index); nothing is written to probs/logits then.
Status q8_infer_u8(const Q8Model& m, const uint8_t* image, int8_t* work, float* probs, int8_t* logits = nullptr);
// Same from an already-quantized input (act_exps[0]); on success *output points at the final int8
// outputs inside work. Used to reproduce test vectors.
Status q8_run(const Q8Model& m, const int8_t* input, int8_t* work, const int8_t** output);

}  // namespace tv
