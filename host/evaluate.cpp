#include "host/evaluate.h"

#include <memory>

#include "host/error.h"
#include "tv/int8/q8_model.h"

namespace tvh {

std::vector<int> all_indices(const Dataset& ds) {
  std::vector<int> idx(ds.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = (int)i;
  return idx;
}

struct Predictor::Impl {
  const LoadedModel* model = nullptr;
  AlignedBuffer work;
  tv::Inference inf;
  std::unique_ptr<tv::BlobView> view;
  std::unique_ptr<tv::Q8Model> q8;
};

Predictor::Predictor(const LoadedModel& model) : impl_(std::make_unique<Impl>()) {
  const tv::ModelPlan& plan = *model.plan;
  impl_->model = &model;
  if (!model.int8) {
    impl_->work = AlignedBuffer(tv::inference_memory(plan).work_bytes);
    tv::Status st = tv::inference_init(&impl_->inf, &plan, model.params.data(), impl_->work.data(), impl_->work.size());
    if (!st.ok()) throw Error("cannot run the model: " + status_message(st, &plan.desc) + ".");
    return;
  }
  impl_->view = std::make_unique<tv::BlobView>();
  tv::Status st = tv::blob_decode(model.blob.data(), model.blob.size(), impl_->view.get());
  if (!st.ok()) throw Error("the int8 model: " + status_message(st) + ".");
  impl_->q8 = std::make_unique<tv::Q8Model>();
  st = tv::q8_bind(*impl_->view, plan, impl_->q8.get());
  if (!st.ok()) throw Error("the int8 model cannot run: " + status_message(st, &plan.desc) + ".");
  impl_->work = AlignedBuffer(tv::q8_memory(plan).work_bytes);
}

Predictor::~Predictor() = default;

void Predictor::run(const uint8_t* image, float* probs) {
  if (impl_->model->int8) {
    const tv::Status st = tv::q8_infer_u8(*impl_->q8, image, (int8_t*)impl_->work.data(), probs);
    if (!st.ok()) throw Error("the int8 model failed: " + status_message(st, &impl_->model->plan->desc) + ".");
  } else {
    tv::infer_u8(impl_->inf, image, probs);
  }
}

EvalResult evaluate_model(const LoadedModel& model, const Dataset& ds, const std::vector<int>& idx) {
  if (!model.int8) return evaluate_float(*model.plan, model.params.data(), ds, idx);
  const tv::ModelPlan& plan = *model.plan;
  if (ds.height != plan.input.h || ds.width != plan.input.w || ds.channels != plan.input.c)
    throw Error(ds.source + ": decoded at a size other than the model's input.");
  Predictor predictor(model);
  const int k = plan.desc.num_classes;
  EvalResult r;
  r.confusion.assign((size_t)k * k, 0);
  std::vector<float> probs(k);
  for (int i : idx) {
    predictor.run(ds.image((size_t)i), probs.data());
    r.add(i, ds.labels[(size_t)i], probs.data(), k);
  }
  return r;
}

}  // namespace tvh
