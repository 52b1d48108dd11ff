// The .espdl writer (host/espdl/writer.h): int8 models of every layer type export to files that the
// FlatBuffers verifier accepts, `flatc --json` decodes, ESP-DL's loader preconditions hold for, and
// whose embedded test vectors our interpreter reproduces; the mapping (fused ReLU, inserted Flatten, S3
// packing, LUTs, exponents) is checked node by node; the bytes are deterministic; what the S3 cannot
// run is refused by name.
// Loading on a real ESP32-S3 (Model::test()) is the final proof and is not run here.
// The golden files and the command line: test_espdl_golden_cli.cpp.
#include "espdl_export_fixtures.h"

namespace {
using namespace espdl_fixtures;

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

}  // namespace
