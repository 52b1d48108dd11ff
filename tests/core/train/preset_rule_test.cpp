// The tinyvision rule (tv/train/presets.h): depth from the input, scale from the dataset.
#include <gtest/gtest.h>

#include <string>

#include "tv/model/model.h"
#include "tv/train/net.h"
#include "tv/train/presets.h"

using namespace tv;

namespace {

DataShape shape(int h, int w, int c, long images = 0) {
  DataShape s;
  s.height = h;
  s.width = w;
  s.channels = c;
  s.images = images;
  return s;
}

int count_layers(const ModelDesc& d, LayerType t) {
  int n = 0;
  for (int i = 0; i < d.num_layers; ++i) n += d.layers[i].type == t;
  return n;
}

}  // namespace

TEST(PresetRule, At64x64x3TheDefaultIsTheMeasuredNetwork) {
  ModelDesc d;
  ModelPlan p;
  ASSERT_TRUE(preset_model("tinyvision", 3, &d));
  ASSERT_TRUE(plan_model(d, &p).ok());
  EXPECT_EQ(p.param_count, 9155u);  // docs/recommended-preset.md
  EXPECT_EQ(d.layers[0].stride_h, 2);
  EXPECT_EQ(count_layers(d, LayerType::MaxPool2D), 3);
  const LayerDesc& head = d.layers[d.num_layers - 3];
  EXPECT_EQ(head.type, LayerType::AdaptiveAvgPool2D);
  EXPECT_EQ(head.out_h, 2);
  EXPECT_EQ(head.out_w, 2);
  EXPECT_EQ(p.layers[d.num_layers - 4].out.h, 4);  // the last feature map: 4x4x64
  // The short forms are the _for forms at the default shape.
  ModelDesc e;
  ASSERT_TRUE(preset_model_for("tinyvision", 3, DataShape(), &e));
  EXPECT_TRUE(same_model(d, e));
  TrainRecipe r;
  ASSERT_TRUE(preset_recipe("tinyvision", &r));
  EXPECT_EQ(r.epochs, 60);
  EXPECT_EQ(r.batch_size, 8);
  EXPECT_EQ(r.aug_shift, 4);
  EXPECT_FLOAT_EQ(r.opt.lr, 5e-3f);
}

TEST(PresetRule, StagesFollowTheInput) {
  struct Case {
    int h, w, stem_stride;
    bool pool_after_stem;
    int pools;  // after blocks
    int final_h, final_w, head_h, head_w;
  };
  const Case cases[] = {
      {16, 16, 1, false, 2, 4, 4, 2, 2},   {28, 28, 1, false, 1, 14, 14, 2, 2},  {32, 32, 1, false, 3, 4, 4, 2, 2},
      {48, 48, 2, false, 2, 6, 6, 2, 2},   {64, 64, 2, false, 3, 4, 4, 2, 2},    {96, 96, 2, false, 3, 6, 6, 2, 2},
      {128, 128, 2, true, 3, 4, 4, 2, 2},  {160, 160, 2, true, 2, 10, 10, 2, 2}, {30, 30, 1, false, 1, 15, 15, 1, 1},
      {16, 160, 1, false, 2, 4, 40, 2, 2}, {96, 64, 2, false, 3, 6, 4, 2, 2},
  };
  for (const Case& c : cases) {
    const TinyVisionPlan p = tinyvision_plan(shape(c.h, c.w, 1));
    const std::string where = std::to_string(c.h) + "x" + std::to_string(c.w);
    EXPECT_EQ(p.stem_stride, c.stem_stride) << where;
    EXPECT_EQ(p.pool_after_stem, c.pool_after_stem) << where;
    EXPECT_EQ(p.pool_after_block[0] + p.pool_after_block[1] + p.pool_after_block[2] + p.pool_after_block[3], c.pools)
        << where;
    EXPECT_FALSE(p.pool_after_block[3]) << where;
    EXPECT_EQ(p.final_h, c.final_h) << where;
    EXPECT_EQ(p.final_w, c.final_w) << where;
    EXPECT_EQ(p.head_h, c.head_h) << where;
    EXPECT_EQ(p.head_w, c.head_w) << where;
  }
}

TEST(PresetRule, EveryInputFrom16To160PlansWithEqualBinsAndASensibleLastMap) {
  for (int c : {1, 3})
    for (int h = 16; h <= 160; h += 3)
      for (int w = 16; w <= 160; w += 5) {
        const std::string where = std::to_string(h) + "x" + std::to_string(w) + "x" + std::to_string(c);
        ModelDesc d;
        ModelPlan p;
        ASSERT_TRUE(preset_model_for("tinyvision", 10, shape(h, w, c), &d)) << where;
        const Status st = plan_model(d, &p);
        ASSERT_TRUE(st.ok()) << where << ": layer " << st.layer;
        const TinyVisionPlan tp = tinyvision_plan(shape(h, w, c));
        const Shape last = p.layers[d.num_layers - 4].out;  // before the adaptive pool
        EXPECT_EQ(last.h, tp.final_h) << where;
        EXPECT_EQ(last.w, tp.final_w) << where;
        const int side = last.h < last.w ? last.h : last.w;
        EXPECT_GE(side, 4) << where;
        EXPECT_LE(side, 15) << where;
        EXPECT_EQ(last.h % tp.head_h, 0) << where;  // equal bins: int8 and ESP-DL can run the head
        EXPECT_EQ(last.w % tp.head_w, 0) << where;
        EXPECT_EQ(d.input.channels, c) << where;
        EXPECT_EQ(d.input.order, c == 1 ? ChannelOrder::GRAY : ChannelOrder::RGB) << where;
      }
}

TEST(PresetRule, WidthsGrowOneAndAHalfTimesForLargeDatasets) {
  const int narrow[4] = {16, 32, 64, 64}, wide[4] = {24, 48, 96, 96};
  for (long n : {0L, 90L, 1000L, kWideFromImages - 1}) {
    const TinyVisionPlan p = tinyvision_plan(shape(28, 28, 1, n));
    EXPECT_EQ(p.stem_filters, 8) << n;
    for (int b = 0; b < 4; ++b) EXPECT_EQ(p.block_filters[b], narrow[b]) << n;
  }
  for (long n : {kWideFromImages, 60000L}) {
    const TinyVisionPlan p = tinyvision_plan(shape(28, 28, 1, n));
    EXPECT_EQ(p.stem_filters, 12) << n;
    for (int b = 0; b < 4; ++b) EXPECT_EQ(p.block_filters[b], wide[b]) << n;
  }
  // The stages do not depend on the dataset's size.
  const TinyVisionPlan small = tinyvision_plan(shape(28, 28, 1, 90)), large = tinyvision_plan(shape(28, 28, 1, 60000));
  EXPECT_EQ(small.final_h, large.final_h);
  EXPECT_EQ(small.head_h, large.head_h);
  // Fashion-MNIST's network (docs/recommended-preset.md): 21,298 parameters; the model built is the plan's.
  ModelDesc d;
  ModelPlan p;
  ASSERT_TRUE(preset_model_for("tinyvision", 10, shape(28, 28, 1, 60000), &d));
  ASSERT_TRUE(plan_model(d, &p).ok());
  EXPECT_EQ(p.param_count, 21298u);
  EXPECT_EQ(d.layers[0].units, 12);
  // At 64x64x3 with a few hundred images it stays the measured 9,155-parameter network.
  ASSERT_TRUE(preset_model_for("tinyvision", 3, shape(64, 64, 3, 500), &d));
  ASSERT_TRUE(plan_model(d, &p).ok());
  EXPECT_EQ(p.param_count, 9155u);
}

TEST(PresetRule, EpochsAndShiftScaleWithTheDataset) {
  EXPECT_EQ(tinyvision_scale(shape(64, 64, 3, 0)).epochs, 60);
  EXPECT_EQ(tinyvision_scale(shape(64, 64, 3, 90)).epochs, 60);
  EXPECT_EQ(tinyvision_scale(shape(64, 64, 3, 1000)).epochs, 60);
  EXPECT_EQ(tinyvision_scale(shape(64, 64, 3, 4000)).epochs, 30);
  EXPECT_EQ(tinyvision_scale(shape(64, 64, 3, 10000)).epochs, 19);
  EXPECT_EQ(tinyvision_scale(shape(28, 28, 1, 60000)).epochs, kMinEpochs);
  EXPECT_EQ(tinyvision_scale(shape(28, 28, 1, 60000)).shift, 2);
  EXPECT_EQ(tinyvision_scale(shape(16, 16, 1)).shift, 1);
  EXPECT_EQ(tinyvision_scale(shape(160, 96, 3)).shift, 6);
  // More images never mean fewer optimizer steps.
  long last_samples = 0;
  for (long n = 10; n <= 100000; n = n * 3 / 2 + 1) {
    const long samples = n * tinyvision_scale(shape(64, 64, 3, n)).epochs;
    EXPECT_GE(samples, last_samples) << n;
    last_samples = samples;
  }
  TrainRecipe r;
  ASSERT_TRUE(preset_recipe_for("tinyvision", shape(28, 28, 1, 60000), &r));
  EXPECT_EQ(r.epochs, kMinEpochs);
  EXPECT_EQ(r.aug_shift, 2);
  EXPECT_EQ(r.batch_size, 8);
  EXPECT_FLOAT_EQ(r.opt.lr, 2e-3f);  // large sets: a lower rate
  ASSERT_TRUE(preset_recipe_for("tinyvision", shape(28, 28, 1, kWideFromImages - 1), &r));
  EXPECT_FLOAT_EQ(r.opt.lr, 5e-3f);
  // The reference recipe stays fixed.
  ASSERT_TRUE(preset_recipe_for("webmcu", shape(28, 28, 1, 60000), &r));
  EXPECT_EQ(r.epochs, 20);
  EXPECT_EQ(r.batch_size, 6);
}

TEST(PresetRule, WebmcuTakesOnlyTheInputSize) {
  ModelDesc a, b;
  ASSERT_TRUE(preset_model_for("webmcu", 3, shape(28, 28, 1, 60000), &a));
  webmcu_model(3, &b);
  set_input(&b, 28, 28, 1);
  EXPECT_TRUE(same_model(a, b));
  EXPECT_FALSE(preset_model_for("nope", 3, DataShape(), &a));
  TrainRecipe r;
  EXPECT_FALSE(preset_recipe_for("nope", DataShape(), &r));
}
