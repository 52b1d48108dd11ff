// Pointwise convolution (1x1 Conv2D) as a matrix product (pointwise_fast.cpp): the fast paths
// conv2d_fast.cpp and conv2d_params_fast.cpp try first. Each returns false, having done nothing, when the geometry or
// the data has no such path; the caller then runs its general code. Same bits as tv::ref::conv2d_* (see the file).
#pragma once
#include "tv/ops/kernel_variants.h"
#include "tv/ops/ops.h"

namespace tv {
namespace fast {
// e: a fused ReLU (kernel_variants.h), applied to each output vector as it is stored.
bool pointwise_forward(const Geom2D& g, const float* in, const float* w, const float* b, float* out,
                       const Epilogue& e = kNoEpilogue);
bool pointwise_backward_data(const Geom2D& g, const float* w, const float* dout, float* din,
                             const Epilogue& e = kNoEpilogue);
bool pointwise_backward_params(const Geom2D& g, const float* in, const float* dout, float* dw, float* db);
}  // namespace fast
}  // namespace tv
