// One layer type = one unit: common/src/tv/layers/<name>.cpp holds the type's table row and every
// piece of code that differs per type, as one constexpr LayerUnit (its hooks). tv/model/layer_table.h lists
// every unit explicitly (no registration by static initialisers); the core's loops (plan_layers,
// forward_layer, the trainer's backward, q8_bind, q8_run) look the unit up and call its hooks.
//
// Completeness: every hook of a LayerUnit must be given. A unit that leaves one out does not compile
// (Hook's default constructor fails a static_assert); a hook that does not apply to the type is set to
// one of the named shared hooks below (no_checks, no_weights, q8_no_checks, interval_from_weights, ...),
// never left empty. The generic test (tests/core/layer_units_test.cpp) then checks each row's
// behaviour: gradients, int8 against float, round trips, export.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "tv/model/layer_types.h"
#include "tv/status.h"

namespace tv {

struct LayerDesc;
struct Shape;
struct ModelPlan;
struct BlobView;
struct Q8Model;

// A hook: a function pointer that has to be set. Omitting it in a unit's initializer fails to compile.
template <typename Fn>
struct Hook {
  Fn* fn;
  constexpr Hook(Fn* f) : fn(f) {}  // NOLINT: implicit, so that a unit lists plain function names
  Hook(decltype(nullptr)) = delete;
  template <typename T = Fn>
  constexpr Hook() : fn(nullptr) {
    static_assert(sizeof(T*) == 0,
                  "a LayerUnit leaves a hook unset: give it a function, or the named shared hook for "
                  "'does not apply' (tv/model/layer_unit.h)");
  }
  template <typename... A>
  auto operator()(A&&... a) const -> decltype(fn(static_cast<A&&>(a)...)) {
    return fn(static_cast<A&&>(a)...);
  }
};

// One backward step of layer `i` in the trainer (net.cpp's train_on_input).
struct BackwardStep {
  const ModelPlan* plan;
  int i;
  const float* w;     // the layer's weights (its bias right after them)
  const float* x;     // its input; for an in-place layer the same buffer as y: the input is gone
  const float* y;     // its output
  float* dy;          // dL/dy; an in-place layer turns it into dL/dx where it is
  float* dx;          // dL/dx (layers with a tensor of their own), written when need_dx
  float* g;           // the layer's parameter gradient (weights, then bias), accumulated
  bool need_dx;       // false for the first layer with parameters
  const float* acts;  // the lane's activations (input first): fused paths reach other layers
  float* grad;        // the lane's whole parameter gradient
};

// What a backward step did besides its own layer.
enum class BackwardEnd : uint8_t {
  Layer,          // its own layer only
  WithReluBelow,  // also the ReLU before it (dx is the gradient below that ReLU)
  Everything,     // every remaining layer (a fused kernel finished the sample's backward)
};

// The int8 values a tensor can hold, as an interval of integers (host/model/s3_limits.h propagates it).
struct Int8Range {
  int32_t lo = -128, hi = 127;
};

// The hooks of one layer type, in three groups: the model's checks, float training, int8.
struct PlanHooks {
  // plan_model: the type's own parameter checks (the shape follows the row's ShapeRule).
  Hook<Status(const LayerDesc& d, int layer)> check;
  // The weight tensor's dimensions (0 without parameters; its bias has out.c values).
  Hook<int(const LayerDesc& d, const Shape& in, const Shape& out, uint32_t dims[4])> weight_dims;
};

struct FloatHooks {
  // Forward of layer i from `in` to `out` (out == in for an in-place row).
  Hook<void(const ModelPlan& plan, int i, const float* params, const float* in, float* out)> forward;
  // Backward (the reference the fast kernels match bit for bit).
  Hook<BackwardEnd(const BackwardStep& s)> backward;
};

struct Int8Hooks {
  // What the int8 kernels accept for this layer (refused here so that run cannot fail later), and the
  // layer's tables. The weights and exponents are bound by q8_bind itself.
  Hook<Status(const BlobView& v, const ModelPlan& plan, int i, Q8Model* m)> bind;
  // Layer i from `in` to `out` (out == in for an in-place row).
  Hook<Status(const Q8Model& m, int i, const int8_t* in, int8_t* out)> run;
  // The int8 interval of the output for an input in `in` (exponents e_in, e_out); false when the
  // interval needs the weights (interval_from_weights: host/model/s3_limits.h's filter_sums).
  Hook<bool(const LayerDesc& d, int e_in, int e_out, const Int8Range& in, Int8Range* out)> interval;
};

struct LayerUnit {
  // Its row, in LayerTypeInfo's order: type, name, has_params, in_place, shape, int8, int8_fused,
  // keeps_channels, per_channel, detail, espdl_op.
  LayerTypeInfo row;
  PlanHooks plan;
  FloatHooks f32;
  Int8Hooks int8;
};

// ---- Shared hooks (tv/layers/shared_hooks.cpp): what many units do, or "does not apply" ----
namespace units {
Status no_checks(const LayerDesc& d, int layer);
Status valid_padding_only(const LayerDesc& d, int layer);  // a pool: no padding
int no_weights(const LayerDesc& d, const Shape& in, const Shape& out, uint32_t dims[4]);
void forward_reshape_only(const ModelPlan& plan, int i, const float* params, const float* in, float* out);
BackwardEnd backward_passes_through(const BackwardStep& s);  // dL/dx = dL/dy (in place)
Status q8_no_checks(const BlobView& v, const ModelPlan& plan, int i, Q8Model* m);
Status q8_reshape_only(const Q8Model& m, int i, const int8_t* in, int8_t* out);
bool interval_from_weights(const LayerDesc& d, int e_in, int e_out, const Int8Range& in, Int8Range* out);
bool interval_unchanged(const LayerDesc& d, int e_in, int e_out, const Int8Range& in, Int8Range* out);
// An average stays inside [lo, hi] and its rounding is monotonic: the extremes are lo and hi rescaled.
bool interval_rescaled(const LayerDesc& d, int e_in, int e_out, const Int8Range& in, Int8Range* out);
// The float kernels of AdaptiveAvgPool2D, also GlobalAvgPool's (1 x 1 bins), and the int8 check of
// an average over the whole plane (tv/layers/adaptive_avgpool2d.cpp).
void forward_adaptive_avgpool(const ModelPlan& plan, int i, const float* params, const float* in, float* out);
BackwardEnd backward_adaptive_avgpool(const BackwardStep& s);
Status q8_bind_plane_average(const BlobView& v, const ModelPlan& plan, int i, Q8Model* m);
// True when layer i exists and is a ReLU (it runs fused with the layer beside it).
bool is_relu(const ModelPlan& plan, int i);
}  // namespace units

}  // namespace tv
