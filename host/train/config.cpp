#include "host/train/config.h"

#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "host/base/error.h"
#include "host/base/files.h"
#include "host/base/numbers.h"
#include "host/layers/layer_host.h"

using nlohmann::json;

namespace tvh {

TrainSetup preset_setup(const std::string& name) {
  TrainSetup s;
  s.preset = name;
  if (!tv::preset_model(name.c_str(), 2, &s.model) || !tv::preset_recipe(name.c_str(), &s.recipe)) {
    std::vector<std::string> known;
    for (const char* const* n = tv::preset_names(); *n; ++n) known.push_back(*n);
    throw Error("unknown preset: " + choice_problem(name, known));
  }
  s.split = "reference";
  return s;
}

namespace {

struct Ctx {
  std::string file;
  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw Error(file + ": " + where + " " + what + ".");
  }
  // `where` is "" for the top level of the file.
  void only(const json& obj, const std::string& where, std::initializer_list<const char*> keys) const {
    if (!obj.is_object()) {
      if (where.empty()) throw Error(file + ": the config must be a JSON object ({...}).");
      fail(where, "must be an object");
    }
    std::set<std::string> ok(keys.begin(), keys.end());
    std::string known;
    for (const char* k : keys) known += std::string(known.empty() ? "" : ", ") + k;
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      if (ok.count(it.key())) continue;
      if (where.empty())
        throw Error(file + ": \"" + it.key() + "\" is not a known top-level key (known: " + known + ").");
      fail(where + "." + it.key(), "is not a known key (known in " + where + ": " + known + ")");
    }
  }
  double num(const json& obj, const std::string& where, const char* key, double lo, double hi, double def) const {
    if (!obj.contains(key)) return def;
    const json& v = obj[key];
    if (!v.is_number()) fail(where + "." + key, "must be a number");
    double x = v.get<double>();
    if (!(x >= lo && x <= hi))
      fail(where + "." + key, "is " + v.dump() + ", outside [" + json(lo).dump() + ", " + json(hi).dump() + "]");
    return x;
  }
  int integer(const json& obj, const std::string& where, const char* key, int lo, int hi, int def) const {
    if (!obj.contains(key)) return def;
    const json& v = obj[key];
    if (!v.is_number_integer()) fail(where + "." + key, "must be an integer");
    long long x = v.get<long long>();
    if (x < lo || x > hi)
      fail(where + "." + key,
           "is " + std::to_string(x) + ", outside [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return (int)x;
  }
  bool boolean(const json& obj, const std::string& where, const char* key, bool def) const {
    if (!obj.contains(key)) return def;
    if (!obj[key].is_boolean()) fail(where + "." + key, "must be true or false");
    return obj[key].get<bool>();
  }
  std::string str(const json& obj, const std::string& where, const char* key,
                  std::initializer_list<const char*> allowed, const std::string& def) const {
    if (!obj.contains(key)) return def;
    if (!obj[key].is_string()) fail(where + "." + key, "must be a string");
    std::string s = obj[key].get<std::string>();
    std::string list;
    for (const char* a : allowed) {
      if (s == a) return s;
      list += std::string(list.empty() ? "" : ", ") + a;
    }
    fail(where + "." + key, "is \"" + s + "\", expected one of " + list);
  }
};

// A layer's object as its host row reads it (host/layers/layer_host.h).
class JsonLayerConfig : public LayerConfig {
 public:
  JsonLayerConfig(const Ctx& c, const json& l, const std::string& where) : c_(c), l_(l), where_(where) {}
  void only(std::initializer_list<const char*> keys) const override { c_.only(l_, where_, keys); }
  int integer(const char* key, int lo, int hi, int def) const override {
    return c_.integer(l_, where_, key, lo, hi, def);
  }
  double number(const char* key, double lo, double hi, double def) const override {
    return c_.num(l_, where_, key, lo, hi, def);
  }
  tv::Padding padding(const char* def) const override {
    return c_.str(l_, where_, "padding", {"valid", "same"}, def) == "same" ? tv::Padding::Same : tv::Padding::Valid;
  }

 private:
  const Ctx& c_;
  const json& l_;
  const std::string& where_;
};

tv::LayerDesc parse_layer(const Ctx& c, const json& l, const std::string& where) {
  if (!l.is_object() || !l.contains("type") || !l["type"].is_string()) c.fail(where, "needs a \"type\" string");
  const std::string name = l["type"].get<std::string>();
  tv::LayerType type;
  if (!tv::layer_type_from_name(name.c_str(), &type)) {
    std::string known;
    for (int i = 0; i < tv::kLayerTypeCount; ++i) known += std::string(i ? ", " : "") + tv::layer_row(i).name;
    c.fail(where + ".type", "is \"" + name + "\", not a layer type (" + known + ")");
  }
  return host_layer(type).config(JsonLayerConfig(c, l, where));
}

}  // namespace

namespace {

// Where the JSON parser is (e.g. "training.epochs", "model.layers[2].units"), kept up to date by the
// parser's callback so that an error raised while reading a value can name its key.
class KeyTracker {
 public:
  bool event(json::parse_event_t ev, const json& parsed) {
    switch (ev) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        count_element();
        frames_.push_back(Frame{ev == json::parse_event_t::array_start, std::string(), -1});
        break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        if (!frames_.empty()) frames_.pop_back();
        break;
      case json::parse_event_t::key:
        if (!frames_.empty() && parsed.is_string()) frames_.back().key = parsed.get<std::string>();
        break;
      case json::parse_event_t::value: count_element(); break;
    }
    return true;
  }
  // The key of the value being read now ("" at the top level).
  std::string path() const {
    std::string p;
    for (size_t i = 0; i < frames_.size(); ++i) {
      const Frame& f = frames_[i];
      if (f.array)
        p += "[" + std::to_string(i + 1 == frames_.size() ? f.index + 1 : f.index) + "]";
      else if (!f.key.empty())
        p += (p.empty() ? "" : ".") + f.key;
    }
    return p;
  }

 private:
  struct Frame {
    bool array;
    std::string key;
    int index;
  };
  void count_element() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
  }
  std::vector<Frame> frames_;
};

}  // namespace

void apply_config_text(const std::string& text, const std::string& name, TrainSetup* s) {
  Ctx c{name};
  json root;
  KeyTracker where;
  try {
    root = json::parse(text, [&](int, json::parse_event_t ev, json& parsed) { return where.event(ev, parsed); });
  } catch (const json::out_of_range& e) {
    // A number beyond a double (1e999): name the key, not the library's code.
    const std::string what = e.what();
    const size_t q1 = what.find('\''), q2 = q1 == std::string::npos ? q1 : what.find('\'', q1 + 1);
    const std::string number = q2 == std::string::npos ? std::string("a number") : what.substr(q1 + 1, q2 - q1 - 1);
    const std::string key = where.path();
    throw Error(name + ": " + (key.empty() ? std::string("a value") : key) + " is " + number +
                ", a number too large to represent; write a number in the key's range.");
  } catch (const json::exception& e) {
    const std::string key = where.path();
    throw Error(name + ": not valid JSON" + (key.empty() ? std::string() : " near " + key) + " (" +
                std::string(e.what()) + ").");
  }
  c.only(root, "", {"preset", "model", "training", "split"});
  if (root.contains("preset")) {
    if (!root["preset"].is_string()) c.fail("preset", "must be a string");
    *s = preset_setup(root["preset"].get<std::string>());
  }
  if (root.contains("model") || root.contains("training")) s->adapt = false;
  if (root.contains("model")) {
    const json& m = root["model"];
    c.only(m, "model", {"input", "layers"});
    tv::ModelDesc d = s->model;
    if (m.contains("input")) {
      const json& in = m["input"];
      c.only(in, "model.input", {"height", "width", "channels", "order", "scale", "offset"});
      d.input.height = (uint16_t)c.integer(in, "model.input", "height", 1, 4096, d.input.height);
      d.input.width = (uint16_t)c.integer(in, "model.input", "width", 1, 4096, d.input.width);
      d.input.channels = (uint16_t)c.integer(in, "model.input", "channels", 1, 3, d.input.channels);
      if (d.input.channels == 2) c.fail("model.input.channels", "must be 1 or 3");
      std::string order =
          c.str(in, "model.input", "order", {"RGB", "BGR", "GRAY"},
                d.input.channels == 1 ? "GRAY" : (d.input.order == tv::ChannelOrder::BGR ? "BGR" : "RGB"));
      d.input.order = order == "GRAY"  ? tv::ChannelOrder::GRAY
                      : order == "BGR" ? tv::ChannelOrder::BGR
                                       : tv::ChannelOrder::RGB;
      if ((d.input.channels == 1) != (d.input.order == tv::ChannelOrder::GRAY))
        c.fail("model.input.order",
               "\"" + order + "\" does not match " + std::to_string(d.input.channels) + " channel(s)");
      d.input.scale = (float)c.num(in, "model.input", "scale", -1e6, 1e6, d.input.scale);
      d.input.offset = (float)c.num(in, "model.input", "offset", -1e6, 1e6, d.input.offset);
    }
    if (m.contains("layers")) {
      const json& ls = m["layers"];
      if (!ls.is_array() || ls.empty()) c.fail("model.layers", "must be a non-empty array");
      if (ls.size() > (size_t)tv::kMaxLayers)
        c.fail("model.layers", "has more than " + std::to_string(tv::kMaxLayers) + " layers");
      d.num_layers = 0;
      for (size_t i = 0; i < ls.size(); ++i)
        tv::add_layer(&d, parse_layer(c, ls[i], "model.layers[" + std::to_string(i) + "]"));
    }
    s->model = d;
    s->preset = "custom";
  }
  if (root.contains("training")) {
    const json& t = root["training"];
    const std::string w = "training";
    c.only(t, w,
           {"optimizer", "loss", "lr", "beta1", "beta2", "eps", "momentum", "weight_decay", "weight_clip",
            "grad_clip_norm", "batch_reduction", "epochs", "batch_size", "lanes", "schedule", "warmup_epochs",
            "lr_min_factor", "augment", "restore_best"});
    tv::TrainRecipe& r = s->recipe;
    r.opt.optimizer =
        c.str(t, w, "optimizer", {"adam", "sgd"}, r.opt.optimizer == tv::OptimizerKind::SGD ? "sgd" : "adam") == "sgd"
            ? tv::OptimizerKind::SGD
            : tv::OptimizerKind::Adam;
    r.opt.loss = c.str(t, w, "loss", {"cross_entropy", "mse"},
                       r.opt.loss == tv::LossKind::MSE ? "mse" : "cross_entropy") == "mse"
                     ? tv::LossKind::MSE
                     : tv::LossKind::CrossEntropy;
    r.opt.lr = (float)c.num(t, w, "lr", 1e-9, 10, r.opt.lr);
    r.opt.beta1 = (float)c.num(t, w, "beta1", 0, 0.999999, r.opt.beta1);
    r.opt.beta2 = (float)c.num(t, w, "beta2", 0, 0.99999999, r.opt.beta2);
    r.opt.eps = (float)c.num(t, w, "eps", 1e-12, 1, r.opt.eps);
    r.opt.momentum = (float)c.num(t, w, "momentum", 0, 0.999999, r.opt.momentum);
    r.opt.weight_decay = (float)c.num(t, w, "weight_decay", 0, 1, r.opt.weight_decay);
    r.opt.weight_clip = (float)c.num(t, w, "weight_clip", 0, 1e6, r.opt.weight_clip);
    r.opt.grad_clip_norm = (float)c.num(t, w, "grad_clip_norm", 0, 1e9, r.opt.grad_clip_norm);
    r.epochs = c.integer(t, w, "epochs", 1, 100000, r.epochs);
    r.batch_size = c.integer(t, w, "batch_size", 1, 4096, r.batch_size);
    r.opt.batch_mean = c.str(t, w, "batch_reduction", {"sum", "mean"}, r.opt.batch_mean ? "mean" : "sum") == "mean";
    r.opt.lanes = c.integer(t, w, "lanes", 1, tv::kMaxLanes, r.opt.lanes);
    r.cosine = c.str(t, w, "schedule", {"constant", "cosine"}, r.cosine ? "cosine" : "constant") == "cosine";
    r.warmup_epochs = c.integer(t, w, "warmup_epochs", 0, 100000, r.warmup_epochs);
    r.lr_min_factor = (float)c.num(t, w, "lr_min_factor", 0, 1, r.lr_min_factor);
    r.restore_best = c.boolean(t, w, "restore_best", r.restore_best);
    if (t.contains("augment")) {
      const json& a = t["augment"];
      c.only(a, "training.augment", {"flip", "shift", "brightness"});
      r.aug_flip = c.boolean(a, "training.augment", "flip", r.aug_flip);
      r.aug_shift = c.integer(a, "training.augment", "shift", 0, 64, r.aug_shift);
      r.aug_brightness = (float)c.num(a, "training.augment", "brightness", 0, 0.9, r.aug_brightness);
    }
  }
  if (root.contains("split")) {
    const json& sp = root["split"];
    c.only(sp, "split", {"kind", "last_n", "val_fraction"});
    s->split = c.str(sp, "split", "kind", {"reference", "fraction"}, s->split);
    s->recipe.val_last_n = c.integer(sp, "split", "last_n", 0, 100000, s->recipe.val_last_n);
    s->val_fraction = c.num(sp, "split", "val_fraction", 0, 0.95, s->val_fraction);
  }
}

void apply_config_file(const std::string& path, TrainSetup* setup) {
  std::vector<uint8_t> bytes = read_file(path, 16 << 20);
  apply_config_text(std::string(bytes.begin(), bytes.end()), path, setup);
}

void parse_input_size(const std::string& text, int* h, int* w, int* c) {
  static const std::regex re("^([0-9]+)x([0-9]+)x([0-9]+)$");
  std::smatch m;
  const std::string flag = "--input " + visible(text);
  if (!std::regex_match(text, m, re))
    throw UsageError(flag + " is not of the form HxWxC (for example 64x64x3 or 28x28x1).");
  const std::string hp = whole_number_problem(m[1], 1, 4096), wp = whole_number_problem(m[2], 1, 4096);
  if (!hp.empty()) throw UsageError(flag + ": the height " + hp);
  if (!wp.empty()) throw UsageError(flag + ": the width " + wp);
  if (m[3] != "1" && m[3] != "3")
    throw UsageError(flag + ": the channels must be 1 (gray) or 3 (colour), not " + std::string(m[3]) + ".");
  *h = std::stoi(m[1]);
  *w = std::stoi(m[2]);
  *c = std::stoi(m[3]);
}

}  // namespace tvh
