#include "tv/model/model.h"

#include <string.h>

#include "tv/detect/grid.h"
#include "tv/float_text.h"
#include "tv/in_place.h"
#include "tv/model/layer_unit.h"

namespace tv {

namespace {

// A layer of `type` with every other field at its default.
LayerDesc layer_of(LayerType type) {
  LayerDesc l;
  l.type = type;
  return l;
}

// A layer of `type` whose `field` is `value`, every other field at its default.
template <typename Field, typename Value>
LayerDesc layer_with(LayerType type, Field LayerDesc::*field, Value value) {
  LayerDesc l = layer_of(type);
  l.*field = (Field)value;
  return l;
}

// A layer with a square window (kernel x kernel, the same stride both ways).
LayerDesc windowed(LayerType type, int kernel, int stride) {
  LayerDesc l = layer_of(type);
  l.kernel_h = l.kernel_w = (uint8_t)kernel;
  l.stride_h = l.stride_w = (uint8_t)stride;
  return l;
}

}  // namespace

LayerDesc conv2d_layer(int filters, int kernel, int stride, Padding padding) {
  LayerDesc l = windowed(LayerType::Conv2D, kernel, stride);
  l.units = (uint16_t)filters;
  l.padding = padding;
  return l;
}

LayerDesc depthwise_layer(int kernel, int stride, Padding padding) {
  LayerDesc l = windowed(LayerType::DepthwiseConv2D, kernel, stride);
  l.padding = padding;
  return l;
}

LayerDesc maxpool_layer(int kernel, int stride) {
  return windowed(LayerType::MaxPool2D, kernel, stride == 0 ? kernel : stride);
}
LayerDesc avgpool_layer(int kernel, int stride) {
  return windowed(LayerType::AvgPool2D, kernel, stride == 0 ? kernel : stride);
}

LayerDesc adaptive_avgpool_layer(int out_h, int out_w) {
  LayerDesc l = layer_with(LayerType::AdaptiveAvgPool2D, &LayerDesc::out_h, out_h);
  l.out_w = (uint16_t)out_w;
  return l;
}

LayerDesc global_avgpool_layer() {
  return layer_of(LayerType::GlobalAvgPool);
}

LayerDesc dense_layer(int units) {
  return layer_with(LayerType::Dense, &LayerDesc::units, units);
}

LayerDesc relu_layer() {
  return layer_of(LayerType::ReLU);
}

LayerDesc leaky_relu_layer(float alpha) {
  return layer_with(LayerType::LeakyReLU, &LayerDesc::alpha, alpha);
}

LayerDesc flatten_layer() {
  return layer_of(LayerType::Flatten);
}

LayerDesc clip_layer(float lo, float hi) {
  LayerDesc l = layer_with(LayerType::Clip, &LayerDesc::lo, lo);
  l.hi = hi;
  return l;
}

bool add_layer(ModelDesc* desc, const LayerDesc& layer) {
  if (!desc || desc->num_layers >= kMaxLayers) return false;
  desc->layers[desc->num_layers++] = layer;
  return true;
}

const char* status_text(StatusCode code) {
  switch (code) {
    case StatusCode::Ok: return "ok";
    case StatusCode::InvalidArgument: return "invalid argument";
    case StatusCode::NoLayers: return "the model has no layers";
    case StatusCode::TooManyLayers: return "too many layers";
    case StatusCode::ZeroDimension: return "a size or channel count is zero";
    case StatusCode::KernelTooLarge: return "the window is larger than its input, so the layer has no output";
    case StatusCode::BadStride: return "the stride is zero";
    case StatusCode::Overflow: return "the sizes overflow";
    case StatusCode::UnknownLayer: return "unknown layer type";
    case StatusCode::ChannelMismatch: return "channel counts do not match";
    case StatusCode::ClassCountMismatch: return "the output size differs from the class count";
    case StatusCode::BadParameter: return "a layer parameter is out of range";
    case StatusCode::ArenaTooSmall: return "the buffer is smaller than the model needs";
    case StatusCode::Misaligned: return "a buffer is misaligned";
    case StatusCode::BlobTruncated: return "the blob is truncated";
    case StatusCode::BlobBadMagic: return "not a TinyVision blob (bad magic)";
    case StatusCode::BlobBadVersion: return "unsupported blob format version";
    case StatusCode::BlobBadCrc: return "CRC-32 mismatch: the blob is corrupted";
    case StatusCode::BlobCorrupt: return "the blob's contents are inconsistent";
    case StatusCode::BlobModelMismatch: return "the blob holds a different model than expected";
    case StatusCode::BlobMissingTensor: return "the blob lacks a tensor the model needs";
    case StatusCode::BlobTooSmall: return "the output buffer is too small";
    case StatusCode::RawWeightsSizeMismatch: return "the raw weight file's size fits no class count of this model";
    case StatusCode::NotSupported: return "not supported for this model";
    case StatusCode::NonFiniteWeight: return "a weight is infinite or NaN: the model is broken";
    case StatusCode::NonFiniteActivation:
      return "its output is infinite or NaN although every weight is finite (the weights overflow float): the model "
             "is broken";
    case StatusCode::BlobDuplicateLabel: return "two classes have the same label";
  }
  return "unknown status";
}

namespace {

// Products of sizes are kept below 2^31 elements so every index fits an int.
constexpr uint64_t kMaxElements = 0x7fffffffULL;

bool checked_mul(uint64_t a, uint64_t b, uint64_t* out) {
  if (a != 0 && b > kMaxElements / a) return false;
  *out = a * b;
  return *out <= kMaxElements;
}

// h * w * c in 64 bits (each side below 2^16: no overflow).
uint64_t shape_floats(const Shape& s) {
  return (uint64_t)s.h * (uint64_t)s.w * (uint64_t)s.c;
}

// Refuses a figure over kMaxPlanFloats, keeping its real value for the message.
bool over_limit(ModelPlan* plan, PlanFigure what, uint64_t floats, int layer, Status* st) {
  if (floats <= kMaxPlanFloats) return false;
  plan->overflow_floats = floats;
  *st = status_plan_figure(StatusCode::Overflow, layer, what);
  return true;
}

// Output size and leading pad of a sliding window along one axis.
Status window_axis(int layer, int in, int k, int stride, Padding pad, int* out, int* pad_before) {
  if (k <= 0) return status_plain(StatusCode::ZeroDimension, layer);
  if (stride <= 0) return status_plain(StatusCode::BadStride, layer);
  if (pad == Padding::Same) {
    int o = (in + stride - 1) / stride;
    int total = (o - 1) * stride + k - in;
    if (total < 0) total = 0;
    *out = o;
    *pad_before = total / 2;
    return ok_status();
  }
  if (k > in) return status_over_limit(StatusCode::KernelTooLarge, layer, k, in);
  *out = (in - k) / stride + 1;
  *pad_before = 0;
  return ok_status();
}

// A detector's input: sides that are multiples of the grid's cell, within the sizes detection supports, and
// 2..kMaxDetectChannels output channels.
Status check_detector_input(const ModelDesc& desc) {
  const int sides[2] = {desc.input.height, desc.input.width};
  for (int side : sides) {
    if (side < kDetectMinSide) return status_under_minimum(StatusCode::BadParameter, -1, side, kDetectMinSide);
    if (side > kDetectMaxSide) return status_over_limit(StatusCode::BadParameter, -1, side, kDetectMaxSide);
    if (side % kGridStride != 0)
      return status_not_expected(StatusCode::BadParameter, -1, side, side / kGridStride * kGridStride);
  }
  if (desc.num_classes > kMaxDetectChannels)
    return status_over_limit(StatusCode::ClassCountMismatch, -1, desc.num_classes, kMaxDetectChannels);
  return ok_status();
}

}  // namespace

Status plan_model(const ModelDesc& desc, ModelPlan* plan) {
  if (!plan) return status_plain(StatusCode::InvalidArgument);
  reset_in_place(plan);
  plan->desc = desc;
  plan->first_param_layer = -1;
  if (desc.num_layers == 0) return status_plain(StatusCode::NoLayers);
  if (desc.num_layers > kMaxLayers)
    return status_over_limit(StatusCode::TooManyLayers, -1, desc.num_layers, kMaxLayers);
  if (desc.input.height == 0 || desc.input.width == 0 || desc.input.channels == 0)
    return status_plain(StatusCode::ZeroDimension, -1);
  if (desc.input.channels != 1 && desc.input.channels != 3)
    return status_value(StatusCode::BadParameter, -1, desc.input.channels);
  if ((desc.input.channels == 1) != (desc.input.order == ChannelOrder::GRAY))
    return status_not_expected(StatusCode::ChannelMismatch, -1, desc.input.channels,
                               desc.input.order == ChannelOrder::GRAY ? 1 : 3);
  if (desc.num_classes < 2) return status_under_minimum(StatusCode::ClassCountMismatch, -1, desc.num_classes, 2);
  if (desc.task == Task::Detect) {
    const Status st = check_detector_input(desc);
    if (!st.ok()) return st;
  } else if (desc.task != Task::Classify) {
    return status_value(StatusCode::NotSupported, -1, (int32_t)desc.task);
  }
  Status st = plan_layers(Shape{desc.input.height, desc.input.width, desc.input.channels}, plan);
  if (st.ok() && desc.task == Task::Detect) {
    const Shape& out = plan->layers[desc.num_layers - 1].out;
    if (out.h * kGridStride != desc.input.height)
      st = status_not_expected(StatusCode::ClassCountMismatch, desc.num_layers - 1, out.h,
                               desc.input.height / kGridStride);
    else if (out.w * kGridStride != desc.input.width)
      st = status_not_expected(StatusCode::ClassCountMismatch, desc.num_layers - 1, out.w,
                               desc.input.width / kGridStride);
  }
  return st;
}

Status plan_layers(const Shape& input, ModelPlan* plan) {
  const ModelDesc& desc = plan->desc;
  Shape cur = input;
  plan->input = cur;
  uint64_t cur_size = shape_floats(cur);
  Status too_large;
  // Every sum and count in 64 bits, each checked against kMaxPlanFloats (a 32-bit board's byte
  // figures then fit its size_t); a refusal keeps the real figure in plan->overflow_floats.
  if (over_limit(plan, PlanFigure::Tensor, cur_size, -1, &too_large)) return too_large;
  uint64_t params = 0, max_act = cur_size, infer = 0, acts = cur_size, grad = 0, flops = 0;
  plan->num_layers = desc.num_layers;

  for (int i = 0; i < desc.num_layers; ++i) {
    const LayerDesc& d = desc.layers[i];
    LayerPlan& lp = plan->layers[i];
    lp.in = cur;
    LayerType checked;
    if (!layer_type_from_byte((uint8_t)d.type, &checked)) return status_value(StatusCode::UnknownLayer, i, (int)d.type);
    // The type's own checks.
    const Status checked_params = layer_unit(d.type).plan.check(d, i);
    if (!checked_params.ok()) return checked_params;
    // The output shape, by the row's rule.
    Shape out = cur;
    switch (layer_info(d.type).shape) {
      case ShapeRule::SlidingWindow: {
        int pt = 0, pl = 0;
        Status st = window_axis(i, cur.h, d.kernel_h, d.stride_h, d.padding, &out.h, &pt);
        if (!st.ok()) return st;
        st = window_axis(i, cur.w, d.kernel_w, d.stride_w, d.padding, &out.w, &pl);
        if (!st.ok()) return st;
        out.c = d.type == LayerType::Conv2D ? d.units : cur.c;
        lp.geom =
            Geom2D{cur.h, cur.w, cur.c, out.h, out.w, out.c, d.kernel_h, d.kernel_w, d.stride_h, d.stride_w, pt, pl};
        break;
      }
      case ShapeRule::AdaptiveBins:
        if (d.out_h == 0 || d.out_w == 0) return status_plain(StatusCode::ZeroDimension, i);
        if (d.out_h > cur.h) return status_over_limit(StatusCode::KernelTooLarge, i, d.out_h, cur.h);
        if (d.out_w > cur.w) return status_over_limit(StatusCode::KernelTooLarge, i, d.out_w, cur.w);
        out = Shape{d.out_h, d.out_w, cur.c};
        break;
      case ShapeRule::GlobalPool: out = Shape{1, 1, cur.c}; break;
      case ShapeRule::FullyConnected: out = Shape{1, 1, d.units ? d.units : desc.num_classes}; break;
      case ShapeRule::Unchanged: break;
      case ShapeRule::Flatten: out = Shape{1, 1, (int)cur_size}; break;
    }
    // Parameters: the weight tensor's dimensions, a bias per output channel.
    uint64_t wcount = 0, bcount = 0;
    uint32_t dims[4];
    const int ndim = weight_dims(d, cur, out, dims);
    if (ndim > 0) {
      wcount = 1;
      for (int k = 0; k < ndim; ++k) {  // each dimension below 2^31: the product is checked at every step
        if (!checked_mul(wcount, dims[k], &wcount)) {
          plan->overflow_floats = 0;  // more than 2^31; not kept
          return status_plan_figure(StatusCode::Overflow, i, PlanFigure::Weights);
        }
      }
      bcount = (uint64_t)out.c;
    }
    if (out.h <= 0 || out.w <= 0 || out.c <= 0) return status_plain(StatusCode::ZeroDimension, i);
    const uint64_t out_size = shape_floats(out);
    if (over_limit(plan, PlanFigure::Tensor, out_size, i, &too_large)) return too_large;
    lp.out = out;
    lp.weight_count = (size_t)wcount;
    lp.bias_count = (size_t)bcount;
    lp.param_offset = (size_t)params;
    params += wcount + bcount;
    if (over_limit(plan, PlanFigure::Weights, params, i, &too_large)) return too_large;
    // Multiply-adds: every weight once per output position (out.h * out.w and wcount below 2^31: no overflow).
    flops += 2 * (uint64_t)out.h * (uint64_t)out.w * wcount;
    if (layer_has_params(d.type) && plan->first_param_layer < 0) plan->first_param_layer = i;
    if (out_size > max_act) max_act = out_size;
    if (layer_in_place(d.type)) {
      // Shares the buffer of the layer that produced its input.
      lp.act_offset = i == 0 ? 0 : plan->layers[i - 1].act_offset;
    } else {
      if (cur_size + out_size > infer) infer = cur_size + out_size;
      if (over_limit(plan, PlanFigure::InferenceWork, infer, i, &too_large)) return too_large;
      lp.act_offset = (size_t)acts;
      acts += out_size;
      if (over_limit(plan, PlanFigure::TrainingActivations, acts, i, &too_large)) return too_large;
    }
    cur = out;
    cur_size = out_size;
  }
  if (plan->first_param_layer < 0) return status_plain(StatusCode::NotSupported, -1);
  const uint64_t per_answer = desc.task == Task::Detect ? (uint64_t)cur.c : cur_size;  // a detector: per cell
  if (per_answer != desc.num_classes)
    return status_not_expected(StatusCode::ClassCountMismatch, desc.num_layers - 1, (int32_t)per_answer,
                               desc.num_classes);
  if (infer == 0) infer = cur_size * 2;
  // Backward scratch: two ends of one buffer hold dL/d(output) and dL/d(input) of the layer being
  // differentiated; the first layer with parameters never computes its input gradient.
  for (int i = plan->first_param_layer; i < desc.num_layers; ++i) {
    const LayerPlan& lp = plan->layers[i];
    uint64_t need = shape_floats(lp.out);
    if (i > plan->first_param_layer && !layer_in_place(desc.layers[i].type)) need += shape_floats(lp.in);
    if (need > grad) grad = need;
  }
  if (over_limit(plan, PlanFigure::BackwardScratch, grad, -1, &too_large)) return too_large;
  plan->param_count = (size_t)params;
  plan->max_activation = (size_t)max_act;
  plan->infer_floats = (size_t)infer;
  plan->train_act_floats = (size_t)acts;
  plan->train_grad_floats = (size_t)grad;
  plan->flops_forward = flops;
  return ok_status();
}

int weight_dims(const LayerDesc& d, const Shape& in, const Shape& out, uint32_t dims[4]) {
  return layer_unit(d.type).plan.weight_dims(d, in, out, dims);
}

namespace {

// Appends text to a bounded buffer, always NUL-terminated.
struct TextBuf {
  char* buf;
  int cap, len;
  void str(const char* s) {
    while (*s && len + 1 < cap) buf[len++] = *s++;
    buf[len] = 0;
  }
  void num(int64_t v) {
    char t[24];
    format_int(v, t);
    str(t);
  }
  void g9(float v) {
    char t[kFloatTextMax];
    if (format_float_g9(v, t))
      str(t);
    else
      str(v != v ? "nan" : (v < 0 ? "-inf" : "inf"));
  }
  void window(const LayerDesc& d) {
    num(d.kernel_h);
    str("x");
    num(d.kernel_w);
    str(" stride ");
    num(d.stride_h);
    if (d.stride_w != d.stride_h) {
      str("x");
      num(d.stride_w);
    }
  }
};

}  // namespace

int layer_detail_text(const LayerDesc& d, const Shape& out, char* buf, int n) {
  if (!buf || n <= 0) return 0;
  TextBuf t{buf, n, 0};
  buf[0] = 0;
  switch (layer_info(d.type).detail) {
    case DetailText::None: break;
    case DetailText::FiltersWindowPadding:
      t.num(out.c);
      t.str(" filters ");
      t.window(d);
      t.str(d.padding == Padding::Same ? " same" : " valid");
      break;
    case DetailText::WindowPadding:
      t.window(d);
      t.str(d.padding == Padding::Same ? " same" : " valid");
      break;
    case DetailText::Window: t.window(d); break;
    case DetailText::Units:
      t.num(out.c);
      t.str(" units");
      break;
    case DetailText::Alpha:
      t.str("alpha ");
      t.g9(d.alpha);
      break;
    case DetailText::Range:
      t.str("[");
      t.g9(d.lo);
      t.str(", ");
      t.g9(d.hi);
      t.str("]");
      break;
  }
  return t.len;
}

const char* plan_figure_name(int32_t what) {
  switch ((PlanFigure)what) {
    case PlanFigure::Tensor: return "a tensor";
    case PlanFigure::Weights: return "the weights";
    case PlanFigure::InferenceWork: return "the inference work buffer";
    case PlanFigure::TrainingActivations: return "the training activations";
    case PlanFigure::BackwardScratch: return "the backward scratch";
  }
  return "a size";
}

namespace {

// The words around a status's numbers, per StatusFigures: " (" before_a a before_b b after ")"; no b
// when before_b is null.
struct FiguresWords {
  const char* before_a;
  const char* before_b;
  const char* after;
};

FiguresWords figures_words(StatusFigures f) {
  switch (f) {
    case StatusFigures::FoundLimit: return {"", ", at most ", ""};
    case StatusFigures::FoundMinimum: return {"", ", at least ", ""};
    case StatusFigures::FoundExpected: return {"", " where ", " is required"};
    case StatusFigures::HaveNeed: return {"", " where ", " are needed"};
    case StatusFigures::TensorElement: return {"tensor ", ", element ", ""};
    case StatusFigures::Element: return {"element ", nullptr, ""};
    case StatusFigures::ClassPair: return {"classes ", " and ", ""};
    case StatusFigures::Value: return {"", nullptr, ""};
    case StatusFigures::ChannelValue: return {"channel ", ": ", ""};
    case StatusFigures::None:
    case StatusFigures::PlanFigure: break;  // no number / a name: put_figures
  }
  return {"", nullptr, ""};
}

void put_figures(const Status& st, TextBuf* t) {
  if (st.figures == StatusFigures::None) return;
  t->str(" (");
  if (st.figures == StatusFigures::PlanFigure) {
    t->str(plan_figure_name(st.a));
  } else if (st.figures == StatusFigures::TensorElement && st.a < 0) {  // the input scale/offset, a raw file
    t->str("element ");
    t->num(st.b);
  } else {
    const FiguresWords w = figures_words(st.figures);
    t->str(w.before_a);
    t->num(st.a);
    if (w.before_b) {
      t->str(w.before_b);
      t->num(st.b);
    }
    t->str(w.after);
  }
  t->str(")");
}

}  // namespace

int status_figures_text(const Status& st, char* buf, int n) {
  if (!buf || n <= 0) return 0;
  TextBuf t{buf, n, 0};
  buf[0] = 0;
  put_figures(st, &t);
  return t.len;
}

int status_message_text(const Status& st, const ModelDesc* desc, char* buf, int n) {
  if (!buf || n <= 0) return 0;
  TextBuf t{buf, n, 0};
  buf[0] = 0;
  if (st.layer >= 0) {
    t.str("layer ");
    t.num(st.layer);
    if (desc && st.layer < desc->num_layers) {
      t.str(" (");
      t.str(layer_type_name(desc->layers[st.layer].type));
      t.str(")");
    }
    t.str(": ");
  }
  t.str(status_text(st.code));
  put_figures(st, &t);
  return t.len;
}

bool same_model(const ModelDesc& a, const ModelDesc& b) {
  if (a.num_classes != b.num_classes || a.num_layers != b.num_layers || a.task != b.task) return false;
  if (a.input.height != b.input.height || a.input.width != b.input.width || a.input.channels != b.input.channels ||
      a.input.order != b.input.order || a.input.scale != b.input.scale || a.input.offset != b.input.offset)
    return false;
  for (int i = 0; i < a.num_layers; ++i) {
    const LayerDesc& x = a.layers[i];
    const LayerDesc& y = b.layers[i];
    if (x.type != y.type || x.padding != y.padding || x.kernel_h != y.kernel_h || x.kernel_w != y.kernel_w ||
        x.stride_h != y.stride_h || x.stride_w != y.stride_w || x.out_h != y.out_h || x.out_w != y.out_w ||
        x.alpha != y.alpha || x.lo != y.lo || x.hi != y.hi)
      return false;
    int ux = x.type == LayerType::Dense && x.units == 0 ? a.num_classes : x.units;
    int uy = y.type == LayerType::Dense && y.units == 0 ? b.num_classes : y.units;
    if (ux != uy) return false;
  }
  return true;
}

}  // namespace tv
