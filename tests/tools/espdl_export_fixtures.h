// Models, exports and checks shared by the .espdl writer tests (test_espdl_export.cpp) and the golden-file
// and command-line tests (test_espdl_golden_cli.cpp).
#pragma once
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
#include "host/base/error.h"
#include "host/base/files.h"
#include "host/espdl/espdl.h"
#include "host/espdl/writer.h"
#include "host/model/model_io.h"
#include "host/photos/dataset.h"
#include "host/quant/quantize.h"
#include "test_support.h"
#include "tv/int8/q8_model.h"
#include "tv/model/blob.h"
#include "tv/train/net.h"

namespace espdl_fixtures {

inline std::string q(const std::string& s) {
  return "'" + s + "'";
}
inline std::string tvexport() {
  return q(tvtest::bin_path("tvexport"));
}

// ---------------------------------------------------------------- int8 models to export

inline tv::ModelDesc input_model(int h, int w, int c, int classes) {
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
inline tv::ModelDesc every_op_model() {
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
inline tv::ModelDesc averaging_model() {
  tv::ModelDesc d = input_model(12, 12, 1, 2);
  tv::add_layer(&d, tv::conv2d_layer(4, 3));      // 10x10x4
  tv::add_layer(&d, tv::avgpool_layer(3));        // 3x3x4, area 9
  tv::add_layer(&d, tv::global_avgpool_layer());  // 1x1x4, area 9
  tv::add_layer(&d, tv::dense_layer());           // Flatten inserted
  return d;
}

inline tvh::Dataset random_dataset(const tv::ModelDesc& d, int n, uint32_t seed) {
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

inline std::vector<std::string> labels_for(const tv::ModelDesc& d) {
  std::vector<std::string> l;
  for (int i = 0; i < d.num_classes; ++i) l.push_back("class" + std::to_string(i));
  return l;
}

// A He-initialized float model quantized by tvquant's rules (host/quant/quantize.h), as an int8 .tvb.
inline std::vector<uint8_t> q8_blob(const tv::ModelDesc& d, uint64_t seed, bool per_channel = false) {
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
inline std::vector<uint8_t> hand_blob(const tv::ModelDesc& d, int32_t first_bias = 5) {
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
  return tvh::encode_blob(*plan, labels_for(d), "tool=test\n", tensors.data(), int(tensors.size()), act);
}

inline tvh::EspdlExport export_of(const std::vector<uint8_t>& blob, const tvh::EspdlExportOptions& o = {}) {
  const tvh::LoadedModel m = tvh::decode_model(blob, "model.q8.tvb");
  return tvh::espdl_export(m, "model.q8.tvb", o);
}

inline std::string export_error(const std::vector<uint8_t>& blob) {
  try {
    export_of(blob);
    return "";
  } catch (const tvh::Error& e) {
    return e.what();
  }
}

inline const tvh::EspdlNode* node_named(const tvh::EspdlModel& m, const std::string& name) {
  for (const auto& n : m.nodes)
    if (n.name == name) return &n;
  return nullptr;
}

// The FlatBuffer of a file passes the generated verifier on its own (the reader runs it too).
inline bool flatbuffer_verifies(const std::vector<uint8_t>& file) {
  if (file.size() < 16) return false;
  std::vector<uint8_t> body(file.begin() + 16, file.end());
  flatbuffers::Verifier v(body.data(), body.size());
  return espdl::VerifyModelBuffer(v);
}

inline bool have_flatc() {
  return std::system("command -v flatc >/dev/null 2>&1") == 0;
}

// `flatc --json` of a file's FlatBuffer (its 16-byte header stripped); "" when flatc fails.
inline std::string flatc_json(const std::vector<uint8_t>& file, const std::string& dir, const std::string& stem) {
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
inline void expect_same_model(const tvh::EspdlModel& a, const tvh::EspdlModel& b) {
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

}  // namespace espdl_fixtures
