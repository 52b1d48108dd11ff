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

EvalResult evaluate_model(const LoadedModel& model, const Dataset& ds, const std::vector<int>& idx) {
  if (!model.int8) return evaluate_float(*model.plan, model.params.data(), ds, idx);
  const tv::ModelPlan& plan = *model.plan;
  if (ds.height != plan.input.h || ds.width != plan.input.w || ds.channels != plan.input.c)
    throw Error(ds.source + ": decoded at a size other than the model's input.");
  auto view = std::make_unique<tv::BlobView>();
  tv::Status st = tv::blob_decode(model.blob.data(), model.blob.size(), view.get());
  if (!st.ok()) throw Error("the int8 model: " + status_message(st) + ".");
  auto q8 = std::make_unique<tv::Q8Model>();
  st = tv::q8_bind(*view, plan, q8.get());
  if (!st.ok()) throw Error("the int8 model cannot run: " + status_message(st, &plan.desc) + ".");
  AlignedBuffer work(tv::q8_memory(plan).work_bytes);
  const int k = plan.desc.num_classes;
  EvalResult r;
  r.confusion.assign((size_t)k * k, 0);
  r.total = (int)idx.size();
  std::vector<float> probs(k);
  for (int i : idx) {
    st = tv::q8_infer_u8(*q8, ds.image((size_t)i), (int8_t*)work.data(), probs.data());
    if (!st.ok()) throw Error("the int8 model failed: " + status_message(st, &plan.desc) + ".");
    int pred = tv::argmax(probs.data(), k);
    r.correct += pred == ds.labels[(size_t)i];
    r.confusion[(size_t)ds.labels[(size_t)i] * k + pred]++;
  }
  return r;
}

}  // namespace tvh
