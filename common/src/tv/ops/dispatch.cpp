// The tv:: entry points of tv/ops/ops.h that have two implementations: the build chooses which one runs.
// TV_FAST_KERNELS=1 (the host build's default, CMake option TV_FAST_KERNELS) selects tv::fast::,
// anything else the reference kernels tv::ref::. Both give the same bits (kernel_variants.h).
#include "tv/ops/kernel_variants.h"

namespace tv {

namespace {
#if defined(TV_FAST_KERNELS) && TV_FAST_KERNELS
constexpr bool kFastKernels = true;
#else
constexpr bool kFastKernels = false;
#endif
}  // namespace

bool fast_kernels_enabled() {
  return kFastKernels;
}

// Each entry point, from the one list of signatures (tv/ops/variant_kernels.h).
#define TV_VARIANT_KERNEL(name, params, args) \
  void name params {                          \
    if constexpr (kFastKernels)               \
      fast::name args;                        \
    else                                      \
      ref::name args;                         \
  }
#include "tv/ops/variant_kernels.h"
#undef TV_VARIANT_KERNEL

}  // namespace tv
