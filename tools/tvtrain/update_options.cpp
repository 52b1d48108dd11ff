#include "update_options.h"

#include "host/base/error.h"
#include "host/base/text.h"
#include "tv/train/imprint.h"
#include "tv/train/train_session.h"

namespace tvtrain {

tv::UpdateSpec update_option(const std::string& text, bool has_init, bool eval, const std::string& augment) {
  const std::string name = text.empty() ? (has_init ? kInitDefaultUpdate : "full") : text;
  if (!text.empty() && eval) throw tvh::UsageError("--update " + text + " goes with training; --eval trains nothing.");
  tv::UpdateSpec spec;
  if (!tv::parse_update(name.c_str(), &spec))
    throw tvh::UsageError("--update " + text +
                          ": give full, head or sparse[=K] (K = the layers with weights that train, counted from "
                          "the end, 1.." +
                          std::to_string(tv::kMaxLayers) + ").");
  if (spec.mode == tv::UpdateMode::Head && !augment.empty() && augment != "none")
    throw tvh::UsageError(
        "--update head trains on features computed once per photo, so it cannot augment: drop "
        "--augment " +
        augment + " (or use --update sparse or full).");
  return spec;
}

bool distill_option(const std::string& text, bool has_init, bool eval) {
  if (!text.empty() && (!has_init || eval))
    throw tvh::UsageError("--distill " + text + " goes with training from a model (--init MODEL, without --eval).");
  return text != "off";
}

void check_update_fits(const tv::UpdateSpec& spec, const tv::ModelPlan& plan) {
  int first = 0;
  const tv::Status st = tv::update_first_layer(plan, spec, &first);
  if (!st.ok())
    throw tvh::UsageError("--update sparse=" + std::to_string(spec.k) + ": the model has " +
                          std::to_string(tv::weighted_layer_count(plan)) +
                          " layers with weights; give at most that many (or --update full).");
}

void continue_recipe(const tvh::LoadedModel& init, tvh::TrainSetup* setup) {
  const std::string preset = tvh::recipe_preset_of(init, setup->preset);
  tvh::TrainSetup s = tvh::preset_setup(preset);
  s.model = init.plan->desc;
  *setup = s;
}

tvh::ClassMatch match_init_classes(tvh::Dataset* ds, const tvh::LoadedModel& init, const std::string& init_path,
                                   std::unique_ptr<tv::ModelPlan>* plan,
                                   const std::function<void(const std::string&)>& log) {
  tvh::ClassMatch match = tvh::match_classes(ds, init.labels);
  for (const std::string& c : match.missing)
    log("warning: " + init_path + "'s class '" + c + "' has no photos in " + ds->source +
        ": it keeps its weights and stays a class of the model (removing a class means training from scratch).");
  if (match.added.empty()) {
    *plan = std::make_unique<tv::ModelPlan>(*init.plan);
    return match;
  }
  auto grown = std::make_unique<tv::ModelPlan>();
  const tv::Status st = tv::plan_with_classes(*init.plan, (int)ds->classes.size(), grown.get());
  if (!st.ok())
    throw tvh::Error(init_path + ": cannot add the classes " + tvh::join(match.added) +
                     ": new classes are added as rows of the dense layer that produces the logits, and this model "
                     "does not end in one; train it from scratch with every class instead of --init.");
  log("new classes " + tvh::join(match.added) + " (not in " + init_path + "): appended after its " +
      std::to_string(match.model_classes) + " classes, imprinted from their training photos");
  *plan = std::move(grown);
  return match;
}

std::string update_name(const tv::UpdateSpec& spec) {
  char name[24];
  tv::format_update(spec, name, sizeof name);
  return name;
}

std::string update_text(const tv::UpdateSpec& spec, const tvh::TrainResult& r, const tv::ModelPlan& full) {
  const size_t trained = full.param_count - full.layers[r.first_trained].param_offset;
  std::string s = "update: " + update_name(spec) + " (layer " + std::to_string(r.first_trained) +
                  " on: " + tvh::grouped((int64_t)trained) + " of " + tvh::grouped((int64_t)full.param_count) +
                  " parameters train";
  if (r.first_trained > 0)
    s += std::string("; the frozen layers ran once per photo") +
         (r.augmented ? " for validation and per training sample, augmented" : ", cached") + " in " +
         tvh::fmt("%.3f", r.cache_seconds) + " s";
  s += ")";
  if (spec.mode == tv::UpdateMode::Head) s += "; augmentation is off for head updates";
  return s;
}

std::string cost_text(const tvh::TrainResult& r) {
  const tv::UpdateMemory& m = r.board;
  const bool distilled = r.distill_outputs > 0;
  return "training cost: " + tvh::grouped((int64_t)r.flops.total) + " FLOPs (caching " +
         tvh::grouped((int64_t)r.flops.cache) + ", training " + tvh::grouped((int64_t)r.flops.train) + ", evaluation " +
         tvh::grouped((int64_t)r.flops.eval) +
         (distilled ? ", soft targets " + tvh::grouped((int64_t)r.flops.distill) : std::string()) + "); board peak " +
         tvh::grouped((int64_t)m.board_peak_bytes) + " bytes = weights " + tvh::grouped((int64_t)m.weights_bytes) +
         " + arena " + tvh::grouped((int64_t)std::max(m.train_arena_bytes, m.infer_arena_bytes)) + " + cache " +
         tvh::grouped((int64_t)m.cache_bytes) + " + decode buffer " + tvh::grouped((int64_t)m.decode_bytes) +
         (distilled ? " + soft targets " + tvh::grouped((int64_t)m.soft_target_bytes) : std::string());
}

std::string distill_text(const tvh::TrainResult& r, const tvh::ClassMatch& match, int epochs) {
  if (match.added.empty() || epochs == 0) return "";
  if (r.distill_outputs == 0) return "distillation: off (--distill off)";
  return "distillation: the old classes' " + std::to_string(r.distilled_images) +
         " training photos keep the starting model's soft targets over its " + std::to_string(r.distill_outputs) +
         " classes (temperature " + tvh::fmt("%g", tv::kDistillTemperature) + ", weight " +
         tvh::fmt("%g", tv::kDistillWeight) + "; --distill off leaves them out)";
}

void add_update_json(nlohmann::json* j, const tv::UpdateSpec& spec, const tvh::TrainResult& r,
                     const tvh::ClassMatch& match) {
  nlohmann::json& o = *j;
  o["update"] = update_name(spec);
  o["first_trained_layer"] = r.first_trained;
  o["train_flops"] = r.flops.total;
  o["train_flops_parts"] = {
      {"cache", r.flops.cache}, {"train", r.flops.train}, {"eval", r.flops.eval}, {"distill", r.flops.distill}};
  o["augmented"] = r.augmented;
  nlohmann::json& m = o["memory"];
  m["board_peak_bytes"] = r.board.board_peak_bytes;  // = the five below, arena the larger of the two
  m["board_weights_bytes"] = r.board.weights_bytes;
  m["board_train_arena_bytes"] = r.board.train_arena_bytes;
  m["board_infer_arena_bytes"] = r.board.infer_arena_bytes;
  m["board_cache_bytes"] = r.board.cache_bytes;
  m["board_decode_bytes"] = r.board.decode_bytes;
  m["board_soft_target_bytes"] = r.board.soft_target_bytes;
  // distillation (tv::distill_new_classes): null when no class was added
  o["distill"] = match.added.empty() ? nlohmann::json(nullptr)
                                     : nlohmann::json{{"on", r.distill_outputs > 0},
                                                      {"temperature", tv::kDistillTemperature},
                                                      {"weight", tv::kDistillWeight},
                                                      {"old_classes", r.distill_outputs},
                                                      {"images", r.distilled_images}};
  o["classes_added"] = match.added;
  o["classes_without_photos"] = match.missing;
}

}  // namespace tvtrain
