// The table of layer types (tv/model/layer_table.h): one row per type in enumerator order, names that
// round-trip through the blob byte, the config parser and the tensor names, and no value outside
// the enumeration accepted anywhere.
#include "tv/model/layer_table.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "host/base/error.h"
#include "host/train/config.h"
#include "tv/model/blob.h"
#include "tv/model/model.h"

namespace {

TEST(LayerTable, OneRowPerTypeInEnumeratorOrderWithUniqueNames) {
  std::set<std::string> names;
  for (int i = 0; i < tv::kLayerTypeCount; ++i) {
    const tv::LayerTypeInfo& row = tv::layer_row(i);
    EXPECT_EQ((int)row.type, i + 1);
    EXPECT_EQ(&tv::layer_info(row.type), &row);
    EXPECT_TRUE(names.insert(row.name).second) << row.name;
    tv::LayerType t;
    ASSERT_TRUE(tv::layer_type_from_name(row.name, &t)) << row.name;
    EXPECT_EQ(t, row.type);
    ASSERT_TRUE(tv::layer_type_from_byte((uint8_t)(i + 1), &t));
    EXPECT_EQ(t, row.type);
  }
}

TEST(LayerTable, BytesAndNamesOutsideTheTableAreRefused) {
  tv::LayerType t = tv::LayerType::Dense;
  EXPECT_FALSE(tv::layer_type_from_byte(0, &t));
  EXPECT_FALSE(tv::layer_type_from_byte((uint8_t)(tv::kLayerTypeCount + 1), &t));
  EXPECT_FALSE(tv::layer_type_from_byte(255, &t));
  EXPECT_FALSE(tv::layer_type_from_name("batchnorm_typo", &t));
  EXPECT_FALSE(tv::layer_type_from_name("", &t));
  EXPECT_EQ(t, tv::LayerType::Dense);  // untouched
}

// The rules are consistent with each other: what has parameters is computed with its weights, runs
// in a buffer of its own and has a weight shape; an in-place layer keeps the element count.
TEST(LayerTable, RulesAgreeWithEachOther) {
  for (int i = 0; i < tv::kLayerTypeCount; ++i) {
    const tv::LayerTypeInfo& row = tv::layer_row(i);
    EXPECT_EQ(row.has_params, row.int8 == tv::Int8Exponent::WithWeights) << row.name;
    if (row.has_params) {
      EXPECT_FALSE(row.in_place) << row.name;
    }
    if (row.in_place) {
      EXPECT_TRUE(row.shape == tv::ShapeRule::Unchanged || row.shape == tv::ShapeRule::Flatten) << row.name;
    }
    if (row.int8_fused) {
      EXPECT_EQ(row.int8, tv::Int8Exponent::KeepsInput) << row.name;
    }
    EXPECT_NE(std::string(row.espdl_op), "") << row.name;
  }
}

// A plan with a value outside the enumeration names the layer; it never becomes an identity.
TEST(LayerTable, PlanRefusesATypeOutsideTheTable) {
  tv::ModelDesc d;
  d.num_classes = 2;
  d.input.height = d.input.width = 4;
  tv::add_layer(&d, tv::dense_layer());
  tv::LayerDesc odd;
  odd.type = (tv::LayerType)(tv::kLayerTypeCount + 1);
  tv::add_layer(&d, odd);
  tv::ModelPlan plan;
  const tv::Status st = tv::plan_model(d, &plan);
  EXPECT_EQ(st.code, tv::StatusCode::UnknownLayer);
  EXPECT_EQ(st.layer, 1);
}

// Every row's name is accepted by the config parser (with its fields' defaults) and gives that type.
TEST(LayerTable, TheConfigParserKnowsEveryRowByName) {
  for (int i = 0; i < tv::kLayerTypeCount; ++i) {
    const tv::LayerTypeInfo& row = tv::layer_row(i);
    tvh::TrainSetup s;
    const std::string text = std::string(R"({"model": {"layers": [{"type": ")") + row.name + R"("}]}})";
    ASSERT_NO_THROW(tvh::apply_config_text(text, "cfg.json", &s)) << row.name;
    ASSERT_EQ(s.model.num_layers, 1) << row.name;
    EXPECT_EQ(s.model.layers[0].type, row.type) << row.name;
  }
  tvh::TrainSetup s;
  try {
    tvh::apply_config_text(R"({"model": {"layers": [{"type": "convolution"}]}})", "cfg.json", &s);
    FAIL() << "an unknown type was accepted";
  } catch (const tvh::Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("cfg.json"), std::string::npos) << msg;
    for (int i = 0; i < tv::kLayerTypeCount; ++i)
      EXPECT_NE(msg.find(tv::layer_row(i).name), std::string::npos) << msg;  // the list comes from the table
  }
}

// The layer summary (C header comment and tvexport info) follows the row's detail rule.
TEST(LayerTable, DetailTextFollowsTheRow) {
  tv::Shape out{8, 8, 16};
  char text[96];
  tv::layer_detail_text(tv::conv2d_layer(16, 3, 2, tv::Padding::Same), out, text, sizeof text);
  EXPECT_STREQ(text, "16 filters 3x3 stride 2 same");
  tv::layer_detail_text(tv::depthwise_layer(5), out, text, sizeof text);
  EXPECT_STREQ(text, "5x5 stride 1 same");
  tv::layer_detail_text(tv::maxpool_layer(2), out, text, sizeof text);
  EXPECT_STREQ(text, "2x2 stride 2");
  tv::layer_detail_text(tv::dense_layer(), tv::Shape{1, 1, 3}, text, sizeof text);
  EXPECT_STREQ(text, "3 units");
  tv::layer_detail_text(tv::leaky_relu_layer(0.1f), out, text, sizeof text);
  EXPECT_STREQ(text, "alpha 0.100000001");
  tv::layer_detail_text(tv::clip_layer(-1.f, 6.f), out, text, sizeof text);
  EXPECT_STREQ(text, "[-1, 6]");
  tv::layer_detail_text(tv::relu_layer(), out, text, sizeof text);
  EXPECT_STREQ(text, "");
  // Truncated, never overrun.
  EXPECT_EQ(tv::layer_detail_text(tv::conv2d_layer(16, 3), out, text, 5), 4);
  EXPECT_STREQ(text, "16 f");
}

}  // namespace
