// A decoded dataset as the core's sample source (tv::SampleSource): what training, evaluation and the
// feature cache (host/train/feature_cache.h) read their images and labels through.
#pragma once
#include "host/photos/dataset.h"
#include "tv/train/train_loop.h"

namespace tvh {

// The images and labels of `ds` (valid while `ds` lives).
tv::SampleSource source_of(const Dataset& ds);

}  // namespace tvh
