// libFuzzer target: zip datasets on arbitrary bytes — the listing (unsafe names, junk, duplicates,
// special entries, declared sizes and ratios), the entry reading (libzip) and the decoding behind it.
// Each input is written to one temporary file per process and loaded as a dataset at 8x8. Anything
// it finds must be a tvh::Error or a skipped file, never a crash, a hang or an out-of-bounds access.
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include <exception>
#include <string>

#include "host/photos/dataset.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/tv_fuzz_zip." + std::to_string(getpid()) + ".zip";
  FILE* f = fopen(path.c_str(), "wb");
  if (!f) return 0;
  const bool written = fwrite(data, 1, size, f) == size;
  fclose(f);
  if (!written) return 0;
  try {
    tvh::DatasetOptions o;
    o.path = path;
    o.height = o.width = 8;
    o.threads = 1;
    const tvh::Dataset ds = tvh::load_dataset(o);
    if (ds.pixels.size() != ds.size() * ds.image_bytes() || ds.paths.size() != ds.size()) __builtin_trap();
  } catch (const std::exception&) {
  }
  return 0;
}
