// The generic test of the layer table (tv/model/layer_table.h): every row, whatever its type, through a small
// network conv2d -> <the row's layer, config defaults> -> dense, checked for what each of its hooks
// promises. Adding a layer type adds a row here without editing this file.
// - its config: {"type": "<name>"} gives the type with the defaults of its host row;
// - float: the network's gradient matches central finite differences (gradient_check.h);
// - in place: the backward from the output alone (the input's buffer then holds the output, as in the
//   trainer) equals the backward given the input, and it writes no buffer but dy (the trap of marking
//   in place a type whose derivative needs its input);
// - blob: the float and int8 .tvb round trip to the same model and values;
// - int8: the quantized network runs and its dequantized logits follow the float ones;
// - .espdl: exported (written, parsed back, its test vectors reproduced), the layer's node named by
//   its row's ESP-DL op; or refused with a sentence naming the layer;
// - header (slow: runs the C compiler): the int8 model's C header compiles.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "core/gradient_check.h"
#include "host/base/error.h"
#include "host/model/model_io.h"
#include "host/train/config.h"
#include "test_support.h"
#include "tools/espdl_export_fixtures.h"
#include "tv/formats/header_writer.h"
#include "tv/model/layer_unit.h"

namespace {

// conv2d(4, 3x3, same) -> the row's layer with its config defaults -> dense(classes), on 8x8x3.
tv::ModelDesc network_of(const tv::LayerTypeInfo& row) {
  tvh::TrainSetup s;
  tvh::apply_config_text(std::string(R"({"model": {"layers": [{"type": ")") + row.name + R"("}]}})", "cfg.json", &s);
  EXPECT_EQ(s.model.layers[0].type, row.type) << row.name;
  tv::ModelDesc d = espdl_fixtures::input_model(8, 8, 3, 3);
  tv::add_layer(&d, tv::conv2d_layer(4, 3, 1, tv::Padding::Same));
  tv::add_layer(&d, s.model.layers[0]);
  tv::add_layer(&d, tv::dense_layer());
  return d;
}

class LayerUnits : public testing::TestWithParam<int> {
 protected:
  const tv::LayerTypeInfo& row() const { return tv::layer_row(GetParam()); }
};

std::string row_name(const testing::TestParamInfo<int>& info) {
  return tv::layer_row(info.param).name;
}

TEST_P(LayerUnits, GradientMatchesFiniteDifferences) {
  const tv::ModelDesc d = network_of(row());
  tv::ModelPlan plan;
  ASSERT_TRUE(tv::plan_model(d, &plan).ok()) << row().name;
  gradient_check::check_network(d, tv::LossKind::CrossEntropy, row().name);
}

TEST_P(LayerUnits, InPlaceBackwardNeedsOnlyTheOutput) {
  if (!row().in_place) return;  // a tensor of its own: its input stays
  const tv::ModelDesc d = network_of(row());
  tv::ModelPlan plan;
  ASSERT_TRUE(tv::plan_model(d, &plan).ok());
  const tv::LayerUnit& unit = tv::layer_unit(row().type);
  const size_t n = plan.layers[1].out.size();
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> value(-4.f, 4.f);
  std::vector<float> x(n), y(n), dy(n), dx_given_x(n), dx_from_y(n);
  for (size_t k = 0; k < n; ++k) x[k] = value(rng), dy[k] = value(rng);
  y = x;
  unit.f32.forward(plan, 1, nullptr, y.data(), y.data());
  // The trainer hands an in-place step a dx buffer too; the step must leave it alone.
  std::vector<float> other(n, 12345.f);
  auto backward = [&](const float* input, std::vector<float>* dx) {
    *dx = dy;  // an in-place backward turns dy into dx where it is
    tv::BackwardStep s{&plan, 1, nullptr, input, y.data(), dx->data(), other.data(), nullptr, true, nullptr, nullptr};
    unit.f32.backward(s);
  };
  backward(x.data(), &dx_given_x);
  backward(y.data(), &dx_from_y);
  EXPECT_EQ(other, std::vector<float>(n, 12345.f))
      << row().name << " is in place but its backward writes another buffer";
  EXPECT_EQ(dx_given_x, dx_from_y) << row().name << " is in place but its backward reads its input";
}

TEST_P(LayerUnits, BlobsRoundTrip) {
  const tv::ModelDesc d = network_of(row());
  auto plan = tvh::plan_or_throw(d, "test model");
  std::vector<float> params(plan->param_count);
  tv::he_init(*plan, params.data(), 5);
  const tvh::LoadedModel f =
      tvh::decode_model(tvh::encode_float_blob(*plan, params.data(), espdl_fixtures::labels_for(d), ""), "f.tvb");
  EXPECT_TRUE(tv::same_model(f.plan->desc, d)) << row().name;
  EXPECT_EQ(f.params, params) << row().name;
  const tvh::LoadedModel q = tvh::decode_model(espdl_fixtures::q8_blob(d, 5), "q.tvb");
  EXPECT_TRUE(q.int8);
  EXPECT_TRUE(tv::same_model(q.plan->desc, d)) << row().name;
  ASSERT_TRUE(q.engine) << row().name << ": " << tvh::status_message(q.engine_status, &d);
}

// Each dequantized logit within 4 output steps plus 10% of the largest float logit.
TEST_P(LayerUnits, Int8FollowsFloat) {
  const tv::ModelDesc d = network_of(row());
  auto plan = tvh::plan_or_throw(d, "test model");
  std::vector<float> params(plan->param_count);
  tv::he_init(*plan, params.data(), 5);
  const tvh::Dataset ds = espdl_fixtures::random_dataset(d, 6, 5);
  std::vector<int> idx = {0, 1, 2, 3, 4, 5};
  const tvh::QuantOptions o;
  const tvh::CalibrationStats st = tvh::calibrate(*plan, params.data(), ds, idx, o);
  const tvh::LoadedModel q = tvh::decode_model(
      tvh::quantize_model(*plan, params.data(), st, espdl_fixtures::labels_for(d), "", o).blob, "q.tvb");
  ASSERT_TRUE(q.engine) << row().name;
  tvh::AlignedBuffer arena(tv::inference_memory(*plan).work_bytes);
  tv::Inference inf;
  ASSERT_TRUE(tv::inference_init(&inf, plan.get(), params.data(), arena.data(), arena.size()).ok());
  std::vector<int8_t> work(tv::q8_memory(*plan).work_bytes);
  const int e_out = q.engine->act_exps[plan->num_layers];
  for (int i = 0; i < (int)ds.size(); ++i) {
    float probs[3], logits[3];
    int8_t q_logits[3];
    ASSERT_TRUE(tv::infer_u8(inf, ds.image((size_t)i), probs, logits).ok());
    ASSERT_TRUE(tv::q8_infer_u8(*q.engine, ds.image((size_t)i), work.data(), probs, q_logits).ok()) << row().name;
    const double largest = std::max({std::fabs(logits[0]), std::fabs(logits[1]), std::fabs(logits[2])});
    for (int k = 0; k < 3; ++k)
      EXPECT_NEAR(std::ldexp((double)q_logits[k], e_out), logits[k], 4 * std::ldexp(1.0, e_out) + 0.1 * largest)
          << row().name << " image " << i << " logit " << k;
  }
}

TEST_P(LayerUnits, EspdlExportsAndVerifiesOrRefusesNamingTheLayer) {
  const tv::ModelDesc d = network_of(row());
  const std::string layer = "l1_" + std::string(row().name);
  tvh::EspdlExport e;
  try {
    e = espdl_fixtures::export_of(espdl_fixtures::q8_blob(d, 5));  // parses it back and runs its test vectors
  } catch (const tvh::Error& err) {
    EXPECT_NE(std::string(err.what()).find("layer 1 (" + std::string(row().name) + ")"), std::string::npos)
        << err.what();
    return;
  }
  EXPECT_TRUE(tvh::espdl_loader_problems(e.model).empty()) << row().name;
  bool mapped = false;
  for (const std::string& line : e.mapping) mapped = mapped || line.find(layer) != std::string::npos;
  EXPECT_TRUE(mapped) << row().name << " is not in the export's mapping";
  const tvh::EspdlNode* node = espdl_fixtures::node_named(e.model, layer);
  // Its own node carries the row's op (an adaptive pool of 1 x 1 bins is the GlobalAvgPool row's op).
  const bool global = row().type == tv::LayerType::AdaptiveAvgPool2D &&
                      tv::layer_info(tv::LayerType::GlobalAvgPool).espdl_op == (node ? node->op_type : "");
  if (node && !global) {
    EXPECT_EQ(node->op_type, row().espdl_op) << row().name;
  }
}

// Slow (runs the C compiler; tests/CMakeLists.txt's TV_SLOW_TESTS).
TEST_P(LayerUnits, Int8HeaderCompiles) {
  const tv::ModelDesc d = network_of(row());
  const tvh::LoadedModel q = tvh::decode_model(espdl_fixtures::q8_blob(d, 5), "q.tvb");
  std::string text;
  const tv::TextSink sink{&text, [](void* ctx, const char* s, size_t n) { ((std::string*)ctx)->append(s, n); }};
  ASSERT_TRUE(tv::write_tinyvision_header(*q.view, q.crc, tv::HeaderOptions(), sink, q.plan.get()).ok());
  const std::string dir = tvtest::temp_dir("layer_units_header");
  tvtest::write_text(dir + "/model.h", text);
  std::string out, err;
  EXPECT_EQ(tvtest::run_command(
                "gcc -std=c99 -Wall -Wextra -Werror -x c -c " + tvtest::quoted(dir + "/model.h") + " -o /dev/null",
                &out, &err),
            0)
      << row().name << ": " << err.substr(0, 2000);
}

INSTANTIATE_TEST_SUITE_P(EveryRow, LayerUnits, testing::Range(0, tv::kLayerTypeCount), row_name);

}  // namespace
