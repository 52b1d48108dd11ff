// libFuzzer target: the .tvb decoder (and the float and int8 readers behind it) on arbitrary bytes.
// Everything it finds must be a status, never a crash or an out-of-bounds read (run with ASan).
//
// Each input is decoded twice: as given (the CRC check must hold), and with the header's CRC field
// recomputed over the mutated bytes so that mutations reach the section parser. A decoded float blob
// loads its parameters; a decoded int8 blob goes through tv::q8_bind and, when it binds and the
// model is small, one tv::q8_run on an all-zero input.
#include <stddef.h>
#include <stdint.h>

#include <cstring>
#include <vector>

#include "tv/crc32.h"
#include "tv/int8/q8_model.h"
#include "tv/little_endian.h"
#include "tv/model/blob.h"
#include "tv/model/model.h"

namespace {

void exercise(const std::vector<uint8_t>& buf) {
  static tv::BlobView view;
  tv::Status st = tv::blob_decode(buf.data(), buf.size(), &view);
  if (!st.ok()) return;
  for (int i = 0; i < view.num_labels; ++i) {
    const char* t;
    size_t n;
    if (tv::blob_label(view, i, &t, &n) && n) {
      volatile char c = t[n - 1];
      (void)c;
    }
  }
  static tv::ModelPlan plan;
  if (!tv::plan_model(view.model, &plan).ok()) return;
  if (view.is_int8()) {
    static tv::Q8Model q8;
    if (!tv::q8_bind(view, plan, &q8).ok()) return;
    // Small models only, so that a run stays fast.
    if (plan.infer_floats > (1u << 20) || plan.flops_forward > (uint64_t(1) << 25)) return;
    std::vector<int8_t> work(tv::q8_memory(plan).work_bytes);
    std::vector<int8_t> input(plan.input.size(), 0);
    const int8_t* out = nullptr;
    if (!tv::q8_run(q8, input.data(), work.data(), &out).ok()) __builtin_trap();  // q8_bind promised it runs
    volatile int8_t sink = out[plan.desc.num_classes - 1];
    (void)sink;
    return;
  }
  if (plan.param_count > (1u << 22)) return;
  std::vector<float> params(plan.param_count);
  tv::blob_load_float_params(view, plan, params.data());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Copy into an exactly-sized heap buffer so ASan sees any read past the end.
  std::vector<uint8_t> buf(data, data + size);
  exercise(buf);
  // The same bytes with a CRC that matches them (the header's total size decides what it covers).
  if (size >= tv::kBlobHeaderBytes) {
    const uint32_t total = tv::read_le32(buf.data() + 8);
    if (total >= 16 && total <= size) {
      const uint32_t crc = tv::crc32(0, buf.data() + 16, total - 16);
      for (int i = 0; i < 4; ++i) buf[12 + i] = (uint8_t)(crc >> (8 * i));
      exercise(buf);
    }
  }
  return 0;
}
