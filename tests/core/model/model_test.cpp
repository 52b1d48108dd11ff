// Model descriptions, plans, presets and the memory the core reports.
#include "tv/model/model.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "core/forged_model.h"
#include "tv/train/net.h"
#include "tv/train/presets.h"

using namespace tv;

TEST(Model, WebmcuPresetHasTheReferenceParameterCounts) {
  ModelDesc d;
  ModelPlan p;
  webmcu_model(3, &d);
  ASSERT_TRUE(plan_model(d, &p).ok());
  EXPECT_EQ(p.param_count, 20595u);
  webmcu_model(2, &d);
  ASSERT_TRUE(plan_model(d, &p).ok());
  EXPECT_EQ(p.param_count, 13866u);
}

TEST(Model, WebmcuShapesFollowTheReference) {
  ModelDesc d;
  ModelPlan p;
  webmcu_model(3, &d);
  ASSERT_TRUE(plan_model(d, &p).ok());
  EXPECT_EQ(p.layers[0].out.h, 62);
  EXPECT_EQ(p.layers[0].out.c, 4);
  EXPECT_EQ(p.layers[3].out.h, 31);
  EXPECT_EQ(p.layers[4].out.h, 29);
  EXPECT_EQ(p.layers[4].out.c, 8);
  EXPECT_EQ(p.layers[7].out.c, 6728);
  EXPECT_EQ(p.layers[8].out.c, 3);
  EXPECT_EQ(p.first_param_layer, 0);
}

TEST(Model, ChangingTheInputConstantResizesEveryLayer) {
  ModelDesc d;
  ModelPlan p;
  webmcu_model(3, &d);
  set_input(&d, 28, 28, 1);
  ASSERT_TRUE(plan_model(d, &p).ok());
  // 28 -> conv 26 -> pool 13 -> conv 11: 11*11*8 = 968 features.
  EXPECT_EQ(p.layers[7].out.c, 968);
  EXPECT_EQ(p.param_count, 36u + 4 + 288 + 8 + 968 * 3 + 3);
  set_input(&d, 96, 96, 3);
  ASSERT_TRUE(plan_model(d, &p).ok());
  EXPECT_EQ(p.layers[7].out.c, 45 * 45 * 8);
}

TEST(Model, TooSmallInputIsRejectedNamingTheLayer) {
  ModelDesc d;
  ModelPlan p;
  webmcu_model(3, &d);
  set_input(&d, 6, 6, 3);  // conv 4 -> pool 2 -> conv 3x3 on 2x2: no output
  Status st = plan_model(d, &p);
  EXPECT_EQ(st.code, StatusCode::KernelTooLarge);
  EXPECT_EQ(st.layer, 4);
  EXPECT_EQ(st.a, 3);
  EXPECT_EQ(st.b, 2);
}

TEST(Model, InvalidDescriptionsAreRejected) {
  ModelPlan p;
  ModelDesc d;
  d.num_classes = 2;
  EXPECT_EQ(plan_model(d, &p).code, StatusCode::NoLayers);

  webmcu_model(3, &d);
  d.layers[0].units = 0;  // zero channels
  Status st = plan_model(d, &p);
  EXPECT_EQ(st.code, StatusCode::ZeroDimension);
  EXPECT_EQ(st.layer, 0);

  webmcu_model(3, &d);
  d.layers[3].stride_h = 0;
  EXPECT_EQ(plan_model(d, &p).code, StatusCode::BadStride);

  webmcu_model(3, &d);
  d.input.channels = 0;
  EXPECT_EQ(plan_model(d, &p).code, StatusCode::ZeroDimension);

  webmcu_model(3, &d);
  d.layers[2].alpha = -1.f;
  st = plan_model(d, &p);
  EXPECT_EQ(st.code, StatusCode::BadParameter);
  EXPECT_EQ(st.layer, 2);

  webmcu_model(3, &d);
  d.layers[8].units = 5;  // dense output no longer the class count
  EXPECT_EQ(plan_model(d, &p).code, StatusCode::ClassCountMismatch);

  // Sizes whose product overflows.
  webmcu_model(3, &d);
  set_input(&d, 65535, 65535, 3);
  st = plan_model(d, &p);
  EXPECT_EQ(st.code, StatusCode::Overflow);
}

// Every figure of a plan (sums and byte counts, not only each tensor) in 64 bits: a forged model whose
// work buffer is 2^31 floats is refused with the real figure, on the 64-bit and the 32-bit build.
TEST(Model, SumsOverTheLimitAreRefusedWithTheirRealFigure) {
  static ModelPlan p;
  Status st = plan_model(tvtest::forged_model(), &p);
  ASSERT_EQ(st.code, StatusCode::Overflow);
  EXPECT_EQ(st.layer, 0);
  if (kMaxPlanFloats >= tvtest::kForgedConvFloats) {  // 64-bit: every tensor fits, their sum does not
    EXPECT_EQ(st.a, (int32_t)PlanFigure::InferenceWork);
    EXPECT_EQ(p.overflow_floats, tvtest::kForgedWorkFloats);
    EXPECT_EQ(p.overflow_floats, 1ull << 31);
  } else {  // 32-bit: the convolution's output alone is over 2^25 floats
    EXPECT_EQ(st.a, (int32_t)PlanFigure::Tensor);
    EXPECT_EQ(p.overflow_floats, tvtest::kForgedConvFloats);
  }
  EXPECT_STREQ(plan_figure_name(st.a), st.a == (int32_t)PlanFigure::Tensor ? "a tensor" : "the inference work buffer");

  // Just inside the limit on this build: a 1x1 convolution whose input + output is kMaxPlanFloats.
  // Every byte count the core derives then fits size_t: the parts add up to the totals, no wrap.
  ModelDesc d;
  const int side = 1024;
  const uint64_t filters = kMaxPlanFloats / ((uint64_t)side * side) - 1;  // + 1 input channel
  d.input.height = d.input.width = side;
  d.input.channels = 1;
  d.input.order = ChannelOrder::GRAY;
  d.num_classes = 2;
  add_layer(&d, conv2d_layer((int)(filters > 65535 ? 65535 : filters), 1));
  add_layer(&d, global_avgpool_layer());
  add_layer(&d, dense_layer());
  st = plan_model(d, &p);
  ASSERT_TRUE(st.ok()) << (int)st.code << " " << p.overflow_floats;
  TrainOptions opt;
  opt.lanes = kMaxLanes;
  opt.optimizer = OptimizerKind::Adam;
  opt.keep_best = true;
  opt.augment = true;
  const TrainMemory tm = training_memory(p, opt);
  const uint64_t parts = (uint64_t)tm.params_bytes + tm.grad_bytes + tm.optimizer_bytes + tm.snapshot_bytes +
                         tm.activation_bytes + tm.scratch_bytes + tm.augment_bytes;
  EXPECT_EQ(parts, (uint64_t)tm.total_bytes);
  EXPECT_GE((uint64_t)tm.activation_bytes, (uint64_t)p.train_act_floats * 4u * kMaxLanes);
  const InferenceMemory im = inference_memory(p);
  EXPECT_GE((uint64_t)im.work_bytes, (uint64_t)p.infer_floats * 4u);
  EXPECT_EQ((uint64_t)im.total_bytes, (uint64_t)im.params_bytes + im.work_bytes);

  // One more filter puts the sum over the limit: refused, naming the work buffer, with the real figure.
  if (filters < 65535) {
    d.layers[0].units = (uint16_t)(filters + 1);
    st = plan_model(d, &p);
    EXPECT_EQ(st.code, StatusCode::Overflow);
    EXPECT_EQ(st.a, (int32_t)PlanFigure::InferenceWork);
    EXPECT_EQ(p.overflow_floats, (uint64_t)side * side * (filters + 2));
  }
}

TEST(Model, EveryPresetPlans) {
  for (const char* const* n = preset_names(); *n; ++n) {
    ModelDesc d;
    ModelPlan p;
    ASSERT_TRUE(preset_model(*n, 3, &d)) << *n;
    EXPECT_TRUE(plan_model(d, &p).ok()) << *n;
    TrainRecipe r;
    EXPECT_TRUE(preset_recipe(*n, &r)) << *n;
  }
  ModelDesc d;
  EXPECT_FALSE(preset_model("nope", 3, &d));
}

TEST(Memory, WebmcuFiguresAreExactAndBelowThePaper) {
  ModelDesc d;
  ModelPlan p;
  webmcu_model(3, &d);
  ASSERT_TRUE(plan_model(d, &p).ok());
  InferenceMemory im = inference_memory(p);
  // Parameters 20,595 floats; work buffer = the largest (input + output) pair: 64*64*3 + 62*62*4.
  EXPECT_EQ(im.params_bytes, 20595u * 4);
  EXPECT_EQ(im.work_bytes, (12288u + 15376u) * 4);
  EXPECT_LT(im.total_bytes, 235u * 1024);

  TrainOptions one = webmcu_recipe().opt;
  one.lanes = 1;
  TrainMemory tm = training_memory(p, one);
  const size_t pbytes = 20596u * 4;  // padded to 16 bytes
  EXPECT_EQ(tm.params_bytes, pbytes);
  EXPECT_EQ(tm.grad_bytes, pbytes);
  EXPECT_EQ(tm.optimizer_bytes, 2 * pbytes);
  // Stored activations: input + conv1 + pool + conv2 + dense outputs.
  EXPECT_EQ(tm.activation_bytes, (12288u + 15376 + 3844 + 6728 + 4) * 4);
  // Backward scratch: the pool's output + input gradients (3844 + 15376), plus 2 class buffers.
  EXPECT_EQ(tm.scratch_bytes, (3844u + 15376) * 4 + 2 * 16);
  EXPECT_EQ(tm.total_bytes,
            tm.params_bytes + tm.grad_bytes + tm.optimizer_bytes + tm.activation_bytes + tm.scratch_bytes);
  EXPECT_LT(tm.total_bytes, 750u * 1024);
  std::printf("webmcu (3 classes): inference %zu bytes (params %zu + work %zu); training %zu bytes with 1 lane\n",
              im.total_bytes, im.params_bytes, im.work_bytes, tm.total_bytes);
  TrainOptions two = one;
  two.lanes = 2;
  TrainMemory t2 = training_memory(p, two);
  EXPECT_EQ(t2.total_bytes - tm.total_bytes, pbytes + tm.activation_bytes + tm.scratch_bytes);
}

TEST(Memory, ArenaTooSmallIsRefused) {
  ModelDesc d;
  ModelPlan p;
  webmcu_model(2, &d);
  ASSERT_TRUE(plan_model(d, &p).ok());
  TrainOptions opt;
  TrainMemory tm = training_memory(p, opt);
  alignas(16) static uint8_t small[1024];
  Trainer tr;
  Status st = trainer_init(&tr, &p, opt, small, sizeof(small));
  EXPECT_EQ(st.code, StatusCode::ArenaTooSmall);
  EXPECT_EQ((size_t)st.b, tm.total_bytes);
  Inference inf;
  static float params[16];
  EXPECT_EQ(inference_init(&inf, &p, params, small, sizeof(small)).code, StatusCode::ArenaTooSmall);
  EXPECT_EQ(inference_init(&inf, &p, params, small + 4, 100000).code, StatusCode::Misaligned);
}
