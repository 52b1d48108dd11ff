// Named model presets and their training recipes.
#pragma once
#include <stdint.h>

#include "tv/model.h"
#include "tv/net.h"

namespace tv {

// How a preset trains: the optimizer settings plus the loop around them.
struct TrainRecipe {
  TrainOptions opt;
  int epochs = 20;
  int batch_size = 6;
  int val_last_n = 3;  // reference split: the last N images of each class
  // Learning-rate schedule: constant, or cosine decay to lr * lr_min_factor after warmup epochs.
  bool cosine = false;
  int warmup_epochs = 0;
  float lr_min_factor = 0.f;
  // Augmentation on the uint8 input, seeded per (epoch, sample).
  bool aug_flip = false;       // horizontal flip with probability 1/2
  int aug_shift = 0;           // random shift of up to +-aug_shift pixels (edges replicated)
  float aug_brightness = 0.f;  // multiply by 1 + u, u uniform in [-b, b]
  bool restore_best = false;   // end with the weights of the best validation epoch
};

// The reference network (webmcu): 64x64x3 RGB -> conv3x3x4 -> clip[-100,100] -> LeakyReLU 0.1 ->
// maxpool 2 -> conv3x3x8 -> clip -> LeakyReLU 0.1 -> flatten -> dense -> clip[-50,50].
void webmcu_model(int num_classes, ModelDesc* desc);
// The reference recipe: Adam lr 3e-4, eps 1e-6, batch 6 summed, weights clipped to +-10, 20 epochs.
TrainRecipe webmcu_recipe();

// Fills a preset by name ("webmcu", "tinyvision"); false when the name is unknown.
bool preset_model(const char* name, int num_classes, ModelDesc* desc);
bool preset_recipe(const char* name, TrainRecipe* recipe);
// The names, for help texts: a null-terminated list.
const char* const* preset_names();

// Replaces a description's input size (the paper's "change one constant"); the caller re-plans.
void set_input(ModelDesc* desc, int height, int width, int channels);

}  // namespace tv
