// A plain-loop int8 interpreter of the int8 blob convention (tv/int8/q8_model.h), written from the
// ESP-DL numeric contract (docs/espdl-numerics.md) independently of the core's kernels.
// Two uses: the tests compare tv::q8_run against it bit for bit, and the quantizer runs it to measure
// the accumulator magnitudes a model actually reaches (the ESP32-S3 keeps 20-bit lanes).
// Slow and simple on purpose: int64 arithmetic, one output at a time, no shared code with the kernels.
#pragma once
#include <cstdint>
#include <vector>

#include "tv/blob.h"
#include "tv/model.h"

namespace tvh {

// The largest accumulator magnitudes one conv / depthwise / dense layer reached.
struct AccObserved {
  int64_t max_final = 0;    // max |bias + sum of products| over outputs and runs
  int64_t max_partial = 0;  // max |running sum| in the order bias, then taps (ky, kx, c), over outputs and runs
};

// The model's tensors copied out of an int8 blob (checked like tv::q8_bind).
struct Q8Reference {
  const tv::ModelPlan* plan = nullptr;
  std::vector<int> act_exps;
  std::vector<std::vector<int8_t>> weights;  // per layer (empty without parameters)
  std::vector<std::vector<int32_t>> biases;
  std::vector<std::vector<int>> weight_exps;  // per layer: one exponent, or one per output channel
};

// Reads an int8 blob for `plan`; throws tvh::Error when it does not follow the convention.
Q8Reference q8_reference_load(const tv::BlobView& view, const tv::ModelPlan& plan);

// Runs one already-quantized input (act_exps[0]) through every layer and returns the final int8
// outputs. acc_bits = 0 keeps exact accumulators; acc_bits = 20 wraps every running sum to a 20-bit
// two's-complement lane, as a device whose accumulator overflows would. `observed`, when not null
// (one entry per layer), is raised to the magnitudes this run reached. `outputs`, when not null, gets
// every layer's int8 output (at act_exps[i + 1]).
std::vector<int8_t> q8_reference_run(const Q8Reference& m, const int8_t* input, int acc_bits = 0,
                                     std::vector<AccObserved>* observed = nullptr,
                                     std::vector<std::vector<int8_t>>* outputs = nullptr);

// The int8 input of a uint8 HWC image: q = clamp(floor((pixel * scale + offset) * 2^-e + 1/2)), the
// normalization in float32 as the float engine does it.
std::vector<int8_t> q8_reference_input(const tv::ModelPlan& plan, int e_in, const uint8_t* image);

}  // namespace tvh
