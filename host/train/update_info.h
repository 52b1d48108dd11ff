// What each update mode (tv/train/update.h) costs for one model: the figures tvexport info and tvtrain show.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tv/model/model.h"
#include "tv/train/net.h"
#include "tv/train/update.h"

namespace tvh {

// One mode's figures for one model, per photo (a run multiplies them by its photos and epochs:
// tv::update_run_flops and tv::update_memory give a whole run's).
struct UpdateModeFigures {
  tv::UpdateSpec spec;
  std::string name;                    // "full", "head", "sparse=2"
  int first = 0;                       // the first layer that trains
  uint64_t trained_params = 0;         // the weights and biases that train
  uint64_t train_arena_bytes = 0;      // the trainer's arena (gradients and optimizer state for what trains only)
  uint64_t cache_bytes_per_photo = 0;  // the dataset cache per photo: the decoded image (full) or its features
  uint64_t flops_per_sample = 0;       // one training sample: forward and backward of what trains
  uint64_t flops_cache_per_photo = 0;  // the frozen prefix's forward, once per photo (0 for full)
};

// full, head and sparse (the default K) for `plan` with the trainer options `opt` (lanes, optimizer,
// keep_best; no augmentation: head never augments, and the figures compare the cached paths).
std::vector<UpdateModeFigures> update_mode_figures(const tv::ModelPlan& plan, const tv::TrainOptions& opt);

// The figures as lines of a table, each line starting with `indent`.
std::string update_modes_text(const std::vector<UpdateModeFigures>& modes, const std::string& indent);
// The figures as a JSON array of objects (one per mode).
nlohmann::json update_modes_json(const std::vector<UpdateModeFigures>& modes);

}  // namespace tvh
