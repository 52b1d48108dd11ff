// The .espdl reader: header checks, refusal of truncated and corrupted files without crashing, the
// S3 filter packing (hand-checked order, round trips), and a 2-D model written with our own schema
// (FlatBufferBuilder) that the interpreter runs through every supported 2-D op.
#include <flatbuffers/flatbuffers.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "espdl_generated.h"
#include "host/base/error.h"
#include "host/espdl/espdl.h"
#include "test_support.h"
#include "tv/int8/int8_ops.h"

namespace {

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

std::vector<uint8_t> golden(const std::string& name) {
  return read_bytes(tvtest::shared_path("espdl-golden/" + name));
}

void put_u32(std::vector<uint8_t>& b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + size_t(i)] = uint8_t(v >> (8 * i));
}

// Parses `bytes` as "bad.espdl" and returns the error message ("" when it parsed).
std::string parse_error(const std::vector<uint8_t>& bytes) {
  try {
    tvh::espdl_parse(bytes.data(), bytes.size(), "bad.espdl");
    return "";
  } catch (const tvh::Error& e) {
    return e.what();
  }
}

// ---------------------------------------------------------------- a writer built on our schema

// Builds .espdl files with the generated FlatBuffers code: what a writer of our models will do.
class EspdlWriter {
 public:
  using Bytes = std::vector<uint8_t>;

  void tensor(std::vector<flatbuffers::Offset<espdl::Tensor>>& list, const std::string& name,
              const std::vector<int64_t>& dims, espdl::TensorDataType type, const Bytes& payload, int exponent,
              const std::string& doc = "") {
    std::vector<espdl::AlignedBytes> blocks((payload.size() + 15) / 16);
    for (size_t b = 0; b < blocks.size(); ++b) {
      uint8_t chunk[16] = {0};
      std::memcpy(chunk, payload.data() + b * 16, std::min<size_t>(16, payload.size() - b * 16));
      blocks[b] = espdl::AlignedBytes(flatbuffers::span<const uint8_t, 16>(chunk, 16));
    }
    const std::vector<int64_t> exps = {exponent};
    list.push_back(espdl::CreateTensorDirect(fbb_, &dims, type, nullptr, nullptr, nullptr, nullptr, name.c_str(),
                                             doc.empty() ? nullptr : doc.c_str(), &blocks, nullptr,
                                             espdl::DataLocation_DEFAULT, nullptr, nullptr, &exps));
  }
  void initializer(const std::string& name, const std::vector<int64_t>& dims, espdl::TensorDataType type,
                   const Bytes& payload, int exponent, const std::string& doc = "") {
    tensor(inits_, name, dims, type, payload, exponent, doc);
  }
  void test_input(const std::string& name, const std::vector<int64_t>& dims, const std::vector<int8_t>& q, int e) {
    tensor(test_in_, name, dims, espdl::TensorDataType_INT8, Bytes(q.begin(), q.end()), e);
  }
  void test_output(const std::string& name, const std::vector<int64_t>& dims, espdl::TensorDataType type,
                   const Bytes& payload, int e) {
    tensor(test_out_, name, dims, type, payload, e);
  }

  void value(const std::string& name, const std::vector<int64_t>& dims, int exponent,
             espdl::TensorDataType type = espdl::TensorDataType_INT8) {
    std::vector<flatbuffers::Offset<espdl::Dimension>> ds;
    for (int64_t d : dims)
      ds.push_back(espdl::CreateDimension(fbb_, espdl::CreateDimensionValue(fbb_, espdl::DimensionValueType_VALUE, d)));
    const auto shape = espdl::CreateTensorShapeDirect(fbb_, &ds);
    const auto tts = espdl::CreateTensorTypeAndShape(fbb_, type, shape);
    const auto ti = espdl::CreateTypeInfo(fbb_, espdl::TypeInfoValue_tensor_type, tts.Union());
    const std::vector<int64_t> exps = {exponent};
    values_.push_back(espdl::CreateValueInfoDirect(fbb_, name.c_str(), ti, nullptr, &exps));
  }

  flatbuffers::Offset<espdl::Attribute> attr_int(const char* name, int64_t v) {
    espdl::AttributeI i(v);
    return espdl::CreateAttributeDirect(fbb_, name, nullptr, nullptr, espdl::AttributeType_INT, nullptr, &i);
  }
  flatbuffers::Offset<espdl::Attribute> attr_float(const char* name, float v) {
    espdl::AttributeF f(v);
    return espdl::CreateAttributeDirect(fbb_, name, nullptr, nullptr, espdl::AttributeType_FLOAT, &f);
  }
  flatbuffers::Offset<espdl::Attribute> attr_ints(const char* name, const std::vector<int64_t>& v) {
    return espdl::CreateAttributeDirect(fbb_, name, nullptr, nullptr, espdl::AttributeType_INTS, nullptr, nullptr,
                                        nullptr, 0, 0, 0, nullptr, &v);
  }
  flatbuffers::Offset<espdl::Attribute> attr_string(const char* name, const std::string& v) {
    const std::vector<uint8_t> s(v.begin(), v.end());  // STRING attributes are bytes
    return espdl::CreateAttributeDirect(fbb_, name, nullptr, nullptr, espdl::AttributeType_STRING, nullptr, nullptr,
                                        &s);
  }

  void node(const std::string& op, const std::string& name, const std::vector<std::string>& in,
            const std::vector<std::string>& out, std::vector<flatbuffers::Offset<espdl::Attribute>> attrs) {
    attrs.push_back(attr_string("quant_type", "S8"));
    std::vector<flatbuffers::Offset<flatbuffers::String>> i, o;
    for (const auto& s : in) i.push_back(fbb_.CreateString(s));
    for (const auto& s : out) o.push_back(fbb_.CreateString(s));
    nodes_.push_back(espdl::CreateNodeDirect(fbb_, &i, &o, name.c_str(), op.c_str(), nullptr, &attrs));
  }

  // The whole file: header + FlatBuffer.
  Bytes finish() {
    const auto graph = espdl::CreateGraphDirect(fbb_, &nodes_, "synthetic", &inits_, nullptr, nullptr, nullptr,
                                                &values_, nullptr, &test_in_, &test_out_);
    fbb_.Finish(espdl::CreateModel(fbb_, 8, 0, 0, 0, 0, 0, 0, graph));
    Bytes out(16 + fbb_.GetSize(), 0);
    std::memcpy(out.data(), "EDL2", 4);
    put_u32(out, 8, uint32_t(fbb_.GetSize()));
    std::memcpy(out.data() + 16, fbb_.GetBufferPointer(), fbb_.GetSize());
    return out;
  }

 private:
  flatbuffers::FlatBufferBuilder fbb_;
  std::vector<flatbuffers::Offset<espdl::Node>> nodes_;
  std::vector<flatbuffers::Offset<espdl::Tensor>> inits_, test_in_, test_out_;
  std::vector<flatbuffers::Offset<espdl::ValueInfo>> values_;
};

template <typename T>
EspdlWriter::Bytes as_bytes(const std::vector<T>& v) {
  EspdlWriter::Bytes b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

std::vector<int8_t> random_q(std::mt19937& rng, size_t n, int lo = -128, int hi = 127) {
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<int8_t> v(n);
  for (auto& x : v) x = int8_t(d(rng));
  return v;
}

std::vector<int32_t> random_b(std::mt19937& rng, size_t n) {
  std::uniform_int_distribution<int> d(-3000, 3000);
  std::vector<int32_t> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// A 2-D model through every supported 2-D op, with expected outputs computed directly from the
// kernels (a dilated depthwise conv by a naive loop), written with our schema.
EspdlWriter::Bytes synthetic_model(bool corrupt_expected = false) {
  std::mt19937 rng(2024);
  EspdlWriter w;
  // x [1,5,5,3] e-5 -> conv 3x3 pad 1, 18 outputs (S3 packing with a 2-filter remainder) e-6
  const tv::Geom2D g1{5, 5, 3, 5, 5, 18, 3, 3, 1, 1, 1, 1};
  const auto x = random_q(rng, 75);
  const auto w1 = random_q(rng, 18 * 27, -40, 40);
  const auto b1 = random_b(rng, 18);
  tv::Q8Layer q1;
  q1.e_in = -5, q1.e_w = -7, q1.e_out = -6;
  std::vector<int8_t> c1(5 * 5 * 18);
  EXPECT_TRUE(tv::conv2d_s8(g1, x.data(), w1.data(), b1.data(), q1, c1.data()).ok());
  // maxpool 2x2 stride 2, pads [0, 0, 1, 1] -> [1,3,3,18], exponent kept
  const tv::Geom2D g2{5, 5, 18, 3, 3, 18, 2, 2, 2, 2, 0, 0};
  std::vector<int8_t> p1(3 * 3 * 18);
  EXPECT_TRUE(tv::maxpool2d_s8(g2, c1.data(), p1.data()).ok());
  // LeakyRelu alpha 0.1 (no table in the file: the interpreter builds ours) e-6 -> e-6
  int8_t leaky[256];
  tv::leaky_relu_table_s8(0.1f, -6, -6, leaky);
  std::vector<int8_t> l1(p1.size());
  tv::lut_s8(leaky, p1.data(), p1.size(), l1.data());
  // depthwise 3x3, dilation 2, pads 2 -> [1,3,3,18] e-5 (naive loop)
  const auto w2 = random_q(rng, 9 * 18);
  const auto b2 = random_b(rng, 18);
  std::vector<int8_t> d1(3 * 3 * 18);
  for (int oy = 0; oy < 3; ++oy)
    for (int ox = 0; ox < 3; ++ox)
      for (int c = 0; c < 18; ++c) {
        int64_t acc = b2[size_t(c)];
        for (int ky = 0; ky < 3; ++ky)
          for (int kx = 0; kx < 3; ++kx) {
            const int iy = oy - 2 + 2 * ky, ix = ox - 2 + 2 * kx;
            if (iy >= 0 && iy < 3 && ix >= 0 && ix < 3)
              acc += int64_t(l1[size_t((iy * 3 + ix) * 18 + c)]) * w2[size_t((ky * 3 + kx) * 18 + c)];
          }
        d1[size_t((oy * 3 + ox) * 18 + c)] = tv::requantize_s8(acc, -5 - (-6) - (-6));
      }
  // avgpool 2x2 stride 1 -> [1,2,2,18] e-6
  const tv::Geom2D g3{3, 3, 18, 2, 2, 18, 2, 2, 1, 1, 0, 0};
  std::vector<int8_t> a1(2 * 2 * 18);
  EXPECT_TRUE(tv::avgpool2d_s8(g3, d1.data(), -5, -6, a1.data()).ok());
  // global average -> [1,1,1,18] e-6, flatten -> [1,18]
  std::vector<int8_t> ga(18);
  EXPECT_TRUE(tv::global_avgpool_s8(2, 2, 18, a1.data(), -6, -6, ga.data()).ok());
  // Gemm 18 -> 10, plain-C layout [out][in], e-7, bias e-13 -> e-4
  const auto w3 = random_q(rng, 180);
  const auto b3 = random_b(rng, 10);
  tv::Q8Layer q3;
  q3.e_in = -6, q3.e_w = -7, q3.e_out = -4;
  std::vector<int8_t> fc(10);
  EXPECT_TRUE(tv::dense_s8(18, 10, ga.data(), w3.data(), b3.data(), q3, fc.data()).ok());
  std::vector<float> probs(10);
  tv::softmax_s8(fc.data(), 10, -4, probs.data());
  if (corrupt_expected) fc[7] = int8_t(fc[7] ^ 4);

  // The file.
  const auto w1_s3 = tvh::ours_conv_filter_to_s3(w1.data(), 3, 3, 3, 18);
  w.initializer("w1", {3, 3, 3, 18}, espdl::TensorDataType_INT8, as_bytes(w1_s3), -7,
                tvh::s3_filter_layout_doc(18, false));
  w.initializer("b1", {18}, espdl::TensorDataType_INT32, as_bytes(b1), -12);
  const auto w2_s3 = tvh::ours_depthwise_filter_to_s3(w2.data(), 3, 3, 18);
  w.initializer("w2", {3, 3, 18, 1}, espdl::TensorDataType_INT8, as_bytes(w2_s3), -6,
                tvh::s3_filter_layout_doc(18, false));
  w.initializer("b2", {18}, espdl::TensorDataType_INT32, as_bytes(b2), -12);
  w.initializer("w3", {1, 1, 18, 10}, espdl::TensorDataType_INT8, as_bytes(w3), -7, "layout ==> NHWC");
  w.initializer("b3", {10}, espdl::TensorDataType_INT32, as_bytes(b3), -13);
  w.value("x", {1, 5, 5, 3}, -5);
  w.value("c1", {1, 5, 5, 18}, -6);
  w.value("p1", {1, 3, 3, 18}, -6);
  w.value("l1", {1, 3, 3, 18}, -6);
  w.value("d1", {1, 3, 3, 18}, -5);
  w.value("a1", {1, 2, 2, 18}, -6);
  w.value("ga", {1, 1, 1, 18}, -6);
  w.value("flat", {1, 18}, -6);
  w.value("fc", {1, 10}, -4);
  w.value("probs", {1, 10}, 0, espdl::TensorDataType_FLOAT);
  w.node("Conv", "conv", {"x", "w1", "b1"}, {"c1"},
         {w.attr_ints("kernel_shape", {3, 3}), w.attr_ints("pads", {1, 1, 1, 1}), w.attr_ints("strides", {1, 1}),
          w.attr_ints("dilations", {1, 1}), w.attr_int("group", 1), w.attr_string("activation", "Linear")});
  w.node("MaxPool", "pool", {"c1"}, {"p1"},
         {w.attr_ints("kernel_shape", {2, 2}), w.attr_ints("strides", {2, 2}), w.attr_ints("pads", {0, 0, 1, 1})});
  w.node("LeakyRelu", "leaky", {"p1"}, {"l1"}, {w.attr_float("alpha", 0.1f)});
  w.node("Conv", "dw", {"l1", "w2", "b2"}, {"d1"},
         {w.attr_ints("kernel_shape", {3, 3}), w.attr_ints("pads", {2, 2, 2, 2}), w.attr_ints("dilations", {2, 2}),
          w.attr_int("group", 18), w.attr_string("activation", "Linear")});
  w.node("AveragePool", "avg", {"d1"}, {"a1"},
         {w.attr_ints("kernel_shape", {2, 2}), w.attr_int("count_include_pad", 0)});
  w.node("GlobalAveragePool", "gap", {"a1"}, {"ga"}, {});
  w.node("Flatten", "flatten", {"ga"}, {"flat"}, {w.attr_int("axis", 1)});
  w.node("Gemm", "fc", {"flat", "w3", "b3"}, {"fc"},
         {w.attr_int("transB", 0), w.attr_string("activation", "Linear"), w.attr_float("alpha", 1.0f),
          w.attr_float("beta", 1.0f)});
  w.node("Softmax", "softmax", {"fc"}, {"probs"}, {w.attr_int("axis", -1)});
  w.test_input("x", {1, 5, 5, 3}, x, -5);
  w.test_output("fc", {1, 10}, espdl::TensorDataType_INT8, EspdlWriter::Bytes(fc.begin(), fc.end()), -4);
  w.test_output("probs", {1, 10}, espdl::TensorDataType_FLOAT, as_bytes(probs), 0);
  return w.finish();
}

// ---------------------------------------------------------------- header and corruption

TEST(EspdlReader, RefusesShortFilesAndBadMagic) {
  EXPECT_NE(parse_error({}).find("bad.espdl"), std::string::npos);
  EXPECT_NE(parse_error({'E', 'D', 'L'}).find("shorter than the 16-byte"), std::string::npos);
  std::vector<uint8_t> b = synthetic_model();
  b[0] = 'X';
  const std::string e = parse_error(b);
  EXPECT_NE(e.find("not an .espdl file"), std::string::npos) << e;
  EXPECT_NE(e.find("'XDL2'"), std::string::npos) << e;
  b[0] = 'E';
  b[3] = '1';  // EDL1: the older format
  EXPECT_NE(parse_error(b).find("only single-model EDL2"), std::string::npos);
  std::memcpy(b.data(), "PDL1", 4);  // a packed multi-model file
  EXPECT_NE(parse_error(b).find("only single-model EDL2"), std::string::npos);
}

TEST(EspdlReader, RefusesEncryptedAndUnknownModes) {
  std::vector<uint8_t> b = synthetic_model();
  put_u32(b, 4, 1);
  EXPECT_NE(parse_error(b).find("AES-encrypted"), std::string::npos);
  put_u32(b, 4, 7);
  EXPECT_NE(parse_error(b).find("unknown mode 7"), std::string::npos);
  put_u32(b, 4, 0);
  b[13] = 1;
  EXPECT_NE(parse_error(b).find("reserved"), std::string::npos);
}

TEST(EspdlReader, RefusesBadLengths) {
  const std::vector<uint8_t> good = synthetic_model();
  const uint32_t len = uint32_t(good.size() - 16);
  std::vector<uint8_t> b = good;
  put_u32(b, 8, len + 1);
  EXPECT_NE(parse_error(b).find("truncated"), std::string::npos) << parse_error(b);
  put_u32(b, 8, 0xFFFFFFFFu);
  EXPECT_NE(parse_error(b).find("truncated"), std::string::npos);
  put_u32(b, 8, len - 16);
  EXPECT_NE(parse_error(b).find("bytes after the model"), std::string::npos) << parse_error(b);
  put_u32(b, 8, 0);
  EXPECT_FALSE(parse_error(b).empty());
  b = good;
  b.push_back(0);  // a stray byte at the end
  EXPECT_NE(parse_error(b).find("1 bytes after the model"), std::string::npos);
  EXPECT_EQ(parse_error(good), "");
}

TEST(EspdlReader, EveryTruncationIsRefusedWithOneSentenceNamingTheFile) {
  TV_REQUIRE_SHARED("espdl-golden");
  const std::vector<uint8_t> full = golden("esp32s3-linear_ishap_1_16_kshap_16_16_relu_s8.espdl");
  ASSERT_GT(full.size(), 1000u);
  EXPECT_EQ(parse_error(full), "");
  for (size_t n = 0; n < full.size(); ++n) {
    const std::string e = parse_error(std::vector<uint8_t>(full.begin(), full.begin() + long(n)));
    ASSERT_FALSE(e.empty()) << "a " << n << "-byte prefix parsed";
    EXPECT_EQ(e.rfind("bad.espdl: ", 0), 0u) << e;
    EXPECT_EQ(e.back(), '.') << e;
  }
}

TEST(EspdlReader, TruncatedBodyWithAdjustedLengthFailsVerification) {
  TV_REQUIRE_SHARED("espdl-golden");
  std::vector<uint8_t> b = golden("mlp3-gemm-esp32s3.espdl");
  b.resize(b.size() / 2);
  put_u32(b, 8, uint32_t(b.size() - 16));  // a consistent header over a cut FlatBuffer
  const std::string e = parse_error(b);
  EXPECT_NE(e.find("fails verification"), std::string::npos) << e;
}

// Flipping any single byte, or scribbling random bytes, never crashes: the file is refused, or it
// still parses (the FlatBuffer may tolerate the change) and then runs or is refused cleanly.
void survive(const std::vector<uint8_t>& bytes, int* parsed, int* refused) {
  try {
    const tvh::EspdlModel m = tvh::espdl_parse(bytes.data(), bytes.size(), "bad.espdl");
    ++*parsed;
    try {
      (void)tvh::espdl_run_test_vectors(m);
    } catch (const tvh::Error&) {
    }
  } catch (const tvh::Error& e) {
    ++*refused;
    EXPECT_EQ(std::string(e.what()).rfind("bad.espdl: ", 0), 0u) << e.what();
  }
}

TEST(EspdlReader, FlippedBytesNeverCrash) {
  std::vector<std::vector<uint8_t>> files = {synthetic_model()};
  if (!tvtest::shared_path("espdl-golden").empty()) {
    files.push_back(golden("esp32s3-linear_ishap_1_31_kshap_32_31_relu_s8.espdl"));
    files.push_back(golden("mlp3-gemm-esp32s3.espdl"));
    files.push_back(golden("streaming-conv-esp32s3.espdl"));
  }
  int parsed = 0, refused = 0;
  for (const auto& good : files) {
    for (size_t i = 0; i < good.size(); ++i) {
      std::vector<uint8_t> b = good;
      b[i] = uint8_t(b[i] ^ 0xFF);
      survive(b, &parsed, &refused);
    }
  }
  std::mt19937 rng(77);
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<uint8_t> b = files[size_t(trial) % files.size()];
    std::uniform_int_distribution<size_t> pos(16, b.size() - 1);
    std::uniform_int_distribution<int> val(0, 255), count(1, 8);
    for (int k = count(rng); k > 0; --k) b[pos(rng)] = uint8_t(val(rng));
    survive(b, &parsed, &refused);
  }
  EXPECT_GT(refused, 100);
  RecordProperty("parsed", parsed);
  RecordProperty("refused", refused);
}

// ---------------------------------------------------------------- filter layouts

TEST(EspdlLayout, ConvPackingOrderByHand) {
  // 18 filters of 2 input channels, 1x1: ours[n][c] = 2n + c. Packed: the first 16 filters with
  // the 16 outputs fastest, for c = 0 then c = 1; then filters 16 and 17 whole (NHWC).
  std::vector<int8_t> ours(36);
  for (int i = 0; i < 36; ++i) ours[size_t(i)] = int8_t(i);
  std::vector<int8_t> want;
  for (int c = 0; c < 2; ++c)
    for (int n = 0; n < 16; ++n) want.push_back(int8_t(2 * n + c));
  for (int n = 16; n < 18; ++n)
    for (int c = 0; c < 2; ++c) want.push_back(int8_t(2 * n + c));
  EXPECT_EQ(tvh::ours_conv_filter_to_s3(ours.data(), 1, 1, 2, 18), want);
  EXPECT_EQ(tvh::s3_conv_filter_to_ours(want.data(), 1, 1, 2, 18), ours);
  EXPECT_EQ(tvh::s3_filter_layout_doc(18, false), "layout ==> (N/16)HWC16_UNALIGNED");
  EXPECT_EQ(tvh::s3_filter_layout_doc(32, true), "layout ==> (N/16)WC16");
}

TEST(EspdlLayout, DepthwisePackingOrderByHand) {
  // 2 taps, 18 channels: ours[t][c] = 20t + c. Packed: channels 0..15 for t = 0, then t = 1; then
  // channels 16..17 for t = 0, then t = 1.
  std::vector<int8_t> ours(36);
  for (int t = 0; t < 2; ++t)
    for (int c = 0; c < 18; ++c) ours[size_t(t * 18 + c)] = int8_t(20 * t + c);
  std::vector<int8_t> want;
  for (int t = 0; t < 2; ++t)
    for (int c = 0; c < 16; ++c) want.push_back(int8_t(20 * t + c));
  for (int t = 0; t < 2; ++t)
    for (int c = 16; c < 18; ++c) want.push_back(int8_t(20 * t + c));
  EXPECT_EQ(tvh::ours_depthwise_filter_to_s3(ours.data(), 1, 2, 18), want);
  EXPECT_EQ(tvh::s3_depthwise_filter_to_ours(want.data(), 1, 2, 18), ours);
}

TEST(EspdlLayout, RoundTripsOnRandomShapes) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 50; ++trial) {
    std::uniform_int_distribution<int> k(1, 5), c(1, 40);
    const int kh = k(rng), kw = k(rng), cin = c(rng), cout = c(rng);
    const auto w = random_q(rng, size_t(kh) * kw * cin * cout);
    const auto packed = tvh::ours_conv_filter_to_s3(w.data(), kh, kw, cin, cout);
    EXPECT_EQ(tvh::s3_conv_filter_to_ours(packed.data(), kh, kw, cin, cout), w);
    if (cout >= 16) {
      EXPECT_NE(packed, w);  // it is a real permutation
    }
    const auto dw = random_q(rng, size_t(kh) * kw * cout);
    const auto dpacked = tvh::ours_depthwise_filter_to_s3(dw.data(), kh, kw, cout);
    EXPECT_EQ(tvh::s3_depthwise_filter_to_ours(dpacked.data(), kh, kw, cout), dw);
  }
}

TEST(EspdlLayout, LayoutDocStrings) {
  tvh::EspdlTensor t;
  t.name = "w";
  for (const char* doc : {"layout ==> (N/16)HWC16", "layout ==> (N/16)WC16_UNALIGNED", "layout ==> N16HWC16",
                          "layout ==> N16HWC16_UNALIGNED"}) {
    t.doc = doc;
    EXPECT_EQ(tvh::espdl_filter_layout(t, "f.espdl"), tvh::EspdlFilterLayout::S3Packed) << doc;
  }
  for (const char* doc : {"layout ==> NHWC", "layout ==> NWC", "layout ==> HWCN", "layout ==> WCN"}) {
    t.doc = doc;
    EXPECT_EQ(tvh::espdl_filter_layout(t, "f.espdl"), tvh::EspdlFilterLayout::Ours) << doc;
  }
  t.doc = "layout ==> (N/8)HWC8";
  EXPECT_THROW(tvh::espdl_filter_layout(t, "f.espdl"), tvh::Error);
  t.doc = "layout ==> NCHW";
  EXPECT_THROW(tvh::espdl_filter_layout(t, "f.espdl"), tvh::Error);
}

// ---------------------------------------------------------------- a model written with our schema

TEST(EspdlWriterSchema, SyntheticTwoDimensionalModelRunsThroughEveryOp) {
  const std::vector<uint8_t> bytes = synthetic_model();
  const tvh::EspdlModel m = tvh::espdl_parse(bytes.data(), bytes.size(), "synthetic.espdl");
  ASSERT_EQ(m.nodes.size(), 9u);
  EXPECT_EQ(m.ir_version, 8);
  EXPECT_EQ(m.nodes[0].attr_ints("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(m.nodes[2].attr_float("alpha", 0), 0.1f);
  const tvh::EspdlFilter f = tvh::espdl_node_filter(m, m.nodes[3]);
  EXPECT_TRUE(f.depthwise);
  EXPECT_EQ(f.cin, 18);
  const tvh::EspdlRunReport r = tvh::espdl_run_test_vectors(m);
  EXPECT_TRUE(r.passed) << r.message;
  EXPECT_EQ(r.tensors_compared, 2);
  EXPECT_EQ(r.ops_run, (std::vector<std::string>{"Conv", "MaxPool", "LeakyRelu", "Conv", "AveragePool",
                                                 "GlobalAveragePool", "Flatten", "Gemm", "Softmax"}));

  const std::vector<uint8_t> bad = synthetic_model(/*corrupt_expected=*/true);
  const tvh::EspdlRunReport rb =
      tvh::espdl_run_test_vectors(tvh::espdl_parse(bad.data(), bad.size(), "synthetic.espdl"));
  EXPECT_FALSE(rb.passed);
  EXPECT_EQ(rb.mismatch_tensor, "fc");
  EXPECT_EQ(rb.mismatch_index, 7u);
}

// Relu with a new exponent, Add and Mul across exponents, Transpose, Reshape from a shape input
// (no shape in value_info, ONNX -1) and Slice with a negative start and an INT64_MAX end.
TEST(EspdlWriterSchema, SyntheticElementwiseModel) {
  std::mt19937 rng(8);
  const std::vector<int8_t> x = random_q(rng, 24);
  std::vector<int8_t> y = x, a(24), m(24);
  tv::relu_s8(y.data(), y.size());
  tv::rescale_s8(y.data(), y.size(), -5, -6, y.data());
  tv::add_s8(x.data(), -5, y.data(), -6, 24, -5, a.data());
  tv::mul_s8(a.data(), -5, x.data(), -5, 24, -8, m.data());
  std::vector<int8_t> t;  // [1,2,3,4] -> perm [0,3,1,2] -> [1,4,2,3]
  for (int c = 0; c < 4; ++c)
    for (int h = 0; h < 2; ++h)
      for (int w3 = 0; w3 < 3; ++w3) t.push_back(m[size_t((h * 3 + w3) * 4 + c)]);
  const std::vector<int8_t> last5(t.end() - 5, t.end());

  EspdlWriter w;
  w.initializer("shape", {2}, espdl::TensorDataType_INT64, as_bytes(std::vector<int64_t>{1, -1}), 0);
  w.initializer("starts", {1}, espdl::TensorDataType_INT64, as_bytes(std::vector<int64_t>{-5}), 0);
  w.initializer("ends", {1}, espdl::TensorDataType_INT64,
                as_bytes(std::vector<int64_t>{std::numeric_limits<int64_t>::max()}), 0);
  w.initializer("axes", {1}, espdl::TensorDataType_INT64, as_bytes(std::vector<int64_t>{1}), 0);
  w.value("x", {1, 2, 3, 4}, -5);
  w.value("y", {1, 2, 3, 4}, -6);
  w.value("a", {1, 2, 3, 4}, -5);
  w.value("m", {1, 2, 3, 4}, -8);
  w.value("t", {1, 4, 2, 3}, -8);
  w.value("r", {}, -8);  // no shape: Reshape must use its shape input
  w.value("s", {1, 5}, -8);
  w.node("Relu", "relu", {"x"}, {"y"}, {});
  w.node("Add", "add", {"x", "y"}, {"a"}, {});
  w.node("Mul", "mul", {"a", "x"}, {"m"}, {});
  w.node("Transpose", "transpose", {"m"}, {"t"}, {w.attr_ints("perm", {0, 3, 1, 2})});
  w.node("Reshape", "reshape", {"t", "shape"}, {"r"}, {});
  w.node("Slice", "slice", {"r", "starts", "ends", "axes"}, {"s"}, {});
  w.test_input("x", {1, 2, 3, 4}, x, -5);
  w.test_output("s", {1, 5}, espdl::TensorDataType_INT8, EspdlWriter::Bytes(last5.begin(), last5.end()), -8);
  const std::vector<uint8_t> bytes = w.finish();
  const tvh::EspdlModel model = tvh::espdl_parse(bytes.data(), bytes.size(), "elementwise.espdl");
  const tvh::EspdlRunReport r = tvh::espdl_run_test_vectors(model);
  EXPECT_TRUE(r.passed) << r.message;
  EXPECT_EQ(r.ops_run.size(), 6u);
}

TEST(EspdlReader, ReadFileNamesMissingFiles) {
  try {
    tvh::espdl_read_file("/nonexistent/dir/model.espdl");
    FAIL();
  } catch (const tvh::Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/model.espdl"), std::string::npos);
  }
}

}  // namespace
