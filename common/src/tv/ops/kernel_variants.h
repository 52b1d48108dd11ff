// The two implementations behind the kernels of tv/ops/ops.h that have a faster variant.
//
// tv::ref:: are the reference kernels: plain loops, readable first (conv2d.cpp, depthwise_conv2d.cpp,
// maxpool2d.cpp, avgpool2d.cpp, adaptive_avgpool2d.cpp, dense.cpp, activations.cpp). tv::fast:: are the faster variants
// (*_fast.cpp): the same sums in the same order, computed several elements at a time (see simd.h), so they give the
// same bits as the reference (for finite weights; see each file). A fast kernel hands a geometry it has no fast path
// for to the reference kernel. Which set the tv:: entry points of tv/ops/ops.h call is chosen at build time by
// TV_FAST_KERNELS (dispatch.cpp); both sets are always compiled, so the tests run both. The contracts are those of
// tv/ops/ops.h.
#pragma once
#include "tv/ops/ops.h"

namespace tv {

// The kernels with both variants, declared for tv::ref and tv::fast from their one list (contracts:
// tv/ops/variant_kernels.h).
#define TV_VARIANT_KERNEL(name, params, args) void name params;
namespace ref {
#include "tv/ops/variant_kernels.h"
}  // namespace ref

namespace fast {
#include "tv/ops/variant_kernels.h"
#undef TV_VARIANT_KERNEL

// Fused backward of the chain Conv2D -> in-place activations -> MaxPool2D (stride == kernel, no
// padding) for a conv whose input gradient is not needed (the model's first layer with weights).
// Adds to dw and db exactly what maxpool2d_backward, the activations' backward passes (acts, in
// backward order: the layer below the pool first) and conv2d_backward_params would add, without
// forming the conv's output gradient, of which the pool leaves at most one entry per window and
// channel non-zero. in: the conv's input; y: its stored output (after the activations, the pool's
// input); dpool: the gradient of the pool's output. Returns false, having done nothing, when the
// geometry has no fused path; the caller then runs the layers one by one.
struct ActivationStep {
  bool leaky;   // LeakyReLU (else ReLU)
  float alpha;  // LeakyReLU slope
};
bool conv2d_pool_backward_params(const Geom2D& conv, const Geom2D& pool, const ActivationStep* acts, int n_acts,
                                 const float* in, const float* y, const float* dpool, float* dw, float* db);

// What a kernel fused with a ReLU does to the values it writes: relu, the ReLU after the layer
// (relu_forward's v > 0 ? v : 0); mask, the ReLU before it in the backward (relu_backward with y =
// mask, indexed like the values written).
struct Epilogue {
  bool relu;
  const float* mask;
};
constexpr Epilogue kNoEpilogue = {false, nullptr};

// e on elements [at, at + n) of tensor t, by the ReLU kernels themselves (the same bits as the
// separate layer); row y of a tensor of w pixels of c channels.
inline void apply_epilogue(const Epilogue& e, float* t, size_t at, size_t n) {
  if (e.relu)
    relu_forward(t + at, n);
  else if (e.mask)
    relu_backward(e.mask + at, t + at, n);
}
inline void apply_epilogue_row(const Epilogue& e, float* t, int y, int w, int c) {
  const size_t row = (size_t)w * c;
  apply_epilogue(e, t, (size_t)y * row, row);
}

}  // namespace fast

// True when the tv:: entry points of tv/ops/ops.h run the fast variants.
bool fast_kernels_enabled();

}  // namespace tv
