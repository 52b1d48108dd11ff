// libFuzzer target: the .tvb decoder (and the float loader behind it) on arbitrary bytes.
// Everything it finds must be a status, never a crash or an out-of-bounds read (run with ASan).
#include <stddef.h>
#include <stdint.h>

#include <cstring>
#include <vector>

#include "tv/blob.h"
#include "tv/model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Copy into an exactly-sized heap buffer so ASan sees any read past the end.
  std::vector<uint8_t> buf(data, data + size);
  static tv::BlobView view;
  tv::Status st = tv::blob_decode(buf.data(), buf.size(), &view);
  if (!st.ok()) return 0;
  for (int i = 0; i < view.num_labels; ++i) {
    const char* t;
    size_t n;
    if (tv::blob_label(view, i, &t, &n) && n) {
      volatile char c = t[n - 1];
      (void)c;
    }
  }
  static tv::ModelPlan plan;
  if (!tv::plan_model(view.model, &plan).ok()) return 0;
  if (plan.param_count > (1u << 22)) return 0;
  std::vector<float> params(plan.param_count);
  tv::blob_load_float_params(view, plan, params.data());
  return 0;
}
