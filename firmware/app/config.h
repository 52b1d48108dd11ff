// What a firmware build starts from when no model is found. The network, its input and its labels
// come from the model the firmware loads (SD card, then the baked header); this configuration only
// matters for He-init (no model anywhere) and for models that do not name their training recipe.
// The ESP32 sketch fills it from #defines; the simulator from its command line.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "tv/names.h"

// The version printed at boot and written into headers; the build defines TV_VERSION.
#ifndef TV_VERSION
#define TV_VERSION "0.1.0"
#endif
#define TV_FIRMWARE_VERSION TV_VERSION

namespace tvfw {

constexpr int kMaxClasses = tv::kBoardMaxClasses;
constexpr int kMaxLabelLength = tv::kMaxClassNameBytes;

// Frames Infer was unsure of, kept in /images/_unsure/ for sorting on the PC (tvlink pull brings them).
// Unsure: the top class's probability minus the second's is below kUnsureMargin. Why 0.2: with two
// classes that is a top class under 60 % (the other over 40 %), a frame where the board nearly said the
// other class; a confident frame of a trained model has a margin near 1, so the frames kept are the few
// worth a label, not every frame. At most one every kUnsureIntervalMs (the camera sees the same scene for
// several frames), at most kUnsureMaxFiles files (about 0.75 MB of 240x240 JPEGs), the oldest removed first.
constexpr float kUnsureMargin = 0.2f;
constexpr uint32_t kUnsureIntervalMs = 1000;
constexpr int kUnsureMaxFiles = 50;

struct AppConfig {
  const char* preset = "tinyvision";     // He-init network, and the recipe of models that name none
  const char* labels[kMaxClasses] = {};  // He-init classes (also the /images/<label> folder names);
  int num_labels = 0;                    // 0: the class folders found in /images on the card
  int epochs = 0;                        // 0: the recipe's
  int val_last_n = -1;                   // -1: the recipe's (the reference holds out the last 3 images per class)
  uint64_t seed = 1;                     // He-init and shuffling
  bool backbone = true;                  // a new model starts from the built-in backbone (tv/backbones)
  // The baked tier: a .tvb compiled into the firmware (TV_MODEL_blob of a model.h that tvexport wrote,
  // included by the sketch when it sits next to it), or null.
  const uint8_t* baked_blob = nullptr;
  size_t baked_size = 0;
  const char* baked_source = "";        // for the boot log
  float unsure_margin = kUnsureMargin;  // Infer keeps frames whose top-two margin is below this (0: none)
  // Infer of a detector: a second line per frame with each object's class, centroid (input pixels) and
  // probability as their float bits, exactly (tvsim --exact-objects; the tests compare it with the PC's).
  bool exact_objects = false;
};

}  // namespace tvfw
