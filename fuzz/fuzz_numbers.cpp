// libFuzzer target: the strict readers of what users type (host/base/numbers.cpp: whole numbers, decimal
// numbers, choices; tvtrain's --input HxWxC and its pretraining set procedural:...) on arbitrary text. A text that is
// accepted must read back to a value inside the range it was checked against; a refusal must be a sentence (never
// empty) or a tvh::UsageError. Any other exception, a crash or a sanitizer report is a finding.
#include <stddef.h>
#include <stdint.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "host/base/error.h"
#include "host/base/numbers.h"
#include "host/photos/procedural_dataset.h"
#include "host/train/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  // Ranges picked by the first byte, so that the edges (0, 2^32, 2^64 - 1) are all reached.
  static const uint64_t kHi[] = {0, 1, 100000, 4294967295u, 4294967296u, UINT64_MAX};
  const uint64_t hi = kHi[size ? data[0] % 6 : 0], lo = hi / 3;
  if (tvh::whole_number_problem(text, lo, hi).empty()) {
    const uint64_t v = tvh::parse_whole_number("--n", text, lo, hi);
    if (v < lo || v > hi) __builtin_trap();
  }
  if (tvh::real_number_problem(text, 1e-9, 10).empty()) {
    const double v = tvh::parse_real_number("--x", text, 1e-9, 10);
    if (!std::isfinite(v) || v < 1e-9 || v > 10) __builtin_trap();
  } else if (tvh::real_number_problem(text, 1e-9, 10).back() != '.') {
    __builtin_trap();  // a refusal is a whole sentence
  }
  if (!tvh::choice_problem(text, {"tinyvision", "webmcu"}).empty() && (text == "webmcu" || text == "tinyvision"))
    __builtin_trap();
  try {
    int h = 0, w = 0, c = 0;
    tvh::parse_input_size(text, &h, &w, &c);
    if (h < 1 || h > 4096 || w < 1 || w > 4096 || (c != 1 && c != 3)) __builtin_trap();
  } catch (const tvh::UsageError&) {
  }
  try {  // an accepted pretraining set reads back to itself and is within its limits
    tvh::ProceduralSpec spec;
    if (tvh::parse_procedural_source("procedural:" + text, &spec)) {
      if (spec.classes < 1 || spec.classes > 100000 || spec.per_class < 1 || spec.per_class > 100000) __builtin_trap();
      tvh::ProceduralSpec again;
      if (!tvh::parse_procedural_source(tvh::procedural_source_text(spec), &again) ||
          tvh::procedural_source_text(again) != tvh::procedural_source_text(spec))
        __builtin_trap();
    }
  } catch (const tvh::UsageError& e) {
    if (std::string(e.what()).empty()) __builtin_trap();
  }
  return 0;
}
