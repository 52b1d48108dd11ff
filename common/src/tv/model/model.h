// Model description and plan: a model is an input, an ordered list of layers and a class count.
// Every shape, parameter offset and buffer size is derived from the description by plan_model().
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "tv/image/image.h"
#include "tv/model/layer_table.h"
#include "tv/ops/ops.h"
#include "tv/status.h"

namespace tv {

constexpr int kMaxLayers = 32;

enum class Padding : uint8_t { Valid = 0, Same = 1 };

// One layer. Which fields matter depends on the type:
// Conv2D: units (filters), kernel, stride, padding.  DepthwiseConv2D: kernel, stride, padding.
// MaxPool2D/AvgPool2D: kernel, stride (valid padding only).  AdaptiveAvgPool2D: out_h, out_w.
// Dense: units (0 = the model's class count).  LeakyReLU: alpha.  Clip: lo, hi.
struct LayerDesc {
  LayerType type = LayerType::Flatten;
  Padding padding = Padding::Valid;
  uint16_t units = 0;
  uint8_t kernel_h = 0, kernel_w = 0;
  uint8_t stride_h = 1, stride_w = 1;
  uint16_t out_h = 0, out_w = 0;
  float alpha = 0.f;
  float lo = 0.f, hi = 0.f;
};

// The input: size, channel order and normalization value = pixel * scale + offset.
struct InputDesc {
  uint16_t height = 64, width = 64, channels = 3;
  ChannelOrder order = ChannelOrder::RGB;
  float scale = 1.0f / 255.0f;
  float offset = 0.0f;
};

// What a model answers (the blob's 'TASK' section; a blob without one is a classifier).
// Classify: one vector of num_classes logits per photo. Detect: a grid of (input / kGridStride) cells, each
// with num_classes logits, channel 0 the background and 1.. the object classes (tv/detect/grid.h).
enum class Task : uint8_t { Classify = 0, Detect = 1 };
// A detector's output channels: background + at most 16 object classes.
constexpr int kMaxDetectChannels = 17;

struct ModelDesc {
  InputDesc input;
  uint16_t num_classes = 0;  // classes; a detector's output channels (background included)
  uint8_t num_layers = 0;
  Task task = Task::Classify;
  float detect_threshold = 0.5f;  // a detector's decoding threshold (tv::grid_objects)
  LayerDesc layers[kMaxLayers];
};

// Builders for readable model descriptions.
LayerDesc conv2d_layer(int filters, int kernel, int stride = 1, Padding padding = Padding::Valid);
LayerDesc depthwise_layer(int kernel, int stride = 1, Padding padding = Padding::Same);
LayerDesc maxpool_layer(int kernel, int stride = 0 /* 0 = kernel */);
LayerDesc avgpool_layer(int kernel, int stride = 0 /* 0 = kernel */);
LayerDesc adaptive_avgpool_layer(int out_h, int out_w);
LayerDesc global_avgpool_layer();
LayerDesc dense_layer(int units = 0 /* 0 = class count */);
LayerDesc relu_layer();
LayerDesc leaky_relu_layer(float alpha);
LayerDesc flatten_layer();
LayerDesc clip_layer(float lo, float hi);
// Appends a layer; false when the description is full.
bool add_layer(ModelDesc* desc, const LayerDesc& layer);

struct Shape {
  int h = 0, w = 0, c = 0;
  size_t size() const { return (size_t)h * (size_t)w * (size_t)c; }
};

// What plan_model() derives for one layer.
struct LayerPlan {
  Shape in, out;
  Geom2D geom;              // for conv/depthwise/pool layers
  size_t weight_count = 0;  // 0 for layers without parameters
  size_t bias_count = 0;
  size_t param_offset = 0;  // weights at params + param_offset, bias right after them
  size_t act_offset = 0;    // training: where this layer's output is stored in a worker's activations
};

// The largest float count plan_model accepts for any figure of a plan (a tensor, the weights, the
// inference work buffer, the training activations, the backward scratch): 2^31 - 1 (every index fits
// an int), and on a 32-bit build SIZE_MAX / 128 (2^25), so that every byte count inference_memory,
// training_memory (8 lanes, Adam, snapshot, augmentation) and q8_memory derive from them fits size_t.
constexpr uint64_t kMaxPlanFloats = (uint64_t)SIZE_MAX / 128 < 0x7fffffffULL ? (uint64_t)SIZE_MAX / 128 : 0x7fffffffULL;

// Which figure of a plan was too large (Status.a of plan_model's StatusCode::Overflow).
enum class PlanFigure : int32_t { Tensor = 0, Weights, InferenceWork, TrainingActivations, BackwardScratch };
// A status about the plan's figure `figure` (StatusFigures::PlanFigure).
inline Status status_plan_figure(StatusCode code, int layer, PlanFigure figure) {
  return make_status_of(StatusFigures::PlanFigure, code, layer, (int32_t)figure, 0);
}
// "the inference work buffer", ... for Status.a of an Overflow.
const char* plan_figure_name(int32_t what);
// One sentence for a status, without a final period, the same on the PC and the board, e.g.
// "layer 3 (conv2d): the window is larger than its input, so the layer has no output (5, at most 3)":
// the layer (and its type when desc is given), status_text, and what its numbers are. Writes at most
// n - 1 characters and a NUL; returns the length.
int status_message_text(const Status& st, const ModelDesc* desc, char* buf, int n);
// Only what its numbers are: " (5, at most 3)", "" for a status without numbers.
int status_figures_text(const Status& st, char* buf, int n);

// Everything derived from a description.
struct ModelPlan {
  ModelDesc desc;
  int num_layers = 0;
  LayerPlan layers[kMaxLayers];
  Shape input;
  size_t param_count = 0;        // weights + biases of every layer
  size_t max_activation = 0;     // largest tensor, input included
  size_t infer_floats = 0;       // inference work buffer: max over layers of in + out
  size_t train_act_floats = 0;   // training: input + every non-in-place layer output
  size_t train_grad_floats = 0;  // training: backward scratch (both ends of one buffer)
  int first_param_layer = -1;    // backward stops here and skips its input gradient
  uint64_t flops_forward = 0;    // multiply-adds * 2 of one forward pass
  uint64_t overflow_floats = 0;  // after an Overflow refusal: the figure's real float count (0: over 2^31)
};

// True when an AdaptiveAvgPool2D's bins all have the same size (its input divides evenly into them):
// the one rule of the int8 engine, tvquant and the .espdl exporter (tv/layers/adaptive_avgpool2d.cpp).
bool equal_bins(const LayerPlan& lp);

// The weight tensor's dimensions of a layer with parameters: conv [out_c][k_h][k_w][in_c], depthwise
// [k_h][k_w][c], dense [units][in_h * in_w * in_c]; returns the number of dimensions (0 for a layer
// without parameters). Its bias has out.c values.
int weight_dims(const LayerDesc& d, const Shape& in, const Shape& out, uint32_t dims[4]);

// The layer's settings in words as the layer summary shows them after the type name (its row's
// DetailText: "8 filters 3x3 stride 1 same", "alpha 0.100000001", "" ...). Writes at most n - 1
// characters and a terminating zero into buf; returns the length.
int layer_detail_text(const LayerDesc& d, const Shape& out, char* buf, int n);

// The values the model's last layer gives per photo: num_classes for a classifier, grid cells x channels
// for a detector.
inline size_t plan_outputs(const ModelPlan& plan) {
  return plan.num_layers > 0 ? plan.layers[plan.num_layers - 1].out.size() : 0;
}

// Validates the description and derives the plan. A detector's input sides are multiples of 8 from 48 to
// 240 and its last layer gives (height / 8) x (width / 8) x num_classes (2..kMaxDetectChannels). Rejections name the
// layer and the reason; a figure over kMaxPlanFloats is refused with StatusCode::Overflow, a = its PlanFigure, and its
// real float count in plan->overflow_floats.
Status plan_model(const ModelDesc& desc, ModelPlan* plan);

// plan_model's derivation for a float input tensor of any shape (no image checks): plan->desc holds
// the description (1..kMaxLayers layers, >= 2 classes, checked by the caller), every other field is
// as a fresh ModelPlan. plan_suffix (tv/train/update.h) plans a network's trainable tail with it.
Status plan_layers(const Shape& input, ModelPlan* plan);

// True when two descriptions describe the same computation (same input, layers, classes and task).
bool same_model(const ModelDesc& a, const ModelDesc& b);

}  // namespace tv
