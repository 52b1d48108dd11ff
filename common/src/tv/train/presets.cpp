#include "tv/train/presets.h"

#include <math.h>
#include <string.h>

#include "tv/detect/grid.h"

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

// Our recommended model (measured in docs/recommended-preset.md), sized and widened by the rule of
// tinyvision_plan(): a 3x3 stem, four depthwise-separable blocks (depthwise 3x3 + pointwise 1x1, ReLU
// after each, so they fuse in int8), max-pools where the rule puts them, adaptive average pooling and
// one dense layer. At 64x64x3 with a small dataset it is the 9,155-parameter network of the table:
// stem 8 stride 2, blocks 16-32-64-64, a pool after the first three, 4x4 -> 2x2 average.
static void tinyvision_model(int num_classes, const DataShape& data, ModelDesc* d) {
  const TinyVisionPlan p = tinyvision_plan(data);
  *d = ModelDesc();
  set_input(d, data.height, data.width, data.channels);
  d->num_classes = (uint16_t)num_classes;
  add_layer(d, conv2d_layer(p.stem_filters, 3, p.stem_stride, Padding::Same));
  add_layer(d, relu_layer());
  if (p.pool_after_stem) add_layer(d, maxpool_layer(2));
  for (int b = 0; b < 4; ++b) {
    add_layer(d, depthwise_layer(3, 1, Padding::Same));
    add_layer(d, relu_layer());
    add_layer(d, conv2d_layer(p.block_filters[b], 1));  // pointwise
    add_layer(d, relu_layer());
    if (p.pool_after_block[b]) add_layer(d, maxpool_layer(2));
  }
  add_layer(d, adaptive_avgpool_layer(p.head_h, p.head_w));
  add_layer(d, flatten_layer());
  add_layer(d, dense_layer());
}

// The detector (FOMO's shape on our blocks): the tinyvision stem (8 filters, stride 2) and its first three
// blocks (16-32-64) with a 2x2 max-pool after the first two, so the last map is 1/8 of the input, then a
// 1x1 convolution giving each cell's logits (background + the object classes). The stem and blocks have the
// classifier's shapes, so a classifier's (or the backbone's) first layers fit it.
static void detect_model(int channels, const DataShape& data, ModelDesc* d) {
  *d = ModelDesc();
  set_input(d, data.height, data.width, data.channels);
  d->num_classes = (uint16_t)channels;
  d->task = Task::Detect;
  d->detect_threshold = kDefaultDetectThreshold;
  const TinyVisionPlan p;  // the small network's widths
  add_layer(d, conv2d_layer(p.stem_filters, 3, 2, Padding::Same));
  add_layer(d, relu_layer());
  for (int b = 0; b < 3; ++b) {
    add_layer(d, depthwise_layer(3, 1, Padding::Same));
    add_layer(d, relu_layer());
    add_layer(d, conv2d_layer(p.block_filters[b], 1));
    add_layer(d, relu_layer());
    if (b < 2) add_layer(d, maxpool_layer(2));
  }
  add_layer(d, conv2d_layer(channels, 1));  // the grid's logits
}

TinyVisionPlan tinyvision_plan(const DataShape& data) {
  TinyVisionPlan p;
  int h = data.height, w = data.width;
  const int side = h < w ? h : w;
  p.stem_stride = side >= 48 ? 2 : 1;
  h = (h + p.stem_stride - 1) / p.stem_stride;  // "same" padding
  w = (w + p.stem_stride - 1) / p.stem_stride;
  p.pool_after_stem = (h < w ? h : w) >= 64;
  if (p.pool_after_stem) {
    h /= 2;
    w /= 2;
  }
  // A 2x2 pool after blocks 1-3 when the smaller side it leaves is >= 4 and either even or >= 8.
  for (int b = 0; b < 4; ++b) {
    const int next = (h < w ? h : w) / 2;
    p.pool_after_block[b] = b < 3 && next >= 4 && (next % 2 == 0 || next >= 8);
    if (p.pool_after_block[b]) {
      h /= 2;
      w /= 2;
    }
  }
  p.final_h = h;
  p.final_w = w;
  // Two bins along a side that divides evenly (int8 and ESP-DL need equal bins), else one.
  p.head_h = h % 2 == 0 ? 2 : 1;
  p.head_w = w % 2 == 0 ? 2 : 1;
  // Widths from the dataset: x1.5 for large sets (the small network under-fits 10,000 images and more).
  if (data.images >= kWideFromImages) {
    p.stem_filters = p.stem_filters * 3 / 2;
    for (int& f : p.block_filters) f = f * 3 / 2;
  }
  return p;
}

// Adam (lr 5e-3, 2e-3 from kWideFromImages images) on the batch mean of 8 images with a 2-epoch warmup and cosine
// decay; seeded flip/shift/brightness; epochs and shift from the dataset (tinyvision_scale()).
static TrainRecipe tinyvision_recipe(const DataShape& data) {
  TrainRecipe r;
  r.opt.optimizer = OptimizerKind::Adam;
  // Large sets: lr 2e-3. At 5e-3 the batch-8 noise holds the loss flat until the cosine decay, and
  // Fashion-MNIST's 60,000 images end 1.4 points lower (docs/recommended-preset.md).
  r.opt.lr = data.images >= kWideFromImages ? 2e-3f : 5e-3f;
  r.opt.eps = 1e-7f;
  r.opt.batch_mean = true;  // mean over the batch's samples
  r.opt.grad_clip_norm = 5.f;
  r.cosine = true;
  r.lr_min_factor = 0.02f;
  r.aug_flip = true;
  r.aug_brightness = 0.2f;
  r.restore_best = false;
  r.opt.keep_best = false;
  const TinyVisionScale sc = tinyvision_scale(data);
  r.batch_size = 8;
  r.warmup_epochs = 2;
  r.epochs = sc.epochs;
  r.aug_shift = sc.shift;
  return r;
}

TinyVisionScale tinyvision_scale(const DataShape& data) {
  TinyVisionScale sc;
  const long n = data.images;
  // 60 epochs up to 1,000 images, then 60 * sqrt(1000 / n) (about 1.9x the passes for 4x the
  // images), at least kMinEpochs.
  if (n > 1000) {
    int e = (int)(60.0f * sqrtf(1000.0f / (float)n) + 0.5f);
    sc.epochs = e < kMinEpochs ? kMinEpochs : e;
  }
  const int side = data.height < data.width ? data.height : data.width;
  sc.shift = (side + 8) / 16;  // 1/16 of the smaller side: 4 px at 64, 2 at 28, 1 at 16
  if (sc.shift < 1) sc.shift = 1;
  return sc;
}

// The detector's recipe: the tinyvision optimizer and schedule, object cells weighing kObjectWeight; flips,
// shifts of whole cells (the targets move with them) and brightness; the weights of the best validation F1.
static TrainRecipe detect_recipe(const DataShape& data) {
  TrainRecipe r = tinyvision_recipe(data);
  r.aug_shift = 0;
  r.aug_shift_cells = kDetectShiftCells;
  r.opt.object_weight = kObjectWeight;
  r.restore_best = true;  // the epoch of the best validation F1
  r.opt.keep_best = true;
  return r;
}

static const char* const kPresetNames[] = {"tinyvision", "webmcu", "detect", nullptr};

const char* const* preset_names() {
  return kPresetNames;
}

bool preset_model_for(const char* name, int num_classes, const DataShape& data, ModelDesc* desc) {
  if (strcmp(name, "webmcu") == 0) {
    webmcu_model(num_classes, desc);
    set_input(desc, data.height, data.width, data.channels);
    return true;
  }
  if (strcmp(name, "tinyvision") == 0) {
    tinyvision_model(num_classes, data, desc);
    return true;
  }
  if (strcmp(name, "detect") == 0) {
    detect_model(num_classes, data, desc);
    return true;
  }
  return false;
}

bool preset_recipe_for(const char* name, const DataShape& data, TrainRecipe* recipe) {
  if (strcmp(name, "webmcu") == 0) {
    *recipe = webmcu_recipe();
    return true;
  }
  if (strcmp(name, "tinyvision") == 0) {
    *recipe = tinyvision_recipe(data);
    return true;
  }
  if (strcmp(name, "detect") == 0) {
    *recipe = detect_recipe(data);
    return true;
  }
  return false;
}

bool preset_model(const char* name, int num_classes, ModelDesc* desc) {
  return preset_model_for(name, num_classes, DataShape(), desc);
}

bool preset_recipe(const char* name, TrainRecipe* recipe) {
  return preset_recipe_for(name, DataShape(), recipe);
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
