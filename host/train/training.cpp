#include "host/train/training.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>

#include "host/base/error.h"
#include "host/model/model_io.h"
#include "host/train/feature_cache.h"
#include "host/train/host_session.h"
#include "host/train/lane_pool.h"
#include "host/train/samples.h"
#include "tv/train/imprint.h"
#include "tv/train/train_session.h"

namespace tvh {

void check_compatible(const tv::ModelPlan& plan, const Dataset& ds) {
  check_decoded_size(ds.source, ds.height, ds.width, ds.channels, plan, "the model");
  if ((int)ds.classes.size() != plan.desc.num_classes)
    throw Error(ds.source + ": has " + std::to_string(ds.classes.size()) + " classes but the model has " +
                std::to_string(plan.desc.num_classes) + ".");
}

namespace {

// Classifies samples idx of `src` (the dataset's images, or their features for a suffix plan) with a
// bound Inference (the core's evaluate, each image's probabilities added).
EvalResult evaluate_with(const tv::Inference& inf, const tv::SampleSource& src, const Dataset& ds,
                         const std::vector<int>& idx) {
  struct Collect {
    const Dataset* ds;
    EvalResult r;
    int k;
  } c{&ds, EvalResult(), inf.plan->desc.num_classes};
  c.r.confusion.assign((size_t)c.k * c.k, 0);
  tv::EvalObserver obs;
  obs.ctx = &c;
  obs.sample = [](void* ctx, int i, const float* probs) {
    Collect& c = *(Collect*)ctx;
    c.r.add(i, c.ds->labels[(size_t)i], probs, c.k);
  };
  std::vector<float> probs((size_t)c.k);
  tv::Status st;
  tv::evaluate(inf, src, idx.data(), (int)idx.size(), nullptr, probs.data(), &st, &obs);
  if (!st.ok()) throw_if_not_runnable(st, *inf.plan, ds.name((size_t)idx[(size_t)c.r.total]));
  return c.r;
}

}  // namespace

void EvalResult::add(int dataset_index, int truth, const float* probs, int k) {
  const int pred = tv::argmax(probs, k);
  if (confusion.size() != (size_t)k * k) confusion.assign((size_t)k * k, 0);
  index.push_back(dataset_index);
  predicted.push_back(pred);
  confidence.push_back(probs[pred]);
  this->probs.insert(this->probs.end(), probs, probs + k);
  const double p = std::max(1e-12, (double)probs[truth]);
  loss = (loss * total - std::log(p)) / (total + 1);
  ++total;
  correct += pred == truth;
  confusion[(size_t)truth * k + pred]++;
}

std::vector<double> class_losses(const Dataset& ds, const EvalResult& r) {
  const size_t k = ds.classes.size();
  std::vector<double> sum(k, 0.0);
  std::vector<int> count(k, 0);
  for (size_t n = 0; n < r.index.size() && (n + 1) * k <= r.probs.size(); ++n) {
    const size_t truth = (size_t)ds.labels[(size_t)r.index[n]];
    if (truth >= k) continue;
    sum[truth] -= std::log(std::max(1e-12, (double)r.probs[n * k + truth]));
    count[truth]++;
  }
  for (size_t c = 0; c < k; ++c) sum[c] = count[c] ? sum[c] / count[c] : 0.0;
  return sum;
}

EvalResult evaluate_float(const tv::ModelPlan& plan, const float* params, const Dataset& ds,
                          const std::vector<int>& idx) {
  check_compatible(plan, ds);
  AlignedBuffer arena(tv::inference_memory(plan).work_bytes);
  tv::Inference inf;
  tv::Status st = tv::inference_init(&inf, &plan, params, arena.data(), arena.size());
  if (!st.ok()) throw Error("cannot run the model: " + status_message(st, &plan.desc) + ".");
  EvalResult r = evaluate_with(inf, source_of(ds), ds, idx);
  r.confusion.resize((size_t)plan.desc.num_classes * plan.desc.num_classes, 0);
  return r;
}

namespace {

// The host's side of the session: progress callbacks, the history, the validation loss and the clock.
struct HostSession {
  const TrainRequest* req;
  TrainResult* res;
  const Dataset* ds;
  EvalResult val;  // the current epoch's validation (for its loss)
  std::chrono::steady_clock::time_point t0;
};

uint64_t host_clock_us(void* ctx) {
  return microseconds_since(((const HostSession*)ctx)->t0);
}

void host_batch(void* ctx, int epoch, int done, int total, const tv::BatchStats&) {
  const HostSession& h = *(const HostSession*)ctx;
  if (h.req->on_batch) h.req->on_batch(epoch, done, total);
}

void host_eval_sample(void* ctx, int index, const float* probs) {
  HostSession& h = *(HostSession*)ctx;
  h.val.add(index, h.ds->labels[(size_t)index], probs, h.req->plan->desc.num_classes);
}

void host_epoch(void* ctx, const tv::EpochReport& e) {
  HostSession& h = *(HostSession*)ctx;
  EpochRecord rec;
  rec.epoch = e.epoch;
  rec.train_loss = e.train.mean_loss();
  rec.train_acc = e.train.accuracy();
  rec.lr = e.train.lr;
  rec.skipped_batches = e.train.skipped_batches;
  if (e.val_correct >= 0) {
    rec.val_acc = (double)e.val_correct / (double)e.val_total;
    rec.val_loss = h.val.loss;
  }
  h.val = EvalResult();
  h.res->history.push_back(rec);
  if (h.req->on_epoch) h.req->on_epoch(rec);
}

// The suffix a partial update trains and the features it trains on (empty for a full update).
struct Partial {
  tv::ModelPlan suffix;
  std::unique_ptr<FeatureCache> cache;
};

// The training images and the validation images, for the caches.
std::vector<int> both(const TrainRequest& req) {
  std::vector<int> all = req.train;
  all.insert(all.end(), req.val.begin(), req.val.end());
  return all;
}

// Evaluates the trained weights on images idx: the whole network, or the suffix on the features.
EvalResult final_eval(const tv::ModelPlan& plan, const float* params, const tv::SampleSource& src, const Dataset& ds,
                      const std::vector<int>& idx) {
  AlignedBuffer arena(tv::inference_memory(plan).work_bytes);
  tv::Inference inf;
  tv::Status st = tv::inference_init(&inf, &plan, params, arena.data(), arena.size());
  if (!st.ok()) throw Error("cannot run the model: " + status_message(st, &plan.desc) + ".");
  EvalResult r = evaluate_with(inf, src, ds, idx);
  r.confusion.resize((size_t)plan.desc.num_classes * plan.desc.num_classes, 0);
  return r;
}

}  // namespace

TrainRequest train_request(const tv::ModelPlan& plan, const tv::TrainRecipe& recipe, const Dataset& ds,
                           const Split& split, uint64_t seed, int threads) {
  TrainRequest req;
  req.plan = &plan;
  req.recipe = recipe;
  req.dataset = &ds;
  req.train = split.train;
  req.val = split.val;
  req.seed = seed;
  req.threads = threads;
  return req;
}

std::vector<int> training_samples(const TrainRequest& req) {
  if (req.first_new_class < 0 || !req.dataset || !req.plan) return req.train;
  const int* labels = req.dataset->labels.data();
  const int classes = req.plan->desc.num_classes, n = (int)req.train.size();
  const int count = tv::balanced_samples(req.train.data(), n, labels, classes, req.first_new_class, nullptr);
  if (count < 0) return req.train;
  std::vector<int> samples((size_t)count);
  tv::balanced_samples(req.train.data(), n, labels, classes, req.first_new_class, samples.data());
  return samples;
}

TrainResult train_model(const TrainRequest& req) {
  const tv::ModelPlan& full = *req.plan;
  const Dataset& ds = *req.dataset;
  check_compatible(full, ds);
  if (req.train.empty()) throw Error(ds.source + ": the split leaves no training images.");
  if (req.init && req.init->size() != full.param_count) throw Error("the initial weights do not fit the model.");
  TrainResult res;
  tv::Status st = tv::update_first_layer(full, req.update, &res.first_trained);
  if (!st.ok())
    throw Error("--update sparse=" + std::to_string(st.a) + ": the model has " + std::to_string(st.b) +
                " layers with weights; give at most that many (or --update full).");
  tv::TrainRecipe recipe = req.recipe;
  tv::update_recipe(req.update, &recipe);
  res.augmented = tv::recipe_augments(recipe);
  // The whole network's weights: the frozen prefix stays as it starts.
  std::vector<float> params(full.param_count);
  if (req.init)
    params = *req.init;
  else
    tv::he_init(full, params.data(), req.seed);
  const int first = res.first_trained;
  const size_t base = full.layers[first].param_offset;
  Partial partial;
  if (first > 0) {
    st = tv::plan_suffix(full, first, &partial.suffix);
    if (!st.ok()) throw Error("cannot plan the layers that train: " + status_message(st, &full.desc) + ".");
    partial.cache = std::make_unique<FeatureCache>(full, first, params.data(), ds, recipe, req.seed, res.augmented,
                                                   recipe.opt.lanes, res.augmented ? req.val : both(req));
    res.cache_seconds = partial.cache->seconds;
  }
  const tv::ModelPlan& plan = first > 0 ? partial.suffix : full;
  const tv::SampleSource src = first > 0 ? partial.cache->source() : source_of(ds);
  const std::vector<int>& samples = req.samples.empty() ? req.train : req.samples;
  HostSessionMemory mem;
  const tv::SessionSetup setup =
      host_session_setup(plan, recipe, src, samples, req.val, req.seed, first > 0, (int)ds.size(), &mem);
  res.memory = mem.figures.trainer;
  res.infer_memory = tv::inference_memory(full);
  tv::TrainSession session;
  st = tv::session_init(&session, setup);
  if (!st.ok()) throw Error("cannot set up training: " + status_message(st, &plan.desc) + ".");
  std::memcpy(session.trainer.params, params.data() + base, plan.param_count * sizeof(float));
  // Starting weights whose outputs overflow float are refused before training, as the board does.
  st = tv::session_check_start(&session);
  if (!st.ok()) throw_if_not_runnable(st, plan, ds.name((size_t)req.train[0]));

  LanePool pool(req.threads < 1 ? 1 : req.threads);
  HostSession host{&req, &res, &ds, EvalResult(), std::chrono::steady_clock::now()};
  tv::SessionHooks hooks;
  hooks.ctx = &host;
  hooks.runner = pool.runner();
  hooks.clock_us = host_clock_us;
  hooks.on_batch = host_batch;
  hooks.on_eval_sample = host_eval_sample;
  hooks.on_epoch = host_epoch;
  const tv::SessionResult sr = tv::session_run(&session, hooks);
  if (!sr.status.ok()) throw_if_not_runnable(sr.status, plan, ds.name((size_t)sr.failed_index));
  res.train_seconds = (double)sr.train_us / 1e6;
  res.eval_seconds = (double)sr.eval_us / 1e6;
  res.best_epoch = sr.best_epoch;
  std::memcpy(params.data() + base, session.trainer.params, plan.param_count * sizeof(float));
  for (int c : req.keep_rows) tv::copy_class_row(full, c, req.init ? req.init->data() : params.data(), params.data());
  res.train_eval = final_eval(plan, params.data() + base, src, ds, req.train);
  res.val_eval = final_eval(plan, params.data() + base, src, ds, req.val);
  res.params = std::move(params);
  tv::UpdateRun run;
  run.train_images = (int)req.train.size();
  run.train_samples = (int)samples.size();
  run.val_images = (int)req.val.size();
  run.epochs = recipe.epochs;
  run.augment = res.augmented;
  run.distill_outputs = tv::distill_outputs(plan, recipe.opt);
  for (int i : req.train)
    run.distilled_images += run.distill_outputs > 0 && ds.labels[(size_t)i] < recipe.opt.distill_old_classes;
  res.distill_outputs = run.distill_outputs;
  res.distilled_images = run.distilled_images;
  res.flops = tv::update_run_flops(full, first, run);
  res.board = tv::update_memory(full, first, session.options, run);
  return res;
}

}  // namespace tvh
