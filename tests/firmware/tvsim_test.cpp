// The firmware, tested through its Linux build: build/bin/tvsim (and tvsim-baked) run as real child
// processes on a temporary folder that plays the SD card, with scripted serial input and touches.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "host/model/model_io.h"
#include "sim_support.h"
#include "test_support.h"
#include "tv/crc32.h"

namespace fs = std::filesystem;
using namespace simtest;

// ---------------------------------------------------------------- boot, menu, touch

TEST(Tvsim, HelpAndBadArguments) {
  TV_REQUIRE_BINARY("tvsim");
  std::string out, err;
  EXPECT_EQ(tvtest::run_command(quote(tvtest::bin_path("tvsim")) + " --help", &out, &err), 0);
  EXPECT_TRUE(has(out, "usage: tvsim --sd DIR"));
  EXPECT_EQ(sim("--sd /nonexistent/card --labels a,b", "").status, 2);
  EXPECT_EQ(sim("--labels a", "").status, 2);  // one class is not a classifier
  const SimRun r = sim("--sd " + tvtest::temp_dir("card") + " --bogus 1", "");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, "unknown option --bogus"));
}

TEST(Tvsim, EmptyCardBootsTheBackboneAndShowsTheMenu) {
  TV_REQUIRE_BINARY("tvsim");
  const SimRun r = sim("--sd " + tvtest::temp_dir("card") + " --labels cat,dog", "");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "SD: no model on the card (/header/model.tvb)"));
  EXPECT_TRUE(has(r.out, "baked: none compiled in"));
  EXPECT_TRUE(has(r.out, "Weights: backbone (built-in tinyvision-64x64x3, ")) << r.out;
  EXPECT_TRUE(has(r.out, "=== MENU ===\n> 1. cat\n2. dog\n3. Train\n4. Infer\n"));
  // The last tier: He-init, when the build leaves the backbone out or none is made for the network.
  const SimRun off = sim("--sd " + tvtest::temp_dir("card") + " --labels cat,dog --no-backbone", "");
  EXPECT_TRUE(has(off.out, "  backbone: off in this build's configuration\nWeights: He-init")) << off.out;
  const SimRun webmcu = sim("--sd " + tvtest::temp_dir("card") + " --labels cat,dog --preset webmcu", "");
  EXPECT_TRUE(
      has(webmcu.out, "  backbone: tinyvision-64x64x3 is not the webmcu network of this model\nWeights: He-init"))
      << webmcu.out;
}

TEST(Tvsim, NoCard) {
  TV_REQUIRE_BINARY("tvsim");
  const SimRun r = sim("--labels cat,dog", "l\nl\nttl\n");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "SD: no card"));
  EXPECT_TRUE(has(r.out, "Weights: backbone"));
  EXPECT_TRUE(has(r.out, "No SD card: cannot save images"));
  EXPECT_TRUE(has(r.out, "No SD card: cannot train"));
}

TEST(Tvsim, SerialAndTouchDriveTheMenu) {
  TV_REQUIRE_BINARY("tvsim");
  // t, then 1 tap and 2 taps (both "next"), a reading between the thresholds (no press), 3 taps = select
  const SimRun r =
      sim("--sd " + tvtest::temp_dir("card") + " --labels cat,dog", "t\n~tap 1\n~tap 2\n~touch 1000 300\n~tap 3\n");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "Touch: 1 tap (next)"));
  EXPECT_TRUE(has(r.out, "Touch: 2 taps (next)"));
  EXPECT_TRUE(has(r.out, "Touch: 3 taps (select)"));
  const std::regex gesture("Touch: \\d+ tap");
  EXPECT_EQ(std::distance(std::sregex_iterator(r.out.begin(), r.out.end(), gesture), std::sregex_iterator()), 3)
      << r.out;  // 1000 is above the release threshold but below the press threshold: no tap
  EXPECT_TRUE(has(r.out, "> 4. Infer\n"));
  EXPECT_TRUE(has(r.out, ">>> Inference mode"));
  EXPECT_TRUE(has(r.out, "Camera: no frame"));
}

TEST(Tvsim, InputIsTakenInTheOrderItHappened) {
  TV_REQUIRE_BINARY("tvsim");
  // 3 taps select the first class (capture); the 't' after them captures there; '?' prints help;
  // an unknown key is named; ~frames in the menu gives up instead of waiting for ever
  const SimRun r = sim("--sd " + tvtest::temp_dir("card") + " --labels cat,dog", "~tap 3\nt\n?\nq\nl\n~frames 2\n");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, ">>> Collection mode: cat"));
  EXPECT_TRUE(has(r.out, "Camera: no frame, nothing saved"));
  EXPECT_TRUE(has(r.out, "Commands: t = next / capture"));
  EXPECT_TRUE(has(r.out, "Unknown command 'q'"));
  EXPECT_TRUE(has(r.out, "Leaving capture mode: 0 images of cat"));
}

TEST(Tvsim, OledIsRenderedAsText) {
  TV_REQUIRE_BINARY("tvsim");
  const std::string oled = tvtest::temp_dir("oled") + "/oled.txt";
  const SimRun r = sim("--sd " + tvtest::temp_dir("card") + " --labels cat,dog --oled " + oled, "t\n");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string screens = read_text(oled);
  EXPECT_TRUE(has(screens, "+------------+\n|MENU        |\n|1/6         |\n|> cat       |\n"));
  EXPECT_TRUE(has(screens, "|> dog       |"));
}

// ---------------------------------------------------------------- capture

TEST(Tvsim, CaptureWritesNewFilesAndNeverOverwrites) {
  TV_REQUIRE_BINARY("tvsim");
  const std::string card = tvtest::temp_dir("card");
  fs::create_directories(card + "/images/0blank");
  write_text(card + "/images/0blank/img_5.jpg", "an existing capture");
  write_text(card + "/images/0blank/img_7.JPG", "another one, upper-case extension");
  const std::string cam = tvtest::temp_dir("camera");
  const auto shapes = sorted_jpegs(shapes_dir() + "/1circle");
  for (int i = 0; i < 3; ++i) fs::copy_file(shapes_dir() + "/1circle/" + shapes[i], cam + "/" + shapes[i]);
  // into 0blank: 't', a tap, 't'; then 3+ taps back to the menu
  const SimRun r = sim("--sd " + card + " --camera " + cam + labels_arg(kShapes2), "l\nt\n~tap 1\nt\n~tap 4\n");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, ">>> Collection mode: 0blank"));
  EXPECT_TRUE(has(r.out, "holds 2 images; the next one is img_8.jpg"));
  EXPECT_TRUE(has(r.out, "Saved: /images/0blank/img_8.jpg"));
  EXPECT_TRUE(has(r.out, "Saved: /images/0blank/img_10.jpg"));
  EXPECT_TRUE(has(r.out, "Leaving capture mode: 5 images of 0blank"));
  EXPECT_EQ(read_text(card + "/images/0blank/img_5.jpg"), "an existing capture");
  for (int i = 0; i < 3; ++i)  // the camera's JPEG bytes, as they came
    EXPECT_EQ(read_text(card + "/images/0blank/img_" + std::to_string(8 + i) + ".jpg"),
              read_text(cam + "/" + shapes[i]));
  int files = 0;
  for (const auto& e : fs::directory_iterator(card + "/images/0blank")) {
    EXPECT_NE(e.path().extension(), ".tmp");
    ++files;
  }
  EXPECT_EQ(files, 5);
}

// ---------------------------------------------------------------- training, saving, reboot

TEST(Tvsim, TrainsFromTheCardDecodingEachImageOnceThenRebootsFromSD) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_SHARED("datasets/webmcu-a/images");
  const std::vector<std::string> classes = {"0Blank", "1Circle"};
  const std::string card = make_card(tvtest::shared_path("datasets/webmcu-a/images"), classes);
  SimRun r = sim("--sd " + card + labels_arg(classes) + " --preset webmcu", to_train(2));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "Starting fresh training"));
  EXPECT_TRUE(has(r.out, "Val: 6 images  Train: 12 images"));
  EXPECT_TRUE(has(r.out, "Training: 12 samples, 40 batches"));
  EXPECT_TRUE(has(r.out, "--- Epoch 20/20 ---"));
  EXPECT_TRUE(has(r.out, "Batch 40/40 - Loss: "));
  EXPECT_TRUE(has(r.out, "--- Training Complete ---"));
  EXPECT_TRUE(has(r.out, "Validation Accuracy: "));
  EXPECT_TRUE(has(r.out, "Training arena: 737104 bytes in PSRAM"));
  // the cache: 18 decodes for 20 epochs, where the reference decodes 12 * 20 + 6 = 246
  EXPECT_TRUE(has(r.out, "JPEG decodes: 18 for this run"));
  EXPECT_TRUE(has(r.out, "the reference decodes every image in every epoch: 246"));
  EXPECT_TRUE(has(r.err, "tvsim: 18 JPEG decodes"));
  EXPECT_TRUE(has(r.out, "Weights saved to SD: /header/model.tvb"));
  EXPECT_TRUE(has(r.out, "Header written: /header/model.h"));
  ASSERT_TRUE(fs::exists(card + "/header/model.tvb"));
  ASSERT_TRUE(fs::exists(card + "/header/model.h"));
  EXPECT_EQ(fs::file_size(card + "/header/myWeights.bin"), 55464u);
  EXPECT_FALSE(fs::exists(card + "/header/model.tvb.bak"));  // there was no previous model
  const uint32_t first = file_crc(card + "/header/model.tvb");

  // reboot: the card's model, by tier "SD" (its own network: no preset given); training again continues
  // from it and keeps it as .bak
  r = sim("--sd " + card + labels_arg(classes) + " --epochs 1", to_train(2));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(boot_crc(r.out), hex(first));
  EXPECT_TRUE(has(r.out, "Continuing from saved weights"));
  EXPECT_TRUE(has(r.out, "the previous model is kept as /header/model.tvb.bak"));
  EXPECT_EQ(file_crc(card + "/header/model.tvb.bak"), first);
  EXPECT_NE(file_crc(card + "/header/model.tvb"), first);

  // the header the board wrote is tvexport's, byte for byte
  TV_REQUIRE_BINARY("tvexport");
  const std::string h = tvtest::temp_dir("hdr") + "/model.h";
  std::string out, err;
  ASSERT_EQ(tvtest::run_command(
                quote(tvtest::bin_path("tvexport")) + " " + quote(card + "/header/model.tvb") + " -o " + quote(h), &out,
                &err),
            0)
      << err;
  EXPECT_TRUE(read_text(h) == read_text(card + "/header/model.h")) << "the board's model.h differs from tvexport's";
}

namespace {

// The board (tvsim's Train) and tvtrain on the same card photos, split, preset and seed: the same
// weights to the bit, as both run the core's one training session (tv/train/train_session.h).
void expect_board_trains_as_tvtrain(const std::string& preset, int epochs) {
  const std::vector<std::string> classes = {"0Blank", "1Circle"};
  const std::string card = make_card(tvtest::shared_path("datasets/webmcu-a/images"), classes);
  const std::string common = " --preset " + preset + " --epochs " + std::to_string(epochs);
  const SimRun r = sim("--sd " + card + labels_arg(classes) + common, to_train(2));
  ASSERT_EQ(r.status, 0) << r.err;
  // 9 photos per class: the default network starts from the built-in backbone, as tvtrain --start auto.
  if (preset == "tinyvision")
    EXPECT_TRUE(has(r.out,
                    "Start: the built-in backbone, its head imprinted from the 12 training photos (9 in the "
                    "smallest class)"))
        << r.out;
  const std::string host = tvtest::temp_dir("host") + "/host.tvb";
  std::string out, err;
  ASSERT_EQ(tvtest::run_command(quote(tvtest::bin_path("tvtrain")) + " " + quote(card + "/images") + common +
                                    " --seed 1 --no-curve -q -o " + quote(host),
                                &out, &err),
            0)
      << err;
  const tvh::LoadedModel device = tvh::load_model(card + "/header/model.tvb");
  const tvh::LoadedModel laptop = tvh::load_model(host);
  ASSERT_EQ(device.params.size(), laptop.params.size());
  EXPECT_TRUE(device.params == laptop.params) << "the board's weights differ from tvtrain's";
  EXPECT_EQ(device.labels, laptop.labels);
}

}  // namespace

TEST(Tvsim, TrainsTheSameBitsAsTvtrain) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvtrain");
  TV_REQUIRE_SHARED("datasets/webmcu-a/images");
  expect_board_trains_as_tvtrain("webmcu", 5);
}

// The default preset's recipe: augmentation (flip, shift, brightness), warmup and cosine learning
// rates, the batch mean and gradient clipping, on both sides.
TEST(Tvsim, TrainsTheSameBitsAsTvtrainWithTheDefaultRecipe) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvtrain");
  TV_REQUIRE_SHARED("datasets/webmcu-a/images");
  expect_board_trains_as_tvtrain("tinyvision", 4);
}

TEST(Tvsim, InferMatchesTvtrainEvalOnTheBoardsOwnModel) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvtrain");
  TV_REQUIRE_SHARED("datasets/webmcu-a/images");
  const std::vector<std::string> classes = {"0Blank", "1Circle"};
  const std::string images = tvtest::shared_path("datasets/webmcu-a/images");
  const std::string card = make_card(images, classes);
  const std::string cam = make_camera(images, classes);
  // train briefly (so predictions are not all right), then reboot and infer every image
  ASSERT_EQ(sim("--sd " + card + labels_arg(classes) + " --preset webmcu --epochs 2", to_train(2)).status, 0);
  const SimRun r = sim("--sd " + card + " --camera " + cam + labels_arg(classes), to_infer(2));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "Weights: SD (/header/model.tvb"));
  const auto preds = predictions(r.out);
  ASSERT_EQ(preds.size(), 18u);
  EXPECT_TRUE(
      std::regex_search(r.out, std::regex("Frame 1: [0-9.]+ ms \\([0-9.]+ FPS\\) Pred: \\S+ \\([0-9]+\\.[0-9]%\\) "
                                          "\\| All: [0-9]+% [0-9]+%\n")));
  EXPECT_EQ(confusion(preds, cam, classes), tvtrain_eval_confusion(card + "/images", card + "/header/model.tvb"));
}

TEST(Tvsim, LoadsTheReferenceMyWeightsBinAndClassifiesAsTheReference) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_SHARED("datasets/webmcu-b/header/myWeights.bin");
  const std::vector<std::string> classes = {"0Blank", "1Cup", "2Pen"};
  const std::string images = tvtest::shared_path("datasets/webmcu-b/images");
  const std::string card = tvtest::temp_dir("card");
  fs::create_directories(card + "/header");
  fs::copy_file(tvtest::shared_path("datasets/webmcu-b/header/myWeights.bin"), card + "/header/myWeights.bin");
  const std::string cam = make_camera(images, classes);
  const SimRun r = sim("--sd " + card + " --camera " + cam + labels_arg(classes), to_infer(3));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out,
                  "Weights: SD (/header/myWeights.bin, the reference firmware's raw weights, 82380 bytes, 3 "
                  "classes)"));
  const auto preds = predictions(r.out);
  ASSERT_EQ(preds.size(), 90u);
  const auto cm = confusion(preds, cam, classes);
  EXPECT_EQ(cm[0][0] + cm[1][1] + cm[2][2], 82);  // the device-trained weights' known score
  TV_REQUIRE_BINARY("tvtrain");
  EXPECT_EQ(cm, tvtrain_eval_confusion(images, card + "/header/myWeights.bin"));

  // the file decides the class count: with 2 configured labels it still loads, its classes unnamed
  const SimRun two = sim("--sd " + card + " --labels a,b", "");
  EXPECT_TRUE(has(two.out, "82380 bytes, 3 classes)")) << two.out;
  EXPECT_TRUE(has(two.out, "  class 2: class2\n"));
  // a file of a size no class count gives is refused, naming it
  write_text(card + "/header/myWeights.bin", std::string(1000, '\0'));
  const SimRun odd = sim("--sd " + card + " --labels a,b", "");
  EXPECT_TRUE(has(odd.out, "SD /header/myWeights.bin refused: it is 1000 bytes")) << odd.out;
  EXPECT_TRUE(has(odd.out, "Weights: backbone"));
}

TEST(Tvsim, RunsInt8ModelsWithTheCoresInt8EngineAsTvtrainDoes) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_SHARED("datasets/webmcu-b/header/myWeights.bin");
  TV_REQUIRE_BINARY("tvquant");
  TV_REQUIRE_BINARY("tvtrain");
  const std::vector<std::string> classes = {"0Blank", "1Cup", "2Pen"};
  const std::string images = tvtest::shared_path("datasets/webmcu-b/images");
  const std::string card = make_card(images, classes);  // the images: for training it further
  fs::create_directories(card + "/header");
  std::string out, err;
  ASSERT_EQ(tvtest::run_command(quote(tvtest::bin_path("tvquant")) + " " +
                                    quote(tvtest::shared_path("datasets/webmcu-b/header/myWeights.bin")) + " --calib " +
                                    quote(images) + " -o " + quote(card + "/header/model.tvb"),
                                &out, &err),
            0)
      << err;
  const std::string cam = make_camera(images, classes);
  const uint32_t int8_crc = file_crc(card + "/header/model.tvb");
  const auto expected = tvtrain_eval_confusion(images, card + "/header/model.tvb");
  // Infer every frame, back to the menu (cursor on Infer), round to Train (past Learn and New class), select it
  const SimRun r = sim("--sd " + card + " --camera " + cam + labels_arg(classes) + " --epochs 1",
                       to_infer(3) + "~frames 90\nl\nttttttl\n");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, ", int8), int8 engine")) << r.out;
  const auto preds = predictions(r.out);
  ASSERT_EQ(preds.size(), 90u);
  EXPECT_EQ(confusion(preds, cam, classes), expected);
  // an int8 model trains further from its dequantized weights (no preset named: the reference network's
  // recipe); the int8 file is kept as the backup
  EXPECT_TRUE(has(r.out, "The loaded model is int8: continuing from its weights dequantized to float")) << r.out;
  EXPECT_TRUE(has(r.out, "Recipe: webmcu (1 epochs, batch 6)"));
  EXPECT_TRUE(has(r.out, "Weights saved to SD"));
  EXPECT_EQ(file_crc(card + "/header/model.tvb.bak"), int8_crc);
  EXPECT_FALSE(tvh::load_model(card + "/header/model.tvb").int8);
}

// ---------------------------------------------------------------- weight tiers

namespace {

void flip_byte(const std::string& path, size_t at) {
  std::string b = read_text(path);
  b[at] = (char)(b[at] ^ 0x40);
  write_text(path, b);
}

}  // namespace

TEST(Tvsim, CorruptOrForeignBlobsAreRefusedWithTheirReason) {
  TV_REQUIRE_BINARY("tvsim");
  const std::string card = card_with_model();
  fs::remove(card + "/header/myWeights.bin");
  flip_byte(card + "/header/model.tvb", 5000);
  SimRun r = sim("--sd " + card + labels_arg(kShapes2), "");
  EXPECT_TRUE(has(r.out, "SD /header/model.tvb refused: CRC-32 mismatch")) << r.out;
  EXPECT_TRUE(has(r.out, "Weights: backbone"));

  // truncated
  std::string b = read_text(card + "/header/model.tvb");
  write_text(card + "/header/model.tvb", b.substr(0, 1000));
  r = sim("--sd " + card + labels_arg(kShapes2), "");
  EXPECT_TRUE(has(r.out, "SD /header/model.tvb refused: the blob is truncated")) << r.out;

  // the model brings its classes: other configured labels (or another count) only name a new model
  const std::string good = card_with_model();
  for (const char* labels : {" --labels a,b,c", " --labels x,y"}) {
    r = sim("--sd " + good + labels, "");
    EXPECT_TRUE(has(r.out, "the model's classes (0blank,1circle) are used")) << r.out;
    EXPECT_TRUE(has(r.out, "=== MENU ===\n> 1. 0blank\n2. 1circle\n3. Train\n"));
    EXPECT_EQ(boot_crc(r.out), hex(file_crc(good + "/header/model.tvb")));
  }
}

TEST(Tvsim, BakedHeaderIsTheSecondTier) {
  TV_REQUIRE_BINARY("tvsim-baked");
  // the baked model (tvtrain defaults -> tvquant -> tvexport, 3 classes) boots an empty card
  SimRun r = sim("--sd " + tvtest::temp_dir("card"), "", "tvsim-baked");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "Weights: baked (model.h, ")) << r.out;
  EXPECT_TRUE(has(r.out, "3 classes")) << r.out;

  // a card model comes first, whatever its classes
  const std::string card = card_with_model();
  r = sim("--sd " + card, "", "tvsim-baked");
  EXPECT_TRUE(has(r.out, "Weights: SD (/header/model.tvb")) << r.out;

  // a corrupted card model (and its reference copy) fall through to the baked one
  fs::remove(card + "/header/myWeights.bin");
  flip_byte(card + "/header/model.tvb", 3000);
  r = sim("--sd " + card + labels_arg(kShapes2), "", "tvsim-baked");
  EXPECT_TRUE(has(r.out, "SD /header/model.tvb refused: CRC-32 mismatch"));
  EXPECT_TRUE(has(r.out, "Weights: baked ("));
}

TEST(Tvsim, CorruptModelFallsBackToTheBackup) {
  TV_REQUIRE_BINARY("tvsim");
  const std::string card = card_with_model();
  ASSERT_EQ(sim("--sd " + card + labels_arg(kShapes2) + " --epochs 1", to_train(2)).status, 0);
  const uint32_t previous = file_crc(card + "/header/model.tvb.bak");
  flip_byte(card + "/header/model.tvb", 100);
  const SimRun r = sim("--sd " + card + labels_arg(kShapes2), "");
  EXPECT_TRUE(has(r.out, "SD /header/model.tvb refused: CRC-32 mismatch"));
  EXPECT_TRUE(has(r.out, "SD: using the backup /header/model.tvb.bak"));
  EXPECT_EQ(boot_crc(r.out), hex(previous));
}

// ---------------------------------------------------------------- faults

TEST(Tvsim, PowerCutAtAnyPointOfASaveLeavesALoadableModel) {
  TV_REQUIRE_BINARY("tvsim");
  const std::string base = card_with_model();
  const uint32_t old_crc = file_crc(base + "/header/model.tvb");
  const size_t blob = fs::file_size(base + "/header/model.tvb");
  const std::string args = labels_arg(kShapes2) + " --epochs 1";
  // an uninterrupted save: how much card work it is, and the model it writes
  const std::string clean = copy_card(base);
  SimRun r = sim("--sd " + clean + args, to_train(2));
  ASSERT_EQ(r.status, 0) << r.err;
  const uint32_t new_crc = file_crc(clean + "/header/model.tvb");
  ASSERT_NE(new_crc, old_crc);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.err, m, std::regex("\\((\\d+) card units\\)")));
  const long long total = std::stoll(m[1].str());
  // units: create model.tvb.tmp, its bytes, rename model.tvb -> .bak, rename .tmp -> model.tvb, then
  // the header and myWeights.bin the same way
  std::vector<long long> cuts = {0, 1, 2, 3, (long long)blob / 2, (long long)blob - 1, (long long)blob};
  for (long long k = 1; k <= 6; ++k) cuts.push_back((long long)blob + k);
  for (long long k = 1; k <= 12; ++k) cuts.push_back(total - k);
  cuts.push_back((long long)blob + 300000);
  int recovered = 0, old_seen = 0, new_seen = 0;
  for (long long cut : cuts) {
    SCOPED_TRACE("power cut after " + std::to_string(cut) + " of " + std::to_string(total) + " card units");
    const std::string card = copy_card(base);
    r = sim("--sd " + card + args + " --power-cut-at " + std::to_string(cut), to_train(2));
    EXPECT_EQ(r.status, 86) << r.err;
    const SimRun boot = sim("--sd " + card + labels_arg(kShapes2), "");
    ASSERT_EQ(boot.status, 0);
    const std::string crc = boot_crc(boot.out);
    EXPECT_TRUE(crc == hex(old_crc) || crc == hex(new_crc)) << boot.out;
    old_seen += crc == hex(old_crc);
    new_seen += crc == hex(new_crc);
    recovered += has(boot.out, "finished an interrupted save (/header/model.tvb.tmp");
  }
  EXPECT_GT(old_seen, 0);
  EXPECT_GT(new_seen, 0);
  EXPECT_EQ(recovered, 1);  // exactly one cut falls between the two renames
}

TEST(Tvsim, AFailedWriteKeepsThePreviousModel) {
  TV_REQUIRE_BINARY("tvsim");
  const std::string card = card_with_model();
  const std::string before = read_text(card + "/header/model.tvb");
  for (long long at : {0LL, 1000LL, 56000LL}) {
    SCOPED_TRACE("writes fail after byte " + std::to_string(at));
    const SimRun r = sim("--sd " + card + labels_arg(kShapes2) + " --epochs 1 --sd-fail-write-at " + std::to_string(at),
                         to_train(2));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(has(r.out, "SAVE FAILED: writing /header/model.tvb.tmp failed")) << r.out;
    EXPECT_TRUE(read_text(card + "/header/model.tvb") == before);
    EXPECT_FALSE(fs::exists(card + "/header/model.tvb.tmp"));
  }
  const SimRun boot = sim("--sd " + card + labels_arg(kShapes2), "");
  EXPECT_EQ(boot_crc(boot.out), hex(tv::crc32(0, before.data(), before.size())));
}

// ---------------------------------------------------------------- stopping, memory

TEST(Tvsim, SerialXStopsTrainingWithinABatchAndSaves) {
  TV_REQUIRE_BINARY("tvsim");
  const std::string card = make_card(shapes_dir(), kShapes2, 6);
  const SimRun r = sim("--sd " + card + labels_arg(kShapes2), to_train(2) + "x\n");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "Stop requested"));
  EXPECT_TRUE(has(r.out, "--- Training Stopped (6 images trained) ---")) << r.out;
  EXPECT_TRUE(has(r.out, "Weights saved to SD"));
  EXPECT_TRUE(fs::exists(card + "/header/model.tvb"));
}

TEST(Tvsim, ThreeTapsStopTraining) {
  TV_REQUIRE_BINARY("tvsim");
  const std::string card = make_card(shapes_dir(), kShapes2, 6);
  const SimRun r = sim("--sd " + card + labels_arg(kShapes2) + " --epochs 100000", to_train(2) + "~tap 3\n");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "Touch: 3 taps (select)")) << r.out;
  EXPECT_TRUE(has(r.out, "--- Training Stopped ("));
  EXPECT_TRUE(has(r.out, "Weights saved to SD"));
}

TEST(Tvsim, TooLittlePsramToTrainIsSaidWithTheNumbers) {
  TV_REQUIRE_BINARY("tvsim");
  const std::string card = make_card(shapes_dir(), kShapes2, 6);
  const SimRun r = sim("--sd " + card + labels_arg(kShapes2) + " --preset webmcu --psram-bytes 600000", to_train(2));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "Cannot train: the 737104-byte training arena (")) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("does not fit in the \\d+ bytes of PSRAM still free"))) << r.out;
  EXPECT_FALSE(fs::exists(card + "/header/model.tvb"));
}

// Keys typed during training are dropped when the run stops and saves: an impatient `l` pressed four
// times stops it once and does not start Train again (which would overwrite the model and its backup).
// Input sent after the save (here after ~wait) works as usual.
TEST(Tvsim, KeysTypedDuringTrainingAreDroppedWhenItStops) {
  TV_REQUIRE_BINARY("tvsim");
  const std::string card = make_card(shapes_dir(), kShapes2, 6);
  const SimRun r =
      sim("--sd " + card + labels_arg(kShapes2) + " --epochs 100000", to_train(2) + "lllxl\n~wait 10\nt\n");
  ASSERT_EQ(r.status, 0) << r.err;
  size_t runs = 0;
  for (size_t at = 0; (at = r.out.find(">>> Training mode", at)) != std::string::npos; ++at) ++runs;
  EXPECT_EQ(runs, 1u) << r.out;
  EXPECT_TRUE(has(r.out, "--- Training Stopped (")) << r.out;
  EXPECT_TRUE(has(r.out, "Ignored 4 keys sent during training (send them again now)")) << r.out;
  EXPECT_FALSE(fs::exists(card + "/header/model.tvb.bak"));  // saved once
  EXPECT_TRUE(has(r.out, "> 4. Infer\n")) << r.out;          // the `t` after the wait moved the menu
}

// firmware/README.md: a halt exits 1 (as every tool's failure), and the FATAL "class folder" message
// names the folders it ignored (here a name over 31 characters).
TEST(Tvsim, ACardWithoutTwoClassFoldersBootsToNewClassAndNamesTheFoldersItIgnored) {
  TV_REQUIRE_BINARY("tvsim");
  const std::string card = tvtest::temp_dir("card");
  const std::string long_name(40, 'x');
  fs::create_directories(card + "/images/cat");
  fs::create_directories(card + "/images/" + long_name);
  const SimRun r = sim("--sd " + card, "");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(has(r.out, "ignored in /images (not usable as class names): '" + long_name + "'")) << r.out;
  EXPECT_TRUE(has(r.out, "No model yet: a model needs 2 class folders in /images/.")) << r.out;
  EXPECT_TRUE(has(r.out, "> 1. New class\n2. cat (new: Learn adds it)\n")) << r.out;
  EXPECT_FALSE(has(r.out, "FATAL")) << r.out;
  // without a card and without a model, nothing can start: one sentence, exit 1
  const SimRun none = sim("", "");
  EXPECT_EQ(none.status, 1) << none.out;
  EXPECT_TRUE(has(none.out, "FATAL: no model (SD card or baked) and no SD card: insert a FAT32 microSD card"))
      << none.out;
}

// firmware/README.md's keystrokes: with N classes, N `t` then `l` is Train and N + 1 `t` then `l` is Infer.
TEST(Tvsim, TheReadmesMenuKeystrokesReachTrainAndInfer) {
  TV_REQUIRE_BINARY("tvsim");
  for (const auto& [labels, train, infer] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"a,b", "ttl\n", "tttl\n"}, {"a,b,c", "tttl\n", "ttttl\n"}}) {
    SCOPED_TRACE(labels);
    const std::string card = tvtest::temp_dir("card");
    EXPECT_TRUE(has(sim("--sd " + card + " --labels " + labels, train).out, ">>> Training mode"));
    EXPECT_TRUE(has(sim("--sd " + card + " --labels " + labels, infer).out, ">>> Inference mode"));
  }
}
