#include "host/training.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "host/error.h"
#include "host/lane_pool.h"
#include "host/model_io.h"
#include "tv/train_loop.h"

namespace tvh {

namespace {

const uint8_t* ds_image(void* ctx, int i) {
  return ((const Dataset*)ctx)->image((size_t)i);
}
int ds_label(void* ctx, int i) {
  return ((const Dataset*)ctx)->labels[(size_t)i];
}

tv::SampleSource source_of(const Dataset& ds) {
  tv::SampleSource s;
  s.ctx = (void*)&ds;
  s.image = ds_image;
  s.label = ds_label;
  return s;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

void check_compatible(const tv::ModelPlan& plan, const Dataset& ds) {
  if (ds.height != plan.input.h || ds.width != plan.input.w || ds.channels != plan.input.c)
    throw Error(ds.source + ": decoded at " + std::to_string(ds.height) + "x" + std::to_string(ds.width) + "x" +
                std::to_string(ds.channels) + " but the model's input is " + std::to_string(plan.input.h) + "x" +
                std::to_string(plan.input.w) + "x" + std::to_string(plan.input.c) + ".");
  if ((int)ds.classes.size() != plan.desc.num_classes)
    throw Error(ds.source + ": has " + std::to_string(ds.classes.size()) + " classes but the model has " +
                std::to_string(plan.desc.num_classes) + ".");
}

namespace {

// Classifies images idx with a bound Inference.
EvalResult evaluate_with(const tv::Inference& inf, const Dataset& ds, const std::vector<int>& idx) {
  EvalResult r;
  const int k = inf.plan->desc.num_classes;
  r.confusion.assign((size_t)k * k, 0);
  std::vector<float> probs((size_t)k);
  for (int i : idx) {
    tv::infer_u8(inf, ds.image((size_t)i), probs.data());
    r.add(i, ds.labels[(size_t)i], probs.data(), k);
  }
  return r;
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

EvalResult evaluate_float(const tv::ModelPlan& plan, const float* params, const Dataset& ds,
                          const std::vector<int>& idx) {
  check_compatible(plan, ds);
  AlignedBuffer arena(tv::inference_memory(plan).work_bytes);
  tv::Inference inf;
  tv::Status st = tv::inference_init(&inf, &plan, params, arena.data(), arena.size());
  if (!st.ok()) throw Error("cannot run the model: " + status_message(st, &plan.desc) + ".");
  EvalResult r = evaluate_with(inf, ds, idx);
  r.confusion.resize((size_t)plan.desc.num_classes * plan.desc.num_classes, 0);
  return r;
}

TrainResult train_model(const TrainRequest& req) {
  const tv::ModelPlan& plan = *req.plan;
  const Dataset& ds = *req.dataset;
  check_compatible(plan, ds);
  if (req.train.empty()) throw Error(ds.source + ": the split leaves no training images.");
  TrainResult res;
  tv::TrainOptions opt = req.recipe.opt;
  opt.keep_best = req.recipe.restore_best;
  opt.augment = tv::recipe_augments(req.recipe);
  res.memory = tv::training_memory(plan, opt);
  res.infer_memory = tv::inference_memory(plan);
  AlignedBuffer arena(res.memory.total_bytes);
  tv::Trainer tr;
  tv::Status st = tv::trainer_init(&tr, &plan, opt, arena.data(), arena.size());
  if (!st.ok()) throw Error("cannot set up training: " + status_message(st, &plan.desc) + ".");
  if (req.init) {
    if (req.init->size() != plan.param_count) throw Error("the initial weights do not fit the model.");
    std::memcpy(tr.params, req.init->data(), plan.param_count * sizeof(float));
  } else {
    tv::he_init(plan, tr.params, req.seed);
  }

  LanePool pool(req.threads < 1 ? 1 : req.threads);
  std::vector<int> order(req.train.size());
  tv::EpochJob job;
  job.trainer = &tr;
  job.recipe = &req.recipe;
  job.source = source_of(ds);
  job.train = req.train.data();
  job.n = (int)req.train.size();
  job.order = order.data();
  job.seed = req.seed;
  job.runner = pool.runner();
  struct BatchCtx {
    const TrainRequest* req;
    int epoch;
  } bctx{&req, 0};
  if (req.on_batch) {
    job.on_batch = [](void* ctx, int done, int total, const tv::BatchStats&) {
      BatchCtx* b = (BatchCtx*)ctx;
      b->req->on_batch(b->epoch, done, total);
    };
    job.on_batch_ctx = &bctx;
  }

  AlignedBuffer infer_arena(res.infer_memory.work_bytes);
  tv::Inference inf;
  tv::inference_init(&inf, &plan, tr.params, infer_arena.data(), infer_arena.size());
  int best_correct = -1;
  for (int e = 0; e < req.recipe.epochs; ++e) {
    job.epoch = e;
    bctx.epoch = e + 1;
    auto t0 = std::chrono::steady_clock::now();
    tv::EpochStats es = tv::train_epoch(job);
    res.train_seconds += seconds_since(t0);
    EpochRecord rec;
    rec.epoch = e + 1;
    rec.train_loss = es.mean_loss();
    rec.train_acc = es.accuracy();
    rec.lr = es.lr;
    rec.skipped_batches = es.skipped_batches;
    if (!req.val.empty()) {
      auto t1 = std::chrono::steady_clock::now();
      const EvalResult v = evaluate_with(inf, ds, req.val);
      const int c = v.correct;
      res.eval_seconds += seconds_since(t1);
      rec.val_acc = (double)c / (double)req.val.size();
      rec.val_loss = v.loss;
      if (req.recipe.restore_best && c > best_correct) {
        best_correct = c;
        res.best_epoch = e + 1;
        tv::trainer_save_best(&tr);
      }
    }
    res.history.push_back(rec);
    if (req.on_epoch) req.on_epoch(rec);
  }
  if (req.recipe.restore_best && best_correct >= 0) tv::trainer_restore_best(&tr);
  res.params.assign(tr.params, tr.params + plan.param_count);
  res.train_eval = evaluate_float(plan, res.params.data(), ds, req.train);
  res.val_eval = evaluate_float(plan, res.params.data(), ds, req.val);
  return res;
}

}  // namespace tvh
