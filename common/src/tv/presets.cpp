#include "tv/presets.h"

#include <string.h>

namespace tv {

void webmcu_model(int num_classes, ModelDesc* d) {
  *d = ModelDesc();
  d->input.height = 64;
  d->input.width = 64;
  d->input.channels = 3;
  d->input.order = ChannelOrder::RGB;
  d->input.scale = 1.0f / 255.0f;
  d->num_classes = (uint16_t)num_classes;
  add_layer(d, conv2d_layer(4, 3));
  add_layer(d, clip_layer(-100.f, 100.f));
  add_layer(d, leaky_relu_layer(0.1f));
  add_layer(d, maxpool_layer(2));
  add_layer(d, conv2d_layer(8, 3));
  add_layer(d, clip_layer(-100.f, 100.f));
  add_layer(d, leaky_relu_layer(0.1f));
  add_layer(d, flatten_layer());
  add_layer(d, dense_layer());
  add_layer(d, clip_layer(-50.f, 50.f));
}

TrainRecipe webmcu_recipe() {
  TrainRecipe r;
  r.opt.optimizer = OptimizerKind::Adam;
  r.opt.lr = 3e-4f;
  r.opt.beta1 = 0.9f;
  r.opt.beta2 = 0.999f;
  r.opt.eps = 1e-6f;
  r.opt.weight_clip = 10.f;
  r.opt.grad_scale = 1.f;
  r.epochs = 20;
  r.batch_size = 6;
  r.val_last_n = 3;
  return r;
}

// Our recommended model (measured in docs/recommended-preset.md): a stride-2 stem, four
// depthwise-separable blocks (depthwise 3x3 + pointwise 1x1, ReLU after each, so they fuse in int8)
// with 8-16-32-64-64 channels, then adaptive average pooling to 2x2 and one dense layer.
static void tinyvision_model(int num_classes, ModelDesc* d) {
  *d = ModelDesc();
  d->input.height = 64;
  d->input.width = 64;
  d->input.channels = 3;
  d->num_classes = (uint16_t)num_classes;
  add_layer(d, conv2d_layer(8, 3, 2, Padding::Same));  // 32x32x8
  add_layer(d, relu_layer());
  add_layer(d, depthwise_layer(3, 1, Padding::Same));  // 32x32x8
  add_layer(d, relu_layer());
  add_layer(d, conv2d_layer(16, 1));  // 32x32x16 (pointwise)
  add_layer(d, relu_layer());
  add_layer(d, maxpool_layer(2));                      // 16x16x16
  add_layer(d, depthwise_layer(3, 1, Padding::Same));  // 16x16x16
  add_layer(d, relu_layer());
  add_layer(d, conv2d_layer(32, 1));  // 16x16x32
  add_layer(d, relu_layer());
  add_layer(d, maxpool_layer(2));                      // 8x8x32
  add_layer(d, depthwise_layer(3, 1, Padding::Same));  // 8x8x32
  add_layer(d, relu_layer());
  add_layer(d, conv2d_layer(64, 1));  // 8x8x64
  add_layer(d, relu_layer());
  add_layer(d, maxpool_layer(2));                      // 4x4x64
  add_layer(d, depthwise_layer(3, 1, Padding::Same));  // 4x4x64
  add_layer(d, relu_layer());
  add_layer(d, conv2d_layer(64, 1));  // 4x4x64
  add_layer(d, relu_layer());
  add_layer(d, adaptive_avgpool_layer(2, 2));  // 2x2x64
  add_layer(d, flatten_layer());               // 256
  add_layer(d, dense_layer());                 // num_classes
}

// Adam on the batch mean with a short warmup and cosine decay; seeded flip/shift/brightness.
static TrainRecipe tinyvision_recipe() {
  TrainRecipe r;
  r.opt.optimizer = OptimizerKind::Adam;
  r.opt.lr = 5e-3f;
  r.opt.eps = 1e-7f;
  r.opt.batch_mean = true;  // mean over the batch's samples
  r.opt.grad_clip_norm = 5.f;
  r.epochs = 60;
  r.batch_size = 8;
  r.cosine = true;
  r.warmup_epochs = 2;
  r.lr_min_factor = 0.02f;
  r.aug_flip = true;
  r.aug_shift = 4;
  r.aug_brightness = 0.2f;
  r.restore_best = false;
  r.opt.keep_best = false;
  return r;
}

static const char* const kPresetNames[] = {"tinyvision", "webmcu", nullptr};

const char* const* preset_names() {
  return kPresetNames;
}

bool preset_model(const char* name, int num_classes, ModelDesc* desc) {
  if (strcmp(name, "webmcu") == 0) {
    webmcu_model(num_classes, desc);
    return true;
  }
  if (strcmp(name, "tinyvision") == 0) {
    tinyvision_model(num_classes, desc);
    return true;
  }
  return false;
}

bool preset_recipe(const char* name, TrainRecipe* recipe) {
  if (strcmp(name, "webmcu") == 0) {
    *recipe = webmcu_recipe();
    return true;
  }
  if (strcmp(name, "tinyvision") == 0) {
    *recipe = tinyvision_recipe();
    return true;
  }
  return false;
}

void set_input(ModelDesc* desc, int height, int width, int channels) {
  desc->input.height = (uint16_t)height;
  desc->input.width = (uint16_t)width;
  desc->input.channels = (uint16_t)channels;
  if (channels == 1)
    desc->input.order = ChannelOrder::GRAY;
  else if (desc->input.order == ChannelOrder::GRAY)
    desc->input.order = ChannelOrder::RGB;
}

}  // namespace tv
