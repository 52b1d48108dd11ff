// libFuzzer target: tvtrain's JSON config (host/train/config.cpp) on arbitrary bytes, then what tvtrain does
// with an accepted config: plan the model and size its inference and training memory. Every refusal
// must be a tvh::Error (one sentence naming the file); any other exception, a crash or a sanitizer
// report is a finding.
#include <stddef.h>
#include <stdint.h>

#include <string>

#include "host/base/error.h"
#include "host/train/config.h"
#include "tv/train/net.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const char* const kPresets[] = {"webmcu", "tinyvision"};
  tvh::TrainSetup setup = tvh::preset_setup(kPresets[size % 2]);
  try {
    tvh::apply_config_text(std::string(reinterpret_cast<const char*>(data), size), "fuzz.json", &setup);
  } catch (const tvh::Error&) {
    return 0;
  }
  setup.model.num_classes = 3;
  static tv::ModelPlan plan;
  if (!tv::plan_model(setup.model, &plan).ok()) return 0;
  const tv::InferenceMemory im = tv::inference_memory(plan);
  if (im.total_bytes < im.work_bytes) __builtin_trap();  // the sum overflowed
  tv::TrainOptions o;
  o.lanes = setup.recipe.opt.lanes;
  const tv::TrainMemory tm = tv::training_memory(plan, o);
  if (tm.total_bytes < tm.params_bytes) __builtin_trap();
  return 0;
}
