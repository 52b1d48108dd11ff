// Pretraining and starting from a backbone, through the real tvtrain and tvexport: a pretraining set drawn
// in memory gives the same backbone bytes for any --threads and says it is a backbone; the built-in
// backbones' headers are what tvexport makes of their .tvb files; --start picks, says and records its
// start; the refusals name what to do.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>

#include "host/base/files.h"
#include "host/model/model_io.h"
#include "host/photos/jpeg.h"
#include "host/train/init_model.h"
#include "test_support.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const char* const kNoSideFiles = " -q --no-curve --no-confusion --no-report";
const char* const kSaidNoSideFiles = " --no-curve --no-confusion --no-report";

std::string tvtrain_cmd(const std::string& args) {
  return tvtest::tool_command("tvtrain") + " " + args;
}

// A 64x64 photo of class c: a noisy background with a block of the class's colour, moved per photo.
std::vector<uint8_t> block_photo(int c, int i) {
  std::mt19937 rng((unsigned)(c * 7919 + i));
  std::uniform_int_distribution<int> noise(20, 90), jitter(-6, 6);
  std::vector<uint8_t> px(64 * 64 * 3);
  for (auto& p : px) p = (uint8_t)noise(rng);
  const int x0 = 20 + jitter(rng), y0 = 20 + jitter(rng);
  for (int y = y0; y < y0 + 20; ++y)
    for (int x = x0; x < x0 + 20; ++x) px[(size_t)(y * 64 + x) * 3 + (size_t)c] = 230;
  return px;
}

// `per` JPEGs of each of `classes` classes (red, green, blue blocks).
std::string block_photos(const std::string& tag, int classes, int per) {
  const std::string root = tvtest::temp_dir(tag);
  for (int c = 0; c < classes; ++c) {
    const std::string dir = root + "/" + std::string(1, (char)('a' + c)) + "_class";
    fs::create_directories(dir);
    for (int i = 0; i < per; ++i) {
      const std::vector<uint8_t> px = block_photo(c, i);
      const std::vector<uint8_t> jpg = tvh::encode_jpeg(px.data(), 64, 64, 3, 90);
      tvtest::write_text(dir + "/" + std::to_string(i) + ".jpg", std::string(jpg.begin(), jpg.end()));
    }
  }
  return root;
}

std::string file_bytes(const std::string& path) {
  return tvtest::read_text(path);
}

}  // namespace

TEST(TvtrainBackbone, APretrainingRunGivesTheSameBackboneForAnyThreadCountAndSaysItIsOne) {
  const std::string dir = tvtest::temp_dir("pretrain");
  const std::string spec = "procedural:mixed,classes=6,images=5,seed=3";
  for (int threads : {1, 2, 3}) {
    const std::string out = dir + "/bb" + std::to_string(threads) + ".tvb";
    std::string err;
    ASSERT_EQ(tvtest::run_command(tvtrain_cmd(spec + " --input 32x32x3 --epochs 2 --threads " +
                                              std::to_string(threads) + " -o " + tvtest::quoted(out) + kNoSideFiles),
                                  nullptr, &err),
              0)
        << err;
  }
  EXPECT_EQ(file_bytes(dir + "/bb1.tvb"), file_bytes(dir + "/bb2.tvb"));
  EXPECT_EQ(file_bytes(dir + "/bb1.tvb"), file_bytes(dir + "/bb3.tvb"));
  const tvh::LoadedModel m = tvh::load_model(dir + "/bb1.tvb");
  EXPECT_EQ(tvh::provenance_value(m.provenance, "role"), "backbone");
  EXPECT_EQ(tvh::provenance_value(m.provenance, "generator"), spec);
  ASSERT_EQ(m.labels.size(), 6u);
  EXPECT_EQ(m.labels[0], "fractal000");
  EXPECT_EQ(m.labels[1], "leaves001");
  // A spec that is not one: a usage error with the form.
  const tvtest::CommandResult bad =
      tvtest::run_capture(tvtrain_cmd("procedural:clouds -o " + tvtest::quoted(dir + "/x.tvb") + kNoSideFiles));
  EXPECT_EQ(bad.status, 2);
  EXPECT_TRUE(tvtest::contains(bad.err, "'clouds' is not a family; write procedural:FAMILY")) << bad.err;
  const tvtest::CommandResult key =
      tvtest::run_capture(tvtrain_cmd("procedural:leaves,size=9 -o " + tvtest::quoted(dir + "/x.tvb") + kNoSideFiles));
  EXPECT_EQ(key.status, 2);
  EXPECT_TRUE(tvtest::contains(key.err, "'size=9' is not a setting")) << key.err;
  EXPECT_FALSE(fs::exists(dir + "/x.tvb"));
}

// The firmware and tvtrain bake the headers; they must be tvexport's output of the committed .tvb files
// (scripts/make-backbones.sh; bench/backbone_check.sh checks the .tvb files against the pretraining command).
TEST(TvtrainBackbone, TheBuiltInHeadersAreWhatTvexportMakesOfTheBackboneFiles) {
  for (const std::string input : {"64x64x3", "64x64x1"}) {
    const std::string tvb = tvtest::source_path("common/src/tv/backbones/tinyvision-" + input + ".tvb");
    const std::string header = tvtest::source_path("common/src/tv/backbones/tinyvision_" + input + ".h");
    const std::string out = tvtest::temp_dir("bb-header") + "/h.h";
    std::string upper = input;
    for (char& ch : upper) ch = (char)std::toupper((unsigned char)ch);
    std::string err;
    ASSERT_EQ(tvtest::run_command(tvtest::tool_command("tvexport") + " " + tvtest::quoted(tvb) +
                                      " --name TV_BACKBONE_" + upper + " -o " + tvtest::quoted(out),
                                  nullptr, &err),
              0)
        << err;
    EXPECT_TRUE(tvtest::contains(err, "is a backbone: its pretraining head (")) << err;
    EXPECT_TRUE(tvtest::read_text(out) == tvtest::read_text(header))
        << header << " is not tvexport's header of " << tvb << ": run scripts/make-backbones.sh";
    const tvh::LoadedModel full = tvh::load_model(tvb);
    EXPECT_EQ(tvh::provenance_value(full.provenance, "role"), "backbone");
    EXPECT_GT(full.labels.size(), 16u) << "the file keeps its pretraining head";
  }
}

TEST(TvtrainBackbone, StartIsChosenSaidAndRecordedAndTheSameForAnyThreadCount) {
  const std::string few = block_photos("bb-few", 3, 8);
  const std::string dir = tvtest::temp_dir("bb-start");
  auto train = [&](const std::string& ds, const std::string& extra, const std::string& out, std::string* err) {
    int rc = 0;
    const json j = tvtest::run_json(
        tvtrain_cmd(tvtest::quoted(ds) + " --json -o " + tvtest::quoted(dir + "/" + out) + kSaidNoSideFiles + extra),
        &rc, err);
    EXPECT_EQ(rc, 0) << *err;
    return j;
  };
  std::string err;
  // auto (the default): 8 photos per class are few, the built-in backbone fits the default network.
  json j = train(few, " --epochs 3", "auto.tvb", &err);
  EXPECT_EQ(j["start"], "backbone");
  tvh::LoadedModel m = tvh::load_model(dir + "/auto.tvb");
  EXPECT_EQ(tvh::provenance_value(m.provenance, "start"), "backbone");
  EXPECT_EQ(tvh::provenance_value(m.provenance, "backbone"), "built-in tinyvision-64x64x3");
  EXPECT_EQ(tvh::provenance_value(m.provenance, "update"), "full");
  j = train(few, " --epochs 3 --threads 1", "auto1.tvb", &err);
  EXPECT_EQ(file_bytes(dir + "/auto.tvb"), file_bytes(dir + "/auto1.tvb"));
  j = train(few, " --epochs 3 --start scratch", "scratch.tvb", &err);
  EXPECT_EQ(j["start"], "scratch");
  EXPECT_NE(file_bytes(dir + "/auto.tvb"), file_bytes(dir + "/scratch.tvb"));
  j = train(few, " --epochs 3 --start backbone --update head", "head.tvb", &err);
  EXPECT_EQ(j["start"], "backbone");
  EXPECT_EQ(j["update"], "head");
  // The backbone's layers stay as they were with the head update.
  const tvh::LoadedModel head = tvh::load_model(dir + "/head.tvb");
  const tvh::LoadedModel bb = tvh::load_model(tvtest::source_path("common/src/tv/backbones/tinyvision-64x64x3.tvb"));
  const size_t body = head.plan->layers[head.plan->num_layers - 1].param_offset;
  ASSERT_GT(body, 1000u);
  EXPECT_TRUE(std::equal(head.params.begin(), head.params.begin() + (long)body, bb.params.begin()));
  // More photos than the backbone helps with: scratch, said.
  const std::string many = block_photos("bb-many", 2, 21);
  j = train(many, " --epochs 3", "many.tvb", &err);
  EXPECT_EQ(j["start"], "scratch");
  EXPECT_TRUE(tvtest::contains(err, "start: scratch (21 photos in the smallest class; the backbone helps up to 20)"))
      << err;
  // An input no backbone is built for: auto says so and trains from scratch; backbone refuses.
  j = train(few, " --epochs 3 --input 32x32x3", "small.tvb", &err);
  EXPECT_EQ(j["start"], "scratch");
  EXPECT_TRUE(tvtest::contains(err, "start: scratch (no backbone is built in for a 32x32x3 input)")) << err;
  tvtest::CommandResult r = tvtest::run_capture(tvtrain_cmd(
      tvtest::quoted(few) + " --input 32x32x3 --start backbone -o " + tvtest::quoted(dir + "/no.tvb") + kNoSideFiles));
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(tvtest::contains(r.err, "no backbone is built in for a 32x32x3 input; give --backbone FILE")) << r.err;
  // A trained model is not a backbone; --start with --init is a contradiction.
  r = tvtest::run_capture(tvtrain_cmd(tvtest::quoted(few) + " --backbone " + tvtest::quoted(dir + "/scratch.tvb") +
                                      " -o " + tvtest::quoted(dir + "/no.tvb") + kNoSideFiles));
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(tvtest::contains(r.err, "is not a backbone (its provenance has no role=backbone line)")) << r.err;
  r = tvtest::run_capture(tvtrain_cmd(tvtest::quoted(few) + " --start backbone --init " +
                                      tvtest::quoted(dir + "/scratch.tvb") + " -o " + tvtest::quoted(dir + "/no.tvb") +
                                      kNoSideFiles));
  EXPECT_EQ(r.status, 2);
  EXPECT_FALSE(fs::exists(dir + "/no.tvb"));
  // --epochs 0 from the backbone: imprinting alone.
  j = train(few, " --start backbone --epochs 0 --update head", "imprint.tvb", &err);
  EXPECT_EQ(j["start"], "backbone");
}
