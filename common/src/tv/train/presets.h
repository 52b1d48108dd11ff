// Named model presets and their training recipes.
#pragma once
#include <stdint.h>

#include "tv/model/model.h"
#include "tv/train/net.h"

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
  bool aug_flip = false;  // horizontal flip with probability 1/2
  int aug_shift = 0;      // random shift of up to +-aug_shift pixels (edges replicated)
  // A detector's shift: up to +-aug_shift_cells whole grid cells (kGridStride pixels) each way, edges
  // replicated; its targets move with the pixels, a box whose centre leaves the photo is dropped.
  int aug_shift_cells = 0;
  float aug_brightness = 0.f;  // multiply by 1 + u, u uniform in [-b, b]
  bool restore_best = false;   // end with the weights of the best validation epoch
};

// The reference network (webmcu): 64x64x3 RGB -> conv3x3x4 -> clip[-100,100] -> LeakyReLU 0.1 ->
// maxpool 2 -> conv3x3x8 -> clip -> LeakyReLU 0.1 -> flatten -> dense -> clip[-50,50].
void webmcu_model(int num_classes, ModelDesc* desc);
// The reference recipe: Adam lr 3e-4, eps 1e-6, batch 6 summed, weights clipped to +-10, 20 epochs.
TrainRecipe webmcu_recipe();

// What a preset adapts to: the model's input and the number of images in the dataset (0 = unknown,
// treated as a small set).
struct DataShape {
  int height = 64, width = 64, channels = 3;
  long images = 0;
};

// How far the detect preset shifts its photos, in whole grid cells each way (docs/detection.md: measured).
constexpr int kDetectShiftCells = 2;
// How much more a detector's object cell weighs in its loss than a background cell (the detect preset):
// measured on datasets/detect, 4 seeds, validation F1 0.767 / 0.769 / 0.807 at 4 / 8 / 16 (docs/detection.md).
constexpr float kObjectWeight = 16.f;

// Fills a preset by name ("webmcu", "tinyvision", "detect"); false when the name is unknown. "detect" is a
// detector (tv::Task::Detect): num_classes counts its output channels, background + the object classes. The _for forms
// size the model and the recipe for the data (the webmcu preset only takes the input size; its
// recipe is fixed); the short forms are the preset at 64x64x3 for a small dataset.
bool preset_model_for(const char* name, int num_classes, const DataShape& data, ModelDesc* desc);
bool preset_recipe_for(const char* name, const DataShape& data, TrainRecipe* recipe);
bool preset_model(const char* name, int num_classes, ModelDesc* desc);
bool preset_recipe(const char* name, TrainRecipe* recipe);

// The tinyvision rule, depth from the input (docs/recommended-preset.md, "The rule"):
// - stem conv 3x3, stride 2 when the smaller input side is >= 48, else 1 ("same" padding), followed
//   by a 2x2 max-pool when the smaller side it leaves is >= 64 (inputs from 128 up);
// - four depthwise-separable blocks; after each of the first three a 2x2 max-pool when the smaller
//   side it leaves is >= 4 and either even or >= 8 (so the last map keeps 4-10 pixels on its smaller
//   side from 16x16 to 160x160, and an even side where it can);
// - adaptive average pooling to 2 bins along each even side, 1 along an odd one (equal bins, which
//   int8 and ESP-DL need), then dense;
// - widths from the dataset: stem 8, blocks 16-32-64-64 below kWideFromImages images; 1.5 times
//   that (stem 12, blocks 24-48-96-96) from kWideFromImages up, where the small network under-fits
//   (measured on Fashion-MNIST in docs/recommended-preset.md).
constexpr long kWideFromImages = 10000;
struct TinyVisionPlan {
  int stem_filters = 8, stem_stride = 2;
  bool pool_after_stem = false;
  int block_filters[4] = {16, 32, 64, 64};
  bool pool_after_block[4] = {true, true, true, false};
  int final_h = 4, final_w = 4;  // the last feature map
  int head_h = 2, head_w = 2;    // adaptive pool output
};
TinyVisionPlan tinyvision_plan(const DataShape& data);

// The tinyvision rule, scale from the dataset: epochs 60 up to 1,000 images, then
// 60 * sqrt(1000 / images) rounded, at least kMinEpochs (so the optimizer steps grow as sqrt(images));
// augmentation shift = 1/16 of the smaller input side (at least 1 px). Batch 8 and Adam lr 5e-3,
// 2e-3 from kWideFromImages images (measured in docs/recommended-preset.md). Explicit options (tvtrain
// --epochs/--batch/--lr) override.
constexpr int kMinEpochs = 15;
struct TinyVisionScale {
  int epochs = 60, shift = 4;
};
TinyVisionScale tinyvision_scale(const DataShape& data);
// The names, for help texts: a null-terminated list.
const char* const* preset_names();

// Replaces a description's input size (the paper's "change one constant"); the caller re-plans.
void set_input(ModelDesc* desc, int height, int width, int channels);

}  // namespace tv
