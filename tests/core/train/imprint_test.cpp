// Weight imprinting (tv/train/imprint.h): growing the class count keeps the old classes' outputs; a new
// class imprinted from a few photos classifies its own photos without stealing the old classes'
// (and the naive bias the calibration replaces does steal them, so the test can tell the two apart).
#include "tv/train/imprint.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/toy_training.h"
#include "tv/model/model.h"
#include "tv/train/net.h"
#include "tv/train/presets.h"
#include "tv/train/update.h"

namespace {

// 8x8x3 -> conv 3x3 (8) -> relu -> maxpool 2 -> conv 3x3 (8) -> relu -> gap -> dense (classes).
tv::ModelDesc small_model(int classes) {
  tv::ModelDesc d;
  d.input.height = d.input.width = 8;
  d.num_classes = (uint16_t)classes;
  tv::add_layer(&d, tv::conv2d_layer(8, 3, 1, tv::Padding::Same));
  tv::add_layer(&d, tv::relu_layer());
  tv::add_layer(&d, tv::maxpool_layer(2));
  tv::add_layer(&d, tv::conv2d_layer(8, 3, 1, tv::Padding::Same));
  tv::add_layer(&d, tv::relu_layer());
  tv::add_layer(&d, tv::global_avgpool_layer());
  tv::add_layer(&d, tv::dense_layer());
  return d;
}

// A photo of class c: a noisy background with a bright square at a random place, red (0), green (1)
// or yellow (2: a new object that shares what the old ones look like, red and green). A blue square
// as the new class does not work: a base trained on red vs green has features blind to blue, and no
// bias separates what the features do not (imprinting needs features that see the new class).
std::vector<uint8_t> photo(int c, std::mt19937& rng) {
  std::vector<uint8_t> img(8 * 8 * 3);
  std::uniform_int_distribution<int> noise(20, 90), at(0, 4);
  for (auto& p : img) p = (uint8_t)noise(rng);
  const int y0 = at(rng), x0 = at(rng);
  for (int y = y0; y < y0 + 4; ++y)
    for (int x = x0; x < x0 + 4; ++x)
      for (int k = 0; k < 3; ++k)
        img[(size_t)(y * 8 + x) * 3 + k] =
            (uint8_t)(c == k || (c == 2 && k < 2) ? 250 : img[(size_t)(y * 8 + x) * 3 + k]);
  return img;
}

struct Photos {
  std::vector<std::vector<uint8_t>> images;
  std::vector<int> labels;
};

Photos photos(int classes_from, int classes_to, int per_class, unsigned seed) {
  std::mt19937 rng(seed);
  Photos p;
  for (int i = 0; i < per_class; ++i)
    for (int c = classes_from; c < classes_to; ++c) {
      p.images.push_back(photo(c, rng));
      p.labels.push_back(c);
    }
  return p;
}

// A base model trained on classes 0 and 1.
std::vector<float> trained_base(const tv::ModelPlan& plan) {
  tv::TrainOptions opt;
  opt.lanes = 1;
  opt.lr = 1e-2f;
  const size_t bytes = tv::training_memory(plan, opt).total_bytes;
  tvtest::Arena arena(bytes);
  tv::Trainer tr;
  EXPECT_TRUE(tv::trainer_init(&tr, &plan, opt, arena.p, bytes).ok());
  tv::he_init(plan, tr.params, 1);
  const Photos train = photos(0, 2, 40, 2);
  for (int epoch = 0; epoch < 15; ++epoch)
    for (size_t b = 0; b < train.images.size(); b += 8) {
      tv::trainer_begin_batch(&tr);
      for (size_t i = b; i < b + 8 && i < train.images.size(); ++i)
        tv::trainer_sample(&tr, 0, train.images[i].data(), train.labels[i], nullptr);
      tv::trainer_end_batch(&tr);
    }
  return std::vector<float>(tr.params, tr.params + plan.param_count);
}

// Correct predictions per class of `plan` + params on the photos.
std::vector<int> correct_per_class(const tv::ModelPlan& plan, const std::vector<float>& params, const Photos& p) {
  const size_t bytes = tv::inference_memory(plan).work_bytes;
  tvtest::Arena work(bytes);
  tv::Inference inf;
  EXPECT_TRUE(tv::inference_init(&inf, &plan, params.data(), work.p, bytes).ok());
  std::vector<int> correct(plan.desc.num_classes, 0);
  std::vector<float> probs(plan.desc.num_classes);
  for (size_t i = 0; i < p.images.size(); ++i) {
    EXPECT_TRUE(tv::infer_u8(inf, p.images[i].data(), probs.data()).ok());
    correct[p.labels[i]] += tv::argmax(probs.data(), plan.desc.num_classes) == p.labels[i];
  }
  return correct;
}

TEST(Imprint, GrowingKeepsEveryOldOutput) {
  tv::ModelPlan old, grown;
  ASSERT_TRUE(tv::plan_model(small_model(2), &old).ok());
  ASSERT_TRUE(tv::plan_with_classes(old, 4, &grown).ok());
  EXPECT_EQ(grown.desc.num_classes, 4);
  std::vector<float> params(old.param_count);
  tv::he_init(old, params.data(), 3);
  for (size_t k = 0; k < 2; ++k) params[old.param_count - 1 - k] = 0.25f * (float)(k + 1);  // non-zero biases
  std::vector<float> g(grown.param_count, 7.f);
  tv::grow_class_params(old, params.data(), grown, g.data());
  const Photos p = photos(0, 2, 3, 4);
  const size_t n1 = tv::inference_memory(old).work_bytes, n2 = tv::inference_memory(grown).work_bytes;
  tvtest::Arena w1(n1), w2(n2);
  tv::Inference a, b;
  ASSERT_TRUE(tv::inference_init(&a, &old, params.data(), w1.p, n1).ok());
  ASSERT_TRUE(tv::inference_init(&b, &grown, g.data(), w2.p, n2).ok());
  for (const auto& img : p.images) {
    float la[2], lb[4];
    ASSERT_TRUE(tv::infer_u8(a, img.data(), nullptr, la).ok());
    ASSERT_TRUE(tv::infer_u8(b, img.data(), nullptr, lb).ok());
    EXPECT_EQ(0, std::memcmp(la, lb, sizeof la));  // old outputs, same bits, same order
    EXPECT_EQ(lb[2], 0.f);                         // new rows and biases start at zero
    EXPECT_EQ(lb[3], 0.f);
  }
  ASSERT_TRUE(tv::plan_with_classes(old, 1, &grown).code == tv::StatusCode::InvalidArgument);
}

TEST(Imprint, PresetsImprintTheirLogitsLayer) {
  for (const char* const* name = tv::preset_names(); *name; ++name) {
    tv::ModelDesc d;
    ASSERT_TRUE(tv::preset_model(*name, 3, &d));
    tv::ModelPlan p;
    ASSERT_TRUE(tv::plan_model(d, &p).ok());
    if (d.task == tv::Task::Detect) {  // a grid of logits: no class row to imprint
      EXPECT_EQ(tv::imprint_layer(p), -1) << *name;
      continue;
    }
    const int layer = tv::imprint_layer(p);
    ASSERT_GE(layer, 0) << *name;
    EXPECT_EQ(p.desc.layers[layer].type, tv::LayerType::Dense) << *name;
    tv::UpdateSpec head;
    head.mode = tv::UpdateMode::Head;
    int first = -1;
    ASSERT_TRUE(tv::update_first_layer(p, head, &first).ok());
    EXPECT_EQ(first, layer) << *name << ": the head's features are the imprinted layer's input";
  }
  tv::ModelDesc d = small_model(2);  // ends in a conv: nothing to imprint
  d.num_layers = 4;
  d.layers[3] = tv::conv2d_layer(2, 4);
  tv::ModelPlan p, g;
  ASSERT_TRUE(tv::plan_model(d, &p).ok());
  EXPECT_EQ(tv::imprint_layer(p), -1);
  EXPECT_EQ(tv::plan_with_classes(p, 3, &g).code, tv::StatusCode::NotSupported);
}

// Imprint class 2 (yellow) from 5 photos into a base trained on red and green; test on 30 fresh photos
// per class.
TEST(Imprint, NewClassFromFivePhotosClassifiesItsOwnAndStealsNoOldOnes) {
  tv::ModelPlan old, grown;
  ASSERT_TRUE(tv::plan_model(small_model(2), &old).ok());
  ASSERT_TRUE(tv::plan_with_classes(old, 3, &grown).ok());
  const std::vector<float> base = trained_base(old);
  const Photos test = photos(0, 3, 30, 99);
  const std::vector<int> before = correct_per_class(old, base, photos(0, 2, 30, 99));
  ASSERT_GE(before[0] + before[1], 55) << "the base model did not learn red vs green";

  std::vector<float> params(grown.param_count);
  tv::grow_class_params(old, base.data(), grown, params.data());
  // The photos at hand: 5 of the new class and 5 of each old class, as features of the dense layer.
  const Photos shots = photos(0, 3, 5, 7);
  const int layer = tv::imprint_layer(grown);
  const size_t F = tv::prefix_feature_floats(grown, layer);
  std::vector<float> features(shots.images.size() * F), work(tv::prefix_work_floats(grown));
  for (size_t i = 0; i < shots.images.size(); ++i)
    ASSERT_TRUE(
        tv::prefix_forward(grown, layer, params.data(), shots.images[i].data(), work.data(), &features[i * F]).ok());
  std::vector<float> scratch(2 * shots.images.size());
  ASSERT_TRUE(tv::imprint_class(grown, params.data(), 2, features.data(), shots.labels.data(), (int)shots.images.size(),
                                scratch.data())
                  .ok());
  const std::vector<int> after = correct_per_class(grown, params, test);
  EXPECT_GE(after[2], 24) << "the new class is not recognised on its own photos";
  EXPECT_GE(after[0], before[0] - 1) << "the new class steals red photos";
  EXPECT_GE(after[1], before[1] - 1) << "the new class steals green photos";
  // Its row's norm is the old rows' mean norm.
  const tv::LayerPlan& lp = grown.layers[layer];
  auto norm = [&](int r) {
    double s = 0;
    for (size_t k = 0; k < F; ++k)
      s += (double)params[lp.param_offset + r * F + k] * params[lp.param_offset + r * F + k];
    return std::sqrt(s);
  };
  EXPECT_NEAR(norm(2), (norm(0) + norm(1)) / 2, 1e-4 * norm(2));

  // The naive bias (the old biases' mean) with the same row steals old photos: the calibration matters.
  std::vector<float> naive = params;
  const float* b = &params[lp.param_offset + lp.weight_count];
  naive[lp.param_offset + lp.weight_count + 2] = (b[0] + b[1]) / 2;
  const std::vector<int> stolen = correct_per_class(grown, naive, test);
  EXPECT_LT(stolen[0] + stolen[1], after[0] + after[1] - 10) << "naive imprinting worked here: the test proves little";
}

TEST(Imprint, RefusesAClassWithoutPhotosOrFeatures) {
  tv::ModelPlan p;
  ASSERT_TRUE(tv::plan_model(small_model(3), &p).ok());
  std::vector<float> params(p.param_count, 0.1f);
  const size_t F = tv::prefix_feature_floats(p, tv::imprint_layer(p));
  std::vector<float> features(2 * F, 0.f), scratch(4);
  const int labels[2] = {0, 2};
  EXPECT_EQ(tv::imprint_class(p, params.data(), 1, features.data(), labels, 2, scratch.data()).code,
            tv::StatusCode::InvalidArgument);  // no photo of class 1
  EXPECT_EQ(tv::imprint_class(p, params.data(), 2, features.data(), labels, 2, scratch.data()).code,
            tv::StatusCode::InvalidArgument);  // all-zero features
  features[F] = std::numeric_limits<float>::infinity();
  EXPECT_EQ(tv::imprint_class(p, params.data(), 2, features.data(), labels, 2, scratch.data()).code,
            tv::StatusCode::NonFiniteActivation);
}

}  // namespace
