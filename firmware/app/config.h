// What a firmware build is for: its preset, its classes and a few overrides. The ESP32 sketch fills
// it from #defines; the simulator from its command line.
#pragma once
#include <stdint.h>

// The version printed at boot and written into headers; the build defines TV_VERSION.
#ifndef TV_VERSION
#define TV_VERSION "0.1.0"
#endif
#define TV_FIRMWARE_VERSION TV_VERSION

namespace tvfw {

constexpr int kMaxClasses = 16;
constexpr int kMaxLabelLength = 31;

struct AppConfig {
  const char* preset = "webmcu";         // tv::preset_model / tv::preset_recipe name
  const char* labels[kMaxClasses] = {};  // one per class; also the /images/<label> folder names
  int num_labels = 0;
  int epochs = 0;       // 0: the recipe's
  int val_last_n = -1;  // -1: the recipe's (the reference holds out the last 3 images per class)
  uint64_t seed = 1;    // He-init and shuffling
};

}  // namespace tvfw
