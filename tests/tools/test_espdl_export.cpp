// The .espdl writer (host/espdl/writer.h) and `tvexport MODEL.q8.tvb -o FILE.espdl` / `tvexport verify`:
// - int8 models of every layer type export to files that the FlatBuffers verifier accepts, `flatc
//   --json` decodes, ESP-DL's loader preconditions hold for, and whose embedded test vectors our
//   interpreter reproduces; the mapping (fused ReLU, inserted Flatten, S3 packing, LUTs, exponents) is
//   checked node by node; the bytes are deterministic; what the S3 cannot run is refused by name;
// - Espressif's golden files pass the same checks, and serialising what we read from them gives a
//   file that `flatc --json` decodes to exactly the same JSON as theirs;
// - the CLI end to end: tvtrain -> tvquant -> tvexport .espdl -> tvexport verify.
// Loading on a real ESP32-S3 (Model::test()) is the final proof and is not run here.
#include <flatbuffers/flatbuffers.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "espdl_generated.h"
#include "host/dataset.h"
#include "host/error.h"
#include "host/espdl/espdl.h"
#include "host/espdl/writer.h"
#include "host/files.h"
#include "host/model_io.h"
#include "host/quantize.h"
#include "test_support.h"
#include "tv/blob.h"
#include "tv/int8/q8_model.h"
#include "tv/net.h"

namespace {

std::string q(const std::string& s) {
  return "'" + s + "'";
}
std::string tvexport() {
  return q(tvtest::bin_path("tvexport"));
}

const char* const kGoldenFiles[] = {
    "esp32s3-linear_ishap_1_16_kshap_16_16_relu_s8.espdl",
    "esp32s3-linear_ishap_1_31_kshap_32_31_relu_s8.espdl",
    "esp32s3-linear_ishap_1_64_kshap_32_64_relu_s8.espdl",
    "c-linear_ishap_1_16_kshap_16_16_relu_s8.espdl",
    "c-linear_ishap_1_31_kshap_32_31_relu_s8.espdl",
    "c-linear_ishap_1_64_kshap_32_64_relu_s8.espdl",
    "mlp3-gemm-esp32s3.espdl",
    "streaming-conv-esp32s3.espdl",
};

// ---------------------------------------------------------------- int8 models to export

tv::ModelDesc input_model(int h, int w, int c, int classes) {
  tv::ModelDesc d;
  d.input.height = uint16_t(h);
  d.input.width = uint16_t(w);
  d.input.channels = uint16_t(c);
  d.input.order = c == 1 ? tv::ChannelOrder::GRAY : tv::ChannelOrder::RGB;
  d.num_classes = uint16_t(classes);
  return d;
}

// Every layer type the export maps: Conv (18 filters: an S3 block and a remainder) + fused ReLU,
// depthwise, LeakyReLU, MaxPool, a ReLU that cannot fuse, a pointwise conv, Clip, a uniform adaptive
// pool, Flatten, Dense + fused ReLU, Dense.
tv::ModelDesc every_op_model() {
  tv::ModelDesc d = input_model(16, 16, 3, 3);
  tv::add_layer(&d, tv::conv2d_layer(18, 3, 1, tv::Padding::Same));  // 0: 16x16x18
  tv::add_layer(&d, tv::relu_layer());                               // 1
  tv::add_layer(&d, tv::depthwise_layer(3, 2, tv::Padding::Same));   // 2: 8x8x18
  tv::add_layer(&d, tv::leaky_relu_layer(0.1f));                     // 3
  tv::add_layer(&d, tv::maxpool_layer(2));                           // 4: 4x4x18
  tv::add_layer(&d, tv::relu_layer());                               // 5: standalone Relu
  tv::add_layer(&d, tv::conv2d_layer(32, 1));                        // 6: 4x4x32
  tv::add_layer(&d, tv::clip_layer(0.f, 3.f));                       // 7
  tv::add_layer(&d, tv::adaptive_avgpool_layer(2, 2));               // 8: 2x2x32 (AveragePool 2x2)
  tv::add_layer(&d, tv::flatten_layer());                            // 9: 128
  tv::add_layer(&d, tv::dense_layer(16));                            // 10
  tv::add_layer(&d, tv::relu_layer());                               // 11 (fused)
  tv::add_layer(&d, tv::dense_layer());                              // 12: 3 logits
  return d;
}

// A gray model with averages over 9 cells (not a power of two) and a Dense straight after a pool.
tv::ModelDesc averaging_model() {
  tv::ModelDesc d = input_model(12, 12, 1, 2);
  tv::add_layer(&d, tv::conv2d_layer(4, 3));      // 10x10x4
  tv::add_layer(&d, tv::avgpool_layer(3));        // 3x3x4, area 9
  tv::add_layer(&d, tv::global_avgpool_layer());  // 1x1x4, area 9
  tv::add_layer(&d, tv::dense_layer());           // Flatten inserted
  return d;
}

tvh::Dataset random_dataset(const tv::ModelDesc& d, int n, uint32_t seed) {
  tvh::Dataset ds;
  ds.source = "memory";
  for (int k = 0; k < d.num_classes; ++k) ds.classes.push_back("c" + std::to_string(k));
  ds.height = d.input.height;
  ds.width = d.input.width;
  ds.channels = d.input.channels;
  ds.order = d.input.order;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> px(0, 255);
  ds.pixels.resize(ds.image_bytes() * size_t(n));
  for (auto& p : ds.pixels) p = uint8_t(px(rng));
  for (int i = 0; i < n; ++i) {
    ds.labels.push_back(i % d.num_classes);
    ds.paths.push_back("img" + std::to_string(i));
  }
  return ds;
}

std::vector<std::string> labels_for(const tv::ModelDesc& d) {
  std::vector<std::string> l;
  for (int i = 0; i < d.num_classes; ++i) l.push_back("class" + std::to_string(i));
  return l;
}

// A He-initialized float model quantized by tvquant's rules (host/quantize.h), as an int8 .tvb.
std::vector<uint8_t> q8_blob(const tv::ModelDesc& d, uint64_t seed, bool per_channel = false) {
  auto plan = tvh::plan_or_throw(d, "test model");
  std::vector<float> params(plan->param_count);
  tv::he_init(*plan, params.data(), seed);
  const tvh::Dataset ds = random_dataset(d, 6, uint32_t(seed));
  std::vector<int> idx;
  for (int i = 0; i < int(ds.size()); ++i) idx.push_back(i);
  tvh::QuantOptions o;
  o.per_channel = per_channel;
  const tvh::CalibrationStats st = tvh::calibrate(*plan, params.data(), ds, idx, o);
  return tvh::quantize_model(*plan, params.data(), st, labels_for(d), "tool=test\n", o, &ds, &idx).blob;
}

// An int8 blob written by hand (random weights, exponents that keep every shift >= 0), for models
// tvquant would not produce.
std::vector<uint8_t> hand_blob(const tv::ModelDesc& d, int32_t first_bias = 5) {
  auto plan = tvh::plan_or_throw(d, "hand model");
  const int L = plan->num_layers;
  std::vector<int8_t> act(size_t(L) + 1);
  act[0] = -7;
  std::vector<tv::BlobTensor> tensors;
  std::vector<std::vector<int8_t>> w(static_cast<size_t>(L));
  std::vector<std::vector<int32_t>> b(static_cast<size_t>(L));
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> wd(-20, 20);
  for (int i = 0; i < L; ++i) {
    const tv::LayerPlan& lp = plan->layers[i];
    act[size_t(i) + 1] = act[size_t(i)];
    if (!tv::layer_has_params(d.layers[i].type)) continue;
    act[size_t(i) + 1] = int8_t(act[size_t(i)] - 7 + 4);  // e_w = -7, shift 4
    w[size_t(i)].resize(lp.weight_count);
    for (auto& x : w[size_t(i)]) x = int8_t(wd(rng));
    b[size_t(i)].assign(lp.bias_count, 3);
    if (tensors.empty()) b[size_t(i)][0] = first_bias;
    tv::BlobTensor tw, tb;
    std::snprintf(tw.name, sizeof tw.name, "l%d.w", i);
    std::snprintf(tb.name, sizeof tb.name, "l%d.b", i);
    tw.layer = tb.layer = uint16_t(i);
    tw.role = tv::TensorRole::Weight;
    tb.role = tv::TensorRole::Bias;
    tw.dtype = tv::DType::I8;
    tb.dtype = tv::DType::I32;
    tw.exponent = -7;
    tb.exponent = int8_t(act[size_t(i)] - 7);
    tw.ndim = 1;
    tw.dims[0] = uint32_t(lp.weight_count);
    tb.ndim = 1;
    tb.dims[0] = uint32_t(lp.bias_count);
    tw.data = w[size_t(i)].data();
    tw.bytes = uint32_t(lp.weight_count);
    tb.data = b[size_t(i)].data();
    tb.bytes = uint32_t(lp.bias_count * 4);
    tensors.push_back(tw);
    tensors.push_back(tb);
  }
  const std::vector<std::string> labels = labels_for(d);
  std::vector<const char*> lp;
  for (const auto& l : labels) lp.push_back(l.c_str());
  tv::BlobContents c;
  c.model = &d;
  c.labels = lp.data();
  c.num_labels = int(lp.size());
  c.provenance = "tool=test\n";
  c.tensors = tensors.data();
  c.num_tensors = int(tensors.size());
  c.act_exps = act.data();
  c.num_act_exps = L + 1;
  c.flags = tv::kBlobFlagInt8;
  std::vector<uint8_t> blob(tv::blob_encoded_size(c));
  size_t written = 0;
  EXPECT_TRUE(tv::blob_encode(c, blob.data(), blob.size(), &written).ok());
  return blob;
}

tvh::EspdlExport export_of(const std::vector<uint8_t>& blob, const tvh::EspdlExportOptions& o = {}) {
  const tvh::LoadedModel m = tvh::decode_model(blob, "model.q8.tvb");
  return tvh::espdl_export(m, "model.q8.tvb", o);
}

std::string export_error(const std::vector<uint8_t>& blob) {
  try {
    export_of(blob);
    return "";
  } catch (const tvh::Error& e) {
    return e.what();
  }
}

const tvh::EspdlNode* node_named(const tvh::EspdlModel& m, const std::string& name) {
  for (const auto& n : m.nodes)
    if (n.name == name) return &n;
  return nullptr;
}

// The FlatBuffer of a file passes the generated verifier on its own (the reader runs it too).
bool flatbuffer_verifies(const std::vector<uint8_t>& file) {
  if (file.size() < 16) return false;
  std::vector<uint8_t> body(file.begin() + 16, file.end());
  flatbuffers::Verifier v(body.data(), body.size());
  return espdl::VerifyModelBuffer(v);
}

bool have_flatc() {
  return std::system("command -v flatc >/dev/null 2>&1") == 0;
}

// `flatc --json` of a file's FlatBuffer (its 16-byte header stripped); "" when flatc fails.
std::string flatc_json(const std::vector<uint8_t>& file, const std::string& dir, const std::string& stem) {
  const std::string body = dir + "/" + stem + ".bin";
  tvh::write_file_atomic(body, std::vector<uint8_t>(file.begin() + 16, file.end()));
  std::string out, err;
  const int rc = tvtest::run_command("cd " + q(dir) + " && flatc --json --strict-json --raw-binary " +
                                         q(tvtest::source_path("host/espdl/espdl.fbs")) + " -- " + q(stem + ".bin"),
                                     &out, &err);
  if (rc != 0) return "";
  return tvtest::read_text(dir + "/" + stem + ".json");
}

// Field-by-field equality of two model views (not their sources).
void expect_same_model(const tvh::EspdlModel& a, const tvh::EspdlModel& b) {
  EXPECT_EQ(a.ir_version, b.ir_version);
  EXPECT_EQ(a.producer_name, b.producer_name);
  EXPECT_EQ(a.producer_version, b.producer_version);
  EXPECT_EQ(a.model_version, b.model_version);
  EXPECT_EQ(a.doc_string, b.doc_string);
  EXPECT_EQ(a.metadata, b.metadata);
  EXPECT_EQ(a.graph_name, b.graph_name);
  ASSERT_EQ(a.nodes.size(), b.nodes.size());
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    const auto &x = a.nodes[i], &y = b.nodes[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.op_type, y.op_type);
    EXPECT_EQ(x.inputs, y.inputs);
    EXPECT_EQ(x.outputs, y.outputs);
    ASSERT_EQ(x.attributes.size(), y.attributes.size()) << x.name;
    for (size_t k = 0; k < x.attributes.size(); ++k) {
      const auto &p = x.attributes[k], &r = y.attributes[k];
      EXPECT_EQ(p.name, r.name);
      EXPECT_EQ(p.type, r.type);
      EXPECT_EQ(p.f, r.f);
      EXPECT_EQ(p.i, r.i);
      EXPECT_EQ(p.s, r.s);
      EXPECT_EQ(p.floats, r.floats);
      EXPECT_EQ(p.ints, r.ints);
      EXPECT_EQ(p.strings, r.strings);
    }
  }
  auto same_tensors = [](const std::vector<tvh::EspdlTensor>& p, const std::vector<tvh::EspdlTensor>& r) {
    ASSERT_EQ(p.size(), r.size());
    for (size_t i = 0; i < p.size(); ++i) {
      EXPECT_EQ(p[i].name, r[i].name);
      EXPECT_EQ(p[i].dims, r[i].dims);
      EXPECT_EQ(p[i].dtype, r[i].dtype);
      EXPECT_EQ(p[i].raw, r[i].raw) << p[i].name;
      EXPECT_EQ(p[i].exponents, r[i].exponents);
      EXPECT_EQ(p[i].doc, r[i].doc);
    }
  };
  same_tensors(a.initializers, b.initializers);
  same_tensors(a.test_inputs, b.test_inputs);
  same_tensors(a.test_outputs, b.test_outputs);
  auto same_values = [](const std::vector<tvh::EspdlValueInfo>& p, const std::vector<tvh::EspdlValueInfo>& r) {
    ASSERT_EQ(p.size(), r.size());
    for (size_t i = 0; i < p.size(); ++i) {
      EXPECT_EQ(p[i].name, r[i].name);
      EXPECT_EQ(p[i].dims, r[i].dims);
      EXPECT_EQ(p[i].dtype, r[i].dtype);
      EXPECT_EQ(p[i].exponents, r[i].exponents);
    }
  };
  same_values(a.inputs, b.inputs);
  same_values(a.outputs, b.outputs);
  same_values(a.value_info, b.value_info);
}

// ---------------------------------------------------------------- exports of every layer type

TEST(EspdlExport, EveryLayerTypeMapsToTheOpsESPDLRuns) {
  const std::vector<uint8_t> blob = q8_blob(every_op_model(), 11);
  const tvh::EspdlExport e = export_of(blob);
  const tvh::EspdlModel back = tvh::espdl_parse(e.bytes.data(), e.bytes.size(), "every.espdl");
  EXPECT_TRUE(flatbuffer_verifies(e.bytes));
  EXPECT_TRUE(tvh::espdl_loader_problems(back).empty()) << tvh::espdl_loader_problems(back)[0];
  const tvh::EspdlRunReport r = tvh::espdl_run_test_vectors(back);
  EXPECT_TRUE(r.passed) << r.message;
  EXPECT_EQ(r.tensors_compared, 1);

  std::vector<std::string> ops;
  for (const auto& n : back.nodes) ops.push_back(n.op_type);
  EXPECT_EQ(ops, (std::vector<std::string>{"Conv", "Conv", "LeakyRelu", "MaxPool", "Relu", "Conv", "Clip",
                                           "AveragePool", "Flatten", "Gemm", "Gemm"}));
  // File-level facts as in esp-ppq's files.
  EXPECT_EQ(back.ir_version, 8);
  EXPECT_EQ(back.target(), "esp32s3");
  EXPECT_EQ(back.graph_name, "tinyvision");
  ASSERT_EQ(back.inputs.size(), 1u);
  EXPECT_EQ(back.inputs[0].name, "input");
  EXPECT_EQ(back.inputs[0].dims, (std::vector<int64_t>{1, 16, 16, 3}));
  ASSERT_EQ(back.outputs.size(), 1u);
  EXPECT_EQ(back.outputs[0].name, "output");
  EXPECT_EQ(back.outputs[0].dims, (std::vector<int64_t>{1, 3}));
  for (const auto& n : back.nodes) EXPECT_EQ(n.attr_string("quant_type", ""), "S8") << n.name;

  // Conv + fused ReLU: no Relu node for layer 1, the S3 packing and the pads of "same".
  const tvh::EspdlNode* c0 = node_named(back, "l0_conv2d");
  ASSERT_NE(c0, nullptr);
  EXPECT_EQ(c0->attr_string("activation", ""), "Relu");
  EXPECT_EQ(c0->attr_ints("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(c0->attr_ints("kernel_shape"), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(c0->attr_int("group", 0), 1);
  EXPECT_EQ(c0->outputs[0], "l1_relu_out");
  EXPECT_EQ(node_named(back, "l1_relu"), nullptr);
  const tvh::EspdlTensor* w0 = back.find_initializer("l0_conv2d.weight");
  ASSERT_NE(w0, nullptr);
  EXPECT_EQ(w0->dims, (std::vector<int64_t>{3, 3, 3, 18}));
  EXPECT_EQ(w0->doc, "layout ==> (N/16)HWC16_UNALIGNED");
  EXPECT_EQ(w0->raw.size() % 16, 0u);

  // Every filter unpacks to the blob's own weights; every bias sits at e_in + e_w.
  const tvh::LoadedModel m = tvh::decode_model(blob, "every");
  tv::BlobView view;
  ASSERT_TRUE(tv::blob_decode(m.blob.data(), m.blob.size(), &view).ok());
  struct Check {
    const char* node;
    int layer;
  };
  for (const Check& c : {Check{"l0_conv2d", 0}, Check{"l2_depthwise_conv2d", 2}, Check{"l6_conv2d", 6},
                         Check{"l10_dense", 10}, Check{"l12_dense", 12}}) {
    const tvh::EspdlNode* n = node_named(back, c.node);
    ASSERT_NE(n, nullptr) << c.node;
    const tvh::EspdlFilter f = tvh::espdl_node_filter(back, *n);
    const tv::BlobTensor* bw = tv::blob_find(view, c.layer, tv::TensorRole::Weight);
    ASSERT_NE(bw, nullptr);
    ASSERT_EQ(f.weights.size(), bw->elements()) << c.node;
    EXPECT_EQ(0, std::memcmp(f.weights.data(), bw->data, f.weights.size())) << c.node;
    EXPECT_EQ(f.exponent, bw->exponent) << c.node;
    const tvh::EspdlTensor* bias = back.find_initializer(n->inputs[2]);
    ASSERT_NE(bias, nullptr);
    EXPECT_EQ(bias->exponents, (std::vector<int64_t>{view.act_exps[c.layer] + bw->exponent})) << c.node;
  }
  const tvh::EspdlNode* dw = node_named(back, "l2_depthwise_conv2d");
  EXPECT_EQ(dw->attr_int("group", 0), 18);
  EXPECT_EQ(dw->attr_string("activation", ""), "Linear");
  EXPECT_EQ(dw->attr_ints("strides"), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(back.find_initializer("l2_depthwise_conv2d.weight")->dims, (std::vector<int64_t>{3, 3, 18, 1}));

  // LeakyReLU and Clip as 256-entry tables at the output exponent (the interpreter compares the
  // LeakyRelu table with its own builder; ESP-DL asserts the table's exponent).
  const tvh::EspdlNode* leaky = node_named(back, "l3_leaky_relu");
  ASSERT_NE(leaky, nullptr);
  EXPECT_FLOAT_EQ(leaky->attr_float("alpha", 0), 0.1f);
  const tvh::EspdlTensor* lut = back.find_initializer(leaky->attr_string("lut", ""));
  ASSERT_NE(lut, nullptr);
  EXPECT_EQ(lut->element_count(), 256u);
  EXPECT_EQ(lut->exponents, back.find_value_info(leaky->outputs[0])->exponents);
  const tvh::EspdlNode* clip = node_named(back, "l7_clip");
  ASSERT_NE(clip, nullptr);
  ASSERT_EQ(clip->inputs.size(), 3u);
  const std::vector<int8_t> table = back.find_initializer(clip->attr_string("lut", ""))->as_int8();
  const int8_t lo = back.find_initializer(clip->inputs[1])->as_int8()[0];
  const int8_t hi = back.find_initializer(clip->inputs[2])->as_int8()[0];
  EXPECT_EQ(lo, 0);
  EXPECT_LT(lo, hi);
  for (int k = 0; k < 256; ++k) EXPECT_EQ(table[size_t(k)], std::min<int>(std::max<int>(k - 128, lo), hi));

  // MaxPool keeps the exponent; the standalone ReLU stays a Relu node; the adaptive pool is a 2x2
  // AveragePool; Flatten keeps the exponent; the Gemm after Dense fuses its ReLU.
  const tvh::EspdlNode* mp = node_named(back, "l4_maxpool2d");
  EXPECT_EQ(mp->attr_ints("pads"), (std::vector<int64_t>{0, 0, 0, 0}));
  EXPECT_EQ(back.find_value_info(mp->outputs[0])->exponents, back.find_value_info(mp->inputs[0])->exponents);
  EXPECT_NE(node_named(back, "l5_relu"), nullptr);
  const tvh::EspdlNode* ap = node_named(back, "l8_adaptive_avgpool2d");
  ASSERT_NE(ap, nullptr);
  EXPECT_EQ(ap->op_type, "AveragePool");
  EXPECT_EQ(ap->attr_ints("kernel_shape"), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(ap->attr_ints("strides"), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(back.find_value_info(node_named(back, "l9_flatten")->outputs[0])->dims, (std::vector<int64_t>{1, 128}));
  EXPECT_EQ(node_named(back, "l10_dense")->attr_string("activation", ""), "Relu");
  EXPECT_EQ(node_named(back, "l12_dense")->attr_string("activation", ""), "Linear");
  EXPECT_EQ(back.find_initializer("l10_dense.weight")->dims, (std::vector<int64_t>{1, 1, 128, 16}));
  EXPECT_FALSE(e.mapping.empty());
}

TEST(EspdlExport, TestVectorsAreTheInt8EngineOnTheQuantizedImage) {
  const std::vector<uint8_t> blob = q8_blob(every_op_model(), 12);
  const tvh::LoadedModel m = tvh::decode_model(blob, "m");
  tvh::EspdlExportOptions o;
  o.test_image.resize(16 * 16 * 3);
  for (size_t i = 0; i < o.test_image.size(); ++i) o.test_image[i] = uint8_t(i * 37 + 11);
  o.test_image_source = "c0/first.jpg";
  const tvh::EspdlExport e = tvh::espdl_export(m, "m", o);
  // What the firmware computes from the same uint8 image: q8_infer_u8's logits.
  tv::BlobView view;
  ASSERT_TRUE(tv::blob_decode(m.blob.data(), m.blob.size(), &view).ok());
  auto q8 = std::make_unique<tv::Q8Model>();
  ASSERT_TRUE(tv::q8_bind(view, *m.plan, q8.get()).ok());
  std::vector<int8_t> work(tv::q8_memory(*m.plan).work_bytes + 16), logits(3);
  ASSERT_TRUE(tv::q8_infer_u8(*q8, o.test_image.data(), work.data(), nullptr, logits.data()).ok());
  EXPECT_EQ(e.test_output, logits);
  const tvh::EspdlModel back = tvh::espdl_parse(e.bytes.data(), e.bytes.size(), "t.espdl");
  ASSERT_EQ(back.test_inputs.size(), 1u);
  ASSERT_EQ(back.test_outputs.size(), 1u);
  EXPECT_EQ(back.test_inputs[0].name, "input");
  EXPECT_EQ(back.test_inputs[0].as_int8(), e.test_input);
  EXPECT_EQ(back.test_inputs[0].exponents, (std::vector<int64_t>{view.act_exps[0]}));
  EXPECT_EQ(back.test_outputs[0].name, "output");
  EXPECT_EQ(back.test_outputs[0].as_int8(), logits);
  EXPECT_EQ(back.test_outputs[0].dims, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(back.test_outputs[0].exponents, (std::vector<int64_t>{view.act_exps[m.plan->num_layers]}));
  for (size_t i = 0; i < e.test_input.size(); ++i)
    ASSERT_EQ(e.test_input[i],
              tv::quantize_one_s8(float(o.test_image[i]) * m.plan->desc.input.scale + m.plan->desc.input.offset,
                                  view.act_exps[0]));
  // The labels and the input rule travel in the metadata.
  std::map<std::string, std::string> meta(back.metadata.begin(), back.metadata.end());
  EXPECT_EQ(meta["labels"], "class0\nclass1\nclass2");
  EXPECT_EQ(meta["test_image"], "c0/first.jpg");
  EXPECT_EQ(meta["input_exponent"], std::to_string(view.act_exps[0]));
  EXPECT_NE(back.doc_string.find("no Softmax"), std::string::npos);
}

// The export's accumulation bound (its own interval arithmetic) agrees with tvquant's report layer by
// layer, and a model tvquant wrote gets no accumulation note.
TEST(EspdlExport, AccumulationBoundsAgreeWithTheQuantizer) {
  for (const tv::ModelDesc& d : {every_op_model(), averaging_model()}) {
    auto plan = tvh::plan_or_throw(d, "bounds");
    std::vector<float> params(plan->param_count);
    tv::he_init(*plan, params.data(), 41);
    const tvh::Dataset ds = random_dataset(d, 6, 41);
    std::vector<int> idx;
    for (int i = 0; i < int(ds.size()); ++i) idx.push_back(i);
    const tvh::QuantOptions o;
    const tvh::QuantResult r =
        tvh::quantize_model(*plan, params.data(), tvh::calibrate(*plan, params.data(), ds, idx, o), labels_for(d),
                            "tool=test\n", o, &ds, &idx);
    const tvh::EspdlExport e = export_of(r.blob);
    ASSERT_EQ(e.acc_bound.size(), r.layers.size());
    for (size_t i = 0; i < r.layers.size(); ++i)
      if (r.layers[i].has_params) {
        EXPECT_EQ(e.acc_bound[i], r.layers[i].acc_bound) << "layer " << i;
      }
    for (const std::string& n : e.notes) EXPECT_EQ(n.find("running sum"), std::string::npos) << n;
  }
  // A hand-made layer that can leave 20 bits is noted by name.
  tv::ModelDesc b = input_model(4, 4, 1, 2);
  tv::add_layer(&b, tv::conv2d_layer(2, 3));
  tv::add_layer(&b, tv::dense_layer());
  const tvh::EspdlExport big = export_of(hand_blob(b, 524287));
  ASSERT_FALSE(big.notes.empty());
  EXPECT_NE(big.notes[0].find("layer 0 (conv2d): some input image can drive a running sum to"), std::string::npos)
      << big.notes[0];
}

// The webmcu recipe's clip to +-10 holds every int8 value at the exponents tvquant picks: no node.
TEST(EspdlExport, AClipThatHoldsAllOfInt8IsNotWritten) {
  tv::ModelDesc d = input_model(8, 8, 3, 2);
  tv::add_layer(&d, tv::conv2d_layer(4, 3));
  tv::add_layer(&d, tv::clip_layer(-1000.f, 1000.f));
  tv::add_layer(&d, tv::dense_layer());
  const tvh::EspdlExport e = export_of(q8_blob(d, 6));
  std::vector<std::string> ops;
  for (const auto& n : e.model.nodes) ops.push_back(n.op_type);
  EXPECT_EQ(ops, (std::vector<std::string>{"Conv", "Flatten", "Gemm"}));
  ASSERT_EQ(e.mapping.size(), 4u);
  EXPECT_NE(e.mapping[1].find("l1_clip -> (nothing"), std::string::npos) << e.mapping[1];
}

TEST(EspdlExport, AveragesOverNonPowerOfTwoAreasAreNotedAndFlattenIsInserted) {
  const tvh::EspdlExport e = export_of(q8_blob(averaging_model(), 3));
  const tvh::EspdlModel& g = e.model;
  std::vector<std::string> ops;
  for (const auto& n : g.nodes) ops.push_back(n.op_type);
  EXPECT_EQ(ops, (std::vector<std::string>{"Conv", "AveragePool", "GlobalAveragePool", "Flatten", "Gemm"}));
  EXPECT_EQ(g.find_value_info(g.nodes[2].outputs[0])->dims, (std::vector<int64_t>{1, 1, 1, 4}));
  EXPECT_EQ(g.inputs[0].dims, (std::vector<int64_t>{1, 12, 12, 1}));
  ASSERT_EQ(e.notes.size(), 2u);
  EXPECT_NE(e.notes[0].find("layer 1 (avgpool2d) averages over 9 cells"), std::string::npos) << e.notes[0];
  EXPECT_NE(e.notes[1].find("layer 2 (global_avgpool)"), std::string::npos) << e.notes[1];
  int noted = 0;
  for (const auto& kv : g.metadata) noted += kv.first == "note";
  EXPECT_EQ(noted, 2);
  // A 1x1 adaptive pool is a GlobalAveragePool.
  tv::ModelDesc d = input_model(8, 8, 1, 2);
  tv::add_layer(&d, tv::conv2d_layer(4, 3));
  tv::add_layer(&d, tv::adaptive_avgpool_layer(1, 1));
  tv::add_layer(&d, tv::dense_layer());
  const tvh::EspdlExport a = export_of(q8_blob(d, 4));
  EXPECT_EQ(a.model.nodes[1].op_type, "GlobalAveragePool");
}

TEST(EspdlExport, SameModelGivesTheSameBytes) {
  const std::vector<uint8_t> blob = q8_blob(every_op_model(), 21);
  const tvh::EspdlExport a = export_of(blob), b = export_of(blob);
  EXPECT_EQ(a.bytes, b.bytes);
  // The FlatBuffer starts 16-byte aligned after the header, and raw_data blocks stay aligned.
  EXPECT_EQ(0, std::memcmp(a.bytes.data(), "EDL2", 4));
  EXPECT_EQ((a.bytes.size() - 16) % 16, 0u);
  tvh::EspdlExportOptions o;
  o.test_image = std::vector<uint8_t>(16 * 16 * 3, 200);
  EXPECT_NE(export_of(blob, o).bytes, a.bytes);
}

// ---------------------------------------------------------------- refusals, each naming the layer

TEST(EspdlExport, RefusesWhatTheS3CannotRunByName) {
  // Per-output-channel weight exponents (tvquant --per-channel).
  std::string err = export_error(q8_blob(averaging_model(), 5, true));
  EXPECT_NE(err.find("model.q8.tvb: layer 0 (conv2d)"), std::string::npos) << err;
  EXPECT_NE(err.find("per output channel"), std::string::npos) << err;
  // An adaptive pool with unequal bins.
  tv::ModelDesc d = input_model(10, 10, 1, 2);
  tv::add_layer(&d, tv::conv2d_layer(4, 3));  // 8x8
  tv::add_layer(&d, tv::adaptive_avgpool_layer(3, 3));
  tv::add_layer(&d, tv::dense_layer());
  err = export_error(hand_blob(d));
  EXPECT_NE(err.find("layer 1 (adaptive_avgpool2d)"), std::string::npos) << err;
  EXPECT_NE(err.find("unequal"), std::string::npos) << err;
  // A window op after Flatten.
  tv::ModelDesc f = input_model(4, 4, 1, 2);
  tv::add_layer(&f, tv::flatten_layer());
  tv::add_layer(&f, tv::conv2d_layer(2, 1));
  tv::add_layer(&f, tv::dense_layer());
  err = export_error(hand_blob(f));
  EXPECT_NE(err.find("layer 1 (conv2d)"), std::string::npos) << err;
  EXPECT_NE(err.find("flattened"), std::string::npos) << err;
  // A bias beyond the S3's 20 bits.
  tv::ModelDesc b = input_model(4, 4, 1, 2);
  tv::add_layer(&b, tv::conv2d_layer(2, 3));
  tv::add_layer(&b, tv::dense_layer());
  EXPECT_EQ(export_error(hand_blob(b, 524287)), "");
  err = export_error(hand_blob(b, 524288));
  EXPECT_NE(err.find("layer 0 (conv2d)"), std::string::npos) << err;
  EXPECT_NE(err.find("20-bit"), std::string::npos) << err;
  // A float model.
  auto plan = tvh::plan_or_throw(every_op_model(), "float");
  std::vector<float> p(plan->param_count, 0.01f);
  const tvh::LoadedModel fm =
      tvh::decode_model(tvh::encode_float_blob(*plan, p.data(), labels_for(plan->desc), "tool=test\n"), "f.tvb");
  try {
    tvh::espdl_export(fm, "f.tvb", {});
    FAIL() << "a float model was exported";
  } catch (const tvh::Error& e) {
    EXPECT_NE(std::string(e.what()).find("f.tvb: is a float model"), std::string::npos) << e.what();
  }
}

TEST(EspdlExport, HandBuiltModelsRoundTripThroughTheReader) {
  tv::ModelDesc d = input_model(6, 6, 3, 4);
  tv::add_layer(&d, tv::conv2d_layer(33, 3, 2, tv::Padding::Same));  // two S3 blocks + 1
  tv::add_layer(&d, tv::depthwise_layer(3, 1, tv::Padding::Same));   // 33 channels: 2 blocks + 1
  tv::add_layer(&d, tv::relu_layer());
  tv::add_layer(&d, tv::dense_layer());
  const tvh::EspdlExport e = export_of(hand_blob(d));
  const tvh::EspdlModel back = tvh::espdl_parse(e.bytes.data(), e.bytes.size(), "hand.espdl");
  expect_same_model(e.model, back);
  EXPECT_EQ(tvh::espdl_serialize(back), e.bytes);  // what we read, written again, is the same file
  EXPECT_EQ(back.find_initializer("l1_depthwise_conv2d.weight")->doc, "layout ==> (N/16)HWC16_UNALIGNED");
  EXPECT_EQ(node_named(back, "l0_conv2d")->attr_ints("pads"), (std::vector<int64_t>{0, 0, 1, 1}));
}

// Damaged copies of an exported file: whatever the reader accepts, the loader checks and the writer
// handle without crashing, and what the writer makes of it reads back.
TEST(EspdlExport, DamagedFilesNeverCrashTheChecksOrTheWriter) {
  const std::vector<uint8_t> good = export_of(q8_blob(averaging_model(), 17)).bytes;
  std::mt19937 rng(3);
  int parsed = 0;
  for (int round = 0; round < 400; ++round) {
    std::vector<uint8_t> b = good;
    for (int k = 0; k < 1 + round % 4; ++k) b[16 + rng() % (b.size() - 16)] ^= uint8_t(1u << (rng() % 8));
    tvh::EspdlModel m;
    try {
      m = tvh::espdl_parse(b.data(), b.size(), "damaged.espdl");
    } catch (const tvh::Error&) {
      continue;
    }
    ++parsed;
    (void)tvh::espdl_loader_problems(m);
    const std::vector<uint8_t> again = tvh::espdl_serialize(m);
    EXPECT_NO_THROW(tvh::espdl_parse(again.data(), again.size(), "rewritten.espdl")) << "round " << round;
    try {
      (void)tvh::espdl_run_test_vectors(m);
    } catch (const tvh::Error&) {
    }
  }
  EXPECT_GT(parsed, 0);
}

// ---------------------------------------------------------------- Espressif's golden files

class GoldenEspdl : public ::testing::TestWithParam<const char*> {};

TEST_P(GoldenEspdl, PassesTheLoaderChecksAndRewritesToTheSameJson) {
  TV_REQUIRE_SHARED("espdl-golden");
  const std::string path = tvtest::shared_path(std::string("espdl-golden/") + GetParam());
  const std::vector<uint8_t> original = tvh::read_file(path);
  const tvh::EspdlModel m = tvh::espdl_parse(original.data(), original.size(), GetParam());
  const std::vector<std::string> problems = tvh::espdl_loader_problems(m);
  EXPECT_TRUE(problems.empty()) << problems[0];
  EXPECT_TRUE(flatbuffer_verifies(original));
  const std::vector<uint8_t> rewritten = tvh::espdl_serialize(m);
  EXPECT_TRUE(flatbuffer_verifies(rewritten));
  const tvh::EspdlModel back = tvh::espdl_parse(rewritten.data(), rewritten.size(), "rewritten");
  expect_same_model(m, back);
  EXPECT_TRUE(tvh::espdl_run_test_vectors(back).passed);
  if (have_flatc()) {
    const std::string dir = tvtest::temp_dir("espdl-golden-json");
    const std::string theirs = flatc_json(original, dir, "theirs"), ours = flatc_json(rewritten, dir, "ours");
    ASSERT_FALSE(theirs.empty());
    EXPECT_TRUE(theirs == ours) << "flatc --json differs between " << GetParam() << " and our rewrite";
  }
}

TEST_P(GoldenEspdl, TvexportVerifyReproducesTheEmbeddedOutputs) {
  TV_REQUIRE_SHARED("espdl-golden");
  const std::string path = tvtest::shared_path(std::string("espdl-golden/") + GetParam());
  std::string out, err;
  EXPECT_EQ(tvtest::run_command(tvexport() + " verify " + q(path), &out, &err), 0) << out << err;
  EXPECT_EQ(out.rfind("OK: all ", 0), 0u) << out;
}

INSTANTIATE_TEST_SUITE_P(AllGoldenFiles, GoldenEspdl, ::testing::ValuesIn(kGoldenFiles),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string s = info.param;
                           s = s.substr(0, s.find('.'));
                           for (char& c : s)
                             if (!isalnum((unsigned char)c)) c = '_';
                           return s;
                         });

// ---------------------------------------------------------------- the command line

TEST(TvexportEspdl, ExportsVerifiesAndDecodesWithFlatc) {
  const std::string dir = tvtest::temp_dir("tvexport-espdl");
  const std::vector<uint8_t> blob = q8_blob(every_op_model(), 31);
  tvh::write_file_atomic(dir + "/a.q8.tvb", blob);
  tvh::write_file_atomic(dir + "/b.q8.tvb", blob);
  std::string out, err;
  ASSERT_EQ(tvtest::run_command(tvexport() + " " + q(dir + "/a.q8.tvb") + " -o " + q(dir + "/a.espdl"), &out, &err), 0)
      << err;
  EXPECT_TRUE(out.empty());  // results go to the file, the summary to stderr
  EXPECT_NE(err.find("l0_conv2d + l1_relu -> Conv"), std::string::npos) << err;
  EXPECT_NE(err.find("wrote " + dir + "/a.espdl"), std::string::npos) << err;
  ASSERT_EQ(
      tvtest::run_command("cd " + q(dir) + " && " + tvexport() + " b.q8.tvb --format espdl -o b.model", &out, &err), 0)
      << err;
  const std::vector<uint8_t> a = tvh::read_file(dir + "/a.espdl");
  EXPECT_EQ(a, tvh::read_file(dir + "/b.model"));  // same model, other names: same bytes
  tvh::EspdlExportOptions o;
  o.version = TV_VERSION;  // the CLI records its version as producer_version
  EXPECT_EQ(a, export_of(blob, o).bytes);

  ASSERT_EQ(tvtest::run_command(tvexport() + " verify " + q(dir + "/a.espdl"), &out, &err), 0) << out << err;
  EXPECT_EQ(out.rfind("OK: all 1 test outputs", 0), 0u) << out;
  EXPECT_TRUE(err.empty()) << err;  // no loader problems noted
  ASSERT_EQ(tvtest::run_command(tvexport() + " verify --json " + q(dir + "/a.espdl"), &out, &err), 0) << err;
  const nlohmann::json j = nlohmann::json::parse(out);
  EXPECT_EQ(j["passed"], true);
  EXPECT_EQ(j["target"], "esp32s3");
  EXPECT_EQ(j["nodes"], 11);
  EXPECT_EQ(j["loader_problems"].size(), 0u);
  if (have_flatc()) {
    const std::string json = flatc_json(a, dir, "a");
    ASSERT_FALSE(json.empty());
    const nlohmann::json f = nlohmann::json::parse(json);
    EXPECT_EQ(f["graph"]["node"][0]["op_type"], "Conv");
    EXPECT_EQ(f["graph"]["output"][0]["name"], "output");
    EXPECT_EQ(f["metadata_props"][0]["value"], "esp32s3");
  }
}

// Writes a copy of `file` changed by `edit` (through the reader and the writer).
template <typename F>
std::string edited(const std::string& file, const std::string& to, F edit) {
  tvh::EspdlModel m = tvh::espdl_read_file(file);
  edit(m);
  tvh::write_file_atomic(to, tvh::espdl_serialize(m));
  return to;
}

TEST(TvexportEspdl, VerifyNamesTheFirstDifferenceAndRefusesUnknownOps) {
  const std::string dir = tvtest::temp_dir("tvexport-espdl-verify");
  tvh::write_file_atomic(dir + "/m.q8.tvb", q8_blob(averaging_model(), 8));
  std::string out, err;
  ASSERT_EQ(tvtest::run_command(tvexport() + " " + q(dir + "/m.q8.tvb") + " -o " + q(dir + "/m.espdl"), &out, &err), 0)
      << err;
  EXPECT_NE(err.find("note: layer 1 (avgpool2d) averages over 9 cells"), std::string::npos) << err;
  // One logit changed: the tensor and the index are named, exit 1.
  const std::string bad = edited(dir + "/m.espdl", dir + "/bad.espdl", [](tvh::EspdlModel& m) {
    m.test_outputs[0].raw[1] = uint8_t(m.test_outputs[0].raw[1] ^ 0x10);
  });
  EXPECT_EQ(tvtest::run_command(tvexport() + " verify " + q(bad), &out, &err), 1);
  EXPECT_NE(out.find("MISMATCH"), std::string::npos) << out;
  EXPECT_NE(out.find("test output 'output' differs first at index 1"), std::string::npos) << out;
  ASSERT_EQ(tvtest::run_command(tvexport() + " verify --json " + q(bad), &out, &err), 1);
  const nlohmann::json j = nlohmann::json::parse(out);
  EXPECT_EQ(j["mismatch"]["tensor"], "output");
  EXPECT_EQ(j["mismatch"]["index"], 1);
  // An op our interpreter does not implement is refused by name.
  const std::string odd =
      edited(dir + "/m.espdl", dir + "/odd.espdl", [](tvh::EspdlModel& m) { m.nodes[1].op_type = "HardSwish"; });
  EXPECT_EQ(tvtest::run_command(tvexport() + " verify " + q(odd), &out, &err), 1);
  EXPECT_NE(err.find("node 'l1_avgpool2d' (HardSwish)"), std::string::npos) << err;
  // Not an .espdl; a missing file.
  tvh::write_file_atomic(dir + "/text.espdl", std::string("hello, this is not a model file"));
  EXPECT_EQ(tvtest::run_command(tvexport() + " verify " + q(dir + "/text.espdl"), &out, &err), 1);
  EXPECT_NE(err.find("text.espdl: is not an .espdl file"), std::string::npos) << err;
  EXPECT_EQ(tvtest::run_command(tvexport() + " verify " + q(dir + "/missing.espdl"), &out, &err), 1);
  EXPECT_NE(err.find("missing.espdl"), std::string::npos) << err;
}

TEST(TvexportEspdl, BadRequestsGetOneSentence) {
  const std::string dir = tvtest::temp_dir("tvexport-espdl-bad");
  const std::string blob = dir + "/m.q8.tvb";
  tvh::write_file_atomic(blob, q8_blob(averaging_model(), 9));
  std::string out, err;
  EXPECT_EQ(tvtest::run_command(tvexport() + " " + q(blob) + " --format espdl -o -", &out, &err), 1);
  EXPECT_NE(err.find("not stdout"), std::string::npos) << err;
  EXPECT_EQ(tvtest::run_command(tvexport() + " " + q(blob) + " -o " + q(dir + "/m.h") + " --test-images x", &out, &err),
            1);
  EXPECT_NE(err.find("--test-images only applies"), std::string::npos) << err;
  // A float model: quantize first; nothing is written.
  auto plan = tvh::plan_or_throw(averaging_model(), "f");
  std::vector<float> p(plan->param_count, 0.01f);
  tvh::save_float_model(dir + "/f.tvb", *plan, p.data(), labels_for(plan->desc), "tool=test\n");
  EXPECT_EQ(tvtest::run_command(tvexport() + " " + q(dir + "/f.tvb") + " -o " + q(dir + "/f.espdl"), &out, &err), 1);
  EXPECT_NE(err.find("tvquant"), std::string::npos) << err;
  EXPECT_FALSE(std::ifstream(dir + "/f.espdl").good());
}

// tvtrain (short) -> tvquant -> tvexport .espdl (first dataset image as the test input) -> verify.
TEST(TvexportEspdl, EndToEndFromPhotosToAVerifiedEspdl) {
  const std::string dir = tvtest::temp_dir("tvexport-espdl-e2e");
  const std::string data = tvtest::source_path("datasets/shapes");
  std::string out, err;
  ASSERT_EQ(tvtest::run_command(q(tvtest::bin_path("tvtrain")) + " " + q(data) + " -o " + q(dir + "/m.tvb") +
                                    " --epochs 1 --threads 2 --no-curve",
                                &out, &err),
            0)
      << err;
  ASSERT_EQ(tvtest::run_command(q(tvtest::bin_path("tvquant")) + " " + q(dir + "/m.tvb") + " --calib " + q(data) +
                                    " -o " + q(dir + "/m.q8.tvb") + " -q",
                                &out, &err),
            0)
      << err;
  ASSERT_EQ(tvtest::run_command(
                tvexport() + " " + q(dir + "/m.q8.tvb") + " -o " + q(dir + "/m.espdl") + " --test-images " + q(data),
                &out, &err),
            0)
      << err;
  ASSERT_EQ(tvtest::run_command(tvexport() + " verify " + q(dir + "/m.espdl"), &out, &err), 0) << out << err;
  EXPECT_EQ(out.rfind("OK: ", 0), 0u) << out;

  // The embedded test input is the dataset's first image, decoded and resized as tvtrain does.
  const tvh::EspdlModel m = tvh::espdl_read_file(dir + "/m.espdl");
  const tvh::LoadedModel q8 = tvh::load_model(dir + "/m.q8.tvb");
  tvh::DatasetOptions o;
  o.path = data;
  o.height = q8.plan->desc.input.height;
  o.width = q8.plan->desc.input.width;
  o.channels = q8.plan->desc.input.channels;
  o.order = q8.plan->desc.input.order;
  const tvh::Dataset ds = tvh::load_dataset(o);
  const std::vector<int8_t> in = m.test_inputs[0].as_int8();
  ASSERT_EQ(in.size(), ds.image_bytes());
  const int e0 = int(m.test_inputs[0].exponents[0]);
  for (size_t i = 0; i < in.size(); ++i)
    ASSERT_EQ(in[i],
              tv::quantize_one_s8(float(ds.image(0)[i]) * q8.plan->desc.input.scale + q8.plan->desc.input.offset, e0))
        << i;
  std::map<std::string, std::string> meta(m.metadata.begin(), m.metadata.end());
  EXPECT_EQ(meta["test_image"], ds.classes[size_t(ds.labels[0])] + "/" + "img_000.jpg");
  EXPECT_TRUE(tvh::espdl_loader_problems(m).empty());
}

}  // namespace
