// Back from int8 to float: the float parameters an int8 model stands for, so a quantized model can be
// trained further (the firmware does this when the card holds tvquant's output).
#pragma once
#include "tv/int8/q8_model.h"

namespace tv {

// Writes m.plan->param_count floats in the float engine's layout (per layer: weights, then biases):
// weight = q * 2^e_w (or the output channel's exponent), bias = q * 2^(e_in + e_w). Exact for every
// weight; a bias beyond 2^24 in magnitude rounds to the nearest float.
void q8_dequantize_params(const Q8Model& m, float* params);

}  // namespace tv
