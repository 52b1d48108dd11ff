// The device-safe C-header writer: exact float formatting (checked against glibc's printf, which
// is correctly rounded), round trips through strtof, and the writer's refusals and determinism.
#include "tv/formats/header_writer.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "host/model/model_io.h"
#include "tv/crc32.h"
#include "tv/float_math.h"
#include "tv/formats/raw_weights.h"
#include "tv/model/blob.h"
#include "tv/train/net.h"
#include "tv/train/presets.h"

namespace {

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
using tv::math::bits_of;

std::string libc(const char* fmt, float v) {
  char b[128];
  std::snprintf(b, sizeof b, fmt, (double)v);
  return b;
}
std::string g9(float v) {
  char b[tv::kFloatTextMax];
  size_t n = tv::format_float_g9(v, b);
  EXPECT_EQ(n, std::strlen(b));
  return b;
}
std::string fixed6(float v) {
  char b[tv::kFloatTextMax];
  size_t n = tv::format_float_fixed6(v, b);
  EXPECT_EQ(n, std::strlen(b));
  return b;
}
std::string literal(float v) {
  char b[tv::kFloatTextMax];
  size_t n = tv::format_float_literal(v, b);
  EXPECT_EQ(n, std::strlen(b));
  return b;
}

// Checks one float against printf and the literal's round trip; returns false on the first mismatch.
bool check_float(float v) {
  if (g9(v) != libc("%.9g", v)) {
    ADD_FAILURE() << "%.9g of bits " << std::hex << bits_of(v) << ": " << g9(v) << " vs " << libc("%.9g", v);
    return false;
  }
  if (fixed6(v) != libc("%.6f", v)) {
    ADD_FAILURE() << "%.6f of bits " << std::hex << bits_of(v) << ": " << fixed6(v) << " vs " << libc("%.6f", v);
    return false;
  }
  std::string lit = literal(v);
  if (lit.empty() || lit.back() != 'f') {
    ADD_FAILURE() << "literal " << lit;
    return false;
  }
  float back = std::strtof(lit.substr(0, lit.size() - 1).c_str(), nullptr);
  if (bits_of(back) != bits_of(v)) {
    ADD_FAILURE() << "literal " << lit << " does not round-trip (bits " << std::hex << bits_of(v) << ")";
    return false;
  }
  return true;
}

void append(void* ctx, const char* s, size_t n) {
  static_cast<std::string*>(ctx)->append(s, n);
}

// A sink that receives the text one byte at a time into a second string.
void append_bytewise(void* ctx, const char* s, size_t n) {
  for (size_t i = 0; i < n; ++i) static_cast<std::string*>(ctx)->push_back(s[i]);
}

struct Model {
  std::unique_ptr<tv::ModelPlan> plan;
  std::vector<float> params;
  std::vector<uint8_t> blob;
};

Model webmcu(int classes, uint64_t seed) {
  tv::ModelDesc d;
  tv::webmcu_model(classes, &d);
  Model m;
  m.plan = tvh::plan_or_throw(d, "webmcu");
  m.params.resize(m.plan->param_count);
  tv::he_init(*m.plan, m.params.data(), seed);
  std::vector<std::string> labels;
  for (int i = 0; i < classes; ++i) labels.push_back("c" + std::to_string(i));
  m.blob = tvh::encode_float_blob(*m.plan, m.params.data(), labels, "tool=test\nseed=" + std::to_string(seed) + "\n");
  return m;
}

std::string header_of(const std::vector<uint8_t>& blob, tv::Status* st, const char* prefix = "TV_MODEL") {
  static tv::BlobView view;
  EXPECT_TRUE(tv::blob_decode(blob.data(), blob.size(), &view).ok());
  tv::HeaderOptions opt;
  opt.prefix = prefix;
  opt.version = "9.9.9";
  std::string text;
  *st = tv::write_tinyvision_header(view, tv::crc32(0, blob.data(), blob.size()), opt, {&text, append});
  return text;
}

}  // namespace

TEST(FloatFormat, SpecialValues) {
  EXPECT_EQ(g9(0.f), "0");
  EXPECT_EQ(g9(-0.f), "-0");
  EXPECT_EQ(literal(0.f), "0.0f");
  EXPECT_EQ(literal(-0.f), "-0.0f");
  EXPECT_EQ(literal(1.f), "1.0f");
  EXPECT_EQ(literal(0.1f), "0.100000001f");
  EXPECT_EQ(literal(1e10f), "1e+10f");
  EXPECT_EQ(literal(from_bits(1)), "1.40129846e-45f");  // smallest subnormal
  EXPECT_EQ(fixed6(-0.f), "-0.000000");
  EXPECT_EQ(fixed6(-1e-9f), "-0.000000");
  EXPECT_EQ(fixed6(0.0078125f), "0.007812");  // an exact tie: half to even, as glibc
  EXPECT_EQ(g9(1.001953125f), "1.00195312");  // an exact tie at the tenth digit
  const float specials[] = {0.f,           -0.f,     1.f,         -1.f,     from_bits(1), from_bits(0x007FFFFF),
                            FLT_MIN,       -FLT_MIN, FLT_MAX,     -FLT_MAX, 1e9f,         999999999.f,
                            9.9999999e-5f, 1e-4f,    123456789.f, 0.1f,     5e-7f,        0.0078125f,
                            1.001953125f,  100.f,    -50.f,       1e-38f};
  for (float v : specials) EXPECT_TRUE(check_float(v)) << v;
  char b[tv::kFloatTextMax];
  EXPECT_EQ(tv::format_float_g9(INFINITY, b), 0u);
  EXPECT_EQ(tv::format_float_g9(-INFINITY, b), 0u);
  EXPECT_EQ(tv::format_float_g9(NAN, b), 0u);
  EXPECT_EQ(tv::format_float_literal(NAN, b), 0u);
  EXPECT_EQ(tv::format_float_fixed6(INFINITY, b), 0u);
}

TEST(FloatFormat, MatchesPrintfOnRandomFloats) {
  std::mt19937_64 rng(20261121);
  int checked = 0;
  for (int i = 0; i < 400000; ++i) {
    uint32_t u = (uint32_t)rng();
    switch (i % 4) {
      case 0: break;                                                           // any bits
      case 1: u &= 0x807FFFFFu; break;                                         // subnormals
      case 2: u = (u & 0x80FFFFFFu) | (0x3Cu << 24); break;                    // typical weight magnitudes
      case 3: u = (u & 0x8000FFFFu) | ((uint32_t)(rng() % 255) << 23); break;  // short mantissas, ties
    }
    float v = from_bits(u);
    if (!std::isfinite(v)) continue;
    ASSERT_TRUE(check_float(v));
    ++checked;
  }
  EXPECT_GT(checked, 390000);
}

TEST(FloatFormat, MatchesPrintfOnShortMantissasAtEveryExponent) {
  // Floats whose low mantissa bits are zero have exact decimal expansions that end in 5 at the
  // rounding digit (the half-to-even cases) far more often than random ones.
  for (uint32_t e = 0; e < 255; ++e)
    for (uint32_t hi = 0; hi < 512; ++hi)
      for (uint32_t s = 0; s < 2; ++s) ASSERT_TRUE(check_float(from_bits(s << 31 | e << 23 | hi << 14)));
}

TEST(FloatFormat, Integers) {
  char b[24];
  EXPECT_EQ(tv::format_int(0, b), 1u);
  EXPECT_STREQ(b, "0");
  tv::format_int(-128, b);
  EXPECT_STREQ(b, "-128");
  tv::format_int(INT64_MIN, b);
  EXPECT_STREQ(b, "-9223372036854775808");
  tv::format_int(INT64_MAX, b);
  EXPECT_STREQ(b, "9223372036854775807");
}

TEST(HeaderWriter, SameBlobSameBytesWhateverTheChunking) {
  Model m = webmcu(3, 7);
  tv::Status st;
  std::string a = header_of(m.blob, &st);
  ASSERT_TRUE(st.ok());
  std::string b = header_of(m.blob, &st);
  EXPECT_EQ(a, b);
  static tv::BlobView view;
  ASSERT_TRUE(tv::blob_decode(m.blob.data(), m.blob.size(), &view).ok());
  std::string c;
  tv::HeaderOptions opt;
  opt.version = "9.9.9";
  ASSERT_TRUE(tv::write_tinyvision_header(view, tv::crc32(0, m.blob.data(), m.blob.size()), opt, {&c, append_bytewise},
                                          m.plan.get())
                  .ok());
  EXPECT_EQ(a, c);
  EXPECT_NE(a.find("written by tvexport 9.9.9"), std::string::npos);
  EXPECT_NE(a.find("#ifndef TV_MODEL_H"), std::string::npos);
  EXPECT_NE(a.find("TV_MODEL_ALIGN16 const float TV_MODEL_l0_conv2d_w[108] = {"), std::string::npos);
  EXPECT_NE(a.find("TV_MODEL_ALIGN16 const unsigned char TV_MODEL_blob[" + std::to_string(m.blob.size()) + "]"),
            std::string::npos);
  EXPECT_NE(a.find("//   seed=7"), std::string::npos);
  // The exact arena figures of this model.
  const tv::InferenceMemory im = tv::inference_memory(*m.plan);
  const tv::TrainMemory tm = tv::training_memory(*m.plan, tv::TrainOptions());
  EXPECT_NE(a.find("#define TV_MODEL_INFERENCE_ARENA_BYTES " + std::to_string(im.work_bytes) + " "), std::string::npos);
  EXPECT_NE(a.find("#define TV_MODEL_TRAINING_ARENA_BYTES " + std::to_string(tm.total_bytes) + " "), std::string::npos);
  // A different model gives a different header.
  Model other = webmcu(3, 8);
  EXPECT_NE(header_of(other.blob, &st), a);
}

TEST(HeaderWriter, Refusals) {
  Model m = webmcu(2, 1);
  static tv::BlobView view;
  ASSERT_TRUE(tv::blob_decode(m.blob.data(), m.blob.size(), &view).ok());
  const uint32_t crc = tv::crc32(0, m.blob.data(), m.blob.size());
  std::string text;
  tv::TextSink sink{&text, append};
  tv::HeaderOptions opt;
  EXPECT_EQ(tv::write_tinyvision_header(view, crc ^ 1u, opt, sink).code, tv::StatusCode::BlobBadCrc);
  for (const char* bad : {"", "1abc", "a-b", "a b"}) {
    opt.prefix = bad;
    EXPECT_EQ(tv::write_tinyvision_header(view, crc, opt, sink).code, tv::StatusCode::InvalidArgument) << bad;
  }
  opt.prefix = "my_model2";
  EXPECT_TRUE(tv::write_tinyvision_header(view, crc, opt, sink).ok());
  EXPECT_NE(text.find("#ifndef MY_MODEL2_H"), std::string::npos);
  EXPECT_NE(text.find("my_model2_labels[2]"), std::string::npos);
  opt.prefix = "TV_MODEL";
  Model three = webmcu(3, 1);
  EXPECT_EQ(tv::write_tinyvision_header(view, crc, opt, sink, three.plan.get()).code,
            tv::StatusCode::BlobModelMismatch);
  // A NaN weight: refused, naming the tensor and the element. blob_decode refuses such a blob itself, so
  // the NaN is written into the bytes after decoding (the writer's own check is the second line of defence).
  std::vector<uint8_t> nan_blob = tvh::encode_float_blob(*m.plan, m.params.data(), {"a", "b"}, "");
  static tv::BlobView nan_view;
  ASSERT_TRUE(tv::blob_decode(nan_blob.data(), nan_blob.size(), &nan_view).ok());
  const tv::BlobTensor* dense_w = tv::blob_find(nan_view, 8, tv::TensorRole::Weight);
  ASSERT_NE(dense_w, nullptr);
  const float nan = NAN;
  std::memcpy(const_cast<uint8_t*>(static_cast<const uint8_t*>(dense_w->data)) + 4 * 5, &nan, 4);
  tv::Status st = tv::write_tinyvision_header(nan_view, tv::crc32(0, nan_blob.data(), nan_blob.size()), opt, sink);
  EXPECT_EQ(st.code, tv::StatusCode::BadParameter);
  EXPECT_EQ(st.layer, 8);
  EXPECT_STREQ(nan_view.tensors[st.a].name, "l8_dense.w");
  EXPECT_EQ(st.b, 5);
}

TEST(HeaderWriter, EscapesLabelsAndProvenance) {
  tv::ModelDesc d;
  tv::webmcu_model(4, &d);
  auto plan = tvh::plan_or_throw(d, "t");
  std::vector<float> params(plan->param_count, 0.25f);
  std::vector<std::string> labels = {"say \"hi\"", "back\\slash",
                                     "what?"
                                     "?!",
                                     "caf\xc3\xa9\n"};
  std::vector<uint8_t> blob = tvh::encode_float_blob(*plan, params.data(), labels,
                                                     "path=C:\\x\\\nq=?"
                                                     "?/\n");
  tv::Status st;
  std::string h = header_of(blob, &st);
  ASSERT_TRUE(st.ok());
  EXPECT_NE(h.find("{\"say \\\"hi\\\"\", \"back\\\\slash\", \"what?\\?!\", \"caf\\303\\251\\012\"}"),
            std::string::npos);
  EXPECT_NE(h.find("//   path=C:\\134x\\134\n"), std::string::npos);  // no backslash can end a // line
  EXPECT_NE(h.find("//   q=?\\077/\n"), std::string::npos);           // no ??/ trigraph
}

TEST(HeaderWriter, Int8BlobWithExponentsAndDuplicateNames) {
  tv::ModelDesc d;
  tv::set_input(&d, 4, 4, 1);
  d.input.scale = 0.5f;
  d.input.offset = -1.f;
  d.num_classes = 2;
  tv::add_layer(&d, tv::flatten_layer());
  tv::add_layer(&d, tv::dense_layer());
  auto plan = tvh::plan_or_throw(d, "t");
  std::vector<int8_t> w(32);
  for (int i = 0; i < 32; ++i) w[i] = (int8_t)(i * 9 - 128);
  const int32_t b[2] = {INT32_MIN, 2147483647};
  const int8_t exps[2] = {-6, -7};
  tv::BlobTensor t[3];
  std::strcpy(t[0].name, "w.x");
  t[0].dtype = tv::DType::I8;
  t[0].layer = 1;
  t[0].ndim = 2;
  t[0].dims[0] = 2;
  t[0].dims[1] = 16;
  t[0].exponent = -7;
  t[0].exp_count = 2;
  t[0].channel_exps = exps;
  t[0].data = w.data();
  t[0].bytes = 32;
  std::strcpy(t[1].name, "w_x");  // sanitizes to the same identifier as "w.x"
  t[1].dtype = tv::DType::I32;
  t[1].role = tv::TensorRole::Bias;
  t[1].layer = 1;
  t[1].ndim = 1;
  t[1].dims[0] = 2;
  t[1].exponent = -13;
  t[1].data = b;
  t[1].bytes = 8;
  t[2] = t[1];
  std::strcpy(t[2].name, "blob");  // reserved
  const int8_t act[3] = {-7, -7, -4};
  const char* labels[2] = {"no", "yes"};
  tv::BlobContents c;
  c.model = &d;
  c.labels = labels;
  c.num_labels = 2;
  c.tensors = t;
  c.num_tensors = 3;
  c.act_exps = act;
  c.num_act_exps = 3;
  c.flags = tv::kBlobFlagInt8;
  std::vector<uint8_t> blob(tv::blob_encoded_size(c));
  size_t written = 0;
  ASSERT_TRUE(tv::blob_encode(c, blob.data(), blob.size(), &written).ok());
  tv::Status st;
  std::string h = header_of(blob, &st, "Q");
  ASSERT_TRUE(st.ok());
  EXPECT_NE(h.find("#define Q_IS_INT8 1"), std::string::npos);
  EXPECT_NE(h.find("#define Q_w_x_EXP (-7)"), std::string::npos);
  EXPECT_NE(h.find("Q_ALIGN16 const int8_t Q_w_x_exps[2] = {\n  -6, -7\n};"), std::string::npos);
  EXPECT_NE(h.find("Q_ALIGN16 const int8_t Q_w_x[32] = {\n  -128, -119,"), std::string::npos);
  EXPECT_NE(h.find("Q_ALIGN16 const int32_t Q_tensor1[2] = {\n  (-2147483647 - 1), 2147483647\n};"), std::string::npos);
  EXPECT_NE(h.find("#define Q_tensor2_EXP (-13)"), std::string::npos);
  EXPECT_NE(h.find("Q_ALIGN16 const int8_t Q_act_exps[3] = {\n  -7, -7, -4\n};"), std::string::npos);
  EXPECT_NE(h.find("#define Q_INPUT_OFFSET (-1.0f)"), std::string::npos);
  EXPECT_NE(h.find("#define Q_CHANNEL_ORDER 2 "), std::string::npos);
}

TEST(HeaderWriter, WebmcuLayoutAndRefusals) {
  Model m = webmcu(2, 3);
  std::vector<uint8_t> raw(tv::raw_weights_size(2));
  ASSERT_TRUE(tv::raw_weights_export(*m.plan, m.params.data(), raw.data(), raw.size()).ok());
  const char* labels[2] = {"0Blank", "1Circle"};
  std::string h;
  tv::TextSink sink{&h, append};
  ASSERT_TRUE(tv::write_webmcu_header_raw(raw.data(), raw.size(), labels, 2, sink).ok());
  EXPECT_EQ(h.rfind("#ifndef MY_MODEL_H\n#define MY_MODEL_H\r\n", 0), 0u);
  EXPECT_NE(
      h.find("//   #define NUM_CLASSES 2\n//   String myClassLabels[NUM_CLASSES] = {\"0Blank\", \"1Circle\"};\r\n"),
      std::string::npos);
  // conv2_b holds exactly 8 values: its closing brace sits on a line of its own.
  size_t b2 = h.find("const float myModel_conv2_b[] = { ");
  ASSERT_NE(b2, std::string::npos);
  size_t end = h.find("const float myModel_output_w", b2);
  std::string block = h.substr(b2, end - b2);
  EXPECT_EQ(block.substr(block.size() - 8), "f\r\n };\r\n");
  EXPECT_EQ(h.substr(h.size() - 8), "#endif\r\n");
  // Every value is "%.6f" + "f" of the raw float, in file order.
  float v0;
  std::memcpy(&v0, raw.data(), 4);
  EXPECT_EQ(h.find("const float myModel_conv1_w[] = { " + libc("%.6f", v0) + "f, "),
            h.find("const float myModel_conv1_w"));

  std::string x;
  tv::TextSink xs{&x, append};
  EXPECT_EQ(tv::write_webmcu_header_raw(raw.data(), raw.size() - 4, labels, 2, xs).code,
            tv::StatusCode::RawWeightsSizeMismatch);
  EXPECT_EQ(tv::write_webmcu_header_raw(raw.data(), raw.size(), labels, 1, xs).code,
            tv::StatusCode::ClassCountMismatch);
  float inf = INFINITY;
  std::memcpy(raw.data() + 40, &inf, 4);
  tv::Status st = tv::write_webmcu_header_raw(raw.data(), raw.size(), labels, 2, xs);
  EXPECT_EQ(st.code, tv::StatusCode::BadParameter);
  EXPECT_EQ(st.b, 10);
}
