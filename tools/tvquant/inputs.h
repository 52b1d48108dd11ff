// What both tvquant commands read: the float model and a dataset at its input size.
#pragma once
#include <string>
#include <vector>

#include "host/base/files.h"
#include "host/model/model_io.h"
#include "host/photos/dataset.h"

namespace tvquant {

// A float model to work on; an int8 model is refused with a sentence naming the file, and so is a detector
// unless `tasks` takes one.
tvh::LoadedModel load_float_model(const std::string& path, tvh::Tasks tasks = tvh::Tasks::Classifiers);

// Loads a dataset at the model's input size with the model's classes (a raw myWeights.bin takes the
// dataset's sorted class names as labels). `outputs` are the files the command writes: refused when one
// is one of the dataset's images.
tvh::Dataset load_for_model(const std::string& path, tvh::LoadedModel& m, int threads,
                            const std::vector<tvh::NamedPath>& outputs);

}  // namespace tvquant
