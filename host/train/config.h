// Training setups: a preset, optionally changed by a JSON config file and command-line options.
#pragma once
#include <string>

#include "tv/model/model.h"
#include "tv/train/presets.h"

namespace tvh {

struct TrainSetup {
  std::string preset = "tinyvision";
  tv::ModelDesc model;  // num_classes is set when the dataset is known
  tv::TrainRecipe recipe;
  std::string split = "reference";  // "reference" (last N per class) or "fraction"
  // The model and recipe follow the data (tv::preset_model_for / preset_recipe_for) once the input
  // size and the image count are known; false when a config file sets "model" or "training".
  bool adapt = true;
  double val_fraction = 0.2;
};

// The setup of a named preset; throws tvh::Error naming the known presets when it is unknown.
TrainSetup preset_setup(const std::string& name);

// Applies a JSON config file on top of *setup. The file may name a "preset", describe a "model"
// (input + layers) and set "training" and "split" values; unknown keys and wrong types are refused
// with one sentence naming the file and the key. Format (every key optional; for users: docs/config.md):
// { "preset": "webmcu",
//   "model": { "input": {"height": 64, "width": 64, "channels": 3, "order": "RGB",
//                        "scale": 0.00392156886, "offset": 0},
//              "layers": [ {"type": "conv2d", "filters": 8, "kernel": 3, "stride": 1, "padding": "same"},
//                          {"type": "leaky_relu", "alpha": 0.1}, {"type": "maxpool2d", "kernel": 2},
//                          {"type": "depthwise_conv2d", "kernel": 3}, {"type": "global_avgpool"},
//                          {"type": "adaptive_avgpool2d", "out_h": 2, "out_w": 2}, {"type": "flatten"},
//                          {"type": "clip", "lo": -50, "hi": 50}, {"type": "dense", "units": 0} ] },
//   "training": { "optimizer": "adam"|"sgd", "loss": "cross_entropy"|"mse", "lr": 3e-4, "beta1": 0.9,
//                 "beta2": 0.999, "eps": 1e-6, "momentum": 0.9, "weight_decay": 0, "weight_clip": 10,
//                 "grad_clip_norm": 0, "batch_reduction": "sum"|"mean", "epochs": 20, "batch_size": 6,
//                 "lanes": 2, "schedule": "constant"|"cosine", "warmup_epochs": 0, "lr_min_factor": 0,
//                 "augment": {"flip": false, "shift": 0, "brightness": 0}, "restore_best": false },
//   "split": { "kind": "reference", "last_n": 3 } or { "kind": "fraction", "val_fraction": 0.2 } }
void apply_config_file(const std::string& path, TrainSetup* setup);
// Same from JSON text (name is used in messages).
void apply_config_text(const std::string& text, const std::string& name, TrainSetup* setup);

// Parses --input "HxWxC" (e.g. 28x28x1); anything else is a tvh::UsageError saying what is wrong.
void parse_input_size(const std::string& text, int* h, int* w, int* c);

}  // namespace tvh
