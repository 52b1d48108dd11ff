// tvexport verify and the .espdl reader (host/espdl/reader.cpp, loader_checks.cpp) reading ESP-DL files as
// ESP-DL reads them: Conv kernels from the weights, verify --json on a refusal, strings with a NUL never cut
// in a message, loader notes once, ESP32-P4 files never reported as a false mismatch. Through the real
// tvexport binary.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "host/base/files.h"
#include "host/base/text_width.h"
#include "host/espdl/espdl.h"
#include "host/espdl/writer.h"
#include "test_support.h"

namespace {

using tvtest::contains;
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

using Result = tvtest::CommandResult;
Result run(const std::string& cmd) {
  return tvtest::run_capture(cmd);
}

}  // namespace

TEST(TvexportVerify, AConvWithoutKernelShapeTakesItFromItsWeights) {
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
  const Result r = run(tvtest::tool_command("tvexport") + " verify " + tvtest::quoted(file));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "OK: all 1 test outputs")) << r.out;
  EXPECT_FALSE(contains(r.err, "zero kernel size")) << r.err;
}

TEST(TvexportVerify, AnEsp32P4FileIsRefusedForItsRoundingNeverAFalseMismatch) {
  TV_REQUIRE_SHARED("espdl-golden");
  const std::string p4 = tvtest::shared_path("espdl-golden/streaming-conv-esp32p4.espdl");
  Result r = run(tvtest::tool_command("tvexport") + " verify " + tvtest::quoted(p4));
  EXPECT_EQ(r.status, 1);
  EXPECT_FALSE(contains(r.out, "MISMATCH")) << r.out;
  EXPECT_TRUE(contains(r.err, "P4 rounding not supported")) << r.err;
  r = run(tvtest::tool_command("tvexport") + " verify --json " + tvtest::quoted(p4));
  EXPECT_EQ(r.status, 1);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["passed"], false);
  EXPECT_EQ(j["refused"], true);
  EXPECT_TRUE(contains(j["message"].get<std::string>(), "P4 rounding not supported"));
  // P4 files whose outputs the S3 rules reproduce exactly still verify.
  for (const char* ok : {"mlp3-gemm-esp32p4.espdl", "esp32p4-linear_ishap_1_31_kshap_32_31_relu_s8.espdl"}) {
    r = run(tvtest::tool_command("tvexport") + " verify " +
            tvtest::quoted(tvtest::shared_path(std::string("espdl-golden/") + ok)));
    EXPECT_EQ(r.status, 0) << ok << "\n" << r.out << r.err;
  }
  // The same P4 file read as an S3 file (target metadata esp32s3) is a real mismatch, reported as one.
  tvh::EspdlModel m = golden("streaming-conv-esp32p4.espdl");
  m.metadata.emplace_back("target", "esp32s3");
  const std::string as_s3 = save(m, tvtest::temp_dir("espdl-p4") + "/labelled-s3.espdl");
  r = run(tvtest::tool_command("tvexport") + " verify " + tvtest::quoted(as_s3));
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.out, "MISMATCH")) << r.out;
  // Without any target, a mismatch says that a P4 file would not apply.
  tvh::EspdlModel s3 = golden("streaming-conv-esp32s3.espdl");
  s3.test_outputs[0].raw[0] ^= 1;
  const std::string broken = save(s3, tvtest::temp_dir("espdl-p4b") + "/broken.espdl");
  r = run(tvtest::tool_command("tvexport") + " verify " + tvtest::quoted(broken));
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.out, "MISMATCH") && contains(r.out, "names no target")) << r.out;
}

TEST(TvexportVerify, VerifyJsonPrintsAnObjectOnEveryRefusal) {
  const std::string dir = tvtest::temp_dir("espdl-json");
  std::ofstream(dir + "/not.espdl") << "this is not an espdl file at all";
  for (const std::string& f : {dir + "/not.espdl", dir + "/missing.espdl"}) {
    const Result r = run(tvtest::tool_command("tvexport") + " verify --json " + tvtest::quoted(f));
    EXPECT_EQ(r.status, 1) << f;
    ASSERT_FALSE(r.out.empty()) << f << ": stdout is empty";
    const nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["file"], f);
    EXPECT_EQ(j["passed"], false);
    EXPECT_EQ(j["refused"], true);
    EXPECT_TRUE(contains(j["message"].get<std::string>(), f)) << j.dump();
  }
}

TEST(TvexportVerify, AStringWithANulIsNeverCutInAMessage) {
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
  // Our writer keeps such a string whole too (every string written with its length).
  tvh::EspdlModel again = back;
  again.graph_name = std::string("g\0h", 3);
  again.metadata.emplace_back(std::string("k\0", 2), std::string("\0v", 2));
  again.initializers[0].name = std::string("w\0x", 3);
  const std::vector<uint8_t> rewritten = tvh::espdl_serialize(again);
  const tvh::EspdlModel reread = tvh::espdl_parse(rewritten.data(), rewritten.size(), "rewritten");
  EXPECT_EQ(reread.nodes[1].op_type, back.nodes[1].op_type);
  EXPECT_EQ(reread.nodes[1].name, back.nodes[1].name);
  EXPECT_EQ(reread.graph_name, again.graph_name);
  EXPECT_EQ(reread.metadata.back(), again.metadata.back());
  EXPECT_EQ(reread.initializers[0].name, again.initializers[0].name);
  Result r = run(tvtest::tool_command("tvexport") + " verify " + tvtest::quoted(file));
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "Gemm\\0Hidden")) << r.err;
  EXPECT_TRUE(contains(r.err, "fc\\0two")) << r.err;
  r = run(tvtest::tool_command("tvexport") + " verify --json " + tvtest::quoted(file));
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(contains(j["message"].get<std::string>(), "Gemm\\0Hidden")) << j.dump();
}

TEST(TvexportVerify, EachLoaderNoteIsPrintedOnce) {
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
  const Result r = run(tvtest::tool_command("tvexport") + " verify " + tvtest::quoted(file));
  EXPECT_EQ(count(r.err, "'" + shared_value + "', which has no value_info entry"), 1u) << r.err;
  const std::vector<std::string> problems = tvh::espdl_loader_problems(tvh::espdl_read_file(file));
  for (size_t i = 0; i < problems.size(); ++i)
    for (size_t k = i + 1; k < problems.size(); ++k) EXPECT_NE(problems[i], problems[k]);
}
