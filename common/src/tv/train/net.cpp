#include "tv/train/net.h"

#include <math.h>
#include <string.h>

#include "tv/in_place.h"
#include "tv/model/layer_unit.h"
#include "tv/ops/kernel_variants.h"
#include "tv/ops/ops.h"
#include "tv/rng.h"
#include "tv/train/optim.h"

namespace tv {

namespace {

size_t align_floats(size_t n) {
  const size_t per = kArenaAlign / sizeof(float);
  return (n + per - 1) / per * per;
}

bool aligned(const void* p) {
  return ((uintptr_t)p % kArenaAlign) == 0;
}

}  // namespace

void normalize_input(const ModelPlan& plan, const uint8_t* image, float* dst) {
  const size_t n = plan.input.size();
  const float scale = plan.desc.input.scale, offset = plan.desc.input.offset;
  if (offset == 0.f) {
    for (size_t i = 0; i < n; ++i) dst[i] = (float)image[i] * scale;
  } else {
    for (size_t i = 0; i < n; ++i) dst[i] = (float)image[i] * scale + offset;
  }
}

namespace {

// A ReLU next to a Conv2D, DepthwiseConv2D or (backward) MaxPool2D runs with that layer (tv/ops/ops.h's
// *_relu entry points: the same bits; the fast kernels save the ReLU's own pass over memory). The
// backward side is in those layers' units.
// Forward of layer i and the ReLU after it; false (nothing done) when they do not go together.
bool forward_with_relu(const ModelPlan& plan, int i, const float* params, const float* in, float* out) {
  if (!units::is_relu(plan, i + 1)) return false;
  const LayerPlan& lp = plan.layers[i];
  const float* w = params + lp.param_offset;
  const LayerType t = plan.desc.layers[i].type;  // only these fuse: not a dispatch over every type
  if (t == LayerType::Conv2D)
    conv2d_forward_relu(lp.geom, in, w, w + lp.weight_count, out);
  else if (t == LayerType::DepthwiseConv2D)
    depthwise_conv2d_forward_relu(lp.geom, in, w, w + lp.weight_count, out);
  else
    return false;
  return true;
}

}  // namespace

void forward_layer(const ModelPlan& plan, int i, const float* params, const float* in, float* out) {
  layer_unit(plan.desc.layers[i].type).f32.forward(plan, i, params, in, out);
}

// ---- Inference ----

InferenceMemory inference_memory(const ModelPlan& plan) {
  InferenceMemory m;
  m.params_bytes = plan.param_count * sizeof(float);
  m.work_bytes = align_floats(plan.infer_floats) * sizeof(float);
  m.total_bytes = m.params_bytes + m.work_bytes;
  return m;
}

Status inference_init(Inference* inf, const ModelPlan* plan, const float* params, void* arena, size_t arena_bytes) {
  if (!inf || !plan || !params || !arena) return status_plain(StatusCode::InvalidArgument);
  if (!aligned(arena)) return status_plain(StatusCode::Misaligned);
  InferenceMemory need = inference_memory(*plan);
  if (arena_bytes < need.work_bytes)
    return status_too_small(StatusCode::ArenaTooSmall, -1, (int32_t)arena_bytes, (int32_t)need.work_bytes);
  inf->plan = plan;
  inf->params = params;
  inf->work = (float*)arena;
  return ok_status();
}

// 1 when the float whose bits are `bits` is Inf or NaN (its exponent all ones), else 0.
static inline uint32_t non_finite_bits(uint32_t bits) {
  return (uint32_t)((bits & 0x7F800000u) == 0x7F800000u);
}

Status check_finite_output(int layer, const float* x, size_t n) {
  // Blocks without an early exit (the compiler vectorizes them); the element is looked for only in a
  // block that holds one.
  constexpr size_t kBlock = 256;
  for (size_t start = 0; start < n; start += kBlock) {
    const size_t end = n - start < kBlock ? n : start + kBlock;
    uint32_t any = 0;
    for (size_t k = start; k < end; ++k) {
      uint32_t bits;
      memcpy(&bits, x + k, sizeof bits);
      any |= non_finite_bits(bits);
    }
    if (!any) continue;
    for (size_t k = start; k < end; ++k) {
      uint32_t bits;
      memcpy(&bits, x + k, sizeof bits);
      if (non_finite_bits(bits)) return status_at_element(StatusCode::NonFiniteActivation, layer, (int32_t)k);
    }
  }
  return ok_status();
}

// Runs the layers with the input at the low end of the work buffer; each layer that writes a new
// tensor writes it at the opposite end from its input (both fit: plan.infer_floats is the largest
// in + out). Each layer's output is checked for Inf and NaN; a layer run with its ReLU fused is named
// for what its ReLU passes on (a ReLU makes no Inf or NaN of its own). Sets *result to the final output.
static Status run_layers(const Inference& inf, const float** result) {
  const ModelPlan& plan = *inf.plan;
  float* cur = inf.work;
  bool low = true;
  for (int i = 0; i < plan.num_layers; ++i) {
    const int layer = i;
    if (layer_in_place(plan.desc.layers[i].type)) {
      forward_layer(plan, i, inf.params, cur, cur);
    } else {
      float* out = low ? inf.work + plan.infer_floats - plan.layers[i].out.size() : inf.work;
      if (forward_with_relu(plan, i, inf.params, cur, out))
        ++i;  // the ReLU after it is done
      else
        forward_layer(plan, i, inf.params, cur, out);
      cur = out;
      low = !low;
    }
    const Status st = check_finite_output(layer, cur, plan.layers[i].out.size());
    if (!st.ok()) return st;
  }
  *result = cur;
  return ok_status();
}

static Status finish(const Inference& inf, float* probs, float* logits) {
  const float* out = nullptr;
  const Status st = run_layers(inf, &out);
  if (!st.ok()) return st;
  const ModelPlan& plan = *inf.plan;
  const int nc = plan.desc.num_classes;
  const int cells = (int)(plan_outputs(plan) / (size_t)nc);  // 1 for a classifier
  if (logits) memcpy(logits, out, plan_outputs(plan) * sizeof(float));
  if (probs) grid_softmax(out, cells, nc, probs);
  return ok_status();
}

Status infer_u8(const Inference& inf, const uint8_t* image, float* probs, float* logits) {
  normalize_input(*inf.plan, image, inf.work);
  return finish(inf, probs, logits);
}

Status infer_f32(const Inference& inf, const float* input, float* probs, float* logits) {
  memcpy(inf.work, input, inf.plan->input.size() * sizeof(float));
  return finish(inf, probs, logits);
}

int argmax(const float* v, int n) {
  int best = 0;
  for (int i = 1; i < n; ++i)
    if (v[i] > v[best]) best = i;
  return best;
}

// ---- Training ----

TrainMemory training_memory(const ModelPlan& plan, const TrainOptions& opt) {
  TrainMemory m;
  const int lanes = opt.lanes < 1 ? 1 : (opt.lanes > kMaxLanes ? kMaxLanes : opt.lanes);
  const size_t p = align_floats(plan.param_count) * sizeof(float);
  const size_t classes = align_floats(plan_outputs(plan)) * sizeof(float);
  m.params_bytes = p;
  m.grad_bytes = p * lanes;
  m.optimizer_bytes = opt.optimizer == OptimizerKind::Adam ? 2 * p : p;
  m.snapshot_bytes = opt.keep_best ? p : 0;
  m.activation_bytes = align_floats(plan.train_act_floats) * sizeof(float) * lanes;
  m.scratch_bytes = (align_floats(plan.train_grad_floats) * sizeof(float) + 2 * classes) * lanes;
  m.augment_bytes = opt.augment ? align_floats((plan.input.size() + 3) / 4) * sizeof(float) * lanes : 0;
  m.total_bytes = m.params_bytes + m.grad_bytes + m.optimizer_bytes + m.snapshot_bytes + m.activation_bytes +
                  m.scratch_bytes + m.augment_bytes;
  return m;
}

Status trainer_init(Trainer* tr, const ModelPlan* plan, const TrainOptions& opt, void* arena, size_t arena_bytes) {
  if (!tr || !plan || !arena) return status_plain(StatusCode::InvalidArgument);
  if (opt.lanes < 1) return status_under_minimum(StatusCode::InvalidArgument, -1, opt.lanes, 1);
  if (opt.lanes > kMaxLanes) return status_over_limit(StatusCode::InvalidArgument, -1, opt.lanes, kMaxLanes);
  if (!aligned(arena)) return status_plain(StatusCode::Misaligned);
  TrainMemory need = training_memory(*plan, opt);
  if (arena_bytes < need.total_bytes)
    return status_too_small(StatusCode::ArenaTooSmall, -1, (int32_t)arena_bytes, (int32_t)need.total_bytes);
  memset(arena, 0, need.total_bytes);
  reset_in_place(tr);
  tr->plan = plan;
  tr->opt = opt;
  float* f = (float*)arena;
  const size_t pn = align_floats(plan->param_count);
  tr->params = f;
  f += pn;
  for (int l = 0; l < opt.lanes; ++l) {
    tr->lanes[l].grad = f;
    f += pn;
  }
  tr->m = f;
  f += pn;
  if (opt.optimizer == OptimizerKind::Adam) {
    tr->v = f;
    f += pn;
  }
  if (opt.keep_best) {
    tr->best = f;
    f += pn;
  }
  const size_t cn = align_floats(plan_outputs(*plan));
  for (int l = 0; l < opt.lanes; ++l) {
    TrainLane& lane = tr->lanes[l];
    lane.acts = f;
    f += align_floats(plan->train_act_floats);
    lane.scratch = f;
    f += align_floats(plan->train_grad_floats);
    lane.probs = f;
    f += cn;
    lane.dlogits = f;
    f += cn;
  }
  if (opt.augment) {
    const size_t per = align_floats((plan->input.size() + 3) / 4);
    for (int l = 0; l < opt.lanes; ++l) {
      tr->lanes[l].aug = (uint8_t*)f;
      f += per;
    }
  }
  return ok_status();
}

void he_init(const ModelPlan& plan, float* params, uint64_t seed) {
  Rng rng(seed);
  for (int i = 0; i < plan.num_layers; ++i) {
    const LayerPlan& lp = plan.layers[i];
    if (lp.weight_count == 0) continue;
    // He initialization: variance 2 / fan_in, fan_in = the inputs of one output = the weights per bias
    // (conv k_h*k_w*in_c, depthwise k_h*k_w, dense in). A layer type whose parameters are not filters
    // (a scale that starts at 1, ...) needs its own rule here.
    const size_t fan_in = lp.weight_count / lp.bias_count;
    const float sd = sqrtf(2.0f / (float)fan_in);
    float* w = params + lp.param_offset;
    for (size_t k = 0; k < lp.weight_count; ++k) w[k] = rng.normal() * sd;
    memset(w + lp.weight_count, 0, lp.bias_count * sizeof(float));
  }
}

void trainer_begin_batch(Trainer* tr) {
  const size_t n = tr->plan->param_count;
  for (int l = 0; l < tr->opt.lanes; ++l) {
    TrainLane& lane = tr->lanes[l];
    memset(lane.grad, 0, n * sizeof(float));
    lane.loss_sum = 0;
    lane.correct = 0;
    lane.seen = 0;
  }
}

int distill_outputs(const ModelPlan& plan, const TrainOptions& opt) {
  const int nc = plan.desc.num_classes;
  if (!(opt.distill_weight > 0.f) || opt.distill_old_classes < 2 || opt.distill_old_classes > nc) return 0;
  return opt.distill_old_classes;
}

// Forward and backward of the sample already at lane.acts (the input), with its soft targets (may be null).
static float train_on_input(Trainer* tr, int lane_index, int label, int* predicted, const float* soft_target,
                            const uint8_t* cell_targets) {
  const ModelPlan& plan = *tr->plan;
  TrainLane& lane = tr->lanes[lane_index];
  const float* params = tr->params;
  float* acts = lane.acts;

  // Forward, keeping every layer's output.
  for (int i = 0; i < plan.num_layers; ++i) {
    const float* in = i == 0 ? acts : acts + plan.layers[i - 1].act_offset;
    if (forward_with_relu(plan, i, params, in, acts + plan.layers[i].act_offset))
      ++i;  // the ReLU runs in place on the same tensor: done
    else
      forward_layer(plan, i, params, in, acts + plan.layers[i].act_offset);
  }
  const int nc = plan.desc.num_classes;
  const float* logits = acts + plan.layers[plan.num_layers - 1].act_offset;

  // Loss and its gradient.
  float loss;
  const size_t outputs = plan_outputs(plan);
  if (plan.desc.task == Task::Detect) {
    const int cells = (int)(outputs / (size_t)nc);
    loss = grid_cross_entropy(logits, cells, nc, cell_targets, tr->opt.object_weight, lane.probs, lane.dlogits);
    int right = 0;  // cells whose most probable channel is their target
    for (int c = 0; c < cells; ++c)
      right += argmax(lane.probs + (size_t)c * (size_t)nc, nc) == (cell_targets ? cell_targets[c] : 0);
    if (predicted) *predicted = right == cells ? label : -1;
    lane.loss_sum += loss;
    lane.correct += right == cells;
    lane.seen += 1;
  } else if (tr->opt.loss == LossKind::MSE) {
    float* target = lane.probs;  // one-hot target, then overwritten by the probabilities below
    for (int k = 0; k < nc; ++k) target[k] = k == label ? 1.f : 0.f;
    loss = mse_loss(logits, target, nc, lane.dlogits);
    softmax(logits, nc, lane.probs);
  } else {
    loss = softmax_cross_entropy(logits, nc, label, lane.probs, lane.dlogits);
  }
  if (plan.desc.task != Task::Detect) {
    const int distilled = soft_target ? distill_outputs(plan, tr->opt) : 0;
    if (distilled > 0)
      loss += distillation_loss(logits, distilled, soft_target, tr->opt.distill_temperature, tr->opt.distill_weight,
                                lane.dlogits);
    const int pred = argmax(lane.probs, nc);
    if (predicted) *predicted = pred;
    lane.loss_sum += loss;
    lane.correct += pred == label;
    lane.seen += 1;
  }

  // Backward: dy and dx live at opposite ends of the scratch buffer.
  float* scratch = lane.scratch;
  const size_t S = plan.train_grad_floats;
  float* dy = scratch;
  bool dy_low = true;
  memcpy(dy, lane.dlogits, outputs * sizeof(float));
  for (int i = plan.num_layers - 1; i >= plan.first_param_layer; --i) {
    const LayerUnit& unit = layer_unit(plan.desc.layers[i].type);
    const LayerPlan& lp = plan.layers[i];
    BackwardStep step;
    step.plan = &plan;
    step.i = i;
    step.w = params + lp.param_offset;
    step.x = i == 0 ? acts : acts + plan.layers[i - 1].act_offset;
    step.y = acts + lp.act_offset;
    step.dy = dy;
    step.dx = dy_low ? scratch + S - lp.in.size() : scratch;
    step.g = lane.grad + lp.param_offset;
    step.need_dx = i > plan.first_param_layer;
    step.acts = acts;
    step.grad = lane.grad;
    const BackwardEnd end = unit.f32.backward(step);
    if (unit.row.in_place) continue;  // dy became the input's gradient where it is
    if (end == BackwardEnd::Everything || !step.need_dx) break;
    dy = step.dx;
    dy_low = !dy_low;
    if (end == BackwardEnd::WithReluBelow) --i;  // the ReLU below it is done too
  }
  return loss;
}

float trainer_sample(Trainer* tr, int lane_index, const uint8_t* image, int label, int* predicted,
                     const float* soft_target, const uint8_t* cell_targets) {
  normalize_input(*tr->plan, image, tr->lanes[lane_index].acts);
  return train_on_input(tr, lane_index, label, predicted, soft_target, cell_targets);
}

float trainer_sample_f32(Trainer* tr, int lane_index, const float* input, int label, int* predicted,
                         const float* soft_target, const uint8_t* cell_targets) {
  memcpy(tr->lanes[lane_index].acts, input, tr->plan->input.size() * sizeof(float));
  return train_on_input(tr, lane_index, label, predicted, soft_target, cell_targets);
}

bool trainer_end_batch(Trainer* tr) {
  const size_t n = tr->plan->param_count;
  float* g = tr->lanes[0].grad;
  for (int l = 1; l < tr->opt.lanes; ++l) {
    const float* o = tr->lanes[l].grad;
    for (size_t k = 0; k < n; ++k) g[k] += o[k];
  }
  float scale = tr->opt.grad_scale;
  if (tr->opt.batch_mean) {
    int seen = 0;
    for (int l = 0; l < tr->opt.lanes; ++l) seen += tr->lanes[l].seen;
    if (seen > 0) scale /= (float)seen;
  }
  if (scale != 1.f) scale_buffer(g, n, scale);
  const float norm = grad_norm(g, n);
  tr->last_grad_norm = norm;
  if (!isfinite(norm)) {
    tr->skipped_steps++;
    return false;
  }
  if (tr->opt.grad_clip_norm > 0.f && norm > tr->opt.grad_clip_norm) scale_buffer(g, n, tr->opt.grad_clip_norm / norm);
  tr->step++;
  const TrainOptions& o = tr->opt;
  if (o.optimizer == OptimizerKind::Adam)
    adam_step(tr->params, g, tr->m, tr->v, n, o.lr, o.beta1, o.beta2, o.eps, tr->step, o.weight_decay, o.weight_clip);
  else
    sgd_step(tr->params, g, tr->m, n, o.lr, o.momentum, o.weight_decay, o.weight_clip);
  return true;
}

void trainer_save_best(Trainer* tr) {
  if (tr->best) memcpy(tr->best, tr->params, tr->plan->param_count * sizeof(float));
}

void trainer_restore_best(Trainer* tr) {
  if (tr->best) memcpy(tr->params, tr->best, tr->plan->param_count * sizeof(float));
}

}  // namespace tv
