// Helpers of the firmware tests: running tvsim as a child process, cards and cameras made of real
// JPEG files, and reading what the simulated board printed.
#pragma once
#include <stdint.h>

#include <string>
#include <vector>

#include "test_support.h"

namespace simtest {

struct SimRun {
  int status = -1;
  std::string out, err;
};

using tvtest::read_text;
using tvtest::write_text;
uint32_t file_crc(const std::string& path);
// The text in single quotes, for a shell command.
std::string quote(const std::string& s);
// Runs a simulator (build/bin/<bin>) with `input` on its stdin.
SimRun sim(const std::string& args, const std::string& input, const std::string& bin = "tvsim");
bool has(const std::string& text, const std::string& what);
// Runs build/bin/<tool> with `args`; a non-zero exit fails the test (its stderr in the message).
void run_tool(const std::string& tool, const std::string& args);
// The CRC-32 of the weights the boot log says it loaded from the card ("Weights: SD (... CRC-32 0x...)").
std::string boot_crc(const std::string& out);
std::string hex(uint32_t v);
// "Pred: <label> (" of every Infer line, in frame order.
std::vector<std::string> predictions(const std::string& out);
std::vector<std::string> sorted_jpegs(const std::string& dir);
// A card holding the first `per_class` images (all when 0) of each class folder of `images`.
std::string make_card(const std::string& images, const std::vector<std::string>& classes, size_t per_class = 0);
// A camera folder with every image of the classes, named "<class index>_<class>_<file>" so frame
// order is class order and the true class can be read back.
std::string make_camera(const std::string& images, const std::vector<std::string>& classes);
std::string copy_card(const std::string& from);
// The labels of a .tvb file (empty, and a test failure, when it does not decode).
std::vector<std::string> tvb_labels(const std::string& path);
// A card with a small trained model (shapes, 2 classes, 6 images each, webmcu, `epochs` epochs): the board
// wrote its model.tvb, model.h and myWeights.bin.
std::string card_with_model(int epochs = 1);
const std::vector<std::string> kShapes2 = {"0blank", "1circle"};
std::string shapes_dir();
std::string labels_arg(const std::vector<std::string>& l);
// Menu keystrokes: from the first item to Train / Infer.
std::string to_train(size_t classes);
std::string to_infer(size_t classes);
// Confusion matrix [true][predicted] of Infer lines over a camera made by make_camera.
std::vector<std::vector<int>> confusion(const std::vector<std::string>& preds, const std::string& cam,
                                        const std::vector<std::string>& classes);
// tvtrain --eval's confusion matrix of a model on a folder of class folders.
std::vector<std::vector<int>> tvtrain_eval_confusion(const std::string& images, const std::string& model,
                                                     const std::string& options = "--preset webmcu");

}  // namespace simtest
