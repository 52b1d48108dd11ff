#include "host/train/update_info.h"

#include <cstdio>

#include "host/base/text.h"

namespace tvh {

std::vector<UpdateModeFigures> update_mode_figures(const tv::ModelPlan& plan, const tv::TrainOptions& opt) {
  std::vector<UpdateModeFigures> out;
  tv::UpdateSpec specs[3];
  specs[1].mode = tv::UpdateMode::Head;
  specs[2].mode = tv::UpdateMode::Sparse;
  tv::UpdateRun one;  // one photo, trained once: the per-photo figures
  one.train_images = 1;
  one.epochs = 1;
  for (const tv::UpdateSpec& spec : specs) {
    UpdateModeFigures f;
    f.spec = spec;
    if (!tv::update_first_layer(plan, spec, &f.first).ok()) continue;
    char name[24];
    tv::format_update(spec, name, sizeof name);
    f.name = name;
    f.trained_params = plan.param_count - plan.layers[f.first].param_offset;
    const tv::UpdateMemory m = tv::update_memory(plan, f.first, opt, one, 0);
    f.train_arena_bytes = m.train_arena_bytes;
    f.cache_bytes_per_photo = m.cache_bytes;
    const tv::UpdateFlops fl = tv::update_run_flops(plan, f.first, one);
    f.flops_per_sample = fl.train;
    f.flops_cache_per_photo = fl.cache;
    out.push_back(f);
  }
  return out;
}

std::string update_modes_text(const std::vector<UpdateModeFigures>& modes, const std::string& indent) {
  std::string s;
  char line[256];
  std::snprintf(line, sizeof line, "%s%-10s %8s %12s %14s %16s %18s\n", indent.c_str(), "update", "from", "trains",
                "train arena", "cache per photo", "FLOPs per sample");
  s += line;
  for (const auto& f : modes) {
    const std::string from = "layer " + std::to_string(f.first);
    std::snprintf(line, sizeof line, "%s%-10s %8s %12s %14s %16s %18s\n", indent.c_str(), f.name.c_str(), from.c_str(),
                  grouped((int64_t)f.trained_params).c_str(), grouped((int64_t)f.train_arena_bytes).c_str(),
                  grouped((int64_t)f.cache_bytes_per_photo).c_str(), grouped((int64_t)f.flops_per_sample).c_str());
    s += line;
  }
  s += indent +
       "(per training sample: forward + backward of what trains; head and sparse also run the frozen part forward "
       "once per photo:";
  for (const auto& f : modes)
    if (f.flops_cache_per_photo) s += " " + f.name + " " + grouped((int64_t)f.flops_cache_per_photo);
  s += " FLOPs)\n";
  return s;
}

nlohmann::json update_modes_json(const std::vector<UpdateModeFigures>& modes) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& f : modes)
    a.push_back({{"update", f.name},
                 {"first_trained_layer", f.first},
                 {"trained_params", f.trained_params},
                 {"train_arena_bytes", f.train_arena_bytes},
                 {"cache_bytes_per_photo", f.cache_bytes_per_photo},
                 {"train_flops_per_sample", f.flops_per_sample},
                 {"cache_flops_per_photo", f.flops_cache_per_photo}});
  return a;
}

}  // namespace tvh
