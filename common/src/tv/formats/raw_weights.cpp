#include "tv/formats/raw_weights.h"

#include <string.h>

#include "tv/c_text.h"
#include "tv/little_endian.h"
#include "tv/model/blob.h"
#include "tv/train/presets.h"

namespace tv {

namespace {

constexpr int kConv1 = 0, kConv2 = 4, kDense = 8;  // layer indices in the webmcu preset
constexpr int kFeatures = 29 * 29 * 8;
// The raw file's blocks before the dense layer, in file order (floats): conv1 w, b, conv2 w, b.
constexpr size_t kConv1Weights = 108, kConv1Biases = 4, kConv2Weights = 288, kConv2Biases = 8;
constexpr size_t kConvFloats = kConv1Weights + kConv1Biases + kConv2Weights + kConv2Biases;

// Index in the raw file (in floats) of parameter `k` of our layout, for each block in file order.
// The raw file's blocks are our blocks in the same order; only the indices inside them move.
size_t raw_index_in_block(int layer, size_t k, int num_classes) {
  (void)num_classes;
  if (layer == kConv2) {
    // ours [o][ky][kx][c] (o*36 + (ky*3+kx)*4 + c)  ->  raw [f][c][ky][kx] (f*36 + c*9 + ky*3 + kx)
    size_t o = k / 36, r = k % 36, kyx = r / 4, c = r % 4;
    return o * 36 + c * 9 + kyx;
  }
  if (layer == kDense) {
    // ours [k][(y*29+x)*8 + f]  ->  raw [k][f*841 + y*29 + x]
    size_t row = k / kFeatures, col = k % kFeatures, yx = col / 8, f = col % 8;
    return row * kFeatures + f * 841 + yx;
  }
  return k;  // conv1 is [f][ky][kx][c] in both; biases are plain vectors
}

}  // namespace

size_t raw_weights_size(int num_classes) {
  return (kConvFloats + (size_t)(kFeatures + 1) * num_classes) * 4;
}

int raw_weights_classes_for_size(size_t bytes) {
  if (bytes % 4) return 0;
  size_t floats = bytes / 4;
  if (floats < kConvFloats + 2 * (kFeatures + 1)) return 0;
  size_t rest = floats - kConvFloats;
  if (rest % (kFeatures + 1)) return 0;
  size_t k = rest / (kFeatures + 1);
  return k > 0xFFFF ? 0 : (int)k;
}

bool raw_weights_compatible(const ModelPlan& plan) {
  ModelDesc ref;
  webmcu_model(plan.desc.num_classes, &ref);
  return same_model(ref, plan.desc);
}

Status raw_weights_import(const uint8_t* data, size_t size, const ModelPlan& plan, float* params) {
  if (!data || !params) return status_plain(StatusCode::InvalidArgument);
  if (!raw_weights_compatible(plan)) return status_plain(StatusCode::NotSupported);
  const int k = plan.desc.num_classes;
  if (size != raw_weights_size(k))
    return status_not_expected(StatusCode::RawWeightsSizeMismatch, -1, (int32_t)size, (int32_t)raw_weights_size(k));
  const int layers[3] = {kConv1, kConv2, kDense};
  // Refuse an infinite or NaN value before anything is written (layer = whose tensor, b = the float's
  // index in the file).
  const size_t bad = first_non_finite_f32(data, size / 4);
  if (bad != size / 4) {
    size_t end = 0;
    for (int li : layers) {
      end += plan.layers[li].weight_count + plan.layers[li].bias_count;
      if (bad < end) return status_at_tensor_element(StatusCode::NonFiniteWeight, li, -1, (int32_t)bad);
    }
  }
  size_t file_pos = 0;  // in floats
  for (int li : layers) {
    const LayerPlan& lp = plan.layers[li];
    float* w = params + lp.param_offset;
    for (size_t i = 0; i < lp.weight_count; ++i)
      w[i] = read_le_f32(data + 4 * (file_pos + raw_index_in_block(li, i, k)));
    file_pos += lp.weight_count;
    float* b = w + lp.weight_count;
    for (size_t i = 0; i < lp.bias_count; ++i) b[i] = read_le_f32(data + 4 * (file_pos + i));
    file_pos += lp.bias_count;
  }
  return ok_status();
}

Status raw_weights_export(const ModelPlan& plan, const float* params, uint8_t* out, size_t cap) {
  if (!out || !params) return status_plain(StatusCode::InvalidArgument);
  if (!raw_weights_compatible(plan)) return status_plain(StatusCode::NotSupported);
  const int k = plan.desc.num_classes;
  if (cap < raw_weights_size(k))
    return status_too_small(StatusCode::BlobTooSmall, -1, (int32_t)cap, (int32_t)raw_weights_size(k));
  size_t file_pos = 0;
  const int layers[3] = {kConv1, kConv2, kDense};
  for (int li : layers) {
    const LayerPlan& lp = plan.layers[li];
    const float* w = params + lp.param_offset;
    for (size_t i = 0; i < lp.weight_count; ++i)
      write_le_f32(out + 4 * (file_pos + raw_index_in_block(li, i, k)), w[i]);
    file_pos += lp.weight_count;
    const float* b = w + lp.weight_count;
    for (size_t i = 0; i < lp.bias_count; ++i) write_le_f32(out + 4 * (file_pos + i), b[i]);
    file_pos += lp.bias_count;
  }
  return ok_status();
}

Status write_webmcu_header_raw(const uint8_t* raw, size_t size, const char* const* labels, int num_labels,
                               const TextSink& sink) {
  if (!raw || !sink.write || (num_labels > 0 && !labels)) return status_plain(StatusCode::InvalidArgument);
  const int classes = raw_weights_classes_for_size(size);
  if (classes == 0) return status_value(StatusCode::RawWeightsSizeMismatch, -1, (int32_t)size);
  if (num_labels != classes) return status_not_expected(StatusCode::ClassCountMismatch, -1, num_labels, classes);
  for (int i = 0; i < num_labels; ++i)
    if (!labels[i]) return status_plain(StatusCode::InvalidArgument);
  const size_t floats = size / 4;
  for (size_t k = 0; k < floats; ++k)
    if (!is_finite_float(read_le_f32(raw + 4 * k)))
      return status_at_tensor_element(StatusCode::BadParameter, -1, -1, (int32_t)k);

  CTextOut o(sink);
  // The reference firmware's exact text, line ends included (two of its lines end in LF only).
  o.str("#ifndef MY_MODEL_H\n#define MY_MODEL_H\r\n");
  o.str("// ======================================================\r\n");
  o.str("// IMPORTANT: After copying this file to your sketch folder,\r\n");
  o.str("// update BOTH of the following lines in your main sketch\r\n");
  o.str("// to match the number of classes and labels used during training:\r\n");
  o.str("//\r\n");
  o.str("//   #define NUM_CLASSES ");
  o.num(classes);
  o.str("\n//   String myClassLabels[NUM_CLASSES] = {");
  for (int i = 0; i < num_labels; ++i) {
    o.str(i ? ", \"" : "\"");
    o.c_string_text(labels[i], strlen(labels[i]));
    o.ch('"');
  }
  o.str("};\r\n");
  o.str("//\r\n");
  o.str("// Then uncomment:  #define USE_BAKED_WEIGHTS\r\n");
  o.str("// ======================================================\r\n");
  struct Block {
    const char* name;
    size_t count;
  };
  const Block blocks[6] = {{"conv1_w", kConv1Weights},
                           {"conv1_b", kConv1Biases},
                           {"conv2_w", kConv2Weights},
                           {"conv2_b", kConv2Biases},
                           {"output_w", (size_t)kFeatures * (size_t)classes},
                           {"output_b", (size_t)classes}};
  size_t pos = 0;
  for (const Block& b : blocks) {
    o.str("const float myModel_");
    o.str(b.name);
    o.str("[] = { ");
    for (size_t i = 0; i < b.count; ++i) {
      char t[kFloatTextMax];
      o.put(t, format_float_fixed6(read_le_f32(raw + 4 * (pos + i)), t));
      o.ch('f');
      if (i + 1 < b.count) o.str(", ");
      if ((i + 1) % 8 == 0) o.str("\r\n");
    }
    o.str(" };\r\n");
    pos += b.count;
  }
  o.str("#endif\r\n");
  return ok_status();
}

}  // namespace tv
