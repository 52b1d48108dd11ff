// The procedural pretraining images (tv/image/procedural.h) as a dataset in memory: classes x per_class
// images rendered on `threads` threads, the same bytes for any thread count, no file written.
#pragma once
#include <cstdint>
#include <string>

#include "host/photos/dataset.h"
#include "tv/image/procedural.h"

namespace tvh {

struct ProceduralSpec {
  tv::ProceduralFamily family = tv::ProceduralFamily::Fractal;
  bool mixed = false;  // classes alternate between the two families (even: fractal, odd: leaves)
  int classes = 16, per_class = 32;
  int height = 64, width = 64, channels = 3;
  uint64_t seed = 1;
  int threads = 0;  // 0: one per hardware thread
};

// tvtrain's dataset argument for a pretraining set: "procedural:FAMILY[,classes=N][,images=M][,seed=S]",
// FAMILY fractal, leaves or mixed. False when `text` does not start with "procedural:"; a malformed one
// throws tvh::UsageError with the form. The size and channels are not part of it (the model's input).
bool parse_procedural_source(const std::string& text, ProceduralSpec* spec);
// The canonical text of a spec (what parse_procedural_source reads; provenance records it).
std::string procedural_source_text(const ProceduralSpec& spec);

// Class i is named "<family><i>" with the index zero-padded ("fractal007"), so names sort in class order.
// Image j of class i is "<class>/<j>" in Dataset::paths (no file has it). Throws tvh::Error for a spec no dataset can
// have (no class, no image, a side outside 8..1024, 1 or 3 channels only, more than 10,000,000 images).
Dataset procedural_dataset(const ProceduralSpec& spec);

}  // namespace tvh
