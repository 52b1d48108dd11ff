#include "host/train/host_session.h"

#include "host/base/error.h"

namespace tvh {

tv::SessionSetup host_session_setup(const tv::ModelPlan& plan, const tv::TrainRecipe& recipe,
                                    const tv::SampleSource& source, const std::vector<int>& train,
                                    const std::vector<int>& val, uint64_t seed, bool features, int n_indices,
                                    HostSessionMemory* mem) {
  mem->figures = tv::session_memory(plan, recipe, (int)train.size(), (int)val.size(), features, n_indices);
  mem->arena = AlignedBuffer(mem->figures.trainer.total_bytes);
  mem->eval_arena = AlignedBuffer(mem->figures.eval_work_bytes);
  mem->order.assign(train.size(), 0);
  mem->detect_scratch.assign(mem->figures.detect_scratch_bytes / sizeof(int), 0);
  mem->probs.assign(tv::plan_outputs(plan), 0.f);
  mem->soft_targets.assign(mem->figures.soft_target_bytes / sizeof(float), 0.f);
  tv::SessionSetup setup;
  setup.plan = &plan;
  setup.recipe = &recipe;
  setup.source = source;
  setup.train = train.data();
  setup.n_train = (int)train.size();
  setup.val = val.data();
  setup.n_val = (int)val.size();
  setup.seed = seed;
  setup.train_arena = mem->arena.data();
  setup.train_arena_bytes = mem->arena.size();
  setup.eval_arena = mem->eval_arena.data();
  setup.eval_arena_bytes = mem->eval_arena.size();
  setup.order = mem->order.data();
  setup.probs = mem->probs.data();
  setup.detect_scratch = mem->detect_scratch.empty() ? nullptr : mem->detect_scratch.data();
  setup.soft_targets = mem->soft_targets.empty() ? nullptr : mem->soft_targets.data();
  setup.n_indices = n_indices;
  return setup;
}

void check_decoded_size(const std::string& source, int h, int w, int c, const tv::ModelPlan& plan,
                        const std::string& model) {
  if (h != plan.input.h || w != plan.input.w || c != plan.input.c)
    throw Error(source + ": decoded at " + std::to_string(h) + "x" + std::to_string(w) + "x" + std::to_string(c) +
                " but " + model + "'s input is " + std::to_string(plan.input.h) + "x" + std::to_string(plan.input.w) +
                "x" + std::to_string(plan.input.c) + ".");
}

uint64_t microseconds_since(std::chrono::steady_clock::time_point t0) {
  return (uint64_t)std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace tvh
