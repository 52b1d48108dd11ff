// tvtrain classify: one model, image files in, label and class probabilities out (text or JSON).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "host/base/error.h"
#include "host/base/json_text.h"
#include "host/model/model_io.h"
#include "host/photos/dataset.h"
#include "host/train/evaluate.h"
#include "tools/common/cli.h"
#include "tvtrain.h"

using nlohmann::json;

int tvtrain_classify(int argc, char** argv) {
  std::string model_path, preset = "webmcu", classes;
  std::vector<std::string> images;
  bool as_json = false;
  CLI::App app{
      "tvtrain classify: the label and class probabilities of each image (JPEG or PNG, EXIF orientation applied,\n"
      "resized exactly as for training) under a model: a .tvb (float or int8) or the reference's myWeights.bin.\n"
      "  tvtrain classify model.tvb photo.jpg 'IMG 0001.png'\n"
      "  tvtrain classify myWeights.bin --classes blank,cup,pen photo.jpg --json",
      "tvtrain classify"};
  app.add_option("model", model_path, "The model: .tvb (float or int8), or a raw myWeights.bin")->required();
  app.add_option("images", images, "Image files (.jpg, .jpeg, .png)")->required();
  app.add_option("--preset", preset, "The network of a raw myWeights.bin (only webmcu is defined for that format)")
      ->check(tvcli::preset_choice());
  app.add_option("--classes", classes,
                 "Class names a,b,c for a raw myWeights.bin (default class0, class1, ...; a .tvb names its own)");
  app.add_flag("--json", as_json, "Print a JSON array, one object per image, on stdout");
  if (const int rc = tvcli::parse(app, argc, argv, "tvtrain classify"); rc >= 0) return rc;
  tvh::RawOptions raw;
  raw.preset = preset;
  std::stringstream list(classes);
  for (std::string item; std::getline(list, item, ',');) {
    if (!item.empty()) raw.labels.push_back(item);
  }
  const tvh::LoadedModel model = tvh::load_model(model_path, raw);
  if (model.format == "tvb" && !raw.labels.empty() && raw.labels != model.labels)
    throw tvh::UsageError("--classes does not match the classes " + model_path + " names; drop --classes.");
  const tv::ModelPlan& plan = *model.plan;
  const int k = plan.desc.num_classes;
  std::vector<std::string> labels = model.labels;
  for (int c = (int)labels.size(); c < k; ++c) labels.push_back("class" + std::to_string(c));
  tvh::ModelRunner classifier(model);
  std::vector<uint8_t> input((size_t)plan.input.h * plan.input.w * plan.input.c);
  std::vector<float> probs((size_t)k);
  json out = json::array();
  int failed = 0;
  for (const auto& path : images) {
    try {
      tvh::read_input_image(path, plan.input.h, plan.input.w, plan.desc.input.order, input.data());
    } catch (const tvh::Error& e) {
      ++failed;
      std::fprintf(stderr, "tvtrain classify: %s\n", e.what());
      if (as_json) out.push_back({{"path", path}, {"error", e.what()}});
      continue;
    }
    const int best = classifier.classify(input.data(), probs.data());
    if (as_json) {
      json p = json::object();
      for (int c = 0; c < k; ++c) p[labels[(size_t)c]] = probs[(size_t)c];
      out.push_back(
          {{"path", path}, {"label", labels[(size_t)best]}, {"confidence", probs[(size_t)best]}, {"probabilities", p}});
      continue;
    }
    std::printf("%s: %s (%.1f %%)", tvh::one_line(path).c_str(), tvh::one_line(labels[(size_t)best]).c_str(),
                100.0 * probs[(size_t)best]);
    for (int c = 0; c < k; ++c)
      std::printf("%s%s %.1f %%", c ? ", " : "  [", tvh::one_line(labels[(size_t)c]).c_str(), 100.0 * probs[(size_t)c]);
    std::printf("]\n");
  }
  if (as_json) tvh::write_stdout(tvh::json_text(out));
  if (failed) {
    std::fprintf(stderr, "tvtrain classify: %d of %zu image(s) could not be read.\n", failed, images.size());
    return 1;
  }
  return 0;
}
