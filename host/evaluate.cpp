#include "host/evaluate.h"

#include "host/error.h"

namespace tvh {

std::vector<int> all_indices(const Dataset& ds) {
  std::vector<int> idx(ds.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = (int)i;
  return idx;
}

EvalResult evaluate_model(const LoadedModel& model, const Dataset& ds, const std::vector<int>& idx) {
  if (model.int8) throw Error("int8 evaluation is not available in this build.");
  return evaluate_float(*model.plan, model.params.data(), ds, idx);
}

}  // namespace tvh
