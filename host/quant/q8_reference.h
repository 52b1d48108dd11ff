// The int8 blob convention (tv/int8/q8_model.h) run with a model of the ESP32-S3's accumulators: every
// conv / depthwise / dense output's running sum kept in int64 in the order bias, then taps, observed
// (the largest magnitudes reached) and optionally wrapped to a 20-bit lane as a device whose lane
// overflows would; every layer without weights runs the core's own int8 step (its unit's q8_run).
// Two uses: the tests and the .espdl exporter compare tv::q8_run with it (the conv / dense
// arithmetic written a second time, as plain loops), and the quantizer runs it to measure the
// accumulator magnitudes a model actually reaches (the ESP32-S3 keeps 20-bit lanes).
#pragma once
#include <cstdint>
#include <vector>

#include "tv/int8/q8_model.h"
#include "tv/model/blob.h"
#include "tv/model/model.h"

namespace tvh {

// The largest accumulator magnitudes one conv / depthwise / dense layer reached.
struct AccObserved {
  int64_t max_final = 0;    // max |bias + sum of products| over outputs and runs
  int64_t max_partial = 0;  // max |running sum| in the order bias, then taps (ky, kx, c), over outputs and runs
};

// An int8 blob bound for `plan` (the blob must outlive it).
struct Q8Reference {
  const tv::ModelPlan* plan = nullptr;
  std::vector<int> act_exps;
  tv::Q8Model engine;  // tv::q8_bind's view of the blob's tensors
};

// Reads an int8 blob for `plan`; throws tvh::Error when it does not follow the convention or
// tv::q8_bind refuses it.
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
