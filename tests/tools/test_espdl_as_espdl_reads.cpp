// ESP-DL files read as ESP-DL reads them (issue 13): Conv kernels from the weights, verify --json on a
// refusal, strings with a NUL never cut in a message, loader notes once, ESP32-P4 files never reported as
// a false mismatch; and the config messages: a number overflow and an unknown key named sensibly.
// Through the real tvexport / tvtrain binaries.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "host/espdl/espdl.h"
#include "host/espdl/writer.h"
#include "host/files.h"
#include "test_support.h"

namespace {

std::string q(const std::string& s) {
  return "'" + s + "'";
}
std::string tvexport() {
  return q(tvtest::bin_path("tvexport"));
}
bool has(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}
size_t count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

tvh::EspdlModel golden(const std::string& name) {
  return tvh::espdl_read_file(tvtest::shared_path("espdl-golden/" + name));
}

std::string save(const tvh::EspdlModel& m, const std::string& path) {
  tvh::write_file_atomic(path, tvh::espdl_serialize(m));
  return path;
}

struct Result {
  int status;
  std::string out, err;
};
Result run(const std::string& cmd) {
  Result r;
  r.status = tvtest::run_command(cmd, &r.out, &r.err);
  return r;
}

}  // namespace

TEST(EspdlAsEspdlReads, AConvWithoutKernelShapeTakesItFromItsWeights) {
  TV_REQUIRE_SHARED("espdl-golden");
  tvh::EspdlModel m = golden("streaming-conv-esp32s3.espdl");
  int stripped = 0;
  for (tvh::EspdlNode& n : m.nodes) {
    if (n.op_type != "Conv") continue;
    auto& a = n.attributes;
    const size_t before = a.size();
    a.erase(std::remove_if(a.begin(), a.end(), [](const tvh::EspdlAttribute& x) { return x.name == "kernel_shape"; }),
            a.end());
    stripped += before != a.size();
  }
  ASSERT_EQ(stripped, 8);  // like the person_reid models of espressif/esp-dl
  const std::string file = save(m, tvtest::temp_dir("espdl-nokernel") + "/conv.espdl");
  const Result r = run(tvexport() + " verify " + q(file));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "OK: all 1 test outputs")) << r.out;
  EXPECT_FALSE(has(r.err, "zero kernel size")) << r.err;
}

TEST(EspdlAsEspdlReads, AnEsp32P4FileIsRefusedForItsRoundingNeverAFalseMismatch) {
  TV_REQUIRE_SHARED("espdl-golden");
  const std::string p4 = tvtest::shared_path("espdl-golden/streaming-conv-esp32p4.espdl");
  Result r = run(tvexport() + " verify " + q(p4));
  EXPECT_EQ(r.status, 1);
  EXPECT_FALSE(has(r.out, "MISMATCH")) << r.out;
  EXPECT_TRUE(has(r.err, "P4 rounding not supported")) << r.err;
  r = run(tvexport() + " verify --json " + q(p4));
  EXPECT_EQ(r.status, 1);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["passed"], false);
  EXPECT_EQ(j["refused"], true);
  EXPECT_TRUE(has(j["message"].get<std::string>(), "P4 rounding not supported"));
  // P4 files whose outputs the S3 rules reproduce exactly still verify.
  for (const char* ok : {"mlp3-gemm-esp32p4.espdl", "esp32p4-linear_ishap_1_31_kshap_32_31_relu_s8.espdl"}) {
    r = run(tvexport() + " verify " + q(tvtest::shared_path(std::string("espdl-golden/") + ok)));
    EXPECT_EQ(r.status, 0) << ok << "\n" << r.out << r.err;
  }
  // The same P4 file read as an S3 file (target metadata esp32s3) is a real mismatch, reported as one.
  tvh::EspdlModel m = golden("streaming-conv-esp32p4.espdl");
  m.metadata.emplace_back("target", "esp32s3");
  const std::string as_s3 = save(m, tvtest::temp_dir("espdl-p4") + "/labelled-s3.espdl");
  r = run(tvexport() + " verify " + q(as_s3));
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(has(r.out, "MISMATCH")) << r.out;
  // Without any target, a mismatch says that a P4 file would not apply.
  tvh::EspdlModel s3 = golden("streaming-conv-esp32s3.espdl");
  s3.test_outputs[0].raw[0] ^= 1;
  const std::string broken = save(s3, tvtest::temp_dir("espdl-p4b") + "/broken.espdl");
  r = run(tvexport() + " verify " + q(broken));
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(has(r.out, "MISMATCH") && has(r.out, "names no target")) << r.out;
}

TEST(EspdlAsEspdlReads, VerifyJsonPrintsAnObjectOnEveryRefusal) {
  const std::string dir = tvtest::temp_dir("espdl-json");
  std::ofstream(dir + "/not.espdl") << "this is not an espdl file at all";
  for (const std::string& f : {dir + "/not.espdl", dir + "/missing.espdl"}) {
    const Result r = run(tvexport() + " verify --json " + q(f));
    EXPECT_EQ(r.status, 1) << f;
    ASSERT_FALSE(r.out.empty()) << f << ": stdout is empty";
    const nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["file"], f);
    EXPECT_EQ(j["passed"], false);
    EXPECT_EQ(j["refused"], true);
    EXPECT_TRUE(has(j["message"].get<std::string>(), f)) << j.dump();
  }
}

TEST(EspdlAsEspdlReads, AStringWithANulIsNeverCutInAMessage) {
  TV_REQUIRE_SHARED("espdl-golden");
  tvh::EspdlModel m = golden("mlp3-gemm-esp32s3.espdl");
  // An unknown op and a node name with a NUL inside: written with a marker byte, which is then turned
  // into a NUL in the file (a FlatBuffers string carries its length, so the reader sees all of it).
  m.nodes[1].op_type = "Gemm\x01Hidden";
  m.nodes[1].name = "fc\x01two";
  const std::string file = tvtest::temp_dir("espdl-nul") + "/nul.espdl";
  std::vector<uint8_t> bytes = tvh::espdl_serialize(m);
  int patched = 0;
  for (size_t i = 0; i + 6 < bytes.size(); ++i)
    if (bytes[i] == 1 && (std::memcmp(&bytes[i + 1], "Hidden", 6) == 0 || std::memcmp(&bytes[i + 1], "two", 3) == 0)) {
      bytes[i] = 0;
      ++patched;
    }
  ASSERT_EQ(patched, 2);
  tvh::write_file_atomic(file, bytes);
  const tvh::EspdlModel back = tvh::espdl_read_file(file);
  ASSERT_EQ(back.nodes[1].op_type, std::string("Gemm\0Hidden", 11));
  Result r = run(tvexport() + " verify " + q(file));
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(has(r.err, "Gemm\\0Hidden")) << r.err;
  EXPECT_TRUE(has(r.err, "fc\\0two")) << r.err;
  r = run(tvexport() + " verify --json " + q(file));
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(has(j["message"].get<std::string>(), "Gemm\\0Hidden")) << j.dump();
}

TEST(EspdlAsEspdlReads, EachLoaderNoteIsPrintedOnce) {
  TV_REQUIRE_SHARED("espdl-golden");
  tvh::EspdlModel m = golden("streaming-conv-esp32s3.espdl");
  // A value that several nodes read loses its value_info entry.
  std::map<std::string, int> readers;
  for (const tvh::EspdlNode& n : m.nodes)
    for (const std::string& in : n.inputs) ++readers[in];
  std::string shared_value;
  for (const auto& kv : readers)
    if (kv.second >= 2 && m.find_initializer(kv.first) == nullptr) shared_value = kv.first;
  ASSERT_FALSE(shared_value.empty());
  auto& vi = m.value_info;
  vi.erase(std::remove_if(vi.begin(), vi.end(), [&](const tvh::EspdlValueInfo& v) { return v.name == shared_value; }),
           vi.end());
  const std::string file = save(m, tvtest::temp_dir("espdl-once") + "/once.espdl");
  const Result r = run(tvexport() + " verify " + q(file));
  EXPECT_EQ(count(r.err, "'" + shared_value + "', which has no value_info entry"), 1u) << r.err;
  const std::vector<std::string> problems = tvh::espdl_loader_problems(tvh::espdl_read_file(file));
  for (size_t i = 0; i < problems.size(); ++i)
    for (size_t k = i + 1; k < problems.size(); ++k) EXPECT_NE(problems[i], problems[k]);
}

// ---- config messages (issue 13, item 8)

TEST(ConfigMessages, ANumberOverflowNamesTheFileAndTheKey) {
  const std::string dir = tvtest::temp_dir("cfg-overflow");
  const std::string tvtrain = q(tvtest::bin_path("tvtrain"));
  const std::string shapes = q(tvtest::source_path("datasets/shapes"));
  struct Case {
    std::string json, says;
  } cases[] = {
      {"{\"training\": {\"epochs\": 1e999}}", "training.epochs is 1e999, a number too large"},
      {"{\"model\": {\"layers\": [{\"type\": \"relu\"}, {\"type\": \"dense\", \"units\": -1e400}]}}",
       "model.layers[1].units is -1e400"},
      {"{\"a\": 1}", "\"a\" is not a known top-level key (known: preset, model, training, split)"},
      {"{\"training\": {\"augment\": {\"flap\": true}}}",
       "training.augment.flap is not a known key (known in training.augment: flip, shift, brightness)"},
  };
  int i = 0;
  for (const Case& c : cases) {
    const std::string file = dir + "/c" + std::to_string(i++) + ".json";
    std::ofstream(file) << c.json;
    const Result r = run(tvtrain + " " + shapes + " --config " + q(file) + " -o " + q(dir + "/m.tvb"));
    EXPECT_EQ(r.status, 1) << c.json;
    EXPECT_TRUE(has(r.err, file + ": " + c.says)) << c.json << "\n" << r.err;
    EXPECT_FALSE(has(r.err, "json.exception")) << r.err;
    EXPECT_FALSE(has(r.err, "the config.")) << r.err;
  }
}
