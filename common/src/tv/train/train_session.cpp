#include "tv/train/train_session.h"

#include "tv/ops/ops.h"

namespace tv {

TrainOptions session_options(const TrainRecipe& r, int n_val, bool features) {
  TrainOptions opt = r.opt;
  opt.keep_best = r.restore_best && n_val > 0;
  opt.augment = recipe_augments(r) && !features;
  return opt;
}

bool distill_new_classes(TrainRecipe* r, int old_classes, int num_classes) {
  if (old_classes < 2 || old_classes >= num_classes) return false;
  r->opt.distill_weight = kDistillWeight;
  r->opt.distill_temperature = kDistillTemperature;
  r->opt.distill_old_classes = old_classes;
  return true;
}

int reference_val_count(int images, int plain, int last_n) {
  const int n = images > last_n ? last_n : (images > 0 ? images - 1 : 0);
  return n < plain ? n : (plain > 0 ? plain : 0);
}

SessionMemory session_memory(const ModelPlan& plan, const TrainRecipe& r, int n_train, int n_val, bool features,
                             int n_indices) {
  SessionMemory m;
  m.trainer = training_memory(plan, session_options(r, n_val, features));
  m.eval_work_bytes = inference_memory(plan).work_bytes;  // also checks the starting weights
  m.order_bytes = sizeof(int) * (size_t)(n_train > 0 ? n_train : 0);
  m.soft_target_bytes = sizeof(float) * (size_t)distill_outputs(plan, r.opt) * (size_t)(n_indices > 0 ? n_indices : 0);
  m.detect_scratch_bytes = sizeof(int) * detect_eval_scratch_ints(plan);
  m.total_bytes = (uint64_t)m.trainer.total_bytes + m.eval_work_bytes + m.order_bytes + m.soft_target_bytes +
                  m.detect_scratch_bytes;
  return m;
}

Status session_init(TrainSession* s, const SessionSetup& setup) {
  const bool detect = setup.plan && setup.plan->desc.task == Task::Detect;
  if (!s || !setup.plan || !setup.recipe || !(detect ? setup.source.boxes != nullptr : setup.source.label != nullptr) ||
      !setup.train || setup.n_train <= 0 || !setup.order || !setup.probs || !setup.eval_arena ||
      (setup.n_val > 0 && !setup.val) || setup.n_val < 0)
    return status_plain(StatusCode::InvalidArgument);
  if (!setup.source.image == !setup.source.features) return status_plain(StatusCode::InvalidArgument);
  // A detector trains on images (its targets follow a flip, not a shift) and evaluates in its scratch.
  if (detect && (setup.source.features || (setup.n_val > 0 && !setup.detect_scratch)))
    return status_plain(StatusCode::InvalidArgument);
  if (detect && setup.recipe->aug_shift != 0)
    return status_value(StatusCode::BadParameter, -1, setup.recipe->aug_shift);
  if (distill_outputs(*setup.plan, setup.recipe->opt) > 0) {  // every training index has a row
    if (!setup.soft_targets) return status_plain(StatusCode::InvalidArgument);
    for (int i = 0; i < setup.n_train; ++i)
      if (setup.train[i] < 0 || setup.train[i] >= setup.n_indices)
        return status_value(StatusCode::InvalidArgument, -1, setup.train[i]);
  }
  s->setup = setup;
  s->options = session_options(*setup.recipe, setup.n_val, setup.source.features != nullptr);
  const Status st = trainer_init(&s->trainer, setup.plan, s->options, setup.train_arena, setup.train_arena_bytes);
  if (!st.ok()) return st;
  return inference_init(&s->eval, setup.plan, s->trainer.params, setup.eval_arena, setup.eval_arena_bytes);
}

Status session_check_start(TrainSession* s) {
  const SampleSource& src = s->setup.source;
  const int first = s->setup.train[0];
  return src.features ? infer_f32(s->eval, src.features(src.ctx, first, 0, -1), s->setup.probs)
                      : infer_u8(s->eval, src.image(src.ctx, first), s->setup.probs);
}

namespace {

bool stop_requested(const SessionHooks& h) {
  return h.stop && h.stop->load(std::memory_order_relaxed);
}

uint64_t now_us(const SessionHooks& h) {
  return h.clock_us ? h.clock_us(h.ctx) : 0;
}

// Passes train_epoch's batches and evaluate's samples on to the hooks, with the epoch; counts the
// evaluated samples (the one after them is the one that could not run).
struct Relay {
  const SessionHooks* hooks;
  int epoch;  // 1-based
  int evaluated;
};

void relay_batch(void* ctx, int done, int total, const BatchStats& b) {
  Relay& r = *(Relay*)ctx;
  if (r.hooks->on_batch) r.hooks->on_batch(r.hooks->ctx, r.epoch, done, total, b);
}

void relay_eval_sample(void* ctx, int index, const float* probs) {
  Relay& r = *(Relay*)ctx;
  r.evaluated++;
  if (r.hooks->on_eval_sample) r.hooks->on_eval_sample(r.hooks->ctx, index, probs);
}

// The starting weights' soft targets (the trainer's weights before the first step): softmax(logits / T) over
// the distilled outputs of each training sample of an old class; a repeated sample is computed once.
Status soft_targets(TrainSession* s, int* failed_index) {
  const SessionSetup& u = s->setup;
  const TrainOptions& o = s->trainer.opt;
  const int k = distill_outputs(*u.plan, o);
  if (k <= 0) return ok_status();
  float* logits = u.probs;  // num_classes floats >= k
  const float inv_t = 1.0f / o.distill_temperature;
  for (int i = 0; i < u.n_indices; ++i) u.soft_targets[(size_t)i * k] = -1.0f;  // not computed yet
  for (int j = 0; j < u.n_train; ++j) {
    const int index = u.train[j];
    float* row = u.soft_targets + (size_t)index * k;
    const int label = u.source.label(u.source.ctx, index);
    if (label < 0 || label >= o.distill_old_classes || row[0] >= 0.0f) continue;
    const Status st = u.source.features
                          ? infer_f32(s->eval, u.source.features(u.source.ctx, index, 0, -1), nullptr, logits)
                          : infer_u8(s->eval, u.source.image(u.source.ctx, index), nullptr, logits);
    if (!st.ok()) {
      *failed_index = index;
      return st;
    }
    for (int c = 0; c < k; ++c) row[c] = logits[c] * inv_t;
    softmax(row, k, row);
  }
  return ok_status();
}

EpochJob epoch_job(TrainSession* s, const SessionHooks& h, Relay* relay) {
  const SessionSetup& u = s->setup;
  EpochJob job;
  job.trainer = &s->trainer;
  job.recipe = u.recipe;
  job.source = u.source;
  job.train = u.train;
  job.n = u.n_train;
  job.order = u.order;
  job.seed = u.seed;
  job.runner = h.runner;
  job.stop = h.stop;
  job.on_batch = relay_batch;
  job.on_batch_ctx = relay;
  job.soft_targets = u.soft_targets;
  return job;
}

}  // namespace

SessionResult session_run(TrainSession* s, const SessionHooks& hooks) {
  SessionResult res;
  const SessionSetup& u = s->setup;
  const TrainRecipe& r = *u.recipe;
  Relay relay{&hooks, 0, 0};
  EpochJob job = epoch_job(s, hooks, &relay);
  EvalObserver observer;
  observer.ctx = &relay;
  observer.sample = relay_eval_sample;
  int best_correct = -1, best_epoch = 0;
  DetectCounts best_detect;
  const bool detect = u.plan->desc.task == Task::Detect;
  if (r.epochs > 0) res.status = soft_targets(s, &res.failed_index);
  for (int e = 0; res.status.ok() && e < r.epochs && !stop_requested(hooks); ++e) {
    EpochReport rep;
    rep.epoch = relay.epoch = e + 1;
    rep.epochs = r.epochs;
    if (hooks.on_epoch_begin) hooks.on_epoch_begin(hooks.ctx, rep.epoch, r.epochs);
    s->trainer.opt.lr = recipe_lr(r, e);  // the schedule sets each epoch's rate; train_epoch uses it
    job.epoch = e;
    const uint64_t t0 = now_us(hooks);
    rep.train = train_epoch(job);
    const uint64_t t1 = now_us(hooks);
    rep.train_us = t1 - t0;
    res.train_us += rep.train_us;
    res.samples += rep.train.seen;
    if (rep.train.seen > 0) res.epochs_run = e + 1;
    if (rep.train.stopped) break;  // a partly trained epoch is not evaluated
    if (u.n_val > 0) {
      relay.evaluated = 0;
      rep.val_total = u.n_val;
      bool better;
      if (detect) {  // the F1 of the objects' centroids: val_correct / val_total = 2 tp / (2 tp + fp + fn)
        rep.val_detect =
            evaluate_detector(s->eval, u.source, u.val, u.n_val, u.probs, u.detect_scratch, &res.status, &observer);
        rep.val_correct = 2 * rep.val_detect.tp;
        rep.val_total = rep.val_correct + rep.val_detect.fp + rep.val_detect.fn;
        better = best_correct < 0 || f1_better(rep.val_detect, best_detect);
        if (better) best_detect = rep.val_detect;
      } else {
        rep.val_correct = evaluate(s->eval, u.source, u.val, u.n_val, nullptr, u.probs, &res.status, &observer);
        better = rep.val_correct > best_correct;
      }
      rep.eval_us = now_us(hooks) - t1;
      res.eval_us += rep.eval_us;
      if (!res.status.ok()) {
        res.failed_index = u.val[relay.evaluated];
      } else if (better) {
        best_correct = rep.val_correct;
        best_epoch = rep.epoch;
        rep.best = true;
        if (s->options.keep_best) trainer_save_best(&s->trainer);
      }
    }
    if (hooks.on_epoch) hooks.on_epoch(hooks.ctx, rep);
    if (!res.status.ok()) break;
  }
  res.stopped = stop_requested(hooks);
  if (s->options.keep_best && best_epoch > 0) {
    trainer_restore_best(&s->trainer);
    res.best_epoch = best_epoch;
  }
  return res;
}

}  // namespace tv
