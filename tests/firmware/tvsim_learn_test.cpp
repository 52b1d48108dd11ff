// The board's Learn (firmware/app/learn.cpp) through tvsim: new class folders imprinted and the head
// update on cached features (the old classes distilled), the same bytes as `tvtrain CARD/images --init
// MODEL --update head`; New class from the serial port ('n NAME') and from the touch pad (class<k>),
// captured, learned and recognised.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "host/model/model_io.h"
#include "sim_support.h"
#include "test_support.h"
#include "tv/train/imprint.h"

namespace fs = std::filesystem;
using namespace simtest;

namespace {

const std::vector<std::string> kOld = {"0Blank", "1Cup"};
const std::vector<std::string> kAll = {"0Blank", "1Cup", "2Pen"};

std::string webmcu_b() {
  return tvtest::shared_path("datasets/webmcu-b/images");
}

// Menu keystrokes from the first item to Learn: the model's classes, Train, Infer, then Learn.
std::string to_learn(size_t classes) {
  return std::string(classes + 2, 't') + "l\n";
}

std::string run_ok(const std::string& command) {
  std::string out, err;
  EXPECT_EQ(tvtest::run_command(command, &out, &err), 0) << command << "\n" << err;
  return out + err;
}

// A model tvtrain trained on the first `per_class` photos of webmcu-b's first two classes.
std::string base_model(const std::string& preset, int per_class, int epochs) {
  const std::string images = make_card(webmcu_b(), kOld, (size_t)per_class) + "/images";
  const std::string model = tvtest::temp_dir("base") + "/base.tvb";
  run_ok(quote(tvtest::bin_path("tvtrain")) + " " + quote(images) + " --preset " + preset + " --epochs " +
         std::to_string(epochs) + " --seed 1 --no-curve --no-report -q -o " + quote(model));
  return model;
}

std::string tvtrain_init(const std::string& images, const std::string& model, int epochs) {
  const std::string out = tvtest::temp_dir("host") + "/host.tvb";
  run_ok(quote(tvtest::bin_path("tvtrain")) + " " + quote(images) + " --init " + quote(model) +
         " --update head --epochs " + std::to_string(epochs) + " --seed 1 --no-curve --no-report -q -o " + quote(out));
  return out;
}

// The card's model learned on the board against tvtrain --init on the same card: the same weights and labels.
// Returns the board's output.
std::string expect_learns_as_tvtrain(const std::string& card, const std::string& model, size_t model_classes,
                                     int epochs) {
  fs::create_directories(card + "/header");
  fs::copy_file(model, card + "/header/model.tvb", fs::copy_options::overwrite_existing);
  const SimRun r = sim("--sd " + card + " --epochs " + std::to_string(epochs), to_learn(model_classes));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "--- Learning Complete ---")) << r.out;
  const std::string host = tvtrain_init(card + "/images", model, epochs);
  const tvh::LoadedModel device = tvh::load_model(card + "/header/model.tvb");
  const tvh::LoadedModel laptop = tvh::load_model(host);
  EXPECT_EQ(device.labels, laptop.labels);
  EXPECT_EQ(device.params.size(), laptop.params.size());
  EXPECT_TRUE(device.params == laptop.params) << "the board's learned weights differ from tvtrain --init's";
  EXPECT_NE(device.provenance.find("update=head"), std::string::npos) << device.provenance;
  // a class added: both distilled the old classes' photos and say so
  const bool added = device.labels.size() > model_classes;
  for (const tvh::LoadedModel* m : {&device, &laptop})
    EXPECT_EQ(m->provenance.find("distill=temperature 2, weight 1\n") != std::string::npos, added) << m->provenance;
  EXPECT_EQ(has(r.out, "Distillation: the " + std::to_string(model_classes) + " old classes'"), added) << r.out;
  return r.out;
}

}  // namespace

TEST(TvsimLearn, AddsANewClassWithTheSameBytesAsTvtrainInitUpdateHead) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvtrain");
  TV_REQUIRE_SHARED("datasets/webmcu-b/images");
  const std::string model = base_model("tinyvision", 10, 6);
  const std::string card = make_card(webmcu_b(), kAll, 10);
  fs::create_directories(card + "/images/3Empty");  // a new folder without photos is left out, said
  fs::create_directories(card + "/header");
  fs::copy_file(model, card + "/header/model.tvb");
  const SimRun r = sim("--sd " + card + " --epochs 7", to_learn(2));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "3. Train")) << r.out;
  EXPECT_TRUE(has(r.out, "5. Learn")) << r.out;
  EXPECT_TRUE(has(r.out, "7. 2Pen (new: Learn adds it)")) << r.out;
  EXPECT_TRUE(has(r.out, "/images/3Empty has no photos yet: it is left out")) << r.out;
  EXPECT_TRUE(has(r.out, "New class 2: 2Pen (10 photos)")) << r.out;
  EXPECT_TRUE(has(r.out, "Imprinted class 2 (2Pen) from 7 training photos")) << r.out;
  EXPECT_TRUE(has(r.out, "Val: 9 images  Train: 21 images")) << r.out;
  EXPECT_TRUE(has(r.out,
                  "Distillation: the 2 old classes' 14 training photos keep the model's soft targets "
                  "(temperature 2, weight 1)"))
      << r.out;
  EXPECT_TRUE(has(r.out, "of their features")) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("Time: features [0-9.]+ s for 30 photos \\([0-9.]+ ms per photo, "
                                                  "decode included\\), imprinting [0-9.]+ s, head update [0-9.]+ s "
                                                  "for 147 images \\([0-9.]+ ms per image\\), [0-9.]+ s in all")))
      << r.out;
  // what the head update cost against a full update of the same epochs, as tvtrain --json reports it
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m,
                                std::regex("Head update: ([0-9]+) FLOPs \\(a full update of the same epochs: "
                                           "([0-9]+), [0-9]+x more\\); board peak ([0-9]+) bytes")))
      << r.out;
  EXPECT_GT(std::stoull(m[2]), 10 * std::stoull(m[1]));  // 7 epochs (the recipe's 60 give over 100x: docs)
  EXPECT_TRUE(has(r.out, "Weights saved to SD: /header/model.tvb")) << r.out;
  // JSON of tvtrain on the same card: the same FLOPs and peak
  const std::string host = tvtest::temp_dir("hostjson") + "/h.tvb";
  const auto j =
      tvtest::run_json(quote(tvtest::bin_path("tvtrain")) + " " + quote(card + "/images") + " --init " + quote(model) +
                       " --update head --epochs 7 --seed 1 --no-curve --no-report -q --json -o " + quote(host));
  EXPECT_EQ(j["train_flops"].get<uint64_t>(), std::stoull(m[1]));
  EXPECT_EQ(j["memory"]["board_peak_bytes"].get<uint64_t>(), std::stoull(m[3]));
  const tvh::LoadedModel device = tvh::load_model(card + "/header/model.tvb");
  const tvh::LoadedModel laptop = tvh::load_model(host);
  EXPECT_EQ(device.labels, kAll);
  EXPECT_EQ(device.labels, laptop.labels);
  EXPECT_TRUE(device.params == laptop.params) << "the board's learned weights differ from tvtrain --init's";
  // reboot: the learned model with its three classes; 2Pen is a class now, not a new folder
  const SimRun again = sim("--sd " + card, "");
  EXPECT_TRUE(has(again.out, "class 2: 2Pen")) << again.out;
  EXPECT_TRUE(has(again.out, "7. New class")) << again.out;
  EXPECT_TRUE(has(again.out, "8. 3Empty (new: Learn adds it)")) << again.out;
}

TEST(TvsimLearn, TheWebmcuNetworkLearnsAsTvtrain) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvtrain");
  TV_REQUIRE_SHARED("datasets/webmcu-b/images");
  expect_learns_as_tvtrain(make_card(webmcu_b(), kAll, 8), base_model("webmcu", 8, 3), 2, 4);
}

TEST(TvsimLearn, AnInt8ModelIsDequantizedAndLearnsAsTvtrain) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvtrain");
  TV_REQUIRE_BINARY("tvquant");
  TV_REQUIRE_SHARED("datasets/webmcu-b/images");
  const std::string model = base_model("tinyvision", 8, 4);
  const std::string q8 = tvtest::temp_dir("q8") + "/base.q8.tvb";
  const std::string calib = make_card(webmcu_b(), kOld, 8) + "/images";
  run_ok(quote(tvtest::bin_path("tvquant")) + " " + quote(model) + " --calib " + quote(calib) + " -q -o " + quote(q8));
  ASSERT_TRUE(tvh::load_model(q8).int8);
  expect_learns_as_tvtrain(make_card(webmcu_b(), kAll, 8), q8, 2, 5);
}

// A model class without a photo on the card keeps its row and bias, to the bit; tvtrain does the same.
TEST(TvsimLearn, AClassWithoutPhotosKeepsItsRow) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvtrain");
  TV_REQUIRE_SHARED("datasets/webmcu-b/images");
  const std::string model = base_model("tinyvision", 8, 4);
  const std::string card = make_card(webmcu_b(), {"0Blank", "2Pen"}, 8);
  expect_learns_as_tvtrain(card, model, 2, 3);
  const tvh::LoadedModel before = tvh::load_model(model);
  const tvh::LoadedModel after = tvh::load_model(card + "/header/model.tvb");
  ASSERT_EQ(after.labels, kAll);
  const int layer = tv::imprint_layer(*after.plan);
  ASSERT_GE(layer, 0);
  const tv::LayerPlan& dense = after.plan->layers[layer];
  const size_t in = dense.in.size(), base = dense.param_offset;
  const size_t old_base = before.plan->layers[layer].param_offset;
  int changed = 0;
  for (size_t k = 0; k < in; ++k) {
    EXPECT_EQ(after.params[base + in + k], before.params[old_base + in + k]) << "1Cup's weight " << k;
    changed += after.params[base + k] != before.params[old_base + k];
  }
  EXPECT_EQ(after.params[base + 3 * in + 1], before.params[old_base + 2 * in + 1]) << "1Cup's bias";
  EXPECT_GT(changed, 0) << "0Blank's row trained";
}

// New class from the serial port: 'n 2cross' makes /images/2cross and starts capturing into it; Learn adds
// it; Infer then tells crosses from the old classes. On datasets/shapes (no ../shared needed): a base
// trained on 20 blanks and 20 circles, ten crosses captured, the last 16 photos of each class shown.
// Measured (the bits are the same on every build): 16/16 blanks, 12/16 circles, 12/16 crosses (imprinting
// alone: 0/16 crosses; a base that knows two classes has features made to tell those two apart, see
// docs/on-device-learning.md).
TEST(TvsimLearn, NewClassFromSerialIsCapturedLearnedAndRecognised) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvtrain");
  const std::vector<std::string> all = {"0blank", "1circle", "2cross"};
  const std::string card = make_card(shapes_dir(), {"0blank", "1circle"}, 20);
  const std::string model = tvtest::temp_dir("base") + "/base.tvb";
  run_ok(quote(tvtest::bin_path("tvtrain")) + " " + quote(card + "/images") +
         " --seed 1 --no-curve --no-report -q -o " + quote(model));
  fs::create_directories(card + "/header");
  fs::copy_file(model, card + "/header/model.tvb");
  const auto files = [&](size_t c) { return sorted_jpegs(shapes_dir() + "/" + all[c]); };
  const std::string crosses = tvtest::temp_dir("crosses");  // the camera shows ten crosses
  for (size_t i = 0; i < 10; ++i) fs::copy_file(shapes_dir() + "/2cross/" + files(2)[i], crosses + "/" + files(2)[i]);
  SimRun r = sim("--sd " + card + " --camera " + crosses, "n 2cross\n" + std::string(10, 't') + "l\n");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "New class: 2cross (capture its photos, then Learn adds it to the model)")) << r.out;
  EXPECT_TRUE(has(r.out, ">>> Collection mode: 2cross")) << r.out;
  EXPECT_TRUE(has(r.out, "Saved: /images/2cross/img_9.jpg")) << r.out;
  EXPECT_EQ(sorted_jpegs(card + "/images/2cross").size(), 10u);
  r = sim("--sd " + card, to_learn(2));
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_TRUE(has(r.out, "--- Learning Complete ---")) << r.out;
  EXPECT_TRUE(has(r.out, "Imprinted class 2 (2cross) from 7 training photos")) << r.out;
  const std::string cam = tvtest::temp_dir("cam");  // photos the board never saw
  for (size_t c = 0; c < all.size(); ++c)
    for (size_t i = 20; i < files(c).size(); ++i)
      fs::copy_file(shapes_dir() + "/" + all[c] + "/" + files(c)[i],
                    cam + "/" + std::to_string(c) + "_" + all[c] + "_" + files(c)[i]);
  r = sim("--sd " + card + " --camera " + cam, to_infer(3));
  ASSERT_EQ(r.status, 0) << r.err;
  const auto preds = predictions(r.out);
  const auto cm = confusion(preds, cam, all);
  ASSERT_EQ(preds.size(), 48u);
  std::printf("Infer after Learn: blanks %d/16, circles %d/16, crosses %d/16\n", cm[0][0], cm[1][1], cm[2][2]);
  EXPECT_GE(cm[2][2], 10) << "crosses recognised: " << cm[2][2] << " of 16";
  EXPECT_GE(cm[0][0] + cm[1][1], 26) << "old classes right: " << cm[0][0] + cm[1][1] << " of 32";
}

// New class from the touch pad: the menu's New class item makes /images/class<k> (k = the next class
// index) and captures into it; taps capture.
TEST(TvsimLearn, NewClassFromTheTouchPadGetsAnAutomaticName) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_SHARED("datasets/webmcu-b/images");
  const std::string card = make_card(webmcu_b(), kOld, 4);
  const std::string cam = make_camera(webmcu_b(), {"2Pen"});
  // items: 0Blank, 1Cup, Train, Infer, Learn, New class
  const SimRun r =
      sim("--sd " + card + " --camera " + cam, "~tap 1\n~tap 1\n~tap 1\n~tap 1\n~tap 1\n~tap 3\n~tap 1\n~tap 1\n");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "New class: class2")) << r.out;
  EXPECT_EQ(sorted_jpegs(card + "/images/class2").size(), 2u) << r.out;
  // 'n' alone names it automatically too, with the next free index
  const SimRun r2 = sim("--sd " + card + " --camera " + cam, "n\nt\n");
  EXPECT_TRUE(has(r2.out, "New class: class3")) << r2.out;
  EXPECT_EQ(sorted_jpegs(card + "/images/class3").size(), 1u);
  // a name no folder can have is refused with the rule
  const SimRun r3 = sim("--sd " + card, "n a/b\n");
  EXPECT_TRUE(has(r3.out, "'a/b' cannot name a class folder")) << r3.out;
}

// Learn that does not fit the PSRAM says so with the numbers before decoding, and changes nothing: the
// model on the card, its classes in the menu. Train says that it leaves a new class folder out.
TEST(TvsimLearn, TooLittlePsramChangesNothingAndTrainNamesTheNewFolder) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvtrain");
  const std::string card = make_card(shapes_dir(), {"0blank", "1circle", "2cross"}, 10);
  const std::string model = tvtest::temp_dir("base") + "/base.tvb";
  const std::string base_set = make_card(shapes_dir(), {"0blank", "1circle"}, 10) + "/images";
  run_ok(quote(tvtest::bin_path("tvtrain")) + " " + quote(base_set) +
         " --epochs 2 --seed 1 --no-curve --no-report -q -o " + quote(model));
  fs::create_directories(card + "/header");
  fs::copy_file(model, card + "/header/model.tvb");
  const uint32_t crc = file_crc(model);
  const SimRun r = sim("--sd " + card + " --psram-bytes 450000", to_learn(2));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("Cannot learn: the feature cache of 30 photos needs \\d+ bytes of "
                                                  "PSRAM and decoding a 240x240 photo 172800 more, \\d+ are free")))
      << r.out;
  EXPECT_FALSE(has(r.out, "skipped")) << r.out;  // nothing was decoded
  EXPECT_EQ(file_crc(card + "/header/model.tvb"), crc);
  EXPECT_FALSE(fs::exists(card + "/header/model.tvb.bak"));
  EXPECT_TRUE(has(r.out.substr(r.out.find("Cannot learn")), "7. 2cross (new: Learn adds it)")) << r.out;
  const SimRun t = sim("--sd " + card + " --epochs 1", to_train(2));
  ASSERT_EQ(t.status, 0) << t.err;
  EXPECT_TRUE(has(t.out,
                  "Note: /images/2cross is not a class of the model, so Train leaves it out: Learn adds new "
                  "classes"))
      << t.out;
  EXPECT_TRUE(has(t.out, "--- Training Complete ---")) << t.out;
}

// A new class with fewer photos than the old ones: its photos repeat up to the old classes' mean count
// (tv::balanced_samples), on the board as in tvtrain (the same bytes), and the board says so.
TEST(TvsimLearn, AFewPhotosOfANewClassRepeatUpToTheOldClassesMeanAsInTvtrain) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvtrain");
  TV_REQUIRE_SHARED("datasets/webmcu-b/images");
  const std::string model = base_model("tinyvision", 10, 4);
  const std::string card = make_card(webmcu_b(), kAll, 10);
  std::vector<fs::path> pens;
  for (const auto& e : fs::directory_iterator(card + "/images/2Pen")) pens.push_back(e.path());
  std::sort(pens.begin(), pens.end());
  for (size_t i = 4; i < pens.size(); ++i) fs::remove(pens[i]);  // 4 photos
  const std::string out = expect_learns_as_tvtrain(card, model, 2, 4);
  // 7 training photos in each old class, 1 of the new class (3 validate): it repeats to 7, 21 samples
  // from 15 photos, 3 batches of 8 per epoch
  EXPECT_TRUE(has(out,
                  "The new classes' photos repeat up to the old classes' mean count: 21 samples per epoch "
                  "from 15 photos"))
      << out;
  EXPECT_TRUE(has(out, "Training: 21 samples, 12 batches (4 epochs of 3, batch 8")) << out;
  EXPECT_FALSE(has(out, "Batch 13/12")) << out;
}

namespace {

// A model tvtrain trained on the card's photos, installed as the card's model; returns its path (a copy
// kept outside the card).
std::string card_with_base_model(const std::string& card) {
  const std::string model = tvtest::temp_dir("learn-base") + "/base.tvb";
  run_ok(quote(tvtest::bin_path("tvtrain")) + " " + quote(card + "/images") +
         " --seed 1 --no-curve --no-report -q -o " + quote(model));
  fs::create_directories(card + "/header");
  fs::copy_file(model, card + "/header/model.tvb");
  return model;
}

}  // namespace

// Learn with a new class of two photos: the thin class is warned with tvtrain's threshold (5 training
// photos), the classes the model had are validated before and after, a worse result is said, and the
// previous model stays on the card as the backup.
TEST(TvsimLearn, AThinNewClassIsWarnedAndTheOldClassesAreComparedBeforeAndAfter) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvtrain");
  const std::string card = make_card(shapes_dir(), {"0blank", "1circle"}, 20);
  const std::string model = card_with_base_model(card);
  fs::create_directories(card + "/images/2cross");
  const std::vector<std::string> crosses = sorted_jpegs(shapes_dir() + "/2cross");
  for (size_t i = 0; i < 2; ++i)
    fs::copy_file(shapes_dir() + "/2cross/" + crosses[i], card + "/images/2cross/" + crosses[i]);
  const SimRun r = sim("--sd " + card, to_learn(2));
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_TRUE(has(r.out, "--- Learning Complete ---")) << r.out;
  EXPECT_TRUE(has(r.out,
                  "Warning: class 2cross has only 1 training photo: 5 or more per class are needed to learn "
                  "anything; capture more"))
      << r.out;
  const std::regex line(
      R"(The 2 classes the model had: (\d+)/(\d+) validation photos right before Learn, (\d+)/(\d+) after)");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, line)) << r.out;
  EXPECT_EQ(m[2].str(), "6");  // the last 3 photos of each old class validate
  const bool worse = std::stoi(m[3].str()) < std::stoi(m[1].str());
  EXPECT_EQ(has(r.out, "Warning: the learned model validates worse on the classes it had"), worse) << r.out;
  std::printf("Old classes before/after Learn with a 2-photo class: %s/%s -> %s/%s\n", m[1].str().c_str(),
              m[2].str().c_str(), m[3].str().c_str(), m[4].str().c_str());
  EXPECT_EQ(read_text(card + "/header/model.tvb.bak"), read_text(model)) << "the previous model is the backup";
}

// A new class whose photos are another class's (circles filed as 2twin): the old circles' validation
// photos go to the twin, and Learn says the learned model is worse, keeping the previous one as backup.
TEST(TvsimLearn, ALearnedModelThatValidatesWorseIsSaidAndThePreviousIsTheBackup) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvtrain");
  const std::string card = make_card(shapes_dir(), {"0blank", "1circle"}, 20);
  const std::string model = card_with_base_model(card);
  fs::create_directories(card + "/images/2twin");
  const std::vector<std::string> circles = sorted_jpegs(shapes_dir() + "/1circle");
  for (size_t i = 20; i < circles.size(); ++i)
    fs::copy_file(shapes_dir() + "/1circle/" + circles[i], card + "/images/2twin/" + circles[i]);
  const SimRun r = sim("--sd " + card, to_learn(2));
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_TRUE(has(r.out, "--- Learning Complete ---")) << r.out;
  EXPECT_TRUE(has(r.out, "Warning: the learned model validates worse on the classes it had")) << r.out;
  EXPECT_TRUE(has(r.out, "the previous model is kept as /header/model.tvb.bak (tvlink push it to go back)")) << r.out;
  EXPECT_EQ(read_text(card + "/header/model.tvb.bak"), read_text(model));
}
