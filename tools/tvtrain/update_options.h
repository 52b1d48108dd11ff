// tvtrain's partial updates and --init: the --update option, what a starting model brings (its float
// weights, recipe and classes) and what the run reports (FLOPs, the board's memory). Kept out of
// tvtrain.cpp.
#pragma once
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "host/model/model_io.h"
#include "host/photos/dataset.h"
#include "host/train/config.h"
#include "host/train/init_model.h"
#include "host/train/training.h"
#include "tv/train/update.h"

namespace tvtrain {

// The update --init continues with when --update is not given (measured in docs/on-device-learning.md).
constexpr const char* kInitDefaultUpdate = "head";

// --update: "" means full without --init and kInitDefaultUpdate with it. Usage errors: an unknown
// name, --update without training (--eval), head with an --augment other than none.
tv::UpdateSpec update_option(const std::string& text, bool has_init, bool eval, const std::string& augment);

// --distill on|off ("": on): whether an update that adds classes distills the starting model's soft targets on
// the old classes' photos (tv::distill_new_classes). Usage errors: an explicit --distill without --init or
// with --eval (nothing trains from a model).
bool distill_option(const std::string& text, bool has_init, bool eval);

// A usage error when sparse=K asks for more layers with weights than `plan` has.
void check_update_fits(const tv::UpdateSpec& spec, const tv::ModelPlan& plan);

// With --init and neither --preset nor --config: the setup of the preset the model's provenance names
// (as the board chooses its recipe); the model is the starting model's.
void continue_recipe(const tvh::LoadedModel& init, tvh::TrainSetup* setup);

// Matches a .tvb starting model's classes to the dataset's by name (tvh::match_classes): logs the
// classes appended and, as warnings, the model's classes without photos (they keep their rows). Returns
// the match; *plan becomes the model with every class (new rows imprinted later, once the split is known).
tvh::ClassMatch match_init_classes(tvh::Dataset* ds, const tvh::LoadedModel& init, const std::string& init_path,
                                   std::unique_ptr<tv::ModelPlan>* plan,
                                   const std::function<void(const std::string&)>& log);

// "full", "head", "sparse=2".
std::string update_name(const tv::UpdateSpec& spec);
// One line saying what trained: "update: head (layer 23 on: 771 of 9,155 parameters train)...".
std::string update_text(const tv::UpdateSpec& spec, const tvh::TrainResult& r, const tv::ModelPlan& full);
// The run's FLOPs and the board's peak memory, in words.
std::string cost_text(const tvh::TrainResult& r);
// One line saying what distillation did ("" when no class was added or nothing trained).
std::string distill_text(const tvh::TrainResult& r, const tvh::ClassMatch& match, int epochs);
// Adds update, train_flops, memory.board_*, distill and the class match to a --json object.
void add_update_json(nlohmann::json* j, const tv::UpdateSpec& spec, const tvh::TrainResult& r,
                     const tvh::ClassMatch& match);

}  // namespace tvtrain
