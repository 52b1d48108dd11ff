// libFuzzer target: the update modes and imprinting (tv/train/update.h, tv/train/imprint.h) on arbitrary input.
// The bytes are an --update text (parse_update: a spec it accepts formats back to itself) and, decoded
// as a .tvb, a model: every suffix plan must map its parameters onto the model's tail, every mode's
// FLOPs and memory must be computable, and a class appended by imprinting (features taken from the
// bytes) must keep the old rows. Everything must be a status, never a crash (run with ASan and UBSan).
#include <stddef.h>
#include <stdint.h>

#include <cstring>
#include <string>
#include <vector>

#include "tv/crc32.h"
#include "tv/little_endian.h"
#include "tv/model/blob.h"
#include "tv/model/model.h"
#include "tv/train/imprint.h"
#include "tv/train/update.h"

namespace {

void check_text(const uint8_t* data, size_t size) {
  const std::string text((const char*)data, size < 64 ? size : 64);
  tv::UpdateSpec spec;
  if (!tv::parse_update(text.c_str(), &spec)) return;
  char buf[32];
  tv::format_update(spec, buf, sizeof buf);
  tv::UpdateSpec again;
  if (!tv::parse_update(buf, &again) || again.mode != spec.mode) __builtin_trap();
}

void check_model(const std::vector<uint8_t>& buf, const uint8_t* data, size_t size) {
  static tv::BlobView view;
  if (!tv::blob_decode(buf.data(), buf.size(), &view).ok()) return;
  static tv::ModelPlan plan, suffix, grown;
  if (!tv::plan_model(view.model, &plan).ok()) return;
  for (int first = 0; first < plan.num_layers; ++first) {
    if (!tv::plan_suffix(plan, first, &suffix).ok()) continue;
    const size_t base = plan.layers[first].param_offset;
    if (suffix.param_count + base != plan.param_count) __builtin_trap();
  }
  tv::UpdateRun run;
  run.train_images = 1000, run.val_images = 100, run.epochs = 1000, run.augment = size & 1;
  for (int k = 0; k <= tv::kMaxLayers; ++k) {
    tv::UpdateSpec spec;
    spec.mode = k == 0 ? tv::UpdateMode::Full : tv::UpdateMode::Sparse;
    spec.k = k;
    int first = -1;
    if (!tv::update_first_layer(plan, spec, &first).ok()) continue;
    (void)tv::update_run_flops(plan, first, run);
    (void)tv::update_memory(plan, first, tv::TrainOptions(), run);
  }
  // Imprinting, on small models: one class more, its features from the bytes.
  if (plan.param_count > (1u << 20) || plan.desc.num_classes >= 64) return;
  if (!tv::plan_with_classes(plan, plan.desc.num_classes + 1, &grown).ok()) return;
  std::vector<float> old_params(plan.param_count, 0.25f), params(grown.param_count);
  tv::grow_class_params(plan, old_params.data(), grown, params.data());
  const int layer = tv::imprint_layer(grown);
  const size_t F = tv::prefix_feature_floats(grown, layer);
  if (F > 4096) return;
  const int n = 6;
  std::vector<float> features((size_t)n * F);
  for (size_t i = 0; i < features.size(); ++i) {
    float v;
    std::memcpy(&v, data + (i * 4) % (size > 4 ? size - 4 : 1), size >= 4 ? 4 : 0);
    features[i] = size >= 4 ? v : 1.f;
  }
  std::vector<int> labels(n);
  for (int i = 0; i < n; ++i) labels[i] = i % 2 ? plan.desc.num_classes : i % plan.desc.num_classes;
  std::vector<float> scratch(2 * n);
  (void)tv::imprint_classes(grown, params.data(), plan.desc.num_classes, features.data(), labels.data(), n,
                            scratch.data());
  const tv::LayerPlan& o = plan.layers[layer];
  if (std::memcmp(params.data() + grown.layers[layer].param_offset, old_params.data() + o.param_offset,
                  o.weight_count * sizeof(float)) != 0)
    __builtin_trap();  // the old rows stay as they were
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  check_text(data, size);
  std::vector<uint8_t> buf(data, data + size);
  // With a CRC that matches the mutated bytes (as fuzz_blob), so that mutations reach the model.
  if (size >= tv::kBlobHeaderBytes) {
    const uint32_t total = tv::read_le32(buf.data() + 8);
    if (total >= 16 && total <= size) {
      const uint32_t crc = tv::crc32(0, buf.data() + 16, total - 16);
      for (int i = 0; i < 4; ++i) buf[12 + i] = (uint8_t)(crc >> (8 * i));
    }
  }
  check_model(buf, data, size);
  return 0;
}
