#include "host/train/evaluate.h"

#include "host/base/error.h"

namespace tvh {

std::vector<int> all_indices(const Dataset& ds) {
  std::vector<int> idx(ds.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = (int)i;
  return idx;
}

std::vector<int> predict(const LoadedModel& model, const Dataset& ds, const std::vector<int>& idx) {
  const tv::ModelPlan& plan = *model.plan;
  check_compatible(plan, ds);
  ModelRunner c(model);
  std::vector<int> pred;
  pred.reserve(idx.size());
  for (int i : idx) pred.push_back(c.classify(ds.image((size_t)i)));
  return pred;
}

EvalResult score_predictions(const std::vector<int>& pred, const Dataset& ds, const std::vector<int>& idx,
                             int num_classes) {
  EvalResult r;
  r.confusion.assign((size_t)num_classes * num_classes, 0);
  r.total = (int)idx.size();
  for (size_t n = 0; n < idx.size(); ++n) {
    const int truth = ds.labels[(size_t)idx[n]];
    r.correct += pred[n] == truth;
    r.confusion[(size_t)truth * num_classes + pred[n]]++;
  }
  return r;
}

EvalResult evaluate_model(const LoadedModel& model, const Dataset& ds, const std::vector<int>& idx) {
  const tv::ModelPlan& plan = *model.plan;
  check_compatible(plan, ds);
  ModelRunner c(model);
  const int k = plan.desc.num_classes;
  EvalResult r;
  r.confusion.assign((size_t)k * k, 0);
  std::vector<float> probs((size_t)k);
  for (int i : idx) {
    c.classify(ds.image((size_t)i), probs.data());
    r.add(i, ds.labels[(size_t)i], probs.data(), k);
  }
  return r;
}

}  // namespace tvh
