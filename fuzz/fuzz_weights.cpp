// libFuzzer target: the reference firmware's raw myWeights.bin as tvtrain --init / --eval, tvquant and
// tvexport read it (tvh::decode_model_file: a .tvb by its magic, otherwise raw float32 weights whose
// size gives the class count), then one inference on a grey image as --eval runs it. Each input is read
// twice: as given (the size checks), and resized to the exact size of a webmcu model with 2..17 classes
// chosen by its first byte, so that mutations of the float values (NaN, Inf, huge, denormal) reach the
// importer and the inference. Refusals must be tvh::Error; crashes and sanitizer reports are findings.
#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

#include "host/base/error.h"
#include "host/model/model_io.h"
#include "tv/formats/raw_weights.h"
#include "tv/train/net.h"

namespace {

void exercise(std::vector<uint8_t> bytes) {
  tvh::LoadedModel m;
  try {
    m = tvh::decode_model_file(std::move(bytes), "myWeights.bin");
  } catch (const tvh::Error&) {
    return;
  }
  if (m.int8 || m.params.size() != m.plan->param_count) {
    if (!m.int8) __builtin_trap();
    return;
  }
  const tv::ModelPlan& plan = *m.plan;
  if (plan.flops_forward > (uint64_t(1) << 26)) return;  // keep each run fast
  tvh::AlignedBuffer arena(tv::inference_memory(plan).work_bytes);
  tv::Inference inf;
  if (!tv::inference_init(&inf, &plan, m.params.data(), arena.data(), arena.size()).ok()) __builtin_trap();
  const tv::InputDesc& in = plan.desc.input;
  std::vector<uint8_t> image((size_t)in.height * in.width * in.channels, 128);
  std::vector<float> probs((size_t)plan.desc.num_classes);
  tv::infer_u8(inf, image.data(), probs.data());
  volatile int best = tv::argmax(probs.data(), plan.desc.num_classes);
  (void)best;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  exercise(std::vector<uint8_t>(data, data + size));
  if (size == 0) return 0;
  const int classes = 2 + data[0] % 16;
  std::vector<uint8_t> sized(tv::raw_weights_size(classes), 0);
  for (size_t i = 0; i < sized.size() && i + 1 < size; ++i) sized[i] = data[i + 1];
  exercise(std::move(sized));
  return 0;
}
