// A detector on the board (issue 27): tvsim loads a detector from the card (float and int8), Infer stretches
// each whole camera frame to the input, prints the objects line `tvtrain detect` prints for the same file and
// shows the counts on the display; the objects (class, centroid in input pixels, probability) are the PC's to
// the bit. Train and Learn refuse a detector with one sentence; capture still works.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "host/model/model_io.h"
#include "host/photos/dataset.h"
#include "host/photos/detection_dataset.h"
#include "host/photos/jpeg.h"
#include "host/quant/quantize.h"
#include "sim_support.h"
#include "test_support.h"

namespace fs = std::filesystem;
using namespace simtest;

namespace {

const std::vector<std::string> kObjectClasses = {"ring", "cross", "triangle"};  // datasets/detect's data.yaml

// The first `train` training and `val` validation photos of the project's detection dataset, as a YOLO
// dataset of its own (data.yaml, images/, labels/).
std::string detect_subset(const std::string& dir, int train, int val) {
  const std::string src = tvtest::source_path("datasets/detect"), dst = dir + "/detect";
  fs::create_directories(dst);
  fs::copy_file(src + "/data.yaml", dst + "/data.yaml");
  for (const auto& [subset, n] : std::vector<std::pair<std::string, int>>{{"train", train}, {"val", val}}) {
    fs::create_directories(dst + "/images/" + subset);
    fs::create_directories(dst + "/labels/" + subset);
    const std::vector<std::string> files = sorted_jpegs(src + "/images/" + subset);
    for (int i = 0; i < n && i < (int)files.size(); ++i) {
      const std::string& f = files[(size_t)i];
      const std::string label = "/labels/" + subset + "/" + f.substr(0, f.rfind('.')) + ".txt";
      fs::copy_file(src + "/images/" + subset + "/" + f, dst + "/images/" + subset + "/" + f);
      fs::copy_file(src + label, dst + label);
    }
  }
  return dst;
}

// A detector trained briefly on 240 photos of the project's detection dataset (96x96x3, the detect preset).
std::string train_detector(const std::string& dir) {
  const std::string det = dir + "/det.tvb";
  run_tool("tvtrain", quote(detect_subset(dir, 240, 40)) + " -o " + quote(det) +
                          " --epochs 30 --seed 1 --no-curve --no-report -q");
  return det;
}

// The int8 twin of a float detector, through the host's quantizer (calibrated on 40 training photos,
// tvquant's default options).
std::string quantize_detector(const std::string& float_path, const std::string& dir) {
  const tvh::LoadedModel m = tvh::load_model(float_path, tvh::RawOptions(), tvh::Tasks::Any);
  const tv::ModelPlan& plan = *m.plan;
  tvh::DetectionOptions o;
  o.path = detect_subset(dir + "/calib", 40, 0);
  o.height = plan.input.h;
  o.width = plan.input.w;
  o.channels = plan.input.c;
  o.order = plan.desc.input.order;
  o.threads = 1;
  const tvh::DetectionDataset dd = tvh::load_detection_dataset(o);
  tvh::Dataset ds;  // the calibration images as the quantizer takes them
  ds.source = dd.source;
  ds.classes = dd.classes;
  ds.height = dd.height;
  ds.width = dd.width;
  ds.channels = dd.channels;
  ds.order = dd.order;
  const size_t n = 40;
  ds.pixels.assign(dd.pixels.begin(), dd.pixels.begin() + (long)(n * dd.image_bytes()));
  ds.labels.assign(n, 0);
  ds.paths.assign(dd.paths.begin(), dd.paths.begin() + (long)n);
  std::vector<int> idx(n);
  for (size_t i = 0; i < n; ++i) idx[i] = (int)i;
  const tvh::QuantOptions q;
  const tvh::CalibrationStats stats = tvh::calibrate(plan, m.params.data(), ds, idx, q);
  const tvh::QuantResult r = tvh::quantize_model(plan, m.params.data(), stats, m.labels, m.provenance, q);
  const std::string out = dir + "/det.q8.tvb";
  tvtest::write_text(out, std::string(r.blob.begin(), r.blob.end()));
  return out;
}

// A camera of detection photos: val photos as they are (160x160), and two frames that are not square (two
// photos side by side, one above the other), where a crop and a stretch see different pixels.
std::string detect_camera(const std::string& dir, int photos) {
  const std::string cam = dir + "/camera";
  fs::create_directories(cam);
  const std::string val = tvtest::source_path("datasets/detect/images/val");
  std::vector<std::string> files = sorted_jpegs(val);
  for (int i = 0; i < photos && i < (int)files.size(); ++i)
    fs::copy_file(val + "/" + files[(size_t)i], cam + "/" + files[(size_t)i]);
  const tvh::Image a = tvh::decode_jpeg(tvh::read_file(val + "/" + files[0]), "a", 3);
  const tvh::Image b = tvh::decode_jpeg(tvh::read_file(val + "/" + files[1]), "b", 3);
  EXPECT_EQ(a.width, b.width);
  EXPECT_EQ(a.height, b.height);
  const int w = a.width, h = a.height;
  std::vector<uint8_t> wide((size_t)2 * w * h * 3), tall((size_t)2 * w * h * 3);
  for (int y = 0; y < h; ++y) {
    std::memcpy(&wide[((size_t)y * 2 * w) * 3], &a.pixels[(size_t)y * w * 3], (size_t)w * 3);
    std::memcpy(&wide[((size_t)y * 2 * w + w) * 3], &b.pixels[(size_t)y * w * 3], (size_t)w * 3);
  }
  std::memcpy(tall.data(), a.pixels.data(), a.pixels.size());
  std::memcpy(tall.data() + a.pixels.size(), b.pixels.data(), b.pixels.size());
  const std::vector<uint8_t> wj = tvh::encode_jpeg(wide.data(), 2 * w, h, 3, 90);
  const std::vector<uint8_t> tj = tvh::encode_jpeg(tall.data(), w, 2 * h, 3, 90);
  tvtest::write_text(cam + "/zz_wide.jpg", std::string(wj.begin(), wj.end()));
  tvtest::write_text(cam + "/zz_tall.jpg", std::string(tj.begin(), tj.end()));
  return cam;
}

// A card holding the model as /header/model.tvb.
std::string card_with(const std::string& model, const std::string& tag) {
  const std::string card = tvtest::temp_dir(tag);
  fs::create_directories(card + "/header");
  fs::copy_file(model, card + "/header/model.tvb");
  return card;
}

// Every match's first capture group, in order.
std::vector<std::string> all_captures(const std::string& text, const std::string& pattern) {
  std::vector<std::string> out;
  const std::regex re(pattern);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1].str());
  return out;
}

float from_bits(const std::string& hex) {
  const uint32_t u = (uint32_t)std::stoul(hex, nullptr, 16);
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// One object as the board printed it exactly, or as tvtrain detect --json gives it.
struct Obj {
  std::string cls;
  float x = 0, y = 0, prob = 0;
  int cells = 0;
  bool operator==(const Obj& o) const {
    return cls == o.cls && x == o.x && y == o.y && prob == o.prob && cells == o.cells;
  }
};

std::ostream& operator<<(std::ostream& os, const Obj& o) {
  return os << o.cls << " (" << o.x << ", " << o.y << ") " << o.prob << " " << o.cells << " cells";
}

// "Frame N exact: label x y p cells; ..." lines, frame by frame.
std::vector<std::vector<Obj>> board_objects(const std::string& out, const std::vector<std::string>& names) {
  std::vector<std::vector<Obj>> frames;
  for (const std::string& rest : all_captures(out, "Frame [0-9]+ exact:([^\n]*)\n")) {
    std::vector<Obj> objs;
    std::istringstream in(rest);
    int label = 0, cells = 0;
    std::string x, y, p;
    while (in >> label >> x >> y >> p >> cells) {
      Obj o;
      o.cls = label >= 0 && label < (int)names.size() ? names[(size_t)label] : "?";
      o.x = from_bits(x);
      o.y = from_bits(y);
      o.prob = from_bits(p);
      o.cells = cells;
      objs.push_back(o);
      char semi = 0;
      in >> semi;
    }
    frames.push_back(objs);
  }
  return frames;
}

// The camera's frames in the order the board grabs them (name order).
std::vector<std::string> frame_paths(const std::string& cam) {
  std::vector<std::string> out;
  for (const std::string& f : sorted_jpegs(cam)) out.push_back(cam + "/" + f);
  return out;
}

std::string joined(const std::vector<std::string>& paths) {
  std::string s;
  for (const auto& p : paths) s += " " + quote(p);
  return s;
}

// Runs Infer of the card's detector over the whole camera and checks it against tvtrain detect on the same
// files: the objects lines equal, and every object's class, centroid and probability to the bit. Returns the
// frames that had objects.
int infer_equals_tvtrain_detect(const std::string& model, const std::string& tag, bool int8) {
  const std::string dir = tvtest::temp_dir(tag);
  const std::string cam = detect_camera(dir, 10);
  const std::string card = card_with(model, tag + "card");
  const SimRun r = sim("--sd " + card + " --camera " + cam + " --exact-objects", to_infer(kObjectClasses.size()));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "Weights: SD (/header/model.tvb")) << r.out;
  EXPECT_TRUE(has(r.out, "detector of 3 object classes (a 12x12 grid, threshold 0.50)")) << r.out;
  EXPECT_TRUE(has(r.out, int8 ? "int8 engine" : "float engine")) << r.out;
  const std::vector<std::string> paths = frame_paths(cam);
  const std::vector<std::string> board_lines = all_captures(r.out, "Frame [0-9]+: [^\n]* Objects: ([^\n]*)\n");
  EXPECT_EQ(board_lines.size(), paths.size()) << r.out;

  // The text lines, "PATH: <objects line>".
  const tvtest::CommandResult text =
      tvtest::run_capture(tvtest::tool_command("tvtrain") + " detect " + quote(model) + joined(paths));
  EXPECT_EQ(text.status, 0) << text.err;
  std::vector<std::string> pc_lines;
  std::istringstream lines(text.out);
  for (std::string line; std::getline(lines, line);) {
    const size_t at = line.find(": ");
    pc_lines.push_back(at == std::string::npos ? line : line.substr(at + 2));
  }
  EXPECT_EQ(board_lines, pc_lines);

  // The objects to the bit: tvtrain detect --json's input_x, input_y and probability (floats in JSON).
  const nlohmann::json js =
      tvtest::run_json(tvtest::tool_command("tvtrain") + " detect " + quote(model) + joined(paths) + " --json");
  std::vector<std::vector<Obj>> pc;
  for (const auto& image : js) {
    std::vector<Obj> objs;
    for (const auto& o : image.at("objects")) {
      Obj b;
      b.cls = o.at("class").get<std::string>();
      b.x = (float)o.at("input_x").get<double>();
      b.y = (float)o.at("input_y").get<double>();
      b.prob = (float)o.at("probability").get<double>();
      b.cells = o.at("cells").get<int>();
      objs.push_back(b);
    }
    pc.push_back(objs);
  }
  const std::vector<std::vector<Obj>> board = board_objects(r.out, kObjectClasses);
  EXPECT_EQ(board.size(), paths.size()) << r.out;
  EXPECT_EQ(board, pc);
  int with_objects = 0;
  for (const auto& f : board) with_objects += f.empty() ? 0 : 1;
  std::smatch m;
  if (std::regex_search(r.out, m, std::regex("Memory: [^\n]*")))
    std::printf("%s detector on the board: %d of %zu frames with objects; %s\n", int8 ? "int8" : "float", with_objects,
                paths.size(), m[0].str().c_str());
  return with_objects;
}

}  // namespace

// A float detector on the card: Infer prints each frame's objects line, the same as tvtrain detect's for the
// same file, and the objects are the same floats; frames that are not square are stretched, not cropped.
TEST(TvsimDetect, AFloatDetectorFindsWhatTvtrainDetectFindsToTheBit) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvtrain");
  const std::string det = train_detector(tvtest::temp_dir("detfloat"));
  const int with_objects = infer_equals_tvtrain_detect(det, "detfloatrun", false);
  EXPECT_GE(with_objects, 6) << "too few frames with objects for the comparison to say much";
}

// The same for its int8 twin (the host's quantizer; the int8 engine on both sides).
TEST(TvsimDetect, AnInt8DetectorFindsWhatTvtrainDetectFindsToTheBit) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvtrain");
  const std::string dir = tvtest::temp_dir("detint8");
  const std::string q8 = quantize_detector(train_detector(dir), dir);
  const int with_objects = infer_equals_tvtrain_detect(q8, "detint8run", true);
  EXPECT_GE(with_objects, 6) << "too few frames with objects for the comparison to say much";
}

// The rest of the board with a detector: the menu lists the object classes (not the background), the display
// shows each frame's counts, Train and Learn refuse with one sentence and the menu goes on, capture saves a
// photo, corrections are refused; the boot log counts the detector's buffers in its memory.
TEST(TvsimDetect, TrainAndLearnRefuseADetectorAndTheRestOfTheBoardWorks) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvtrain");
  const std::string dir = tvtest::temp_dir("detboard");
  const std::string det = train_detector(dir);
  const std::string cam = detect_camera(dir, 2);
  const std::string card = card_with(det, "detboardcard");
  const std::string oled = dir + "/oled.txt";
  // Menu: ring, cross, triangle, Train, Infer, Learn, New class (the cursor stays where it was selected).
  // Train (3 t), Learn (2 t more), ring (2 t, wrapping): one photo (it takes the camera's first frame) and
  // back, Infer (4 t), then a correction.
  const std::string keys = std::string(3, 't') + "l\n"  // Train
                           + "ttl\n"                    // Learn
                           + "ttl\n"                    // ring: capture
                           + "t\nl\n"                   // one photo, back
                           + "ttttl\n"                  // Infer
                           + "~frames 3\nc ring\n";
  const SimRun r = sim("--sd " + card + " --camera " + cam + " --oled " + oled, keys);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "  class 0: _background (background)")) << r.out;
  EXPECT_TRUE(has(r.out, "> 1. ring\n2. cross\n3. triangle\n4. Train\n5. Infer\n6. Learn\n7. New class")) << r.out;
  EXPECT_TRUE(has(r.out,
                  "Train: the model is a detector (a grid of objects), and the board trains classifiers only for now: "
                  "train the detector on the PC (tvtrain DATASET -o det.tvb) and copy it to the card as "
                  "/header/model.tvb"))
      << r.out;
  EXPECT_TRUE(has(r.out, "Learn: the model is a detector (a grid of objects)")) << r.out;
  EXPECT_FALSE(has(r.out, ">>> Training mode")) << r.out;
  EXPECT_TRUE(has(r.out, ">>> Collection mode: ring")) << r.out;
  EXPECT_TRUE(has(r.out, "Saved: /images/ring/img_0.jpg")) << r.out;
  EXPECT_TRUE(fs::exists(card + "/images/ring/img_0.jpg"));
  EXPECT_TRUE(has(r.out, "c NAME corrects a classifier's frame; the model is a detector")) << r.out;
  EXPECT_FALSE(fs::exists(card + "/images/ring/img_1c.jpg"));
  // The memory the board reports counts the detector's buffers (12x12 cells of 4 classes: grid 2304 bytes,
  // scratch 1152, 144 objects 2880, the line 11008), and a board without that much refuses it with the figures.
  EXPECT_TRUE(
      has(r.out, "Memory: 281552 B of PSRAM for inference, of it 17344 B the detector's grid, objects and line"))
      << r.out;
  const SimRun small = sim("--sd " + card + " --psram-bytes 270000", "");
  EXPECT_TRUE(has(small.out,
                  "SD /header/model.tvb refused: it needs 281936 bytes of PSRAM to run (float weights + work buffer "
                  "236560, input image 27648, resize table 384, detector's grid and objects 17344), only "))
      << small.out;
  const std::string screens = read_text(oled);
  EXPECT_TRUE(has(screens, "|NO TRAIN    |\n|detector:   |\n|train it on |\n|the PC      |")) << screens;
  EXPECT_TRUE(has(screens, "|NO LEARN    |")) << screens;
  // The display's counts follow the frame's objects line: its total, then "N class" per class.
  const std::vector<std::string> lines = all_captures(r.out, "Frame [0-9]+: [^\n]* Objects: ([^\n]*)\n");
  ASSERT_EQ(lines.size(), 3u) << r.out;  // the camera's 4 frames, one of them captured
  for (const std::string& line : lines) {
    int total = 0;
    std::string counts = line.substr(0, line.find(':'));
    std::string want_rows;
    if (line == "no objects") {
      EXPECT_TRUE(has(screens, "|INFER       |\n|no objects  |")) << screens;
      continue;
    }
    std::istringstream in(counts);
    for (std::string part; std::getline(in, part, ',');) total += std::stoi(part);
    // "N class" per class, greedily on two lines of 12 (a count with no room left: '+' ends the last line)
    std::vector<std::string> rows(2);
    size_t row = 0;
    std::istringstream parts(counts);
    for (std::string part; row < 2 && std::getline(parts, part, ',');) {
      if (part[0] == ' ') part = part.substr(1);
      part = part.substr(0, 12);
      if (!rows[row].empty() && rows[row].size() + 1 + part.size() > 12) {
        if (++row == 2) {
          rows[1] = rows[1].substr(0, 11) + "+";
          break;
        }
      }
      rows[row] += (rows[row].empty() ? "" : " ") + part;
    }
    char screen[128];
    std::snprintf(screen, sizeof screen, "|INFER       |\n|%-12s|\n|%-12s|\n|%-12s|\n",
                  (std::to_string(total) + (total == 1 ? " object" : " objects")).c_str(), rows[0].c_str(),
                  rows[1].c_str());
    EXPECT_TRUE(has(screens, screen)) << screens << "\n" << line;
  }
}
