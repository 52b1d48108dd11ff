#include "host/train/init_model.h"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "host/base/error.h"
#include "tv/formats/raw_weights.h"
#include "tv/int8/q8_dequantize.h"
#include "tv/names.h"
#include "tv/train/backbone.h"
#include "tv/train/imprint.h"
#include "tv/train/presets.h"
#include "tv/train/update.h"

namespace tvh {

std::string provenance_value(const std::string& prov, const std::string& key) {
  std::istringstream in(prov);
  std::string line;
  while (std::getline(in, line))
    if (line.compare(0, key.size() + 1, key + "=") == 0) return line.substr(key.size() + 1);
  return "";
}

std::vector<float> float_params_of(const LoadedModel& m, const std::string& path) {
  if (!m.int8) return m.params;
  if (!m.engine)
    throw Error(path + ": this int8 model cannot be run by the int8 engine (" +
                status_message(m.engine_status, &m.plan->desc) +
                "), so it cannot be dequantized to continue training; give the float model it was made from.");
  std::vector<float> params(m.plan->param_count);
  tv::q8_dequantize_params(*m.engine, params.data());
  return params;
}

std::string recipe_preset_of(const LoadedModel& m, const std::string& fallback) {
  const std::string named = provenance_value(m.provenance, "preset");
  tv::TrainRecipe r;
  if (!named.empty() && tv::preset_recipe(named.c_str(), &r)) return named;
  if (tv::raw_weights_compatible(*m.plan)) return "webmcu";
  return fallback;
}

void rename_classes(std::vector<std::string>* labels, const std::string& spec, const std::string& path) {
  std::vector<std::string> renamed = *labels;
  std::vector<bool> done(labels->size(), false);
  std::istringstream in(spec);
  std::string pair;
  while (std::getline(in, pair, ',')) {
    const size_t eq = pair.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == pair.size() || pair.find('=', eq + 1) != std::string::npos)
      throw UsageError("--rename '" + pair + "': give OLD=NEW, the model's class and its new name.");
    const std::string from = pair.substr(0, eq), to = pair.substr(eq + 1);
    if (!tv::name_allowed(to.data(), to.size(), tv::kMaxClassNameBytes))
      throw UsageError("--rename " + pair + ": '" + to + "' cannot name a class folder: " + tv::kClassNameRule + ".");
    const auto at = std::find(labels->begin(), labels->end(), from);
    if (at == labels->end()) throw Error("--rename " + pair + ": " + path + " has no class named '" + from + "'.");
    const size_t k = (size_t)(at - labels->begin());
    if (done[k]) throw UsageError("--rename " + spec + ": class '" + from + "' is renamed twice; rename it once.");
    done[k] = true;
    renamed[k] = to;
  }
  for (size_t i = 0; i < renamed.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (tv::same_folder_name(renamed[i].data(), renamed[i].size(), renamed[j].data(), renamed[j].size()))
        throw Error("--rename " + spec + ": classes '" + renamed[j] + "' and '" + renamed[i] + "' of " + path +
                    " would be one folder on the board's card (FAT ignores letter case and trailing dots and "
                    "spaces); a class must keep a name of its own.");
  *labels = std::move(renamed);
}

ClassMatch match_classes(Dataset* ds, const std::vector<std::string>& model_labels) {
  ClassMatch match;
  match.model_classes = model_labels.size();
  std::vector<std::string> merged = model_labels;
  for (const std::string& c : ds->classes)
    if (std::find(merged.begin(), merged.end(), c) == merged.end()) {
      merged.push_back(c);
      match.added.push_back(c);
    }
  std::vector<int> new_label(ds->classes.size());
  for (size_t c = 0; c < ds->classes.size(); ++c)
    new_label[c] = (int)(std::find(merged.begin(), merged.end(), ds->classes[c]) - merged.begin());
  std::vector<size_t> counts(merged.size(), 0);
  for (int l : ds->labels) ++counts[(size_t)new_label[(size_t)l]];
  for (size_t c = 0; c < model_labels.size(); ++c)
    if (counts[c] == 0) {
      match.missing.push_back(model_labels[c]);
      match.missing_rows.push_back((int)c);
    }
  // Images grouped by their new label, each class's images in their order (sorted by path).
  std::vector<size_t> order(ds->size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return new_label[(size_t)ds->labels[a]] < new_label[(size_t)ds->labels[b]];
  });
  const size_t bytes = ds->image_bytes();
  std::vector<uint8_t> pixels(ds->pixels.size());
  std::vector<std::string> paths;
  std::vector<int> labels;
  std::vector<uint64_t> hashes;
  for (size_t k = 0; k < order.size(); ++k) {
    const size_t i = order[k];
    std::memcpy(pixels.data() + k * bytes, ds->image(i), bytes);
    if (i < ds->paths.size()) paths.push_back(ds->paths[i]);
    if (i < ds->file_hashes.size()) hashes.push_back(ds->file_hashes[i]);
    labels.push_back(new_label[(size_t)ds->labels[i]]);
  }
  ds->pixels = std::move(pixels);
  ds->paths = std::move(paths);
  ds->file_hashes = std::move(hashes);
  ds->labels = std::move(labels);
  ds->classes = std::move(merged);
  return match;
}

namespace {

// Imprints classes first_new.. of `plan` (logits' dense layer `layer`) into *params from the dense
// layer's input features of their photos among `train` (the layers before it run forward once each);
// first_new -1: a backbone start's whole head (tv::imprint_head).
// Throws tvh::Error naming the class and `path`, ending with `what_to_do`.
void imprint_from_photos(const tv::ModelPlan& plan, int layer, int first_new, const Dataset& ds,
                         const std::vector<int>& train, const std::string& path, const std::string& what_to_do,
                         std::vector<float>* params) {
  float* p = params->data();
  const size_t F = tv::prefix_feature_floats(plan, layer);
  std::vector<float> features(train.size() * F), work(tv::prefix_work_floats(plan));
  std::vector<int> labels(train.size());
  for (size_t k = 0; k < train.size(); ++k) {
    const size_t i = (size_t)train[k];
    const tv::Status fs = tv::prefix_forward(plan, layer, p, ds.image(i), work.data(), &features[k * F]);
    throw_if_not_runnable(fs, plan, ds.name(i));
    labels[k] = ds.labels[i];
  }
  std::vector<float> scratch(2 * train.size() + 2);
  const tv::Status is =
      first_new < 0
          ? tv::imprint_head(plan, p, features.data(), labels.data(), (int)train.size(), scratch.data())
          : tv::imprint_classes(plan, p, first_new, features.data(), labels.data(), (int)train.size(), scratch.data());
  if (!is.ok()) {
    const std::string cls = is.layer >= 0 && (size_t)is.layer < ds.classes.size() ? ds.classes[(size_t)is.layer] : "?";
    throw Error("cannot add class '" + cls + "' to " + path + ": " +
                (is.code == tv::StatusCode::NonFiniteActivation
                     ? std::string("the model's features of its photos are infinite or NaN")
                     : std::string("the model's features of its training photos are all zero, so they say nothing "
                                   "about it")) +
                what_to_do);
  }
}

}  // namespace

void grow_and_imprint(const tv::ModelPlan& old, const std::vector<float>& old_params, const std::string& path,
                      const Dataset& ds, size_t model_classes, const std::vector<int>& train,
                      std::unique_ptr<tv::ModelPlan>* plan, std::vector<float>* params) {
  const int layer = tv::imprint_layer(old);
  if (layer < 0)
    throw Error(path +
                ": new classes are added to the dense layer that produces the logits, and this model's last "
                "layer with weights is not one; train it from scratch with every class instead of --init.");
  auto grown = std::make_unique<tv::ModelPlan>();
  const tv::Status st = tv::plan_with_classes(old, (int)ds.classes.size(), grown.get());
  if (!st.ok())
    throw Error(path + " with " + std::to_string(ds.classes.size()) + " classes: " + status_message(st, &old.desc) +
                ".");
  std::vector<float> p(grown->param_count);
  tv::grow_class_params(old, old_params.data(), *grown, p.data());
  imprint_from_photos(*grown, layer, (int)model_classes, ds, train, path,
                      "; train from scratch with every class instead of --init.", &p);
  *plan = std::move(grown);
  *params = std::move(p);
}

std::vector<float> backbone_start(const tv::ModelPlan& backbone, const std::vector<float>& backbone_params,
                                  const std::string& path, const tv::ModelPlan& target, const Dataset& ds,
                                  const std::vector<int>& train) {
  std::vector<float> p(target.param_count);
  if (!tv::backbone_params(backbone, backbone_params.data(), target, p.data()).ok())
    throw Error(path + " is a backbone of another network than this model's (input " +
                std::to_string(target.desc.input.height) + "x" + std::to_string(target.desc.input.width) + "x" +
                std::to_string(target.desc.input.channels) +
                "): use --start scratch, or a backbone pretrained for this input and preset.");
  imprint_from_photos(target, tv::imprint_layer(target), -1, ds, train, path, "; use --start scratch.", &p);
  return p;
}

}  // namespace tvh
