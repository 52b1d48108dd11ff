// The README's default path on the simulated board: tvtrain with its defaults -> tvquant -> the card
// or a baked header, then boot, infer and train further with tvsim's default options (no preset, no
// labels: the model brings its network and classes). Also: a model too big for the board's PSRAM is
// refused with the numbers.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "host/model/model_io.h"
#include "sim_support.h"
#include "test_support.h"
#include "tv/train/net.h"

namespace fs = std::filesystem;
using namespace simtest;

namespace {

const std::vector<std::string> kShapes3 = {"0blank", "1circle", "2cross"};

// Runs a tool of build/bin with arguments; fails the test when it does not exit 0.
// tvtrain with its defaults on the shapes dataset, then tvquant with its defaults: the two files.
struct DefaultModels {
  std::string float_tvb, int8_tvb;
};
DefaultModels default_models() {
  const std::string dir = tvtest::temp_dir("default");
  DefaultModels m{dir + "/model.tvb", dir + "/model.q8.tvb"};
  run_tool("tvtrain", quote(shapes_dir()) + " -o " + quote(m.float_tvb));
  run_tool("tvquant", quote(m.float_tvb) + " --calib " + quote(shapes_dir()) + " -o " + quote(m.int8_tvb));
  return m;
}

// Infer every camera frame, back to the menu, round to Train (3 classes: 7 items) and train.
std::string infer_then_train(size_t frames) {
  return to_infer(3) + "~frames " + std::to_string(frames) + "\nl\nttttttl\n";
}

void expect_trained_further(const SimRun& r, const std::string& card) {
  EXPECT_TRUE(has(r.out, "The loaded model is int8: continuing from its weights dequantized to float")) << r.out;
  EXPECT_TRUE(has(r.out, "Recipe: tinyvision ("));  // the model's own recipe, from its provenance
  EXPECT_TRUE(has(r.out, "--- Training Complete ---"));
  EXPECT_TRUE(has(r.out, "Weights saved to SD: /header/model.tvb"));
  // the next boot takes the trained (float) model from the card, with the same classes
  const SimRun boot = sim("--sd " + card, "");
  ASSERT_EQ(boot.status, 0) << boot.err;
  EXPECT_EQ(boot_crc(boot.out), hex(file_crc(card + "/header/model.tvb")));
  EXPECT_TRUE(has(boot.out, "3 classes, 9155 parameters")) << boot.out;
  EXPECT_TRUE(has(boot.out, "float engine"));
  EXPECT_TRUE(has(boot.out, "=== MENU ===\n> 1. 0blank\n2. 1circle\n3. 2cross\n4. Train\n5. Infer\n"));
  const tvh::LoadedModel trained = tvh::load_model(card + "/header/model.tvb");
  EXPECT_FALSE(trained.int8);
  EXPECT_EQ(trained.labels, kShapes3);
}

}  // namespace

TEST(TvsimDefaultPath, DefaultModelFromTheCardBootsInfersAndTrainsFurther) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvtrain");
  TV_REQUIRE_BINARY("tvquant");
  const DefaultModels m = default_models();
  // the card: a few images per class (for training) and the int8 model, nothing else configured
  const std::string card = make_card(shapes_dir(), kShapes3, 6);
  fs::create_directories(card + "/header");
  fs::copy_file(m.int8_tvb, card + "/header/model.tvb");
  const std::string cam = make_camera(shapes_dir(), kShapes3);
  const size_t frames = sorted_jpegs(cam).size();
  const SimRun r = sim("--sd " + card + " --camera " + cam, infer_then_train(frames));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "Weights: SD (/header/model.tvb, ")) << r.out;
  EXPECT_TRUE(has(r.out, ", int8), int8 engine"));
  // every frame classified as tvtrain --eval classifies the same images with the same model
  const auto preds = predictions(r.out);
  ASSERT_EQ(preds.size(), frames);
  EXPECT_EQ(confusion(preds, cam, kShapes3), tvtrain_eval_confusion(shapes_dir(), m.int8_tvb, ""));
  expect_trained_further(r, card);
  EXPECT_EQ(file_crc(card + "/header/model.tvb.bak"), file_crc(m.int8_tvb));  // the int8 model, kept
}

TEST(TvsimDefaultPath, DefaultModelBakedInBootsInfersAndTrainsFurther) {
  TV_REQUIRE_BINARY("tvsim-baked");
  TV_REQUIRE_BINARY("tvtrain");
  // tvsim-baked holds tvtrain defaults -> tvquant -> tvexport's model.h, made at build time
  const std::string baked_tvb = tvtest::bin_path("../firmware/baked/baked_model.q8.tvb");
  ASSERT_TRUE(fs::exists(baked_tvb)) << baked_tvb;
  const std::string card = make_card(shapes_dir(), kShapes3, 6);
  const std::string cam = make_camera(shapes_dir(), kShapes3);
  const size_t frames = sorted_jpegs(cam).size();
  const SimRun r = sim("--sd " + card + " --camera " + cam, infer_then_train(frames), "tvsim-baked");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "  SD: no model on the card (/header/model.tvb)"));
  EXPECT_TRUE(has(r.out, "Weights: baked (model.h, " + std::to_string(fs::file_size(baked_tvb)) + " bytes, CRC-32 0x" +
                             hex(file_crc(baked_tvb)) + ", int8)"))
      << r.out;
  const auto preds = predictions(r.out);
  ASSERT_EQ(preds.size(), frames);
  EXPECT_EQ(confusion(preds, cam, kShapes3), tvtrain_eval_confusion(shapes_dir(), baked_tvb, ""));
  expect_trained_further(r, card);
}

TEST(TvsimDefaultPath, AModelTooBigForThePsramIsRefusedWithTheNumbers) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvtrain");
  TV_REQUIRE_BINARY("tvquant");
  const DefaultModels m = default_models();
  const std::string card = tvtest::temp_dir("card");
  fs::create_directories(card + "/header");
  fs::copy_file(m.float_tvb, card + "/header/model.tvb");
  // what the float model needs, by the core's own figures
  const tvh::LoadedModel model = tvh::load_model(m.float_tvb);
  const tv::InferenceMemory im = tv::inference_memory(*model.plan);
  const size_t input = model.plan->input.size(), lut = 2u * (size_t)(model.plan->input.w + model.plan->input.h);
  const size_t need = im.params_bytes + im.work_bytes + input + lut;
  const size_t budget = need - 1000;
  const SimRun r = sim("--sd " + card + " --labels a,b,c --psram-bytes " + std::to_string(budget), "");
  EXPECT_EQ(r.status, 1) << r.out;  // nothing fits: the He-init model (the same network) neither
  const std::string numbers = "it needs " + std::to_string(need) +
                              " bytes of PSRAM to run (float weights + work buffer " +
                              std::to_string(im.params_bytes + im.work_bytes) + ", input image " +
                              std::to_string(input) + ", resize table " + std::to_string(lut) + "), only ";
  EXPECT_TRUE(has(r.out, "SD /header/model.tvb refused: " + numbers)) << r.out;
  EXPECT_TRUE(has(r.out, "FATAL: the tinyvision model for 3 classes cannot run: " + numbers)) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("only \\d+ are free")));

  // the int8 model of the same network fits in the same PSRAM and boots
  fs::copy_file(m.int8_tvb, card + "/header/model.tvb", fs::copy_options::overwrite_existing);
  const SimRun q = sim("--sd " + card + " --psram-bytes " + std::to_string(budget), "");
  EXPECT_EQ(q.status, 0) << q.out;
  EXPECT_TRUE(has(q.out, "Weights: SD (/header/model.tvb, ")) << q.out;
}
