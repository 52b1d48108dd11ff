// tvtrain detect: one detector, image files in, the objects of each (class, centroid in the image's own
// pixels, probability) out, as text (the board's serial line) or JSON; float or int8 models.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <vector>

#include "host/base/error.h"
#include "host/base/json_text.h"
#include "host/base/text.h"
#include "host/model/model_io.h"
#include "host/photos/detection_dataset.h"
#include "host/train/detector.h"
#include "tools/common/cli.h"
#include "tvtrain.h"

using nlohmann::json;

namespace {

// The longest line one photo's objects make: a grid of 30 x 30 cells, every one an object with a long name.
constexpr int kLineBytes = 1 << 16;

}  // namespace

int tvtrain_detect(int argc, char** argv) {
  std::string model_path;
  std::vector<std::string> images;
  bool as_json = false;
  CLI::App app{
      "tvtrain detect: the objects a detector finds in each image (JPEG or PNG, EXIF orientation applied, the\n"
      "whole photo stretched to the model's input as in training): per image the counts per class, then each\n"
      "object's class, centroid in the image's own pixels and probability. Float or int8 .tvb detectors.\n"
      "  tvtrain detect det.tvb photo.jpg 'IMG 0001.png'\n"
      "  tvtrain detect det-int8.tvb photos/*.jpg --json",
      "tvtrain detect"};
  app.add_option("model", model_path, "The detector: a .tvb (float or int8) that tvtrain wrote from labelled boxes")
      ->required();
  app.add_option("images", images, "Image files (.jpg, .jpeg, .png)")->required();
  app.add_flag("--json", as_json, "Print a JSON array, one object per image, on stdout");
  if (const int rc = tvcli::parse(app, argc, argv, "tvtrain detect"); rc >= 0) return rc;
  const tvh::LoadedModel model = tvh::load_model(model_path, tvh::RawOptions(), tvh::Tasks::Any);
  tvh::Detector detector(model, model_path);
  const tv::ModelPlan& plan = *model.plan;
  // Label 0 names the background; object class k is label k + 1.
  std::vector<const char*> names;
  for (size_t k = 1; k < model.labels.size(); ++k) names.push_back(model.labels[k].c_str());
  std::vector<uint8_t> input((size_t)plan.input.h * plan.input.w * plan.input.c);
  std::vector<char> line(kLineBytes);
  json out = json::array();
  int failed = 0;
  for (const auto& path : images) {
    tvh::WholePhoto photo;
    try {
      photo = tvh::read_whole_photo(path, plan.input.h, plan.input.w, plan.desc.input.order, input.data());
    } catch (const tvh::Error& e) {
      ++failed;
      std::fprintf(stderr, "tvtrain detect: %s\n", e.what());
      if (as_json) out.push_back({{"path", path}, {"error", e.what()}});
      continue;
    }
    const std::vector<tv::GridObject>& objects = detector.detect(input.data(), path);
    const float sx = (float)photo.width / (float)plan.input.w, sy = (float)photo.height / (float)plan.input.h;
    if (!as_json) {
      tv::objects_line(objects.data(), (int)objects.size(), names.data(), (int)names.size(), sx, sy, line.data(),
                       (int)line.size());
      tvh::write_stdout(tvh::one_line(path) + ": " + tvh::one_line(line.data()) + "\n");
      continue;
    }
    json objs = json::array(), counts = json::object();
    for (const char* name : names) counts[name] = 0;
    for (const tv::GridObject& o : objects) {
      const std::string name = o.label >= 0 && o.label < (int)names.size() ? names[(size_t)o.label] : "?";
      counts[name] = counts.value(name, 0) + 1;
      objs.push_back({{"class", name},
                      {"probability", o.prob},
                      {"x", o.x * sx},
                      {"y", o.y * sy},
                      {"input_x", o.x},
                      {"input_y", o.y},
                      {"cells", o.cells}});
    }
    out.push_back({{"path", path},
                   {"width", photo.width},
                   {"height", photo.height},
                   {"count", objects.size()},
                   {"counts", counts},
                   {"objects", objs}});
  }
  if (as_json) tvh::write_stdout(tvh::json_text(out));
  if (failed) {
    std::fprintf(stderr, "tvtrain detect: %d of %zu image(s) could not be read.\n", failed, images.size());
    return 1;
  }
  return 0;
}
