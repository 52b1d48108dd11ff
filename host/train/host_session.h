// What every PC training run hands tv::session_init (tv/train/train_session.h): the memory session_memory
// asks for, allocated, and the setup pointing into it; and the clock the session's hooks read.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "host/model/model_io.h"
#include "tv/train/train_session.h"

namespace tvh {

// The session's buffers on the PC (sized by tv::session_memory).
struct HostSessionMemory {
  tv::SessionMemory figures;
  AlignedBuffer arena, eval_arena;
  std::vector<int> order, detect_scratch;
  std::vector<float> probs, soft_targets;
};

// Allocates what a session of `plan` with `recipe` on samples `train` (validating on `val`) needs into *mem
// and returns the setup pointing into it: the source, the samples, the seed; features: the source gives
// float features (a suffix plan); n_indices: the source's sample count (for distillation's soft targets).
tv::SessionSetup host_session_setup(const tv::ModelPlan& plan, const tv::TrainRecipe& recipe,
                                    const tv::SampleSource& source, const std::vector<int>& train,
                                    const std::vector<int>& val, uint64_t seed, bool features, int n_indices,
                                    HostSessionMemory* mem);

// Throws tvh::Error naming `source` when images decoded at h x w x c do not fit the plan's input; `model` names
// the model in the sentence ("the model", "the detector").
void check_decoded_size(const std::string& source, int h, int w, int c, const tv::ModelPlan& plan,
                        const std::string& model);

// Microseconds since t0: a session's clock hook on the PC.
uint64_t microseconds_since(std::chrono::steady_clock::time_point t0);

}  // namespace tvh
