// The feature source (common/src/tv/feature_source.*) through the training session: a suffix trained
// on features gives the same bits as the whole network trained on images when the prefix has no
// weights (cached, and recomputed with augmentation), for any lane count; its memory and refusals.
#include "tv/train/feature_source.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/toy_training.h"
#include "tv/train/train_session.h"
#include "tv/train/update.h"

using namespace tv;
using tvtest::Arena;
using tvtest::Toy;

namespace {

// The toy's network behind a max pool that has no weights: training layers 1.. on the pool's outputs
// is training the whole network on the images.
ModelPlan pooled_toy(const Toy& toy) {
  ModelDesc d = toy.desc;
  d.input.height = d.input.width = 2 * Toy::kS;
  for (int i = d.num_layers; i > 0; --i) d.layers[i] = d.layers[i - 1];
  d.layers[0] = maxpool_layer(2);
  d.num_layers++;
  ModelPlan p;
  EXPECT_TRUE(plan_model(d, &p).ok());
  return p;
}

// The toy's images at twice the size (each pixel 2x2): pooled back, they are the toy's.
std::vector<uint8_t> doubled(const Toy& toy) {
  const int S = Toy::kS;
  std::vector<uint8_t> out((size_t)Toy::kN * 4 * S * S);
  for (int n = 0; n < Toy::kN; ++n)
    for (int y = 0; y < 2 * S; ++y)
      for (int x = 0; x < 2 * S; ++x) out[((size_t)n * 2 * S + y) * 2 * S + x] = toy.image(n)[(y / 2) * S + x / 2];
  return out;
}

struct Images {
  const std::vector<uint8_t>* px;
  size_t bytes;
  const Toy* toy;
};
const uint8_t* images_image(void* ctx, int i) {
  const Images& m = *(const Images*)ctx;
  return m.px->data() + (size_t)i * m.bytes;
}
int images_label(void* ctx, int i) {
  return ((const Images*)ctx)->toy->labels[(size_t)i];
}

// Trains `plan` (the whole toy, or the suffix of `full` from `first` on features) with the session;
// returns the trained weights.
std::vector<float> run(const ModelPlan& plan, const TrainRecipe& r, SampleSource src, const std::vector<float>& start,
                       int lanes) {
  TrainRecipe recipe = r;
  recipe.opt.lanes = lanes;
  std::vector<int> train, val;
  for (int i = 0; i < Toy::kN; ++i) (i < 16 ? train : val).push_back(i);
  std::vector<int> order(train.size());
  std::vector<float> probs(2);
  const bool features = src.features != nullptr;
  const SessionMemory mem = session_memory(plan, recipe, (int)train.size(), (int)val.size(), features);
  Arena arena(mem.trainer.total_bytes), eval(mem.eval_work_bytes);
  SessionSetup u;
  u.plan = &plan;
  u.recipe = &recipe;
  u.source = src;
  u.train = train.data();
  u.n_train = (int)train.size();
  u.val = val.data();
  u.n_val = (int)val.size();
  u.seed = 5;
  u.train_arena = arena.p;
  u.train_arena_bytes = mem.trainer.total_bytes;
  u.eval_arena = eval.p;
  u.eval_arena_bytes = mem.eval_work_bytes;
  u.order = order.data();
  u.probs = probs.data();
  TrainSession s;
  EXPECT_TRUE(session_init(&s, u).ok());
  EXPECT_EQ(s.options.augment, recipe_augments(recipe) && !features);
  std::memcpy(s.trainer.params, start.data(), plan.param_count * sizeof(float));
  const SessionResult res = session_run(&s, SessionHooks());
  EXPECT_TRUE(res.status.ok());
  return std::vector<float>(s.trainer.params, s.trainer.params + plan.param_count);
}

struct FeatureFixture {
  Toy toy;
  ModelPlan full = pooled_toy(toy);
  std::vector<uint8_t> px = doubled(toy);
  Images images{&px, (size_t)4 * Toy::kS* Toy::kS, &toy};
  std::vector<float> start = std::vector<float>(toy.plan.param_count);
  FeatureFixture() { he_init(toy.plan, start.data(), 9); }
  SampleSource image_source() {
    SampleSource s;
    s.ctx = &images;
    s.image = images_image;
    s.label = images_label;
    return s;
  }
};

void check_same_bits(const TrainRecipe& recipe, bool augment, const char* what) {
  FeatureFixture f;
  for (int lanes : {1, 3}) {
    // The whole network (the pool, then the toy) trained on the doubled images, augmented by the trainer.
    const std::vector<float> want = run(f.full, recipe, f.image_source(), f.start, lanes);
    FeatureSourceSetup fs_setup;
    fs_setup.full = &f.full;
    fs_setup.first = 1;
    fs_setup.params = f.start.data();  // the prefix (a max pool) reads none of them
    fs_setup.images = f.image_source();
    fs_setup.n_samples = Toy::kN;
    fs_setup.recipe = &recipe;
    fs_setup.seed = 5;
    fs_setup.augment = augment;
    fs_setup.lanes = lanes;
    const int rows = augment ? 8 : Toy::kN;  // augmenting: only the validation samples are cached
    const FeatureSourceMemory m = feature_source_memory(fs_setup, rows);
    std::vector<float> cache(m.cache_bytes / sizeof(float));
    std::vector<int> slot(Toy::kN);
    Arena lane_arena(m.lane_bytes * (size_t)lanes);
    FeatureSource fs;
    ASSERT_TRUE(
        feature_source_init(&fs, fs_setup, cache.data(), rows, slot.data(), lane_arena.p, m.lane_bytes * lanes).ok());
    std::vector<int> all;
    for (int i = augment ? 16 : 0; i < Toy::kN; ++i) all.push_back(i);
    ASSERT_TRUE(feature_cache_add(&fs, all.data(), (int)all.size(), nullptr).ok());
    EXPECT_EQ(fs.cached, rows);
    ModelPlan suffix;
    ASSERT_TRUE(plan_suffix(f.full, 1, &suffix).ok());
    const std::vector<float> got = run(suffix, recipe, feature_samples(&fs), f.start, lanes);
    ASSERT_EQ(got.size(), want.size());
    EXPECT_EQ(0, std::memcmp(got.data(), want.data(), want.size() * sizeof(float)))
        << what << ", " << lanes << " lanes";
    EXPECT_NE(0, std::memcmp(got.data(), f.start.data(), want.size() * sizeof(float))) << what << ": nothing trained";
  }
}

TEST(FeatureSource, CachedFeaturesTrainTheSameBitsAsTheImages) {
  TrainRecipe r = tvtest::toy_recipe();
  r.aug_flip = false, r.aug_shift = 0, r.aug_brightness = 0.f;
  ASSERT_FALSE(recipe_augments(r));
  check_same_bits(r, false, "cached");
}

TEST(FeatureSource, AugmentedFeaturesTrainTheSameBitsAsAugmentedImages) {
  TrainRecipe r = tvtest::toy_recipe();
  r.aug_flip = true, r.aug_shift = 2, r.aug_brightness = 0.2f;
  check_same_bits(r, true, "augmented");
}

TEST(FeatureSource, RefusesBadSetupsAndAFullCache) {
  FeatureFixture f;
  FeatureSourceSetup s;
  s.full = &f.full;
  s.first = 1;
  s.params = f.start.data();
  s.images = f.image_source();
  s.n_samples = Toy::kN;
  const FeatureSourceMemory m = feature_source_memory(s, 2);
  std::vector<float> cache(m.cache_bytes / sizeof(float));
  std::vector<int> slot(Toy::kN);
  Arena lane_arena(m.lane_bytes);
  FeatureSource fs;
  EXPECT_EQ(feature_source_init(&fs, s, cache.data(), 2, slot.data(), lane_arena.p, m.lane_bytes - 16).code,
            StatusCode::ArenaTooSmall);
  FeatureSourceSetup bad = s;
  bad.first = 0;
  EXPECT_EQ(feature_source_init(&fs, bad, cache.data(), 2, slot.data(), lane_arena.p, m.lane_bytes).code,
            StatusCode::InvalidArgument);
  bad = s;
  bad.augment = true;  // without a recipe to augment by
  EXPECT_EQ(feature_source_init(&fs, bad, cache.data(), 2, slot.data(), lane_arena.p, m.lane_bytes).code,
            StatusCode::InvalidArgument);
  ASSERT_TRUE(feature_source_init(&fs, s, cache.data(), 2, slot.data(), lane_arena.p, m.lane_bytes).ok());
  const int idx[4] = {0, 1, 0, 2};  // 0 again is kept, 2 does not fit
  EXPECT_EQ(feature_cache_add(&fs, idx, 4, nullptr).code, StatusCode::ArenaTooSmall);
  EXPECT_EQ(fs.cached, 2);
  EXPECT_EQ(slot[0], 0);
  EXPECT_EQ(slot[1], 1);
  EXPECT_EQ(slot[2], -1);
}

}  // namespace
