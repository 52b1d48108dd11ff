// libFuzzer target: forged models that pass the CRC check, run the way the tools run a model. The
// header's CRC is recomputed over the mutated bytes (as fuzz_blob does), so every mutation reaches the
// loader; a model that loads (host/model_io: decoded, planned, bound once) and is small is then:
//  - float: calibrated on synthetic images at its input size (minmax, percentile and mse observers, the
//    histograms included), quantized (tvquant's quantize_model with its fidelity search), and the int8
//    model it makes decoded again and classified;
//  - int8: classified.
// Anything it finds must be a tvh::Error (a refusal with a sentence), never a crash, a NaN prediction
// or a sanitizer report. Non-finite activations (finite weights that overflow float) are refused by the
// core's infer_u8 and calibrate's check: a forged scale reaches them.
#include <stddef.h>
#include <stdint.h>

#include <cmath>
#include <exception>
#include <string>
#include <vector>

#include "host/model/model_io.h"
#include "host/quant/quantize.h"
#include "tv/crc32.h"
#include "tv/little_endian.h"
#include "tv/model/blob.h"

namespace {

// Synthetic images at the model's input size, two per class, labels in class order.
tvh::Dataset synthetic_images(const tv::ModelPlan& plan) {
  tvh::Dataset ds;
  ds.height = plan.input.h;
  ds.width = plan.input.w;
  ds.channels = plan.input.c;
  ds.order = plan.desc.input.order;
  const int k = plan.desc.num_classes;
  for (int i = 0; i < 2 * k; ++i) {
    ds.labels.push_back(i % k);
    ds.paths.push_back("synthetic " + std::to_string(i));
    for (size_t p = 0; p < plan.input.size(); ++p) ds.pixels.push_back((uint8_t)((i * 53 + p * 29 + (p >> 5)) & 255));
  }
  for (int c = 0; c < k; ++c) ds.classes.push_back("c" + std::to_string(c));
  return ds;
}

// Classifies every image; a probability that is not a number is a bug (the core refuses such runs).
void classify_all(const tvh::LoadedModel& m, const tvh::Dataset& ds) {
  tvh::ModelRunner classifier(m);
  const int k = m.plan->desc.num_classes;
  std::vector<float> probs((size_t)k);
  for (size_t i = 0; i < ds.size(); ++i) {
    const int best = classifier.classify(ds.image(i), probs.data());
    if (best < 0 || best >= k) __builtin_trap();
    for (float p : probs)
      if (!(p >= 0.f && p <= 1.f)) __builtin_trap();
  }
}

void run(const std::vector<uint8_t>& bytes) {
  tvh::LoadedModel m;
  try {
    m = tvh::decode_model(bytes, "fuzz.tvb");
  } catch (const std::exception&) {
    return;
  }
  const tv::ModelPlan& plan = *m.plan;
  // Small models only, so that each run stays fast.
  if (plan.input.size() > 48 * 48 * 3 || plan.flops_forward > (uint64_t(1) << 23) || plan.param_count > (1u << 18) ||
      plan.desc.num_classes > 16)
    return;
  const tvh::Dataset ds = synthetic_images(plan);
  try {
    if (m.int8) {
      classify_all(m, ds);
      return;
    }
    classify_all(m, ds);
    std::vector<int> idx(ds.size());
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = (int)i;
    for (tvh::Observer observer : {tvh::Observer::MinMax, tvh::Observer::Percentile, tvh::Observer::Mse}) {
      tvh::QuantOptions o;
      o.observer = observer;
      const tvh::CalibrationStats stats = tvh::calibrate(plan, m.params.data(), ds, idx, o);
      for (double r : stats.range)
        if (!std::isfinite(r)) __builtin_trap();  // a range from an Inf or NaN activation
      if (observer != tvh::Observer::Mse) continue;
      const tvh::QuantResult q =
          tvh::quantize_model(plan, m.params.data(), stats, m.labels, "tool=fuzz\n", o, &ds, &idx);
      const tvh::LoadedModel q8 = tvh::decode_model(q.blob, "fuzz.q8.tvb");
      classify_all(q8, ds);
    }
  } catch (const std::exception&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < tv::kBlobHeaderBytes) return 0;
  std::vector<uint8_t> buf(data, data + size);
  const uint32_t total = tv::read_le32(buf.data() + 8);
  if (total < 16 || total > size) return 0;
  const uint32_t crc = tv::crc32(0, buf.data() + 16, total - 16);
  for (int i = 0; i < 4; ++i) buf[12 + i] = (uint8_t)(crc >> (8 * i));
  run(buf);
  return 0;
}
