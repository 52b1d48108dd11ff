#include "host/train/detect_training.h"

#include <chrono>
#include <cstring>

#include "host/base/error.h"
#include "host/model/model_io.h"
#include "host/train/detector.h"
#include "host/train/host_session.h"
#include "host/train/lane_pool.h"
#include "tv/train/train_session.h"

namespace tvh {

namespace {

const uint8_t* photo_image(void* ctx, int i) {
  return ((const DetectionDataset*)ctx)->image((size_t)i);
}

int photo_boxes(void* ctx, int i, const tv::DetectBox** out) {
  const std::vector<DetectionBox>& b = ((const DetectionDataset*)ctx)->boxes[(size_t)i];
  *out = b.data();
  return (int)b.size();
}

tv::SampleSource detection_source(const DetectionDataset& ds) {
  tv::SampleSource s;
  s.ctx = (void*)&ds;
  s.image = photo_image;
  s.boxes = photo_boxes;
  return s;
}

// The host's side of the session: progress, the history and the clock.
struct DetectHost {
  const DetectTrainRequest* req;
  DetectTrainResult* res;
  std::chrono::steady_clock::time_point t0;
};

uint64_t detect_clock_us(void* ctx) {
  return microseconds_since(((const DetectHost*)ctx)->t0);
}

void detect_batch(void* ctx, int epoch, int done, int total, const tv::BatchStats&) {
  const DetectHost& h = *(const DetectHost*)ctx;
  if (h.req->on_batch) h.req->on_batch(epoch, done, total);
}

void detect_epoch(void* ctx, const tv::EpochReport& e) {
  DetectHost& h = *(DetectHost*)ctx;
  DetectEpochRecord rec;
  rec.epoch = e.epoch;
  rec.train_loss = e.train.mean_loss();
  rec.lr = e.train.lr;
  rec.skipped_batches = e.train.skipped_batches;
  if (e.val_correct >= 0) {
    rec.val = e.val_detect;
    rec.val_f1 = e.val_total ? (double)e.val_correct / (double)e.val_total : 1.0;
  }
  h.res->history.push_back(rec);
  if (h.req->on_epoch) h.req->on_epoch(rec);
}

}  // namespace

DetectTrainRequest detect_train_request(const tv::ModelPlan& plan, const tv::TrainRecipe& recipe,
                                        const DetectionDataset& ds, const Split& split, uint64_t seed, int threads) {
  DetectTrainRequest req;
  req.plan = &plan;
  req.recipe = recipe;
  req.dataset = &ds;
  req.train = split.train;
  req.val = split.val;
  req.seed = seed;
  req.threads = threads;
  return req;
}

DetectTrainResult train_detector(const DetectTrainRequest& req) {
  const tv::ModelPlan& plan = *req.plan;
  const DetectionDataset& ds = *req.dataset;
  check_detector_fits(plan, ds);
  if (req.train.empty()) throw Error(ds.source + ": the split leaves no training photos.");
  DetectTrainResult res;
  HostSessionMemory mem;
  const tv::SessionSetup setup = host_session_setup(plan, req.recipe, detection_source(ds), req.train, req.val,
                                                    req.seed, false, (int)ds.size(), &mem);
  res.memory = mem.figures.trainer;
  res.infer_memory = tv::inference_memory(plan);
  tv::TrainSession session;
  tv::Status st = tv::session_init(&session, setup);
  if (!st.ok()) throw Error("cannot set up training: " + status_message(st, &plan.desc) + ".");
  tv::he_init(plan, session.trainer.params, req.seed);
  st = tv::session_check_start(&session);
  if (!st.ok()) throw_if_not_runnable(st, plan, ds.paths[(size_t)req.train[0]]);
  LanePool pool(req.threads < 1 ? 1 : req.threads);
  DetectHost host{&req, &res, std::chrono::steady_clock::now()};
  tv::SessionHooks hooks;
  hooks.ctx = &host;
  hooks.runner = pool.runner();
  hooks.clock_us = detect_clock_us;
  hooks.on_batch = detect_batch;
  hooks.on_epoch = detect_epoch;
  const tv::SessionResult sr = tv::session_run(&session, hooks);
  if (!sr.status.ok()) throw_if_not_runnable(sr.status, plan, ds.paths[(size_t)sr.failed_index]);
  res.train_seconds = (double)sr.train_us / 1e6;
  res.eval_seconds = (double)sr.eval_us / 1e6;
  res.best_epoch = sr.best_epoch;
  res.params.assign(session.trainer.params, session.trainer.params + plan.param_count);
  return res;
}

}  // namespace tvh
