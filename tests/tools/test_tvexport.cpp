// tvexport through its real command line: headers compiled by gcc (C99) and g++ (C++17) and every
// weight compared bit for bit with the blob; the webmcu style against the reference firmware's own
// files; raw myWeights.bin round trips; info (text and JSON); bad inputs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cfloat>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "detection_fixture.h"
#include "host/base/error.h"
#include "host/base/files.h"
#include "host/export/export.h"
#include "host/model/model_io.h"
#include "test_support.h"
#include "tv/crc32.h"
#include "tv/model/blob.h"
#include "tv/train/net.h"
#include "tv/train/presets.h"

namespace {

std::string tvexport() {
  return tvtest::quoted(tvtest::bin_path("tvexport"));
}

using tvtest::read_text;
using tvtest::write_text;
int lines_of(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

// Saves a he-initialized preset model as a .tvb; `specials` puts awkward floats into the first weights.
std::string make_tvb(const std::string& dir, const std::string& preset, const std::vector<std::string>& labels,
                     uint64_t seed, bool specials, const std::string& name = "model.tvb") {
  tv::ModelDesc d;
  EXPECT_TRUE(tv::preset_model(preset.c_str(), (int)labels.size(), &d));
  auto plan = tvh::plan_or_throw(d, preset);
  std::vector<float> p(plan->param_count);
  tv::he_init(*plan, p.data(), seed);
  if (specials) {
    const float v[] = {0.f,      -0.f,   1.4e-45f, -1.4e-45f, 1.1754942e-38f, FLT_MIN, -FLT_MIN, FLT_MAX,
                       -FLT_MAX, 1e-40f, 0.1f,     -1e9f,     123456789.f,    1.f,     -0.5f,    3.0e-39f};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; ++i) p[i] = v[i];
  }
  std::string path = dir + "/" + name;
  tvh::save_float_model(path, *plan, p.data(), labels,
                        "tool=test\npreset=" + preset + "\nseed=" + std::to_string(seed));
  return path;
}

// Identifier of tensor i in a TV_MODEL header (the writer's rule for our own tensor names).
std::string ident(const tv::BlobTensor& t) {
  std::string s = t.name;
  for (char& c : s)
    if (!isalnum((unsigned char)c) && c != '_') c = '_';
  return s;
}

// A program, valid C99 and C++17, that prints every array of the header as hex (bits of floats,
// two's complement of integers), the blob's alignment and the labels' bytes.
std::string probe_program(const tv::BlobView& v, const std::string& prefix) {
  std::string s =
      "#include <stdio.h>\n#include <string.h>\n#include <stdint.h>\n#include \"model.h\"\n"
      "static void pf(const char* n, const float* a, size_t c) { size_t i; printf(\"%s\", n);"
      " for (i = 0; i < c; ++i) { uint32_t u; memcpy(&u, &a[i], 4); printf(\" %08x\", (unsigned)u); } printf(\"\\n\"); "
      "}\n"
      "static void pi8(const char* n, const int8_t* a, size_t c) { size_t i; printf(\"%s\", n);"
      " for (i = 0; i < c; ++i) printf(\" %02x\", (unsigned)(uint8_t)a[i]); printf(\"\\n\"); }\n"
      "static void pi32(const char* n, const int32_t* a, size_t c) { size_t i; printf(\"%s\", n);"
      " for (i = 0; i < c; ++i) printf(\" %08x\", (unsigned)(uint32_t)a[i]); printf(\"\\n\"); }\n"
      "static void pu8(const char* n, const unsigned char* a, size_t c) { size_t i; printf(\"%s\", n);"
      " for (i = 0; i < c; ++i) printf(\" %02x\", (unsigned)a[i]); printf(\"\\n\"); }\n"
      "#define N(a) (sizeof(a) / sizeof((a)[0]))\n"
      "int main(void) {\n  int i;\n  (void)pf; (void)pi8; (void)pi32; (void)pu8;\n";
  for (int i = 0; i < v.num_tensors; ++i) {
    const tv::BlobTensor& t = v.tensors[i];
    std::string id = prefix + "_" + ident(t);
    const char* fn = t.dtype == tv::DType::F32 ? "pf" : (t.dtype == tv::DType::I8 ? "pi8" : "pi32");
    s += "  " + std::string(fn) + "(\"" + ident(t) + "\", " + id + ", N(" + id + "));\n";
    s += "  printf(\"align %d\\n\", (int)((uintptr_t)" + id + " % 16));\n";
  }
  s += "  pu8(\"blob\", " + prefix + "_blob, " + prefix + "_BLOB_SIZE);\n";
  s += "  printf(\"align %d\\n\", (int)((uintptr_t)" + prefix + "_blob % 16));\n";
  s += "  for (i = 0; i < " + prefix + "_NUM_CLASSES; ++i) pu8(\"label\", (const unsigned char*)" + prefix +
       "_labels[i], strlen(" + prefix + "_labels[i]));\n";
  s += "  printf(\"classes %d input %dx%dx%d\\n\", " + prefix + "_NUM_CLASSES, " + prefix + "_INPUT_HEIGHT, " + prefix +
       "_INPUT_WIDTH, " + prefix + "_INPUT_CHANNELS);\n";
  s += "  return 0;\n}\n";
  return s;
}

std::string hex_bytes(const uint8_t* p, size_t n, size_t width) {
  std::string s;
  char b[16];
  for (size_t i = 0; i < n; i += width) {
    uint32_t u = 0;
    for (size_t k = 0; k < width; ++k) u |= (uint32_t)p[i + k] << (8 * k);
    std::snprintf(b, sizeof b, width == 4 ? " %08x" : " %02x", u);
    s += b;
  }
  return s;
}

// What the probe program must print for a blob and its labels.
std::string expected_probe(const tv::BlobView& v, const std::vector<std::string>& labels) {
  std::string s;
  for (int i = 0; i < v.num_tensors; ++i) {
    const tv::BlobTensor& t = v.tensors[i];
    s += ident(t) + hex_bytes((const uint8_t*)t.data, t.bytes, t.dtype == tv::DType::I8 ? 1 : 4) + "\nalign 0\n";
  }
  s += "blob" + hex_bytes(v.base, v.size, 1) + "\nalign 0\n";
  for (const auto& l : labels) s += "label" + hex_bytes((const uint8_t*)l.data(), l.size(), 1) + "\n";
  s += "classes " + std::to_string(v.model.num_classes) + " input " + std::to_string(v.model.input.height) + "x" +
       std::to_string(v.model.input.width) + "x" + std::to_string(v.model.input.channels) + "\n";
  return s;
}

// Exports `tvb` to a header, compiles it with gcc -std=c99 and g++ -std=c++17 (-Wall -Wextra -Werror)
// with the probe program, runs both and compares with the blob bit for bit.
void compile_and_compare(const std::string& dir, const std::string& tvb, const std::vector<std::string>& labels,
                         const std::string& extra_args = "", const std::string& prefix = "TV_MODEL") {
  std::string out, err;
  ASSERT_EQ(tvtest::run_command(
                tvexport() + " " + tvtest::quoted(tvb) + " -o " + tvtest::quoted(dir + "/model.h") + " " + extra_args,
                &out, &err),
            0)
      << err;
  tvh::LoadedModel m = tvh::load_model(tvb, tvh::RawOptions(), tvh::Tasks::Any);
  static tv::BlobView view;
  ASSERT_TRUE(tv::blob_decode(m.blob.data(), m.blob.size(), &view).ok());
  const std::string program = probe_program(view, prefix);
  write_text(dir + "/probe.c", program);
  write_text(dir + "/probe.cpp", program);
  const std::string expected = expected_probe(view, labels);
  const std::string flags = " -Wall -Wextra -Werror -I" + tvtest::quoted(dir) + " ";
  ASSERT_EQ(tvtest::run_command("gcc -std=c99 -pedantic" + flags + tvtest::quoted(dir + "/probe.c") + " -o " +
                                    tvtest::quoted(dir + "/probe_c"),
                                &out, &err),
            0)
      << err.substr(0, 3000);
  ASSERT_EQ(tvtest::run_command("g++ -std=c++17" + flags + tvtest::quoted(dir + "/probe.cpp") + " -o " +
                                    tvtest::quoted(dir + "/probe_cpp"),
                                &out, &err),
            0)
      << err.substr(0, 3000);
  // The header alone also compiles as a translation unit of its own.
  ASSERT_EQ(tvtest::run_command(
                "gcc -std=c99 -Wall -Wextra -Werror -x c -c " + tvtest::quoted(dir + "/model.h") + " -o /dev/null",
                &out, &err),
            0)
      << err.substr(0, 3000);
  for (const char* exe : {"/probe_c", "/probe_cpp"}) {
    ASSERT_EQ(tvtest::run_command(tvtest::quoted(dir + exe), &out, &err), 0) << err;
    EXPECT_TRUE(out == expected) << exe << ": the compiled header differs from the blob";
  }
}

}  // namespace

TEST(Tvexport, VersionAndHelp) {
  std::string out, err;
  ASSERT_EQ(tvtest::run_command(tvexport() + " --version", &out, &err), 0);
  EXPECT_NE(out.find(TV_VERSION), std::string::npos);
  ASSERT_EQ(tvtest::run_command(tvexport() + " --help", &out, &err), 0);
  EXPECT_NE(out.find("info"), std::string::npos);
  EXPECT_NE(out.find("--style"), std::string::npos);
}

TEST(Tvexport, WebmcuHeaderCompilesAndHoldsEveryWeightBitExactly) {
  std::string dir = tvtest::temp_dir("tvexport-webmcu");
  std::vector<std::string> labels = {"0Blank", "1Cup", "2Pen"};
  std::string tvb = make_tvb(dir, "webmcu", labels, 11, true);
  compile_and_compare(dir, tvb, labels);
}

TEST(Tvexport, TinyvisionModelWithAwkwardLabelsCompiles) {
  std::string dir = tvtest::temp_dir("tvexport-tiny");
  std::vector<std::string> labels = {"say \"hi\"", "back\\slash\\",
                                     "what?"
                                     "?!",
                                     "caf\xc3\xa9", "tab\tend"};
  std::string tvb = make_tvb(dir, "tinyvision", labels, 5, true);
  compile_and_compare(dir, tvb, labels, "--name my_net", "my_net");
}

TEST(Tvexport, Int8BlobCompilesWithItsExponents) {
  std::string dir = tvtest::temp_dir("tvexport-int8");
  tv::ModelDesc d;
  tv::set_input(&d, 4, 4, 1);
  d.num_classes = 2;
  tv::add_layer(&d, tv::conv2d_layer(2, 3));
  tv::add_layer(&d, tv::relu_layer());
  tv::add_layer(&d, tv::flatten_layer());
  tv::add_layer(&d, tv::dense_layer());
  auto plan = tvh::plan_or_throw(d, "int8");
  std::vector<int8_t> w0(18), w3(16);
  for (size_t i = 0; i < w0.size(); ++i) w0[i] = (int8_t)(i * 15 - 128);
  for (size_t i = 0; i < w3.size(); ++i) w3[i] = (int8_t)(127 - i * 17);
  const int32_t b0[2] = {INT32_MIN, 5}, b3[2] = {-1, 2147483647};
  const int8_t exps[2] = {-6, -8}, act[5] = {-7, -5, -5, -5, -3};
  tv::BlobTensor t[4];
  const char* names[4] = {"l0_conv2d.w", "l0_conv2d.b", "l3_dense.w", "l3_dense.b"};
  for (int i = 0; i < 4; ++i) {
    std::strcpy(t[i].name, names[i]);
    t[i].layer = i < 2 ? 0 : 3;
    t[i].role = i % 2 ? tv::TensorRole::Bias : tv::TensorRole::Weight;
    t[i].dtype = i % 2 ? tv::DType::I32 : tv::DType::I8;
    t[i].exponent = (int8_t)(-5 - i);
  }
  t[0].ndim = 4;
  t[0].dims[0] = 2;
  t[0].dims[1] = t[0].dims[2] = 3;
  t[0].dims[3] = 1;
  t[0].data = w0.data();
  t[0].bytes = 18;
  t[0].exp_count = 2;
  t[0].channel_exps = exps;
  t[1].ndim = 1;
  t[1].dims[0] = 2;
  t[1].data = b0;
  t[1].bytes = 8;
  t[2].ndim = 2;
  t[2].dims[0] = 2;
  t[2].dims[1] = 8;
  t[2].data = w3.data();
  t[2].bytes = 16;
  t[3].ndim = 1;
  t[3].dims[0] = 2;
  t[3].data = b3;
  t[3].bytes = 8;
  const char* labels[2] = {"off", "on"};
  tv::BlobContents c;
  c.model = &d;
  c.labels = labels;
  c.num_labels = 2;
  c.provenance = "tool=test\n";
  c.tensors = t;
  c.num_tensors = 4;
  c.act_exps = act;
  c.num_act_exps = 5;
  c.flags = tv::kBlobFlagInt8;
  std::vector<uint8_t> blob(tv::blob_encoded_size(c));
  size_t written = 0;
  ASSERT_TRUE(tv::blob_encode(c, blob.data(), blob.size(), &written).ok());
  tvh::write_file_atomic(dir + "/q8.tvb", blob);
  compile_and_compare(dir, dir + "/q8.tvb", {"off", "on"});
  std::string h = read_text(dir + "/model.h");
  EXPECT_NE(h.find("#define TV_MODEL_l0_conv2d_w_EXP (-5)"), std::string::npos);
  EXPECT_NE(h.find("TV_MODEL_l0_conv2d_w_exps[2]"), std::string::npos);
  EXPECT_NE(h.find("TV_MODEL_act_exps[5]"), std::string::npos);
  EXPECT_NE(h.find("#define TV_MODEL_IS_INT8 1"), std::string::npos);
  // info reads int8 blobs too.
  std::string out, err;
  ASSERT_EQ(tvtest::run_command(tvexport() + " info --json " + tvtest::quoted(dir + "/q8.tvb"), &out, &err), 0) << err;
  nlohmann::json j = nlohmann::json::parse(out);
  EXPECT_EQ(j["dtype"], "int8");
  EXPECT_EQ(j["layers"].size(), 4u);
  EXPECT_EQ(j["labels"], nlohmann::json({"off", "on"}));
  // The webmcu style and the raw format hold float weights only.
  EXPECT_EQ(tvtest::run_command(tvexport() + " " + tvtest::quoted(dir + "/q8.tvb") + " --style webmcu -o " +
                                    tvtest::quoted(dir + "/w.h"),
                                &out, &err),
            1);
  EXPECT_NE(err.find("q8.tvb"), std::string::npos) << err;
  EXPECT_EQ(
      tvtest::run_command(tvexport() + " " + tvtest::quoted(dir + "/q8.tvb") + " -o " + tvtest::quoted(dir + "/w.bin"),
                          &out, &err),
      1);
  EXPECT_NE(err.find("q8.tvb"), std::string::npos) << err;
}

TEST(Tvexport, SameModelGivesIdenticalHeaderBytes) {
  std::string dir = tvtest::temp_dir("tvexport-same");
  std::vector<std::string> labels = {"a", "b"};
  std::string one = make_tvb(dir, "webmcu", labels, 3, false, "one.tvb");
  std::string two = make_tvb(dir, "webmcu", labels, 3, false, "two.tvb");  // same content, other file
  std::string out, err;
  ASSERT_EQ(
      tvtest::run_command(tvexport() + " " + tvtest::quoted(one) + " -o " + tvtest::quoted(dir + "/1.h"), &out, &err),
      0)
      << err;
  ASSERT_EQ(tvtest::run_command("cd " + tvtest::quoted(dir) + " && " + tvexport() + " two.tvb -o 2.h", &out, &err), 0)
      << err;
  ASSERT_EQ(tvtest::run_command(tvexport() + " " + tvtest::quoted(one) + " -o -", &out, &err), 0) << err;
  const std::string h1 = read_text(dir + "/1.h");
  EXPECT_FALSE(h1.empty());
  EXPECT_TRUE(h1 == read_text(dir + "/2.h"));
  EXPECT_TRUE(h1 == out);  // -o - writes the same text to stdout
  // The banner names the tool, its version and the blob's CRC-32, and nothing that changes by itself.
  std::vector<uint8_t> blob = tvh::read_file(one);
  char crc[16];
  std::snprintf(crc, sizeof crc, "0x%08X", tv::crc32(0, blob.data(), blob.size()));
  EXPECT_NE(h1.find(std::string("tvexport ") + TV_VERSION), std::string::npos);
  EXPECT_NE(h1.find(std::string("CRC-32 ") + crc), std::string::npos);
  EXPECT_NE(h1.find(std::string("#define TV_MODEL_BLOB_CRC32 ") + crc + "u"), std::string::npos);
}

TEST(Tvexport, WebmcuStyleMatchesTheReferenceFilesByteForByte) {
  TV_REQUIRE_SHARED("datasets/webmcu-b/header/myWeights.h");
  TV_REQUIRE_SHARED("datasets/webmcu-a/header/myWeights.h");
  std::string dir = tvtest::temp_dir("tvexport-ref");
  struct Case {
    const char* folder;
    const char* labels;
  } cases[] = {{"datasets/webmcu-b/header", "0Blank,1Cup,2Pen"}, {"datasets/webmcu-a/header", "0Blank,1Circle"}};
  for (const Case& c : cases) {
    const std::string bin = tvtest::shared_path(std::string(c.folder) + "/myWeights.bin");
    const std::string ref = read_text(tvtest::shared_path(std::string(c.folder) + "/myWeights.h"));
    std::string out, err;
    // Straight from the raw file.
    ASSERT_EQ(tvtest::run_command(tvexport() + " " + tvtest::quoted(bin) + " --preset webmcu --labels " + c.labels +
                                      " --style webmcu -o " + tvtest::quoted(dir + "/w.h"),
                                  &out, &err),
              0)
        << err;
    const std::string mine = read_text(dir + "/w.h");
    ASSERT_EQ(mine.size(), ref.size()) << c.folder;
    EXPECT_TRUE(mine == ref) << c.folder << ": first difference at byte "
                             << std::mismatch(mine.begin(), mine.end(), ref.begin()).first - mine.begin();
    // Through a .tvb (labels from the blob).
    std::vector<std::string> labels;
    std::stringstream ls(c.labels);
    for (std::string l; std::getline(ls, l, ',');) labels.push_back(l);
    tvh::RawOptions raw;
    raw.labels = labels;
    tvh::LoadedModel m = tvh::load_model(bin, raw);
    tvh::save_float_model(dir + "/m.tvb", *m.plan, m.params.data(), m.labels, "tool=test");
    ASSERT_EQ(tvtest::run_command(tvexport() + " " + tvtest::quoted(dir + "/m.tvb") + " --style webmcu -o " +
                                      tvtest::quoted(dir + "/t.h"),
                                  &out, &err),
              0)
        << err;
    EXPECT_TRUE(read_text(dir + "/t.h") == ref) << c.folder << " through a .tvb";
  }
}

TEST(Tvexport, WebmcuBinRoundTripKeepsTheBytes) {
  TV_REQUIRE_SHARED("datasets/webmcu-b/header/myWeights.bin");
  std::string dir = tvtest::temp_dir("tvexport-bin");
  const std::string bin = tvtest::shared_path("datasets/webmcu-b/header/myWeights.bin");
  const std::vector<uint8_t> original = tvh::read_file(bin);
  std::string out, err;
  ASSERT_EQ(tvtest::run_command(
                tvexport() + " " + tvtest::quoted(bin) + " --format webmcu-bin -o " + tvtest::quoted(dir + "/a.out"),
                &out, &err),
            0)
      << err;
  EXPECT_TRUE(tvh::read_file(dir + "/a.out") == original);
  // .bin -> .tvb -> .bin (the extension picks the format)
  tvh::RawOptions raw;
  raw.labels = {"0Blank", "1Cup", "2Pen"};
  tvh::LoadedModel m = tvh::load_model(bin, raw);
  tvh::save_float_model(dir + "/m.tvb", *m.plan, m.params.data(), m.labels, "");
  ASSERT_EQ(
      tvtest::run_command(
          tvexport() + " " + tvtest::quoted(dir + "/m.tvb") + " -o " + tvtest::quoted(dir + "/back.bin"), &out, &err),
      0)
      << err;
  EXPECT_TRUE(tvh::read_file(dir + "/back.bin") == original);
}

TEST(Tvexport, InfoJsonHasTheFacts) {
  std::string dir = tvtest::temp_dir("tvexport-info");
  std::vector<std::string> labels = {"cat", "dog", "none"};
  std::string tvb = make_tvb(dir, "webmcu", labels, 2, false);
  std::string out, err;
  ASSERT_EQ(tvtest::run_command(tvexport() + " info " + tvtest::quoted(tvb) + " --json --budget 512K", &out, &err), 0)
      << err;
  nlohmann::json j = nlohmann::json::parse(out);
  tvh::LoadedModel m = tvh::load_model(tvb);
  const tv::InferenceMemory im = tv::inference_memory(*m.plan);
  tv::TrainOptions o1, o2;
  o1.lanes = 1;
  o2.lanes = 2;
  const size_t t1 = tv::training_memory(*m.plan, o1).total_bytes, t2 = tv::training_memory(*m.plan, o2).total_bytes;
  EXPECT_EQ(j["dtype"], "float32");
  EXPECT_EQ(j["format"], "tvb");
  EXPECT_EQ(j["num_classes"], 3);
  EXPECT_EQ(j["labels"], nlohmann::json(labels));
  ASSERT_EQ(j["layers"].size(), 10u);
  EXPECT_EQ(j["layers"][0]["type"], "conv2d");
  EXPECT_EQ(j["layers"][0]["output"], nlohmann::json({62, 62, 4}));
  EXPECT_EQ(j["layers"][0]["params"], 112);
  EXPECT_EQ(j["layers"][0]["bytes_float"], 448);
  EXPECT_EQ(j["layers"][0]["bytes_int8"], 112 + 4 * 4);  // 108 int8 weights padded to 16 bytes, 4 int32 biases
  EXPECT_EQ(j["params"], m.plan->param_count);
  EXPECT_EQ(j["memory"]["inference"]["work_bytes"], im.work_bytes);
  EXPECT_EQ(j["memory"]["inference"]["total_bytes"], im.total_bytes);
  EXPECT_EQ(j["memory"]["training_1_lane"]["total_bytes"], t1);
  EXPECT_EQ(j["memory"]["training_2_lanes"]["total_bytes"], t2);
  char crc[16];
  std::snprintf(crc, sizeof crc, "0x%08X", tv::crc32(0, m.blob.data(), m.blob.size()));
  EXPECT_EQ(j["crc32"], crc);
  EXPECT_EQ(j["provenance"], "tool=test\npreset=webmcu\nseed=2");
  ASSERT_TRUE(j["budget"].is_object());
  EXPECT_EQ(j["budget"]["bytes"], 524288);
  EXPECT_TRUE(j["budget"]["fits"].is_boolean());
  EXPECT_EQ(j["budget"]["fits"], im.total_bytes <= 524288);
  EXPECT_EQ(j["budget"]["training_2_lanes_fits"], t2 <= 524288);
  // Without --budget the field is null.
  ASSERT_EQ(tvtest::run_command(tvexport() + " info " + tvtest::quoted(tvb) + " --json", &out, &err), 0) << err;
  EXPECT_TRUE(nlohmann::json::parse(out)["budget"].is_null());
}

TEST(Tvexport, InfoBudgetFitsExitsZeroOrDoesNotFitExitsOne) {
  std::string dir = tvtest::temp_dir("tvexport-budget");
  std::string tvb = make_tvb(dir, "webmcu", {"a", "b", "c"}, 2, false);
  tvh::LoadedModel m = tvh::load_model(tvb);
  const size_t need = tv::inference_memory(*m.plan).total_bytes;  // 193,036 bytes for this model
  std::string out, err;
  struct Case {
    const char* text;
    size_t bytes;
  } cases[] = {{"512K", 524288}, {"1M", 1048576}, {"300000", 300000}, {"100k", 102400}, {"2MiB", 2097152}};
  for (const Case& c : cases) {
    EXPECT_EQ(tvh::parse_budget(c.text), c.bytes) << c.text;
    const int fits_status = c.bytes >= need ? 0 : 1;
    ASSERT_EQ(tvtest::run_command(tvexport() + " info " + tvtest::quoted(tvb) + " --budget " + c.text, &out, &err),
              fits_status)
        << err;
    const std::string verdict = c.bytes >= need ? "bytes: FITS (inference" : "bytes: DOES NOT FIT (inference";
    EXPECT_NE(out.find("budget " + std::string(c.text) + " = "), std::string::npos) << out;
    EXPECT_NE(out.find(verdict), std::string::npos) << c.text << "\n" << out;
    ASSERT_EQ(
        tvtest::run_command(tvexport() + " info " + tvtest::quoted(tvb) + " --json --budget " + c.text, &out, &err),
        fits_status);
    EXPECT_EQ(nlohmann::json::parse(out)["budget"]["fits"], c.bytes >= need) << c.text;
  }
  for (const char* bad : {"", "K", "12X", "-5", "1.5M", "0"}) EXPECT_THROW(tvh::parse_budget(bad), tvh::Error) << bad;
  EXPECT_EQ(tvtest::run_command(tvexport() + " info " + tvtest::quoted(tvb) + " --budget 12X", &out, &err), 2);
  EXPECT_NE(err.find("--budget 12X"), std::string::npos) << err;
  // The text report names the layers, labels, CRC and provenance.
  ASSERT_EQ(tvtest::run_command(tvexport() + " info " + tvtest::quoted(tvb), &out, &err), 0);
  for (const char* s : {"conv2d 4 filters 3x3", "29x29x8", "classes: 3: a, b, c", "CRC-32 0x", "seed=2",
                        "training, 2 lanes", "float32"})
    EXPECT_NE(out.find(s), std::string::npos) << s << "\n" << out;
}

TEST(Tvexport, BadInputsExitOneWithOneSentenceNamingTheFile) {
  std::string dir = tvtest::temp_dir("tvexport-bad");
  std::string out, err;
  // A missing file.
  EXPECT_EQ(
      tvtest::run_command(
          tvexport() + " " + tvtest::quoted(dir + "/missing.tvb") + " -o " + tvtest::quoted(dir + "/x.h"), &out, &err),
      1);
  EXPECT_NE(err.find("missing.tvb"), std::string::npos) << err;
  EXPECT_EQ(lines_of(err), 1) << err;
  EXPECT_EQ(tvtest::run_command(tvexport() + " info " + tvtest::quoted(dir + "/missing.tvb"), &out, &err), 1);
  EXPECT_NE(err.find("missing.tvb"), std::string::npos) << err;
  // A corrupt blob: one flipped byte; the existing output is left alone.
  std::string tvb = make_tvb(dir, "webmcu", {"a", "b"}, 1, false);
  std::vector<uint8_t> bytes = tvh::read_file(tvb);
  bytes[bytes.size() / 2] ^= 0x40;
  tvh::write_file_atomic(dir + "/corrupt.tvb", bytes);
  write_text(dir + "/keep.h", "keep");
  EXPECT_EQ(tvtest::run_command(
                tvexport() + " " + tvtest::quoted(dir + "/corrupt.tvb") + " -o " + tvtest::quoted(dir + "/keep.h"),
                &out, &err),
            1);
  EXPECT_NE(err.find("corrupt.tvb"), std::string::npos) << err;
  EXPECT_NE(err.find("CRC"), std::string::npos) << err;
  EXPECT_EQ(lines_of(err), 1) << err;
  EXPECT_EQ(read_text(dir + "/keep.h"), "keep");
  // The webmcu style on a model that is not the webmcu network.
  std::string tiny = make_tvb(dir, "tinyvision", {"a", "b"}, 1, false, "tiny.tvb");
  EXPECT_EQ(tvtest::run_command(
                tvexport() + " " + tvtest::quoted(tiny) + " --style webmcu -o " + tvtest::quoted(dir + "/keep.h"), &out,
                &err),
            1);
  EXPECT_NE(err.find("tiny.tvb"), std::string::npos) << err;
  EXPECT_NE(err.find("webmcu"), std::string::npos) << err;
  EXPECT_EQ(lines_of(err), 1) << err;
  EXPECT_EQ(read_text(dir + "/keep.h"), "keep");
  // A raw file of a size no class count fits.
  write_text(dir + "/odd.bin", std::string(1000, '\0'));
  EXPECT_EQ(
      tvtest::run_command(tvexport() + " " + tvtest::quoted(dir + "/odd.bin") + " -o " + tvtest::quoted(dir + "/x.h"),
                          &out, &err),
      1);
  EXPECT_NE(err.find("odd.bin"), std::string::npos) << err;
  // A prefix that is not a C identifier.
  EXPECT_EQ(
      tvtest::run_command(tvexport() + " " + tvtest::quoted(tvb) + " --name 9lives -o " + tvtest::quoted(dir + "/x.h"),
                          &out, &err),
      1);
  EXPECT_NE(err.find("9lives"), std::string::npos) << err;
  // --labels on a .tvb (which carries its own).
  EXPECT_EQ(
      tvtest::run_command(tvexport() + " " + tvtest::quoted(tvb) + " --labels x,y -o " + tvtest::quoted(dir + "/x.h"),
                          &out, &err),
      1);
  EXPECT_NE(err.find("model.tvb"), std::string::npos) << err;
}

// The .espdl export itself is tested in test_espdl_export.cpp; a float model is refused (quantize first).
TEST(Tvexport, EspdlOfAFloatModelIsRefused) {
  std::string dir = tvtest::temp_dir("tvexport-espdl");
  std::string tvb = make_tvb(dir, "webmcu", {"a", "b"}, 1, false);
  std::string out, err;
  EXPECT_NE(tvtest::run_command(tvexport() + " " + tvtest::quoted(tvb) + " -o " + tvtest::quoted(dir + "/m.espdl"),
                                &out, &err),
            0);
  EXPECT_NE(err.find("is a float model"), std::string::npos) << err;
  EXPECT_NE(tvtest::run_command(tvexport() + " verify " + tvtest::quoted(dir + "/m.espdl"), &out, &err), 0);
  EXPECT_NE(err.find("m.espdl"), std::string::npos) << err;
}

// The board runs 2 to 16 classes: tvexport refuses a tinyvision-style header of a model it cannot run
// (nothing written), and writes the other formats with a warning naming the figure.
TEST(Tvexport, AHeaderTheBoardCannotRunIsRefused) {
  const std::string dir = tvtest::temp_dir("tvexport-wide");
  std::vector<std::string> labels;
  for (int i = 0; i < 23; ++i) labels.push_back("c" + std::to_string(i));
  const std::string tvb = make_tvb(dir, "webmcu", labels, 3, false);
  std::string out, err;
  EXPECT_EQ(tvtest::run_command(tvexport() + " " + tvtest::quoted(tvb) + " -o " + tvtest::quoted(dir + "/model.h"),
                                &out, &err),
            1);
  EXPECT_EQ(err,
            "tvexport: " + tvb +
                ": it has 23 classes; the board's firmware runs 2 to 16, so a tinyvision-style header of it cannot "
                "be baked into the board; nothing was written.\n");
  EXPECT_NE(::access((dir + "/model.h").c_str(), F_OK), 0);
  EXPECT_EQ(tvtest::run_command(
                tvexport() + " " + tvtest::quoted(tvb) + " --style webmcu -o " + tvtest::quoted(dir + "/webmcu.h"),
                &out, &err),
            0)
      << err;
  EXPECT_NE(err.find("tvexport: warning: " + tvb +
                     ": it has 23 classes; the board's firmware runs 2 to 16; the "
                     "TinyVision board cannot run it\n"),
            std::string::npos)
      << err;
}

// A detector's header (float and int8): the blob with its TASK section, compiled by gcc and g++ and equal to
// the blob bit for bit, and the detector's facts as #defines.
TEST(Tvexport, ADetectorsHeaderCarriesItsTaskAndCompiles) {
  const std::string dir = tvtest::temp_dir("tvexport-det-h");
  const std::string photos = dettest::small_detect_dataset(dir);
  ASSERT_FALSE(photos.empty());
  const std::string model = dettest::train_detector(dir, photos, 2);
  ASSERT_FALSE(model.empty());
  const std::string q8 = dettest::quantize_detector(dir, photos, model);
  ASSERT_FALSE(q8.empty());
  for (const std::string& m : {model, q8}) {
    compile_and_compare(dir, m, {"_background", "ring", "cross", "triangle"});
    const std::string h = tvtest::read_text(dir + "/model.h");
    EXPECT_TRUE(tvtest::contains(h, "#define TV_MODEL_IS_DETECTOR 1\n")) << m;
    EXPECT_TRUE(tvtest::contains(h, "#define TV_MODEL_GRID_HEIGHT 12\n")) << m;
    EXPECT_TRUE(tvtest::contains(h, "#define TV_MODEL_GRID_WIDTH 12\n")) << m;
    EXPECT_TRUE(tvtest::contains(h, "#define TV_MODEL_DETECT_THRESHOLD 0.5f")) << m;
    EXPECT_TRUE(tvtest::contains(h, "tv::grid_objects at\n//          TV_MODEL_DETECT_THRESHOLD gives the objects"))
        << m;
  }
}
