// A forged but well-formed model (issue 20): a 256x256x1 input, a 1x1 convolution with 32,767 filters,
// a global average pool and a dense layer. Each tensor holds fewer than 2^31 floats and the weights are
// few, but the inference work buffer (input + convolution output) is 2^31 floats: 8 GiB, which a 32-bit
// size_t wraps to 0. Used by the core's, the 32-bit firmware's and tvsim's tests.
#pragma once
#include <stdint.h>

#include <vector>

#include "tv/model/blob.h"
#include "tv/model/model.h"
#include "tv/train/presets.h"

namespace tvtest {

constexpr uint64_t kForgedConvFloats = 256ull * 256ull * 32767ull;           // 2,147,418,112
constexpr uint64_t kForgedWorkFloats = 256ull * 256ull + kForgedConvFloats;  // 2^31

inline tv::ModelDesc forged_model(int side = 256) {
  tv::ModelDesc d;
  tv::set_input(&d, side, side, 1);
  d.num_classes = 2;
  tv::add_layer(&d, tv::conv2d_layer(32767, 1));
  tv::add_layer(&d, tv::global_avgpool_layer());
  tv::add_layer(&d, tv::dense_layer());
  return d;
}

// The model as a .tvb with a valid CRC (zero weights; labels a and b). Its tensors do not depend on the
// input size, so they are laid out by the plan of a 2x2 input.
inline std::vector<uint8_t> forged_blob() {
  static tv::ModelPlan small;  // large: off the stack
  const tv::ModelDesc small_desc = forged_model(2);
  if (!tv::plan_model(small_desc, &small).ok()) return {};
  const std::vector<float> params(small.param_count, 0.f);
  std::vector<tv::BlobTensor> tensors(tv::kMaxBlobTensors);
  const tv::ModelDesc desc = forged_model();
  const char* const labels[] = {"a", "b"};
  tv::BlobContents c;
  c.model = &desc;
  c.labels = labels;
  c.num_labels = 2;
  c.provenance = "tool=forged\n";
  c.tensors = tensors.data();
  c.num_tensors = tv::float_tensors(small, params.data(), tensors.data());
  std::vector<uint8_t> blob(tv::blob_encoded_size(c));
  size_t size = 0;
  if (!tv::blob_encode(c, blob.data(), blob.size(), &size).ok()) return {};
  blob.resize(size);
  return blob;
}

}  // namespace tvtest
