// tvtrain --update and --init through the real binary, as child processes, on real JPEGs written by
// the test: frozen weights come out byte-identical, every mode gives the same bytes for any --threads,
// int8 starting models are dequantized as the board does, new classes are imprinted (and the old ones
// distilled), a class without photos keeps its row, and the run's FLOPs and board memory are reported.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>

#include "host/base/files.h"
#include "host/model/model_io.h"
#include "host/photos/jpeg.h"
#include "test_support.h"
#include "tv/int8/q8_dequantize.h"
#include "tv/train/imprint.h"
#include "tv/train/update.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A 48x48 photo: a noisy background and a bright block of class c's colour at its place (0 red top
// left, 1 green bottom right, 2 yellow top right: a new object), shifted a little per photo.
std::vector<uint8_t> photo(int c, int i) {
  std::mt19937 rng((unsigned)(c * 1000 + i));
  std::uniform_int_distribution<int> noise(10, 80), jitter(-3, 3);
  std::vector<uint8_t> px(48 * 48 * 3);
  for (auto& p : px) p = (uint8_t)noise(rng);
  const int x0 = (c == 0 ? 6 : 26) + jitter(rng), y0 = (c == 1 ? 26 : 6) + jitter(rng);
  for (int y = y0; y < y0 + 16; ++y)
    for (int x = x0; x < x0 + 16; ++x) {
      uint8_t* p = &px[(size_t)(y * 48 + x) * 3];
      p[0] = c != 1 ? 240 : p[0];
      p[1] = c != 0 ? 240 : p[1];
    }
  return px;
}

const char* const kClass[3] = {"a_red", "b_green", "c_yellow"};

// A dataset folder with `per` JPEGs of each of the classes listed.
std::string photos(const std::string& tag, const std::vector<int>& classes, int per = 8) {
  const std::string root = tvtest::temp_dir(tag);
  for (int c : classes) {
    fs::create_directories(root + "/" + kClass[c]);
    for (int i = 0; i < per; ++i) {
      const std::vector<uint8_t> px = photo(c, i);
      const std::vector<uint8_t> jpg = tvh::encode_jpeg(px.data(), 48, 48, 3, 90);
      tvtest::write_text(root + "/" + kClass[c] + "/" + std::to_string(i) + ".jpg",
                         std::string(jpg.begin(), jpg.end()));
    }
  }
  return root;
}

std::string tvtrain(const std::string& args) {
  return tvtest::tool_command("tvtrain") + " " + args;
}

const char* const kQuiet = " -q --no-curve --no-confusion --no-report";

// A base model of the red and green classes (the default preset at 32x32x3), trained once per process.
struct Base {
  std::string ds, model;
  Base() {
    ds = photos("upd-base-ds", {0, 1});
    model = tvtest::temp_dir("upd-base") + "/base.tvb";
    EXPECT_EQ(tvtest::run_command(
                  tvtrain(tvtest::quoted(ds) + " --input 32x32x3 --epochs 12 -o " + tvtest::quoted(model) + kQuiet)),
              0);
  }
};
const Base& base() {
  static Base b;
  return b;
}

std::vector<float> params_of(const std::string& path) {
  return tvh::load_model(path).params;
}

// tvtrain on the base's photos from the base model with `args`; the output model's path.
std::string update(const std::string& args, const std::string& tag, const std::string& ds = base().ds) {
  const std::string out = tvtest::temp_dir(tag) + "/m.tvb";
  std::string err;
  EXPECT_EQ(tvtest::run_command(tvtrain(tvtest::quoted(ds) + " --init " + tvtest::quoted(base().model) + " " + args +
                                        " -o " + tvtest::quoted(out) + kQuiet),
                                nullptr, &err),
            0)
      << args << ": " << err;
  return out;
}

TEST(TvtrainUpdate, FrozenWeightsComeOutByteIdentical) {
  const tvh::LoadedModel m = tvh::load_model(base().model);
  const std::vector<float>& before = m.params;
  for (const char* mode : {"head", "sparse=2", "sparse=3"}) {
    SCOPED_TRACE(mode);
    tv::UpdateSpec spec;
    ASSERT_TRUE(tv::parse_update(mode, &spec));
    int first = 0;
    ASSERT_TRUE(tv::update_first_layer(*m.plan, spec, &first).ok());
    const size_t frozen = m.plan->layers[first].param_offset;
    ASSERT_GT(frozen, 0u);
    const std::vector<float> after = params_of(update(std::string("--update ") + mode + " --epochs 3", "upd-frozen"));
    ASSERT_EQ(after.size(), before.size());
    EXPECT_EQ(0, std::memcmp(after.data(), before.data(), frozen * sizeof(float))) << "a frozen weight changed";
    EXPECT_NE(0, std::memcmp(after.data() + frozen, before.data() + frozen, (after.size() - frozen) * sizeof(float)))
        << "nothing trained";
  }
}

TEST(TvtrainUpdate, EveryModeGivesTheSameBytesForAnyThreads) {
  for (const char* mode : {"full", "head", "sparse=2"}) {  // sparse augments (the recipe's), head does not
    SCOPED_TRACE(mode);
    const std::string args = std::string("--update ") + mode + " --epochs 2 --lanes 3 --seed 5";
    const std::string one = update(args + " --threads 1", "upd-t1"), three = update(args + " --threads 3", "upd-t3");
    const std::string a = tvtest::read_text(one), b = tvtest::read_text(three);
    ASSERT_FALSE(a.empty());
    EXPECT_TRUE(a == b) << "--threads 1 and 3 wrote different models";
  }
}

TEST(TvtrainUpdate, HeadRefusesAugmentationAndSaysItIsOff) {
  const std::string out = tvtest::temp_dir("upd-aug") + "/m.tvb";
  const tvtest::CommandResult r =
      tvtest::run_capture(tvtrain(tvtest::quoted(base().ds) + " --init " + tvtest::quoted(base().model) +
                                  " --update head --augment flip -o " + tvtest::quoted(out)));
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(tvtest::contains(r.err, "--update head")) << r.err;
  EXPECT_TRUE(tvtest::contains(r.err, "--augment flip")) << r.err;
  EXPECT_FALSE(fs::exists(out));
  const tvtest::CommandResult ok = tvtest::run_capture(
      tvtrain(tvtest::quoted(base().ds) + " --init " + tvtest::quoted(base().model) +
              " --update head --augment none --epochs 1 -o " + tvtest::quoted(out) + " --no-report --no-curve"));
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_TRUE(tvtest::contains(ok.err, "augmentation is off for head updates")) << ok.err;
  for (const char* bad : {"--update tail", "--update sparse=0", "--update sparse=x", "--update sparse=40"}) {
    const tvtest::CommandResult u =
        tvtest::run_capture(tvtrain(tvtest::quoted(base().ds) + " --init " + tvtest::quoted(base().model) + " " + bad +
                                    " -o " + tvtest::quoted(out)));
    EXPECT_EQ(u.status, 2) << bad << ": " << u.err;
  }
  // More layers than the model has with weights: a usage error naming the count.
  const tvtest::CommandResult k =
      tvtest::run_capture(tvtrain(tvtest::quoted(base().ds) + " --init " + tvtest::quoted(base().model) +
                                  " --update sparse=30 -o " + tvtest::quoted(out)));
  EXPECT_EQ(k.status, 2) << k.err;
  EXPECT_TRUE(tvtest::contains(k.err, "layers with weights")) << k.err;
}

TEST(TvtrainUpdate, Int8ModelsContinueFromTheirDequantizedWeights) {
  const std::string dir = tvtest::temp_dir("upd-q8");
  const std::string q8 = dir + "/base.q8.tvb";
  ASSERT_EQ(tvtest::run_command(tvtest::tool_command("tvquant") + " " + tvtest::quoted(base().model) + " --calib " +
                                tvtest::quoted(base().ds) + " -o " + tvtest::quoted(q8) + " -q"),
            0);
  const tvh::LoadedModel m = tvh::load_model(q8);
  ASSERT_TRUE(m.int8 && m.engine);
  std::vector<float> deq(m.plan->param_count);
  tv::q8_dequantize_params(*m.engine, deq.data());  // what the board trains from
  const std::string out = dir + "/m.tvb";
  std::string err;
  ASSERT_EQ(tvtest::run_command(tvtrain(tvtest::quoted(base().ds) + " --init " + tvtest::quoted(q8) +
                                        " --update head --epochs 2 -o " + tvtest::quoted(out) + kQuiet),
                                nullptr, &err),
            0)
      << err;
  const std::vector<float> after = params_of(out);
  const size_t frozen = m.plan->layers[tv::imprint_layer(*m.plan)].param_offset;
  ASSERT_EQ(after.size(), deq.size());
  EXPECT_EQ(0, std::memcmp(after.data(), deq.data(), frozen * sizeof(float)));
}

TEST(TvtrainUpdate, InitContinuesWithTheRecipeItsProvenanceNames) {
  const std::string dir = tvtest::temp_dir("upd-recipe");
  std::string err;
  int rc = 0;
  ASSERT_EQ(tvtest::run_command(tvtrain(tvtest::quoted(base().ds) + " --preset webmcu --epochs 1 -o " +
                                        tvtest::quoted(dir + "/w.tvb") + kQuiet)),
            0);
  // No --preset: the webmcu recipe its provenance names (20 epochs), not tvtrain's default preset.
  json j = tvtest::run_json(tvtrain(tvtest::quoted(base().ds) + " --init " + tvtest::quoted(dir + "/w.tvb") + " -o " +
                                    tvtest::quoted(dir + "/c.tvb") + kQuiet + " --json"),
                            &rc, &err);
  ASSERT_EQ(rc, 0) << err;
  EXPECT_EQ(j["preset"], "webmcu");
  EXPECT_EQ(j["epochs"], 20);
  EXPECT_EQ(j["update"], "head");  // --init's default
  // --preset says otherwise.
  j = tvtest::run_json(tvtrain(tvtest::quoted(base().ds) + " --init " + tvtest::quoted(dir + "/w.tvb") +
                               " --preset tinyvision -o " + tvtest::quoted(dir + "/d.tvb") + kQuiet + " --json"),
                       &rc, &err);
  ASSERT_EQ(rc, 0) << err;
  EXPECT_EQ(j["preset"], "tinyvision");
  EXPECT_EQ(j["epochs"], 60);
}

// Evaluates a model on a dataset: per-class recall by class name.
std::map<std::string, double> recall(const std::string& model, const std::string& ds) {
  const json j =
      tvtest::run_json(tvtrain(tvtest::quoted(ds) + " --eval --init " + tvtest::quoted(model) + " --json -q"));
  std::map<std::string, double> r;
  for (const auto& c : j["per_class"]) r[c["class"].get<std::string>()] = c["recall"].get<double>();
  return r;
}

TEST(TvtrainUpdate, ANewClassIsImprintedAfterTheOldOnes) {
  const std::string ds = photos("upd-new", {0, 1, 2});
  const std::string dir = tvtest::temp_dir("upd-new-out");
  int rc = 0;
  std::string err;
  const json j = tvtest::run_json(tvtrain(tvtest::quoted(ds) + " --init " + tvtest::quoted(base().model) +
                                          " --epochs 0 -o " + tvtest::quoted(dir + "/m.tvb") + kQuiet + " --json"),
                                  &rc, &err);
  ASSERT_EQ(rc, 0) << err;
  EXPECT_EQ(j["classes"], json({"a_red", "b_green", "c_yellow"}));
  EXPECT_EQ(j["classes_added"], json({"c_yellow"}));
  const tvh::LoadedModel b = tvh::load_model(base().model), m = tvh::load_model(dir + "/m.tvb");
  EXPECT_EQ(m.labels, std::vector<std::string>({"a_red", "b_green", "c_yellow"}));
  // Imprinting alone: every old weight and bias as it was (the logits layer's old rows included).
  const int d = tv::imprint_layer(*b.plan);
  const size_t before_dense = b.plan->layers[d].param_offset, old_rows = b.plan->layers[d].weight_count;
  EXPECT_EQ(0, std::memcmp(m.params.data(), b.params.data(), (before_dense + old_rows) * sizeof(float)));
  EXPECT_EQ(0, std::memcmp(m.params.data() + m.plan->layers[d].param_offset + m.plan->layers[d].weight_count,
                           b.params.data() + before_dense + old_rows, 2 * sizeof(float)));
  // It recognises the new class and the old ones keep theirs (every photo, training and validation).
  const auto before = recall(base().model, base().ds), after = recall(dir + "/m.tvb", ds);
  EXPECT_GE(after.at("c_yellow"), 0.75);
  EXPECT_GE(after.at("a_red"), before.at("a_red") - 0.13);  // at most one of 8 photos lost
  EXPECT_GE(after.at("b_green"), before.at("b_green") - 0.13);
  // Then trained: a head update on top of the imprinted row.
  const json t = tvtest::run_json(tvtrain(tvtest::quoted(ds) + " --init " + tvtest::quoted(base().model) +
                                          " --epochs 5 -o " + tvtest::quoted(dir + "/t.tvb") + kQuiet + " --json"));
  EXPECT_EQ(t["update"], "head");
  EXPECT_EQ(t["classes_added"], json({"c_yellow"}));
}

// Distillation, on by default when classes are added: the old classes' training photos (5 of each of the 8:
// the last 3 validate) keep the starting model's soft targets; --distill off trains on the labels alone.
TEST(TvtrainUpdate, AddingAClassDistillsTheOldClassesUnlessDistillOff) {
  const std::string ds = photos("upd-distill", {0, 1, 2});
  const std::string dir = tvtest::temp_dir("upd-distill-out");
  json j[2];
  for (int off = 0; off < 2; ++off) {
    const std::string out = dir + (off ? "/off.tvb" : "/on.tvb");
    j[off] =
        tvtest::run_json(tvtrain(tvtest::quoted(ds) + " --init " + tvtest::quoted(base().model) + " --epochs 5 -o " +
                                 tvtest::quoted(out) + kQuiet + " --json" + (off ? " --distill off" : "")));
    const tvh::LoadedModel m = tvh::load_model(out);
    EXPECT_NE(m.provenance.find(off ? "distill=off\n" : "distill=temperature 2, weight 1\n"), std::string::npos)
        << m.provenance;
  }
  EXPECT_EQ(j[0]["distill"],
            json({{"on", true}, {"temperature", 2}, {"weight", 1}, {"old_classes", 2}, {"images", 10}}));
  EXPECT_EQ(j[1]["distill"]["on"], false);
  // the soft targets: one forward of the head per old photo, and a row of 2 floats per photo
  EXPECT_GT(j[0]["train_flops_parts"]["distill"].get<uint64_t>(), 0u);
  EXPECT_EQ(j[1]["train_flops_parts"]["distill"], 0);
  EXPECT_EQ(j[0]["memory"]["board_soft_target_bytes"], 24 * 2 * 4);
  EXPECT_EQ(j[1]["memory"]["board_soft_target_bytes"], 0);
  EXPECT_EQ(j[0]["memory"]["board_peak_bytes"].get<uint64_t>(),
            j[1]["memory"]["board_peak_bytes"].get<uint64_t>() + 24 * 2 * 4);
  EXPECT_NE(tvh::load_model(dir + "/on.tvb").params, tvh::load_model(dir + "/off.tvb").params);
  // without a class added there is nothing to keep: no distillation, and no field
  const json same =
      tvtest::run_json(tvtrain(tvtest::quoted(base().ds) + " --init " + tvtest::quoted(base().model) +
                               " --epochs 2 -o " + tvtest::quoted(dir + "/same.tvb") + kQuiet + " --json"));
  EXPECT_TRUE(same["distill"].is_null());
  // --distill goes with training from a model
  for (const std::string& args :
       {tvtest::quoted(ds) + " --distill off -o " + tvtest::quoted(dir + "/x.tvb"),
        tvtest::quoted(ds) + " --init " + tvtest::quoted(base().model) + " --eval --distill on",
        tvtest::quoted(ds) + " --init " + tvtest::quoted(base().model) + " --distill of -o " +
            tvtest::quoted(dir + "/y.tvb")}) {
    const tvtest::CommandResult r = tvtest::run_capture(tvtrain(args + kQuiet));
    EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
  }
}

TEST(TvtrainUpdate, AModelClassWithoutPhotosKeepsItsRow) {
  const std::string ds = photos("upd-missing", {0, 2});  // green has no photos, yellow is new
  const std::string out = tvtest::temp_dir("upd-missing-out") + "/m.tvb";
  const tvtest::CommandResult r = tvtest::run_capture(
      tvtrain(tvtest::quoted(ds) + " --init " + tvtest::quoted(base().model) + " --update head --epochs 3 -o " +
              tvtest::quoted(out) + " --no-report --no-curve --no-confusion --json"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(tvtest::contains(r.err, "warning: ")) << r.err;
  EXPECT_TRUE(tvtest::contains(r.err, "'b_green' has no photos")) << r.err;
  EXPECT_FALSE(tvtest::contains(r.err, "class 'b_green' has only 0 training")) << r.err;  // said once, above
  EXPECT_EQ(json::parse(r.out)["classes_without_photos"], json({"b_green"}));
  const tvh::LoadedModel b = tvh::load_model(base().model), m = tvh::load_model(out);
  EXPECT_EQ(m.labels, std::vector<std::string>({"a_red", "b_green", "c_yellow"}));
  const int d = tv::imprint_layer(*b.plan);
  const tv::LayerPlan &ob = b.plan->layers[d], &om = m.plan->layers[d];
  const size_t F = ob.in.size();
  EXPECT_EQ(
      0, std::memcmp(m.params.data() + om.param_offset + F, b.params.data() + ob.param_offset + F, F * sizeof(float)))
      << "b_green's row changed";
  EXPECT_EQ(m.params[om.param_offset + om.weight_count + 1], b.params[ob.param_offset + ob.weight_count + 1]);
  EXPECT_NE(0, std::memcmp(m.params.data() + om.param_offset, b.params.data() + ob.param_offset, F * sizeof(float)))
      << "a_red's row did not train";
}

TEST(TvtrainUpdate, JsonReportsTheUpdateItsFlopsAndTheBoardPeakAsTheirSum) {
  std::map<std::string, json> by;
  for (const char* mode : {"full", "head"}) {
    int rc = 0;
    std::string err;
    by[mode] = tvtest::run_json(
        tvtrain(tvtest::quoted(base().ds) + " --init " + tvtest::quoted(base().model) + " --update " + mode +
                " --epochs 20 -o " + tvtest::quoted(tvtest::temp_dir("upd-json") + "/m.tvb") + kQuiet + " --json"),
        &rc, &err);
    ASSERT_EQ(rc, 0) << err;
    const json& j = by[mode];
    EXPECT_EQ(j["update"], mode);
    const json& m = j["memory"];
    const uint64_t arena =
        std::max(m["board_train_arena_bytes"].get<uint64_t>(), m["board_infer_arena_bytes"].get<uint64_t>());
    EXPECT_EQ(m["board_peak_bytes"].get<uint64_t>(),
              m["board_weights_bytes"].get<uint64_t>() + arena + m["board_cache_bytes"].get<uint64_t>() +
                  m["board_decode_bytes"].get<uint64_t>() + m["board_soft_target_bytes"].get<uint64_t>());
    const json& f = j["train_flops_parts"];
    EXPECT_EQ(j["train_flops"].get<uint64_t>(), f["cache"].get<uint64_t>() + f["train"].get<uint64_t>() +
                                                    f["eval"].get<uint64_t>() + f["distill"].get<uint64_t>());
  }
  EXPECT_LT(by["head"]["train_flops"].get<uint64_t>() * 20, by["full"]["train_flops"].get<uint64_t>());
  EXPECT_LT(by["head"]["memory"]["board_peak_bytes"], by["full"]["memory"]["board_peak_bytes"]);
  EXPECT_EQ(by["full"]["memory"]["board_cache_bytes"], 16 * 32 * 32 * 3);  // decoded 32x32x3 photos
}

}  // namespace

// A class folder renamed on the PC (the board's automatic class<k>): --rename gives the model's class the
// folder's name, so its photos keep training its row instead of being imprinted as a new class; with
// --epochs 0 only the name changes. Malformed pairs, unknown classes, names no card folder can have
// (tv/names.h), a class renamed twice and a name two classes' folders would share are refused, named.
TEST(TvtrainUpdate, RenameCallsAModelClassByItsFoldersNewName) {
  const std::string ds = tvtest::temp_dir("upd-rename");
  fs::copy(base().ds + "/a_red", ds + "/a_red", fs::copy_options::recursive);
  fs::copy(base().ds + "/b_green", ds + "/green", fs::copy_options::recursive);
  const std::string out = update("--rename b_green=green --epochs 0", "upd-rename-out", ds);
  const tvh::LoadedModel b = tvh::load_model(base().model), m = tvh::load_model(out);
  EXPECT_EQ(m.labels, std::vector<std::string>({"a_red", "green"}));
  EXPECT_TRUE(m.params == b.params) << "--epochs 0 with nothing to add changes no weight";
  // the renamed model evaluates on the renamed folders as the base did on the old ones
  const tvtest::CommandResult before = tvtest::run_capture(
      tvtrain(tvtest::quoted(base().ds) + " --eval --json -q --init " + tvtest::quoted(base().model)));
  const tvtest::CommandResult after =
      tvtest::run_capture(tvtrain(tvtest::quoted(ds) + " --eval --json -q --init " + tvtest::quoted(out)));
  ASSERT_EQ(after.status, 0) << after.err;
  EXPECT_EQ(json::parse(before.out)["accuracy"], json::parse(after.out)["accuracy"]);
  const std::string x = tvtest::temp_dir("upd-rename-bad") + "/x.tvb";
  const auto refused = [&](const std::string& spec, int status, const std::string& says) {
    const tvtest::CommandResult r =
        tvtest::run_capture(tvtrain(tvtest::quoted(ds) + " --init " + tvtest::quoted(base().model) + " --rename " +
                                    tvtest::quoted(spec) + " -o " + tvtest::quoted(x) + kQuiet));
    EXPECT_EQ(r.status, status) << spec;
    EXPECT_TRUE(tvtest::contains(r.err, says)) << r.err;
    EXPECT_FALSE(fs::exists(x));
  };
  refused("b_green", 2, "--rename 'b_green': give OLD=NEW");
  refused("blue=x", 1, "has no class named 'blue'");
  refused("b_green=a_red", 1, "would be one folder on the board's card");
  refused("b_green=A_RED.", 1, "would be one folder on the board's card");  // FAT folds case, trailing dots
  for (const char* bad : {"b_green=..", "b_green=.", "b_green=a/b", "b_green= ", "b_green=a:b", "b_green=a*b"})
    refused(bad, 2, "cannot name a class folder");
  refused("b_green=x,b_green=y", 2, "class 'b_green' is renamed twice");
  const tvtest::CommandResult no_init =
      tvtest::run_capture(tvtrain(tvtest::quoted(ds) + " --rename a=b -o " + tvtest::quoted(x)));
  EXPECT_EQ(no_init.status, 2);
  EXPECT_TRUE(tvtest::contains(no_init.err, "--rename needs --init MODEL")) << no_init.err;
}
