#include "host/train/detect_training.h"

#include <chrono>
#include <cstring>

#include "host/base/error.h"
#include "host/model/model_io.h"
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

void check_detector_fits(const tv::ModelPlan& plan, const DetectionDataset& ds) {
  if (plan.desc.task != tv::Task::Detect) throw Error("the model is not a detector.");
  check_decoded_size(ds.source, ds.height, ds.width, ds.channels, plan, "the detector");
  if ((int)ds.classes.size() + 1 != plan.desc.num_classes)
    throw Error(ds.source + ": has " + std::to_string(ds.classes.size()) + " object classes but the detector has " +
                std::to_string(plan.desc.num_classes - 1) + ".");
  for (size_t i = 0; i < ds.size(); ++i)
    if (ds.boxes[i].size() > (size_t)tv::kMaxBoxesPerPhoto)
      throw Error(ds.paths[i] + " has " + std::to_string(ds.boxes[i].size()) + " objects; a photo may have at most " +
                  std::to_string(tv::kMaxBoxesPerPhoto) + ": split the photo, or leave it out.");
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

std::vector<PhotoDetections> detect_photos(const tv::ModelPlan& plan, const float* params, const DetectionDataset& ds,
                                           const std::vector<int>& idx) {
  check_detector_fits(plan, ds);
  AlignedBuffer arena(tv::inference_memory(plan).work_bytes);
  tv::Inference inf;
  tv::Status st = tv::inference_init(&inf, &plan, params, arena.data(), arena.size());
  if (!st.ok()) throw Error("cannot run the model: " + status_message(st, &plan.desc) + ".");
  const tv::Shape& grid = plan.layers[plan.num_layers - 1].out;
  std::vector<float> probs(tv::plan_outputs(plan));
  std::vector<int> scratch(tv::grid_objects_scratch_ints(grid.h, grid.w));
  std::vector<tv::GridObject> objects((size_t)grid.h * (size_t)grid.w);
  std::vector<PhotoDetections> out;
  out.reserve(idx.size());
  for (int i : idx) {
    throw_if_not_runnable(tv::infer_u8(inf, ds.image((size_t)i), probs.data()), plan, ds.paths[(size_t)i]);
    const int n = tv::grid_objects(probs.data(), grid.h, grid.w, plan.desc.num_classes, plan.desc.detect_threshold,
                                   plan.input.h, plan.input.w, scratch.data(), objects.data(), (int)objects.size());
    PhotoDetections p;
    p.predicted =
        detected_objects(std::vector<tv::GridObject>(objects.begin(), objects.begin() + n), plan.input.h, plan.input.w);
    p.truth = ds.boxes[(size_t)i];
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace tvh
