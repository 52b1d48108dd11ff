// Espressif's golden .espdl files: our reader decodes them and our int8 kernels reproduce their
// embedded test outputs exactly (the vectors esp-ppq computed and the device's Model::test() checks).
#include <string>
#include <vector>

#include "host/base/error.h"
#include "host/espdl/espdl.h"
#include "test_support.h"
#include "tv/int8/int8_ops.h"

namespace {

tvh::EspdlModel load_golden(const std::string& name) {
  return tvh::espdl_read_file(tvtest::shared_path("espdl-golden/" + name));
}

class GoldenGemm : public ::testing::TestWithParam<const char*> {};

TEST_P(GoldenGemm, ReproducesEmbeddedOutputsExactly) {
  TV_REQUIRE_SHARED("espdl-golden");
  const tvh::EspdlModel m = load_golden(GetParam());
  const tvh::EspdlRunReport r = tvh::espdl_run_test_vectors(m);
  EXPECT_TRUE(r.passed) << r.message;
  EXPECT_GE(r.tensors_compared, 1);
  for (const std::string& op : r.ops_run) EXPECT_EQ(op, "Gemm");
}

INSTANTIATE_TEST_SUITE_P(AllGemmFiles, GoldenGemm,
                         ::testing::ValuesIn(tvtest::kEspdlGoldenFiles,
                                             tvtest::kEspdlGoldenFiles + tvtest::kEspdlGemmFiles),
                         tvtest::file_param_name);

TEST(GoldenFiles, ReaderSeesTheExpectedStructure) {
  TV_REQUIRE_SHARED("espdl-golden");
  const tvh::EspdlModel s3 = load_golden("esp32s3-linear_ishap_1_31_kshap_32_31_relu_s8.espdl");
  EXPECT_EQ(s3.target(), "esp32s3");
  ASSERT_EQ(s3.nodes.size(), 1u);
  EXPECT_EQ(s3.nodes[0].op_type, "Gemm");
  EXPECT_EQ(s3.nodes[0].attr_string("activation", ""), "Relu");
  EXPECT_EQ(s3.nodes[0].attr_string("quant_type", ""), "S8");
  EXPECT_EQ(s3.nodes[0].attr_int("transB", -1), 0);
  const tvh::EspdlTensor* w = s3.find_initializer("ops.0.weight");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->dims, (std::vector<int64_t>{1, 1, 31, 32}));
  EXPECT_EQ(w->dtype, espdl::TensorDataType_INT8);
  EXPECT_EQ(w->exponent(), -9);
  EXPECT_EQ(w->raw.size() % 16, 0u);  // whole 16-byte blocks
  EXPECT_EQ(tvh::espdl_filter_layout(*w, s3.source), tvh::EspdlFilterLayout::S3Packed);
  const tvh::EspdlValueInfo* in = s3.find_value_info("onnx::Gemm_0");
  ASSERT_NE(in, nullptr);
  EXPECT_EQ(in->dims, (std::vector<int64_t>{1, 31}));
  EXPECT_EQ(in->exponents, (std::vector<int64_t>{-6}));
  ASSERT_EQ(s3.test_inputs.size(), 1u);
  ASSERT_EQ(s3.test_outputs.size(), 1u);
  EXPECT_EQ(s3.test_outputs[0].dims, (std::vector<int64_t>{1, 32}));

  const tvh::EspdlModel c = load_golden("c-linear_ishap_1_31_kshap_32_31_relu_s8.espdl");
  EXPECT_EQ(c.target(), "c");
  const tvh::EspdlTensor* wc = c.find_initializer("ops.0.weight");
  ASSERT_NE(wc, nullptr);
  EXPECT_EQ(tvh::espdl_filter_layout(*wc, c.source), tvh::EspdlFilterLayout::Ours);
}

// The two targets store the same kind of layer in different layouts; after conversion both feed
// the same kernel. The S3 and C files of one shape hold different random weights, so this checks
// each conversion against its own file's vectors (above) and here that our unpacking of the S3
// file is a permutation that the packer inverts.
TEST(GoldenFiles, S3GemmFilterRepacksToTheFileBytes) {
  TV_REQUIRE_SHARED("espdl-golden");
  for (int f = 0; f < tvtest::kEspdlGemmFiles; ++f) {
    const char* name = tvtest::kEspdlGoldenFiles[f];
    const tvh::EspdlModel m = load_golden(name);
    for (const tvh::EspdlNode& n : m.nodes) {
      const tvh::EspdlTensor* w = m.find_initializer(n.inputs[1]);
      ASSERT_NE(w, nullptr);
      if (tvh::espdl_filter_layout(*w, m.source) != tvh::EspdlFilterLayout::S3Packed) continue;
      const tvh::EspdlFilter f = tvh::espdl_node_filter(m, n);
      const std::vector<int8_t> repacked = tvh::ours_conv_filter_to_s3(f.weights.data(), 1, 1, f.cin, f.cout);
      EXPECT_EQ(repacked, w->as_int8()) << name << " " << n.name;
      EXPECT_EQ(tvh::s3_filter_layout_doc(f.cout, false),
                f.cout % 16 ? "layout ==> (N/16)HWC16_UNALIGNED" : "layout ==> (N/16)HWC16")
          << w->doc;
    }
  }
}

TEST(GoldenStreamingConv, ReproducesTheWholeModelExactly) {
  TV_REQUIRE_SHARED("espdl-golden");
  const tvh::EspdlModel m = load_golden("streaming-conv-esp32s3.espdl");
  const tvh::EspdlRunReport r = tvh::espdl_run_test_vectors(m);
  EXPECT_TRUE(r.passed) << r.message;
  int convs = 0;
  for (const std::string& op : r.ops_run) convs += op == "Conv";
  EXPECT_EQ(convs, 8);  // prev_conv, 3 depthwise (one dilated), 3 pointwise, out_conv
  EXPECT_EQ(r.ops_run.size(), m.nodes.size());
}

// Our Sigmoid table builder (float32, as esp-ppq) reproduces the file's three tables.
TEST(GoldenStreamingConv, SigmoidTablesMatchOurBuilder) {
  TV_REQUIRE_SHARED("espdl-golden");
  const tvh::EspdlModel m = load_golden("streaming-conv-esp32s3.espdl");
  int checked = 0;
  for (const tvh::EspdlNode& n : m.nodes) {
    if (n.op_type != "Sigmoid") continue;
    const tvh::EspdlTensor* table = m.find_initializer(n.attr_string("lut", ""));
    ASSERT_NE(table, nullptr);
    const tvh::EspdlValueInfo* in = m.find_value_info(n.inputs[0]);
    ASSERT_NE(in, nullptr);
    int8_t ours[256];
    tv::sigmoid_table_s8(int(in->exponents[0]), table->exponent(), ours);
    EXPECT_EQ(std::vector<int8_t>(ours, ours + 256), table->as_int8()) << table->name;
    ++checked;
  }
  EXPECT_EQ(checked, 3);
}

// A corrupted expected output is caught and located.
TEST(GoldenFiles, AMismatchIsReportedWithTensorAndIndex) {
  TV_REQUIRE_SHARED("espdl-golden");
  tvh::EspdlModel m = load_golden("mlp3-gemm-esp32s3.espdl");
  ASSERT_FALSE(m.test_outputs.empty());
  m.test_outputs[0].raw[0] = uint8_t(m.test_outputs[0].raw[0] ^ 0x01);
  const tvh::EspdlRunReport r = tvh::espdl_run_test_vectors(m);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.mismatch_tensor, m.test_outputs[0].name);
  EXPECT_EQ(r.mismatch_index, 0u);
  EXPECT_NE(r.message.find("index 0"), std::string::npos) << r.message;
}

TEST(GoldenFiles, UnsupportedOpsAreRefusedByName) {
  TV_REQUIRE_SHARED("espdl-golden");
  tvh::EspdlModel m = load_golden("mlp3-gemm-esp32s3.espdl");
  m.nodes[1].op_type = "Einsum";
  try {
    tvh::espdl_run_test_vectors(m);
    FAIL() << "expected tvh::Error";
  } catch (const tvh::Error& e) {
    EXPECT_NE(std::string(e.what()).find("Einsum"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("/fc2/Gemm"), std::string::npos) << e.what();
  }
}

// The golden layers fit the S3's 20-bit accumulator lanes; report their headroom.
TEST(GoldenFiles, AccumulatorHeadroomOfTheGoldenLayers) {
  TV_REQUIRE_SHARED("espdl-golden");
  for (const char* name : {"mlp3-gemm-esp32s3.espdl", "streaming-conv-esp32s3.espdl"}) {
    const tvh::EspdlModel m = load_golden(name);
    for (const tvh::EspdlNode& n : m.nodes) {
      if (n.op_type != "Conv" && n.op_type != "Gemm") continue;
      const tvh::EspdlFilter f = tvh::espdl_node_filter(m, n);
      const std::vector<int32_t> bias = m.find_initializer(n.inputs[2])->as_int32();
      const tv::AccHeadroom h = f.depthwise
                                    ? tv::acc_headroom_depthwise_s8(f.kh * f.kw, f.cin, f.weights.data(), bias.data())
                                    : tv::acc_headroom_s8(f.cout, f.kh * f.kw * f.cin, f.weights.data(), bias.data());
      EXPECT_TRUE(h.fits()) << name << " " << n.name << " worst " << h.worst;
      RecordProperty(n.name, h.headroom_bits);
    }
  }
}

}  // namespace
