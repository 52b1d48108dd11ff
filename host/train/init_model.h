// Continuing from a model (tvtrain --init): its float weights (an int8 model dequantized as the board
// does), the recipe its provenance names, its classes matched by name to a dataset's, and new classes
// appended by weight imprinting (tv/train/imprint.h).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "host/model/model_io.h"
#include "host/photos/dataset.h"
#include "tv/model/model.h"

namespace tvh {

// The value of a "key=value" line of a provenance text, or "".
std::string provenance_value(const std::string& prov, const std::string& key);

// The float weights of a loaded model: a float model's own; an int8 model's dequantized exactly as the
// board does (tv::q8_dequantize_params). Throws tvh::Error naming `path` when the int8 engine cannot
// bind the model.
std::vector<float> float_params_of(const LoadedModel& m, const std::string& path);

// The preset whose recipe continues a model, as the board chooses it: the provenance's preset= line
// when it names a known preset, else webmcu for the reference network (a myWeights.bin), else `fallback`.
std::string recipe_preset_of(const LoadedModel& m, const std::string& fallback);

// Renames a model's classes by `spec`, "OLD=NEW[,OLD=NEW...]" (a class folder renamed on the PC). Throws
// tvh::UsageError naming the pair for a malformed one, a new name no class folder on the board can have
// (tv/names.h) or a class renamed twice, and tvh::Error naming `path` for a class the model lacks or a
// new name that is another class's folder.
void rename_classes(std::vector<std::string>* labels, const std::string& spec, const std::string& path);

// How a dataset's classes met a model's.
struct ClassMatch {
  size_t model_classes = 0;          // the model's classes, first in the dataset now, in the model's order
  std::vector<std::string> added;    // dataset classes the model lacks, appended after them (dataset order)
  std::vector<std::string> missing;  // model classes without a photo: they keep their rows (no images here)
  std::vector<int> missing_rows;     // their class indices
};

// Reorders `ds` (classes, labels, images, paths, hashes) to the model's labels first, then the classes
// the model lacks; a model class without photos stays as a class without images.
ClassMatch match_classes(Dataset* ds, const std::vector<std::string>& model_labels);

// The model grown to ds.classes (model_classes of them are the model's, the rest new): the old rows as
// they were, each new class's row imprinted from the dense layer's input features of its images among
// `train`, its bias calibrated on the images of the classes before it among `train`. Throws tvh::Error
// naming `path` when the model's last layer with weights is not a dense layer producing the logits, or
// a class cannot be imprinted.
void grow_and_imprint(const tv::ModelPlan& old, const std::vector<float>& old_params, const std::string& path,
                      const Dataset& ds, size_t model_classes, const std::vector<int>& train,
                      std::unique_ptr<tv::ModelPlan>* plan, std::vector<float>* params);

// The starting weights of `target` (a network with ds.classes classes) from a backbone (tv/train/
// backbone.h): its layers' weights, and every class's row of the logits' dense layer imprinted from
// its photos among `train`. Throws tvh::Error naming `path` when the backbone is not the target's
// network, or a class cannot be imprinted.
std::vector<float> backbone_start(const tv::ModelPlan& backbone, const std::vector<float>& backbone_params,
                                  const std::string& path, const tv::ModelPlan& target, const Dataset& ds,
                                  const std::vector<int>& train);

}  // namespace tvh
