#include "host/train/detector.h"

#include "host/base/error.h"
#include "host/base/text.h"
#include "host/train/host_session.h"

namespace tvh {

void check_detector_fits(const tv::ModelPlan& plan, const DetectionDataset& ds) {
  if (plan.desc.task != tv::Task::Detect) throw Error("the model is not a detector.");
  check_decoded_size(ds.source, ds.height, ds.width, ds.channels, plan, "the detector");
  if ((int)ds.classes.size() + 1 != plan.desc.num_classes)
    throw Error(ds.source + ": has " + std::to_string(ds.classes.size()) + " object classes but the detector has " +
                std::to_string(plan.desc.num_classes - 1) + ".");
  for (size_t i = 0; i < ds.size(); ++i)
    if (ds.boxes[i].size() > (size_t)tv::kMaxBoxesPerPhoto)
      throw Error(ds.paths[i] + " has " + std::to_string(ds.boxes[i].size()) + " objects; a photo may have at most " +
                  std::to_string(tv::kMaxBoxesPerPhoto) + ": split the photo, or leave it out.");
}

Detector::Detector(const LoadedModel& model, const std::string& name) : runner_(model) {
  const tv::ModelPlan& plan = *model.plan;
  if (plan.desc.task != tv::Task::Detect)
    throw Error(name + " is a classifier (one label per photo), not a detector: use tvtrain classify.");
  grid_ = plan.layers[plan.num_layers - 1].out;
  probs_.assign(tv::plan_outputs(plan), 0.f);
  if (model.int8) logits_.assign(tv::plan_outputs(plan), 0);
  scratch_.assign(tv::grid_objects_scratch_ints(grid_.h, grid_.w), 0);
  objects_.reserve((size_t)grid_.h * (size_t)grid_.w);
}

const std::vector<tv::GridObject>& Detector::detect(const uint8_t* image, const std::string& input) {
  const tv::ModelPlan& plan = *runner_.model().plan;
  try {
    runner_.run(image, probs_.data(), logits_.empty() ? nullptr : logits_.data());
  } catch (const Error& e) {
    throw Error("'" + input + "': " + e.what());
  }
  // Every cell may be an object of its own: the grid's cell count bounds the objects.
  objects_.resize((size_t)grid_.h * (size_t)grid_.w);
  const int n = tv::grid_objects(probs_.data(), grid_.h, grid_.w, plan.desc.num_classes, plan.desc.detect_threshold,
                                 plan.input.h, plan.input.w, scratch_.data(), objects_.data(), (int)objects_.size());
  objects_.resize((size_t)n);
  return objects_;
}

void check_detector_classes(const LoadedModel& model, const std::string& model_name, const DetectionDataset& ds) {
  const std::vector<std::string> objects(model.labels.begin() + (model.labels.empty() ? 0 : 1), model.labels.end());
  if (objects != ds.classes)
    throw Error(ds.source + " has the classes " + join(ds.classes) + " but " + model_name + " finds " + join(objects) +
                ": give it photos labelled with its classes.");
}

std::vector<PhotoDetections> detect_photos(const LoadedModel& model, const DetectionDataset& ds,
                                           const std::vector<int>& idx,
                                           std::vector<std::vector<uint8_t>>* cell_classes) {
  const tv::ModelPlan& plan = *model.plan;
  Detector detector(model, "the model");
  check_detector_fits(plan, ds);
  std::vector<PhotoDetections> out;
  out.reserve(idx.size());
  if (cell_classes) cell_classes->clear();
  const int k = plan.desc.num_classes;
  for (int i : idx) {
    PhotoDetections p;
    p.predicted =
        detected_objects(detector.detect(ds.image((size_t)i), ds.paths[(size_t)i]), plan.input.h, plan.input.w);
    p.truth = ds.boxes[(size_t)i];
    out.push_back(std::move(p));
    if (!cell_classes) continue;
    const std::vector<float>& grid = detector.grid();
    std::vector<uint8_t> cells(grid.size() / (size_t)k);
    for (size_t c = 0; c < cells.size(); ++c) cells[c] = (uint8_t)tv::argmax(grid.data() + c * (size_t)k, k);
    cell_classes->push_back(std::move(cells));
  }
  return out;
}

LoadedModel float_detector(const tv::ModelPlan& plan, const float* params) {
  std::vector<std::string> labels((size_t)plan.desc.num_classes);
  for (size_t k = 0; k < labels.size(); ++k) labels[k] = "class" + std::to_string(k);
  return decode_model(encode_float_blob(plan, params, labels, ""), "the detector", Tasks::Any);
}

}  // namespace tvh
