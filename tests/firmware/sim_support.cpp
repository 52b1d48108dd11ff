// Helpers of the firmware tests: running tvsim as a child process and reading what it printed.
#include "sim_support.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "tv/crc32.h"
#include "tv/model/blob.h"

namespace fs = std::filesystem;

namespace simtest {

uint32_t file_crc(const std::string& path) {
  const std::string b = read_text(path);
  return tv::crc32(0, b.data(), b.size());
}

std::string quote(const std::string& s) {
  return "'" + s + "'";
}

// Runs a simulator with `input` on its stdin.
SimRun sim(const std::string& args, const std::string& input, const std::string& bin) {
  const std::string dir = tvtest::temp_dir("simin");
  write_text(dir + "/input.txt", input);
  SimRun r;
  r.status = tvtest::run_command(quote(tvtest::bin_path(bin)) + " " + args + " < " + quote(dir + "/input.txt"), &r.out,
                                 &r.err);
  return r;
}

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

void run_tool(const std::string& tool, const std::string& args) {
  std::string out, err;
  ASSERT_EQ(tvtest::run_command(quote(tvtest::bin_path(tool)) + " " + args, &out, &err), 0) << tool << ": " << err;
}

// The CRC-32 of the weights the boot log says it loaded from the card ("Weights: SD (... CRC-32 0x...)").
std::string boot_crc(const std::string& out) {
  std::smatch m;
  static const std::regex re("Weights: SD \\([^\\n]*CRC-32 0x([0-9a-f]{8})");
  return std::regex_search(out, m, re) ? m[1].str() : "";
}

std::string hex(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "%08x", v);
  return b;
}

// "Pred: <label> (" of every Infer line, in frame order.
std::vector<std::string> predictions(const std::string& out) {
  std::vector<std::string> p;
  static const std::regex re("Pred: (\\S+) \\(");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), re); it != std::sregex_iterator(); ++it)
    p.push_back((*it)[1].str());
  return p;
}

std::vector<std::string> sorted_jpegs(const std::string& dir) {
  std::vector<std::string> v;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".jpg") v.push_back(e.path().filename().string());
  std::sort(v.begin(), v.end());
  return v;
}

// A card holding the first `per_class` images (all when 0) of each class folder of `images`.
std::string make_card(const std::string& images, const std::vector<std::string>& classes, size_t per_class) {
  const std::string card = tvtest::temp_dir("card");
  for (const auto& c : classes) {
    fs::create_directories(card + "/images/" + c);
    auto files = sorted_jpegs(images + "/" + c);
    if (per_class) files.resize(std::min(files.size(), per_class));
    for (const auto& f : files) fs::copy_file(images + "/" + c + "/" + f, card + "/images/" + c + "/" + f);
  }
  return card;
}

// A camera folder with every image of the classes, named "<class index>_<class>_<file>" so frame
// order is class order and the true class can be read back.
std::string make_camera(const std::string& images, const std::vector<std::string>& classes) {
  const std::string cam = tvtest::temp_dir("camera");
  for (size_t c = 0; c < classes.size(); ++c)
    for (const auto& f : sorted_jpegs(images + "/" + classes[c]))
      fs::copy_file(images + "/" + classes[c] + "/" + f, cam + "/" + std::to_string(c) + "_" + classes[c] + "_" + f);
  return cam;
}

std::string card_with_model(int epochs) {
  const std::string card = make_card(shapes_dir(), kShapes2, 6);
  const SimRun r =
      sim("--sd " + card + labels_arg(kShapes2) + " --preset webmcu --epochs " + std::to_string(epochs), to_train(2));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::exists(card + "/header/model.tvb")) << r.out;
  return card;
}

std::vector<std::string> tvb_labels(const std::string& path) {
  const std::string b = tvtest::read_text(path);
  tv::BlobView v;
  EXPECT_TRUE(tv::blob_decode((const uint8_t*)b.data(), b.size(), &v).ok()) << path;
  std::vector<std::string> out;
  for (int i = 0; i < v.num_labels; ++i) {
    const char* t;
    size_t n;
    if (tv::blob_label(v, i, &t, &n)) out.emplace_back(t, n);
  }
  return out;
}

std::string copy_card(const std::string& from) {
  const std::string to = tvtest::temp_dir("cardcopy");
  fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  return to;
}

std::string shapes_dir() {
  return tvtest::source_path("datasets/shapes");
}
std::string labels_arg(const std::vector<std::string>& l) {
  std::string s;
  for (const auto& x : l) s += (s.empty() ? "" : ",") + x;
  return " --labels " + s;
}

// Menu keystrokes: from the first item to Train / Infer.
std::string to_train(size_t classes) {
  return std::string(classes, 't') + "l\n";
}
std::string to_infer(size_t classes) {
  return std::string(classes + 1, 't') + "l\n";
}

// Confusion matrix [true][predicted] of Infer lines over a camera made by make_camera.
std::vector<std::vector<int>> confusion(const std::vector<std::string>& preds, const std::string& cam,
                                        const std::vector<std::string>& classes) {
  std::vector<std::vector<int>> cm(classes.size(), std::vector<int>(classes.size(), 0));
  const auto frames = sorted_jpegs(cam);
  for (size_t i = 0; i < preds.size() && i < frames.size(); ++i) {
    const int truth = std::stoi(frames[i].substr(0, frames[i].find('_')));
    const auto p = std::find(classes.begin(), classes.end(), preds[i]);
    if (p != classes.end()) cm[truth][p - classes.begin()]++;
  }
  return cm;
}

std::vector<std::vector<int>> tvtrain_eval_confusion(const std::string& images, const std::string& model,
                                                     const std::string& options) {
  std::string out, err;
  const int rc = tvtest::run_command(quote(tvtest::bin_path("tvtrain")) + " " + quote(images) + " " + options +
                                         " --eval --init " + quote(model) + " --json",
                                     &out, &err);
  EXPECT_EQ(rc, 0) << err;
  return nlohmann::json::parse(out).at("confusion_matrix").get<std::vector<std::vector<int>>>();
}

}  // namespace simtest
