// Partial updates (tv/train/update.h): the trainable suffix's plan and parameter mapping, the partial
// backward against finite differences of the whole network's loss, frozen bytes, and the FLOPs and
// memory arithmetic against hand counts.
#include "tv/train/update.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/toy_training.h"
#include "tv/model/model.h"
#include "tv/train/net.h"
#include "tv/train/presets.h"

namespace {

// conv 3x3 same (4) -> leaky -> avgpool 2 -> depthwise 3x3 -> relu -> conv 1x1 (6) -> relu -> gap ->
// dense 5 -> relu -> dense (3 classes): four layers with weights after the first one. No max pool, so
// a finite-difference step cannot swap a window's winner.
tv::ModelDesc small_model() {
  tv::ModelDesc d;
  d.input.height = d.input.width = 8;
  d.num_classes = 3;
  tv::add_layer(&d, tv::conv2d_layer(4, 3, 1, tv::Padding::Same));  // 0
  tv::add_layer(&d, tv::leaky_relu_layer(0.1f));                    // 1
  tv::add_layer(&d, tv::avgpool_layer(2));                          // 2
  tv::add_layer(&d, tv::depthwise_layer(3));                        // 3
  tv::add_layer(&d, tv::relu_layer());                              // 4
  tv::add_layer(&d, tv::conv2d_layer(6, 1));                        // 5
  tv::add_layer(&d, tv::relu_layer());                              // 6
  tv::add_layer(&d, tv::global_avgpool_layer());                    // 7
  tv::add_layer(&d, tv::dense_layer(5));                            // 8
  tv::add_layer(&d, tv::relu_layer());                              // 9
  tv::add_layer(&d, tv::dense_layer());                             // 10
  return d;
}

tv::TrainOptions lanes_option(int lanes) {
  tv::TrainOptions opt;
  opt.lanes = lanes;
  return opt;
}

struct Bound {
  tv::ModelPlan plan;
  tv::TrainOptions opt;
  size_t bytes;
  tvtest::Arena arena;
  tv::Trainer tr;
  explicit Bound(const tv::ModelPlan& p, int lanes = 1)
      : plan(p), opt(lanes_option(lanes)), bytes(tv::training_memory(plan, opt).total_bytes), arena(bytes) {
    EXPECT_TRUE(tv::trainer_init(&tr, &plan, opt, arena.p, bytes).ok());
  }
};

tv::ModelPlan planned(const tv::ModelDesc& d) {
  tv::ModelPlan p;
  EXPECT_TRUE(tv::plan_model(d, &p).ok());
  return p;
}

// He-init weights with non-zero biases.
std::vector<float> random_params(const tv::ModelPlan& plan, uint64_t seed) {
  std::vector<float> params(plan.param_count);
  tv::he_init(plan, params.data(), seed);
  std::mt19937 rng((unsigned)seed);
  std::uniform_real_distribution<float> bias(0.05f, 0.3f);  // positive: most ReLUs pass
  for (int i = 0; i < plan.num_layers; ++i) {
    const tv::LayerPlan& lp = plan.layers[i];
    for (size_t k = 0; k < lp.bias_count; ++k) params[lp.param_offset + lp.weight_count + k] = bias(rng);
  }
  return params;
}

std::vector<uint8_t> random_image(const tv::ModelPlan& plan, unsigned seed) {
  std::vector<uint8_t> image(plan.input.size());
  std::mt19937 rng(seed);
  for (auto& p : image) p = (uint8_t)(rng() % 256);
  return image;
}

std::vector<float> features_of(const tv::ModelPlan& full, int first, const float* params,
                               const std::vector<uint8_t>& image) {
  std::vector<float> work(tv::prefix_work_floats(full)), f(tv::prefix_feature_floats(full, first));
  EXPECT_TRUE(tv::prefix_forward(full, first, params, image.data(), work.data(), f.data()).ok());
  return f;
}

int first_for(const tv::ModelPlan& plan, const char* update) {
  tv::UpdateSpec spec;
  EXPECT_TRUE(tv::parse_update(update, &spec)) << update;
  int first = -1;
  EXPECT_TRUE(tv::update_first_layer(plan, spec, &first).ok()) << update;
  return first;
}

TEST(Update, ParsesAndNamesTheModes) {
  tv::UpdateSpec s;
  ASSERT_TRUE(tv::parse_update("full", &s));
  EXPECT_EQ(s.mode, tv::UpdateMode::Full);
  ASSERT_TRUE(tv::parse_update("head", &s));
  EXPECT_EQ(s.mode, tv::UpdateMode::Head);
  ASSERT_TRUE(tv::parse_update("sparse", &s));
  EXPECT_EQ(s.mode, tv::UpdateMode::Sparse);
  EXPECT_EQ(s.k, 0);
  ASSERT_TRUE(tv::parse_update("sparse=12", &s));
  EXPECT_EQ(s.k, 12);
  for (const char* bad : {"", "Full", "sparse=", "sparse=0", "sparse=-1", "sparse=33", "sparse=2x", "sparse2", "head=1",
                          "sparse=99999999999"})
    EXPECT_FALSE(tv::parse_update(bad, &s)) << bad;
  char buf[16];
  tv::parse_update("sparse", &s);
  tv::format_update(s, buf, sizeof buf);
  EXPECT_STREQ(buf, ("sparse=" + std::to_string(tv::kDefaultSparseLayers)).c_str());
  tv::parse_update("sparse=12", &s);
  tv::format_update(s, buf, sizeof buf);
  EXPECT_STREQ(buf, "sparse=12");
  tv::parse_update("head", &s);
  tv::format_update(s, buf, sizeof buf);
  EXPECT_STREQ(buf, "head");
}

TEST(Update, FirstLayerCountsLayersWithWeightsFromTheEnd) {
  const tv::ModelPlan plan = planned(small_model());
  EXPECT_EQ(tv::weighted_layer_count(plan), 5);
  EXPECT_EQ(first_for(plan, "full"), 0);
  EXPECT_EQ(first_for(plan, "head"), 10);
  EXPECT_EQ(first_for(plan, "sparse=1"), 10);
  EXPECT_EQ(first_for(plan, "sparse=2"), 8);
  EXPECT_EQ(first_for(plan, "sparse=3"), 5);
  EXPECT_EQ(first_for(plan, "sparse=5"), 0);
  tv::UpdateSpec s;
  tv::parse_update("sparse=6", &s);  // more than there are: refused, naming both numbers
  int first = -1;
  const tv::Status st = tv::update_first_layer(plan, s, &first);
  EXPECT_EQ(st.code, tv::StatusCode::BadParameter);
  EXPECT_EQ(st.a, 6);
  EXPECT_EQ(st.b, 5);
  // The default K is clamped: a network with one layer with weights trains it.
  tv::ModelDesc one;
  one.input.height = one.input.width = 4;
  one.num_classes = 2;
  tv::add_layer(&one, tv::flatten_layer());
  tv::add_layer(&one, tv::dense_layer());
  const tv::ModelPlan p1 = planned(one);
  EXPECT_EQ(first_for(p1, "sparse"), 1);
  EXPECT_EQ(first_for(p1, "head"), 1);
}

// For every preset and every layer: the suffix's parameters are the full tail (offsets map exactly)
// and the suffix run on the prefix's features gives the full model's logits, bit for bit.
TEST(Update, SuffixParamsAreTheFullTailAndItsLogitsTheFullOnes) {
  for (const char* const* name = tv::preset_names(); *name; ++name) {
    tv::ModelDesc d;
    ASSERT_TRUE(tv::preset_model(*name, 4, &d));
    const tv::ModelPlan full = planned(d);
    const std::vector<float> params = random_params(full, 3);
    const std::vector<uint8_t> image = random_image(full, 5);
    std::vector<float> work(tv::inference_memory(full).work_bytes / sizeof(float) + 4);
    tv::Inference inf;
    ASSERT_TRUE(tv::inference_init(&inf, &full, params.data(), work.data(), work.size() * 4).ok());
    const size_t outputs = tv::plan_outputs(full);  // 4, or a detector's grid of 4 per cell
    std::vector<float> want(outputs), got(outputs);
    ASSERT_TRUE(tv::infer_u8(inf, image.data(), nullptr, want.data()).ok());
    int last_weighted = 0;
    for (int i = 0; i < full.num_layers; ++i)
      if (full.layers[i].weight_count) last_weighted = i;
    for (int first = 0; first < full.num_layers; ++first) {
      const std::string what = std::string(*name) + " from layer " + std::to_string(first);
      tv::ModelPlan s;
      if (first > last_weighted) {  // nothing would train
        EXPECT_EQ(tv::plan_suffix(full, first, &s).code, tv::StatusCode::NotSupported) << what;
        continue;
      }
      ASSERT_TRUE(tv::plan_suffix(full, first, &s).ok()) << what;
      const size_t base = full.layers[first].param_offset;
      ASSERT_EQ(s.num_layers, full.num_layers - first) << what;
      EXPECT_EQ(s.param_count, full.param_count - base) << what;
      EXPECT_EQ(s.input.size(), full.layers[first].in.size()) << what;
      for (int i = 0; i < s.num_layers; ++i) {
        EXPECT_EQ(s.layers[i].param_offset + base, full.layers[first + i].param_offset) << what;
        EXPECT_EQ(s.layers[i].weight_count, full.layers[first + i].weight_count) << what;
      }
      const std::vector<float> f = features_of(full, first, params.data(), image);
      std::vector<float> swork(tv::inference_memory(s).work_bytes / sizeof(float) + 4);
      tv::Inference sinf;
      ASSERT_TRUE(tv::inference_init(&sinf, &s, params.data() + base, swork.data(), swork.size() * 4).ok()) << what;
      ASSERT_TRUE(tv::infer_f32(sinf, f.data(), nullptr, got.data()).ok()) << what;
      EXPECT_EQ(0, std::memcmp(want.data(), got.data(), outputs * sizeof(float))) << what;
    }
  }
}

TEST(Update, SuffixOutOfRangeIsRefused) {
  const tv::ModelPlan full = planned(small_model());
  tv::ModelPlan s;
  EXPECT_FALSE(tv::plan_suffix(full, -1, &s).ok());
  EXPECT_FALSE(tv::plan_suffix(full, full.num_layers, &s).ok());
}

// The suffix trainer's gradient (trainer_sample_f32 on the prefix's features) equals the whole
// network's gradient restricted to what trains, and matches central finite differences of the whole
// network's loss with the frozen prefix in place (the tolerance of net_gradient_test.cpp).
void check_partial_gradient(const char* update) {
  const tv::ModelPlan full = planned(small_model());
  const int first = first_for(full, update);
  ASSERT_GT(first, 0) << update;
  tv::ModelPlan sp;
  ASSERT_TRUE(tv::plan_suffix(full, first, &sp).ok());
  const size_t base = full.layers[first].param_offset;
  Bound whole(full), part(sp);
  const std::vector<float> params = random_params(full, 7);
  std::memcpy(whole.tr.params, params.data(), params.size() * sizeof(float));
  std::memcpy(part.tr.params, params.data() + base, sp.param_count * sizeof(float));
  const std::vector<uint8_t> image = random_image(full, 9);
  const int label = 1;
  const std::vector<float> f = features_of(full, first, params.data(), image);

  tv::trainer_begin_batch(&part.tr);
  const float part_loss = tv::trainer_sample_f32(&part.tr, 0, f.data(), label, nullptr);
  tv::trainer_begin_batch(&whole.tr);
  const float whole_loss = tv::trainer_sample(&whole.tr, 0, image.data(), label, nullptr);
  EXPECT_EQ(part_loss, whole_loss) << update;
  const float* g_part = part.tr.lanes[0].grad;
  const float* g_whole = whole.tr.lanes[0].grad + base;
  for (size_t k = 0; k < sp.param_count; ++k)
    EXPECT_NEAR(g_part[k], g_whole[k], 1e-6 + 1e-5 * std::fabs(g_whole[k])) << update << " parameter " << k;

  constexpr float kStep = 5e-4f;
  int nonzero = 0;
  for (size_t k = 0; k < sp.param_count; ++k) {
    float& p = whole.tr.params[base + k];
    const float saved = p, up = saved + kStep, down = saved - kStep;
    p = up;
    tv::trainer_begin_batch(&whole.tr);
    const double l_up = tv::trainer_sample(&whole.tr, 0, image.data(), label, nullptr);
    p = down;
    tv::trainer_begin_batch(&whole.tr);
    const double l_down = tv::trainer_sample(&whole.tr, 0, image.data(), label, nullptr);
    p = saved;
    const double numeric = (l_up - l_down) / ((double)up - (double)down), a = g_part[k];
    const double bound = 1e-3 + 1e-2 * std::max(std::fabs(a), std::fabs(numeric));

    EXPECT_LE(std::fabs(a - numeric), bound)
        << update << " parameter " << k << ": analytic " << a << ", numeric " << numeric;
    nonzero += std::fabs(a) > 1e-3;
  }
  EXPECT_GT(nonzero, (int)sp.param_count / 4) << update << ": the gradient is mostly zero, the check proves little";
}

TEST(Update, HeadGradientIsTheFullGradientOfTheHead) {
  check_partial_gradient("head");
}

TEST(Update, SparseGradientIsTheFullGradientOfTheTrainedLayers) {
  check_partial_gradient("sparse=2");
  check_partial_gradient("sparse=3");
  check_partial_gradient("sparse=4");
}

// Training the suffix for a few batches changes the trained tail and leaves the frozen prefix's bytes
// exactly as they were; the trainer never sees the prefix.
TEST(Update, FrozenPrefixBytesDoNotChangeWhenTheSuffixTrains) {
  const tv::ModelPlan full = planned(small_model());
  const int first = first_for(full, "sparse=3");
  tv::ModelPlan sp;
  ASSERT_TRUE(tv::plan_suffix(full, first, &sp).ok());
  const size_t base = full.layers[first].param_offset;
  std::vector<float> params = random_params(full, 11);
  const std::vector<float> before = params;
  Bound part(sp, 2);
  std::memcpy(part.tr.params, params.data() + base, sp.param_count * sizeof(float));
  for (int batch = 0; batch < 5; ++batch) {
    tv::trainer_begin_batch(&part.tr);
    for (int s = 0; s < 4; ++s) {
      const std::vector<uint8_t> image = random_image(full, (unsigned)(batch * 4 + s));
      const std::vector<float> f = features_of(full, first, params.data(), image);
      tv::trainer_sample_f32(&part.tr, s % 2, f.data(), s % 3, nullptr);
    }
    ASSERT_TRUE(tv::trainer_end_batch(&part.tr));
    std::memcpy(params.data() + base, part.tr.params, sp.param_count * sizeof(float));
  }
  EXPECT_EQ(0, std::memcmp(params.data(), before.data(), base * sizeof(float)));
  EXPECT_NE(0, std::memcmp(params.data() + base, before.data() + base, sp.param_count * sizeof(float)));
  // Gradients and Adam state exist only for the tail.
  tv::TrainOptions opt;
  opt.lanes = 2;
  EXPECT_EQ(tv::training_memory(sp, opt).grad_bytes, 2 * ((sp.param_count + 3) / 4 * 4) * sizeof(float));
}

// Hand counts on small_model (8x8x3 input):
//   conv0 3x3 same 3->4: 108 weights, 8x8 outputs: 2*64*108 = 13824;  avgpool -> 4x4x4
//   depthwise3 3x3 same on 4 channels: 36 weights, 4x4 outputs: 2*16*36 = 1152
//   conv5 1x1 4->6: 24 weights, 4x4 outputs: 2*16*24 = 768
//   dense8 6->5: 30 weights: 60;  dense10 5->3: 15 weights: 30
TEST(Update, FlopsMatchHandCounts) {
  const tv::ModelPlan p = planned(small_model());
  EXPECT_EQ(p.flops_forward, 13824u + 1152 + 768 + 60 + 30);
  EXPECT_EQ(tv::forward_flops(p, 0, p.num_layers), p.flops_forward);
  EXPECT_EQ(tv::forward_flops(p, 0, 8), 13824u + 1152 + 768);
  // Backward: weight gradients of every trained layer, input gradients of all but the lowest.
  EXPECT_EQ(tv::backward_flops(p, 10), 30u);
  EXPECT_EQ(tv::backward_flops(p, 8), 60u + 2 * 30);
  EXPECT_EQ(tv::backward_flops(p, 0), 13824u + 2 * (1152 + 768 + 60 + 30));
  tv::UpdateRun run;
  run.train_images = 10, run.val_images = 3, run.epochs = 4;
  // head: cache 13 images' prefix once; 4 epochs x 10 x (30 forward + 30 backward); evaluation
  // (4 + 1) x 3 + 10 suffix forwards.
  tv::UpdateFlops h = tv::update_run_flops(p, 10, run);
  EXPECT_EQ(h.cache, 13u * (13824 + 1152 + 768 + 60));
  EXPECT_EQ(h.train, 4u * 10 * (30 + 30));
  EXPECT_EQ(h.eval, 25u * 30);
  EXPECT_EQ(h.total, h.cache + h.train + h.eval);
  tv::UpdateFlops f = tv::update_run_flops(p, 0, run);
  EXPECT_EQ(f.cache, 0u);
  EXPECT_EQ(f.train, 4u * 10 * (p.flops_forward + tv::backward_flops(p, 0)));
  EXPECT_EQ(f.eval, 25u * p.flops_forward);
  // sparse with augmentation: only validation is cached; the prefix runs for every training sample.
  run.augment = true;
  tv::UpdateFlops s = tv::update_run_flops(p, 8, run);
  EXPECT_EQ(s.cache, 3u * (13824 + 1152 + 768));
  EXPECT_EQ(s.train, 4u * 10 * ((13824 + 1152 + 768) + 90 + 120));
  EXPECT_EQ(s.eval, 25u * 90 + 10u * (13824 + 1152 + 768));  // the final evaluation of the training samples
}

TEST(Update, BalancedSamplesTrainAsManyTimes) {
  const tv::ModelPlan p = planned(small_model());
  tv::UpdateRun run;
  run.train_images = 10, run.train_samples = 16, run.val_images = 3, run.epochs = 4;
  const tv::UpdateFlops h = tv::update_run_flops(p, 10, run);
  EXPECT_EQ(h.train, 4u * 16 * (30 + 30));              // every sample trains
  EXPECT_EQ(h.cache, 13u * (13824 + 1152 + 768 + 60));  // each photo is cached once
  EXPECT_EQ(h.eval, 25u * 30);                          // and evaluated once
}

// Distillation: the old classes' training photos run forward once more, from the starting weights (their
// soft targets), and the targets take a row of the old classes' outputs per photo.
TEST(Update, DistillationCostsOneForwardPerOldPhotoAndARowOfTargetsPerPhoto) {
  const tv::ModelPlan p = planned(small_model());
  tv::UpdateRun run;
  run.train_images = 10, run.val_images = 3, run.epochs = 4;
  const tv::UpdateFlops plain_head = tv::update_run_flops(p, 10, run);
  const tv::UpdateMemory plain_mem = tv::update_memory(p, 10, tv::TrainOptions(), run);
  EXPECT_EQ(plain_head.distill, 0u);
  EXPECT_EQ(plain_mem.soft_target_bytes, 0u);
  run.distill_outputs = 2, run.distilled_images = 7;
  const tv::UpdateFlops h = tv::update_run_flops(p, 10, run);
  EXPECT_EQ(h.distill, 7u * 30);  // on the cached features: the head's forward
  EXPECT_EQ(h.total, plain_head.total + h.distill);
  EXPECT_EQ(h.total, h.cache + h.train + h.eval + h.distill);
  EXPECT_EQ(tv::update_run_flops(p, 0, run).distill, 7u * p.flops_forward);  // full: the whole network
  run.augment = true;  // sparse, augmenting: the training photos' features are not cached
  EXPECT_EQ(tv::update_run_flops(p, 8, run).distill, 7u * (13824 + 1152 + 768 + 60 + 30));
  run.augment = false;
  const tv::UpdateMemory m = tv::update_memory(p, 10, tv::TrainOptions(), run);
  EXPECT_EQ(m.soft_target_bytes, 13u * 2 * sizeof(float));  // every photo's row, as the session's table
  EXPECT_EQ(m.board_peak_bytes, plain_mem.board_peak_bytes + m.soft_target_bytes);
}

// The new classes' samples repeat up to the old classes' mean count; the old ones stay as they are.
TEST(BalancedSamples, NewClassesRepeatUpToTheOldClassesMean) {
  // sample index -> class: old classes 0 (4 samples) and 1 (6 samples), new classes 2 (2) and 3 (1)
  const int labels[] = {0, 1, 2, 0, 1, 1, 3, 0, 1, 1, 2, 0, 1, 9};
  const int train[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13};  // 13 has a label outside the classes
  const int n = 14;
  ASSERT_EQ(tv::balanced_samples(train, n, labels, 4, 2, nullptr), 10 + 5 + 5);
  std::vector<int> out(20, -1);
  ASSERT_EQ(tv::balanced_samples(train, n, labels, 4, 2, out.data()), 20);
  EXPECT_EQ(out, (std::vector<int>{0, 1,  3, 4,  5, 7, 8, 9, 11, 12,  // the old classes' samples, in order
                                   2, 10, 2, 10, 2,                   // class 2's two, in turn
                                   6, 6,  6, 6,  6}));                // class 3's one, five times
}

TEST(BalancedSamples, ANewClassAsLargeAsTheOldOnesAndNoNewClassChangeNothing) {
  const int labels[] = {0, 0, 1, 1, 2, 2, 2};
  const int train[] = {6, 5, 4, 3, 2, 1, 0};
  std::vector<int> out(7, -1);
  EXPECT_EQ(tv::balanced_samples(train, 7, labels, 3, 2, out.data()), 7);
  EXPECT_EQ(out, (std::vector<int>{3, 2, 1, 0, 6, 5, 4}));
  EXPECT_EQ(tv::balanced_samples(train, 7, labels, 3, 3, nullptr), 7);  // every class is old
  EXPECT_EQ(tv::balanced_samples(train, 0, labels, 3, 2, nullptr), 0);
  EXPECT_EQ(tv::balanced_samples(nullptr, 7, labels, 3, 2, nullptr), 0);
}

TEST(BalancedSamples, MoreThanTheLimitIsRefused) {
  // one old class of 4,096 samples and 4,097 new classes of one photo each: 4,096 + 4,097 x 4,096 samples
  const int old = 4096, added = 4097, n = old + added;
  std::vector<int> labels(n), train(n);
  for (int i = 0; i < n; ++i) {
    labels[i] = i < old ? 0 : 1 + (i - old);
    train[i] = i;
  }
  ASSERT_GT((int64_t)old + (int64_t)added * old, (int64_t)tv::kMaxBalancedSamples);
  EXPECT_EQ(tv::balanced_samples(train.data(), n, labels.data(), 1 + added, 1, nullptr), -1);
  // two new classes fewer: 4,096 + 4,095 x 4,096 = 2^24 samples, the limit itself
  EXPECT_EQ(tv::balanced_samples(train.data(), n - 2, labels.data(), added - 1, 1, nullptr), tv::kMaxBalancedSamples);
}

TEST(Update, BoardPeakIsTheDocumentedSum) {
  tv::ModelDesc d;
  ASSERT_TRUE(tv::preset_model("tinyvision", 3, &d));
  const tv::ModelPlan p = planned(d);
  tv::TrainOptions opt;
  tv::UpdateRun run;
  run.train_images = 81, run.val_images = 9, run.epochs = 60;
  const int head = first_for(p, "head");
  const tv::UpdateMemory full = tv::update_memory(p, 0, opt, run);
  const tv::UpdateMemory h = tv::update_memory(p, head, opt, run);
  for (const tv::UpdateMemory* m : {&full, &h}) {
    const uint64_t arena = std::max(m->train_arena_bytes, m->infer_arena_bytes);
    EXPECT_EQ(m->board_peak_bytes, m->weights_bytes + arena + m->cache_bytes + m->decode_bytes + m->soft_target_bytes);
    EXPECT_EQ(m->weights_bytes, p.param_count * 4u);
    EXPECT_EQ(m->decode_bytes, 240u * 240 * 3);
  }
  EXPECT_EQ(full.cache_bytes, 90u * 12288);  // decoded 64x64x3 photos
  EXPECT_EQ(h.cache_bytes, 90u * p.layers[head].in.size() * 4);
  EXPECT_EQ(full.train_arena_bytes, tv::training_memory(p, opt).total_bytes);
  tv::ModelPlan sp;
  ASSERT_TRUE(tv::plan_suffix(p, head, &sp).ok());
  EXPECT_EQ(h.train_arena_bytes, tv::training_memory(sp, opt).total_bytes);
  EXPECT_LT(h.train_arena_bytes, full.train_arena_bytes / 20);
}

}  // namespace
