// The training session (common/src/tv/train_session.*): the options a recipe trains with, keep-best,
// stopping, the explicit learning rate, evaluation of float features, distillation from the starting
// weights, and refusals.
#include "tv/train/train_session.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "core/toy_training.h"
#include "tv/ops/ops.h"

using namespace tv;
using tvtest::Arena;
using tvtest::Toy;
using tvtest::ToySession;

namespace {

// What the hooks saw: each epoch's validation and weights, the batches and the learning rates.
struct Seen {
  explicit Seen(ToySession* session) : t(session) {}
  ToySession* t;
  std::vector<int> val_correct;
  std::vector<bool> best;
  std::vector<std::vector<float>> weights;  // after each epoch's evaluation
  std::vector<float> lr;
  int batches = 0;
  int eval_samples = 0;
  int stop_after_batches = -1;  // set `stop` once this many batches are done
  std::atomic<bool> stop{false};
  int scramble_from_epoch = 0;  // restart from random weights at the start of this epoch and later
};

// The toy's recipe for `epochs`, ending with the best validated epoch's weights.
TrainRecipe keep_best_recipe(int epochs) {
  TrainRecipe r = tvtest::toy_recipe();
  r.epochs = epochs;
  r.restore_best = true;
  return r;
}

SessionHooks hooks_for(Seen& seen) {
  SessionHooks h;
  h.ctx = &seen;
  h.stop = &seen.stop;
  h.on_epoch_begin = [](void* ctx, int epoch, int) {
    Seen& s = *(Seen*)ctx;
    if (s.scramble_from_epoch && epoch >= s.scramble_from_epoch)
      he_init(s.t->toy.plan, s.t->s.trainer.params, 100 + (uint64_t)epoch);
  };
  h.on_batch = [](void* ctx, int, int, int, const BatchStats& b) {
    Seen& s = *(Seen*)ctx;
    if (b.seen > 0) s.batches++;
    if (s.batches == s.stop_after_batches) s.stop.store(true);
  };
  h.on_eval_sample = [](void* ctx, int, const float*) { ((Seen*)ctx)->eval_samples++; };
  h.on_epoch = [](void* ctx, const EpochReport& e) {
    Seen& s = *(Seen*)ctx;
    s.val_correct.push_back(e.val_correct);
    s.best.push_back(e.best);
    s.weights.push_back(s.t->weights());
    s.lr.push_back(e.train.lr);
  };
  return h;
}

}  // namespace

TEST(TrainSession, OptionsFollowTheRecipeByOneRule) {
  // keep_best only when the recipe restores the best epoch AND something validates; augment when the
  // recipe augments; every optimizer option as the recipe's.
  struct Row {
    const char* preset;
    bool restore_best;
    int n_val;
    bool keep_best, augment;
  } rows[] = {
      {"webmcu", false, 0, false, false},  {"webmcu", false, 6, false, false},    {"webmcu", true, 0, false, false},
      {"webmcu", true, 6, true, false},    {"tinyvision", false, 6, false, true}, {"tinyvision", true, 0, false, true},
      {"tinyvision", true, 6, true, true},
  };
  for (const Row& row : rows) {
    TrainRecipe r;
    ASSERT_TRUE(preset_recipe(row.preset, &r));
    r.restore_best = row.restore_best;
    const TrainOptions o = session_options(r, row.n_val);
    SCOPED_TRACE(std::string(row.preset) + (row.restore_best ? " restore_best" : "") + " n_val " +
                 std::to_string(row.n_val));
    EXPECT_EQ(o.keep_best, row.keep_best);
    EXPECT_EQ(o.augment, row.augment);
    EXPECT_EQ(o.lr, r.opt.lr);
    EXPECT_EQ(o.lanes, r.opt.lanes);
    EXPECT_EQ(o.batch_mean, r.opt.batch_mean);
    EXPECT_EQ(o.grad_clip_norm, r.opt.grad_clip_norm);
    EXPECT_EQ(o.optimizer, r.opt.optimizer);
    // the memory follows the options: the snapshot only with keep_best
    ModelDesc d;
    ModelPlan p;
    ASSERT_TRUE(preset_model(row.preset, 3, &d));
    ASSERT_TRUE(plan_model(d, &p).ok());
    const SessionMemory m = session_memory(p, r, 30, row.n_val);
    EXPECT_EQ(m.trainer.total_bytes, training_memory(p, o).total_bytes);
    EXPECT_EQ(m.trainer.snapshot_bytes > 0, row.keep_best);
    EXPECT_EQ(m.order_bytes, 30 * sizeof(int));
    EXPECT_EQ(m.total_bytes, (uint64_t)m.trainer.total_bytes + m.eval_work_bytes + m.order_bytes);
  }
}

TEST(TrainSession, TheReferenceSplitValidatesTheLastNButKeepsOneToTrain) {
  // {images of the class, last_n, validated}
  const int rows[][3] = {{0, 3, 0}, {1, 3, 0}, {2, 3, 1}, {3, 3, 2}, {4, 3, 3}, {90, 3, 3}, {5, 0, 0}, {1, 0, 0}};
  for (const auto& row : rows)
    EXPECT_EQ(reference_val_count(row[0], row[0], row[1]), row[2]) << row[0] << " " << row[1];
}

TEST(TrainSession, TheReferenceSplitTrainsOnEveryCorrection) {
  // {images of the class, of them not corrections, last_n, validated}
  const int rows[][4] = {{10, 10, 3, 3}, {10, 2, 3, 2}, {10, 0, 3, 0}, {4, 1, 3, 1}, {3, 3, 3, 2}, {3, 1, 3, 1}};
  for (const auto& row : rows)
    EXPECT_EQ(reference_val_count(row[0], row[1], row[2]), row[3]) << row[0] << " " << row[1] << " " << row[2];
}

TEST(TrainSession, KeepBestRestoresTheBestEpochsWeights) {
  Toy toy;
  TrainRecipe r = keep_best_recipe(6);
  ToySession t(toy, r);
  t.init();
  Seen seen(&t);
  seen.scramble_from_epoch = 5;  // the last two epochs start again from random weights
  const SessionResult res = session_run(&t.s, hooks_for(seen));
  ASSERT_TRUE(res.status.ok());
  ASSERT_EQ(seen.val_correct.size(), 6u);
  EXPECT_EQ(seen.eval_samples, 6 * 8);
  // the best epoch: the first with the most validation images right
  int best = 0;
  for (int e = 1; e < 6; ++e)
    if (seen.val_correct[(size_t)e] > seen.val_correct[(size_t)best]) best = e;
  ASSERT_LT(best, 4) << "the scrambled epochs were meant to validate worse";
  EXPECT_EQ(res.best_epoch, best + 1);
  EXPECT_TRUE(seen.best[(size_t)best]);
  EXPECT_TRUE(t.weights() == seen.weights[(size_t)best]) << "not the best epoch's weights";
  EXPECT_FALSE(t.weights() == seen.weights.back());
  EXPECT_EQ(res.epochs_run, 6);
  EXPECT_EQ(res.samples, 6 * 16);

  // without restore_best the last epoch's weights stay, and no snapshot is reserved
  r.restore_best = false;
  ToySession last(toy, r);
  EXPECT_EQ(last.mem.trainer.snapshot_bytes, 0u);
  last.init();
  Seen seen2(&last);
  seen2.scramble_from_epoch = 5;
  const SessionResult res2 = session_run(&last.s, hooks_for(seen2));
  EXPECT_EQ(res2.best_epoch, 0);
  EXPECT_TRUE(last.weights() == seen2.weights.back());
  EXPECT_EQ(seen2.val_correct, seen.val_correct);  // the same training: only the ending differs
}

TEST(TrainSession, StopEndsWithinAnEpochAndKeepsTheBestValidatedWeights) {
  Toy toy;
  TrainRecipe r = keep_best_recipe(5);
  r.batch_size = 4;
  ToySession t(toy, r);
  t.init();
  Seen seen(&t);
  seen.stop_after_batches = 4 + 2;  // 16 training images in batches of 4: two batches into epoch 2
  const SessionResult res = session_run(&t.s, hooks_for(seen));
  EXPECT_TRUE(res.stopped);
  EXPECT_EQ(res.epochs_run, 2);
  EXPECT_EQ(res.samples, 16 + 8);
  EXPECT_EQ(seen.batches, 6);
  ASSERT_EQ(seen.val_correct.size(), 1u);  // the stopped epoch is not evaluated
  EXPECT_EQ(res.best_epoch, 1);
  EXPECT_TRUE(t.weights() == seen.weights[0]);

  // a stop before the first epoch trains nothing and leaves the weights as they were
  ToySession idle(toy, r);
  idle.init();
  const std::vector<float> before = idle.weights();
  Seen none(&idle);
  none.stop.store(true);
  const SessionResult r0 = session_run(&idle.s, hooks_for(none));
  EXPECT_TRUE(r0.stopped);
  EXPECT_EQ(r0.epochs_run, 0);
  EXPECT_EQ(r0.samples, 0);
  EXPECT_TRUE(idle.weights() == before);
}

// Runs each lane on its own thread; lane 1 of the 7th batch sets the stop flag before its samples, as
// another core or an interrupt would, while lane 0 trains.
struct StoppingRunner {
  std::atomic<bool>* stop;
  int batches = 0;
  static void run(void* ctx, int lanes, LaneFn fn, void* arg) {
    StoppingRunner& r = *(StoppingRunner*)ctx;
    const bool stop_now = ++r.batches == 7;
    std::vector<std::thread> threads;
    for (int l = 0; l < lanes; ++l)
      threads.emplace_back([&, l] {
        if (stop_now && l == 1) r.stop->store(true);
        fn(arg, l);
      });
    for (std::thread& t : threads) t.join();
  }
};

TEST(TrainSession, AStopFromAnotherThreadDropsTheBatchItCut) {
  Toy toy;
  TrainRecipe r = keep_best_recipe(5);
  r.batch_size = 4;
  r.restore_best = false;
  ToySession t(toy, r);
  t.init();
  Seen seen(&t);
  StoppingRunner runner{&seen.stop};
  LaneRunner lanes;
  lanes.ctx = &runner;
  lanes.run = StoppingRunner::run;
  SessionHooks h = hooks_for(seen);
  h.runner = &lanes;
  const SessionResult res = session_run(&t.s, h);
  EXPECT_TRUE(res.stopped);
  EXPECT_EQ(res.epochs_run, 2);
  EXPECT_EQ(seen.val_correct.size(), 1u);
  // batches 1-4 (epoch 1) and 5-6 stepped; the 7th was cut (some of its samples may have run) and not
  // stepped: the optimizer took 6 steps
  EXPECT_EQ(t.s.trainer.step, 6u);
  EXPECT_GE(res.samples, 16 + 8);
  EXPECT_LE(res.samples, 16 + 8 + 4);
}

TEST(TrainSession, EachEpochTrainsAtTheSchedulesRateSetInTheOpen) {
  Toy toy;
  TrainRecipe r = tvtest::toy_recipe();
  r.epochs = 5;
  r.cosine = true;
  r.warmup_epochs = 1;
  r.lr_min_factor = 0.1f;
  ToySession t(toy, r);
  t.init();
  Seen seen(&t);
  session_run(&t.s, hooks_for(seen));
  ASSERT_EQ(seen.lr.size(), 5u);
  for (int e = 0; e < 5; ++e) EXPECT_EQ(seen.lr[(size_t)e], recipe_lr(r, e)) << e;
  EXPECT_EQ(t.s.trainer.opt.lr, recipe_lr(r, 4));
  // train_epoch itself trains at the trainer's rate and leaves it alone
  const float lr = t.s.trainer.opt.lr = 1e-4f;
  EpochJob job;
  job.trainer = &t.s.trainer;
  job.recipe = &t.recipe;
  job.source = tvtest::toy_source(t.toy);
  job.train = t.train.data();
  job.n = (int)t.train.size();
  job.order = t.order.data();
  job.epoch = 0;
  EXPECT_EQ(train_epoch(job).lr, lr);
  EXPECT_EQ(t.s.trainer.opt.lr, lr);
}

TEST(TrainSession, WeightsThatOverflowAreRefusedBeforeAndDuringTraining) {
  Toy toy;
  TrainRecipe r = keep_best_recipe(3);
  ToySession t(toy, r);
  t.init();
  EXPECT_TRUE(session_check_start(&t.s).ok());
  const std::vector<float> good = t.weights();
  for (size_t i = 0; i < t.toy.plan.param_count; ++i) t.s.trainer.params[i] = 3e38f;
  const Status st = session_check_start(&t.s);
  EXPECT_EQ(st.code, StatusCode::NonFiniteActivation);

  // weights that overflow after the first epoch: evaluation ends the session naming the image, and the
  // first epoch's weights come back
  std::memcpy(t.s.trainer.params, good.data(), good.size() * sizeof(float));
  Seen seen(&t);
  SessionHooks h = hooks_for(seen);
  h.on_epoch_begin = [](void* ctx, int epoch, int) {
    Seen& s = *(Seen*)ctx;
    if (epoch == 2)
      for (size_t i = 0; i < s.t->toy.plan.param_count; ++i) s.t->s.trainer.params[i] = 3e38f;
  };
  const SessionResult res = session_run(&t.s, h);
  EXPECT_EQ(res.status.code, StatusCode::NonFiniteActivation);
  EXPECT_EQ(res.failed_index, t.val[0]);
  EXPECT_EQ(seen.val_correct.size(), 2u);  // epoch 2 reported, epoch 3 never ran
  EXPECT_EQ(res.best_epoch, 1);
  EXPECT_TRUE(t.weights() == seen.weights[0]);
}

TEST(TrainSession, EvaluatesFloatFeaturesAsTheImagesTheyCameFrom) {
  Toy toy;
  // A suffix plan's source delivers float inputs: evaluation runs them (infer_f32); a session binds
  // them for training too (trained through trainer_sample_f32: feature_source_test.cpp).
  ToySession t(toy, tvtest::toy_recipe());
  t.init();
  struct Features {
    Toy* toy;
    std::vector<float> x;
  } f{&t.toy, std::vector<float>(t.toy.plan.input.size())};
  SampleSource src;
  src.ctx = &f;
  src.label = [](void* ctx, int i) { return ((Features*)ctx)->toy->labels[(size_t)i]; };
  src.features = [](void* ctx, int index, int, int epoch) -> const float* {
    Features& f = *(Features*)ctx;
    EXPECT_EQ(epoch, -1);
    const float scale = f.toy->plan.desc.input.scale, offset = f.toy->plan.desc.input.offset;
    const uint8_t* img = f.toy->image(index);
    for (size_t i = 0; i < f.x.size(); ++i) f.x[i] = (float)img[i] * scale + offset;
    return f.x.data();
  };
  int cm_img[4] = {0}, cm_f32[4] = {0};
  float probs[2];
  const int a = evaluate(t.s.eval, tvtest::toy_source(t.toy), t.val.data(), (int)t.val.size(), cm_img, probs);
  const int b = evaluate(t.s.eval, src, t.val.data(), (int)t.val.size(), cm_f32, probs);
  EXPECT_EQ(a, b);
  EXPECT_EQ(0, std::memcmp(cm_img, cm_f32, sizeof cm_img));

  SessionSetup u = t.setup();
  u.source = src;
  TrainSession s2;
  EXPECT_TRUE(session_init(&s2, u).ok());
  u.source.image = tvtest::toy_image;  // both: which one?
  EXPECT_EQ(session_init(&s2, u).code, StatusCode::InvalidArgument);
  u = t.setup();
  u.order = nullptr;
  EXPECT_EQ(session_init(&s2, u).code, StatusCode::InvalidArgument);
  u = t.setup();
  u.n_train = 0;
  EXPECT_EQ(session_init(&s2, u).code, StatusCode::InvalidArgument);
  u = t.setup();
  u.n_val = -1;
  EXPECT_EQ(session_init(&s2, u).code, StatusCode::InvalidArgument);
  u = t.setup();
  u.train_arena_bytes = t.mem.trainer.total_bytes - 16;
  EXPECT_EQ(session_init(&s2, u).code, StatusCode::ArenaTooSmall);
}

namespace {

// Toy's two classes (the old ones) and a third whose top half is bright (the new one), on Toy's network
// with three outputs.
struct Toy3 : Toy {
  static constexpr int kNew = 8;
  Toy3() {
    desc.num_classes = 3;
    EXPECT_TRUE(plan_model(desc, &plan).ok());
    Rng r(5);
    for (int n = 0; n < kNew; ++n) {
      labels.push_back(2);
      for (int y = 0; y < kS; ++y)
        for (int x = 0; x < kS; ++x) images.push_back((uint8_t)((y < kS / 2 ? 180 : 40) + r.below(40)));
    }
  }
  int count() const { return (int)labels.size(); }
};

// A session on toy's samples `train` from the weights `start` with recipe r: the trained weights, and in
// *soft (when not null) its soft-target table. reversed: the lanes run last to first.
std::vector<float> run_toy3(Toy3& toy, const TrainRecipe& r, const std::vector<int>& train, const std::vector<int>& val,
                            const std::vector<float>& start, std::vector<float>* soft, bool reversed = false) {
  ToySession t(toy, r, train, val);
  EXPECT_TRUE(session_init(&t.s, t.setup()).ok());
  std::memcpy(t.s.trainer.params, start.data(), start.size() * sizeof(float));
  LaneRunner backwards;
  backwards.run = [](void*, int lanes, LaneFn fn, void* arg) {
    for (int l = lanes - 1; l >= 0; --l) fn(arg, l);
  };
  SessionHooks h;
  if (reversed) h.runner = &backwards;
  EXPECT_TRUE(session_run(&t.s, h).status.ok());
  if (soft) *soft = t.soft;
  return t.weights();
}

}  // namespace

TEST(TrainSession, DistillationKeepsTheStartingModelsSoftTargetsOnTheOldClassesPhotos) {
  Toy3 toy;
  TrainRecipe off = tvtest::toy_recipe();
  off.epochs = 4;
  TrainRecipe on = off;
  EXPECT_FALSE(distill_new_classes(&on, 3, 3));  // nothing added: off
  EXPECT_FALSE(distill_new_classes(&on, 1, 3));  // one old class: its softmax is 1 whatever the logits
  EXPECT_EQ(on.opt.distill_weight, 0.f);
  ASSERT_TRUE(distill_new_classes(&on, 2, 3));
  EXPECT_EQ(on.opt.distill_weight, kDistillWeight);
  EXPECT_EQ(on.opt.distill_temperature, kDistillTemperature);
  EXPECT_EQ(distill_outputs(toy.plan, on.opt), 2);
  EXPECT_EQ(distill_outputs(toy.plan, off.opt), 0);

  // the old classes' first 16 photos and 6 of the new class train, the rest validates
  std::vector<int> train, val;
  for (int i = 0; i < toy.count(); ++i) (i < 16 || (i >= Toy::kN && i < Toy::kN + 6) ? train : val).push_back(i);
  // memory: one row of the old classes' outputs per sample index, nothing in the trainer's arena
  const SessionMemory m_off = session_memory(toy.plan, off, (int)train.size(), (int)val.size(), false, toy.count());
  const SessionMemory m_on = session_memory(toy.plan, on, (int)train.size(), (int)val.size(), false, toy.count());
  EXPECT_EQ(m_off.soft_target_bytes, 0u);
  EXPECT_EQ(m_on.soft_target_bytes, (size_t)toy.count() * 2 * sizeof(float));
  EXPECT_EQ(m_on.trainer.total_bytes, m_off.trainer.total_bytes);
  EXPECT_EQ(m_on.total_bytes, m_off.total_bytes + m_on.soft_target_bytes);

  std::vector<float> start(toy.plan.param_count);
  he_init(toy.plan, start.data(), 3);
  std::vector<float> soft, soft_again;
  const std::vector<float> plain = run_toy3(toy, off, train, val, start, nullptr);
  const std::vector<float> distilled = run_toy3(toy, on, train, val, start, &soft);
  EXPECT_FALSE(plain == distilled);
  EXPECT_TRUE(distilled == run_toy3(toy, on, train, val, start, &soft_again, true)) << "the lanes' order matters";

  // each old class's training photo: softmax(the starting weights' first two logits / T)
  Arena work(inference_memory(toy.plan).work_bytes);
  Inference inf;
  ASSERT_TRUE(inference_init(&inf, &toy.plan, start.data(), work.p, inference_memory(toy.plan).work_bytes).ok());
  for (int i : train) {
    if (toy.labels[(size_t)i] == 2) continue;
    float logits[3], want[2];
    ASSERT_TRUE(infer_u8(inf, toy.image(i), nullptr, logits).ok());
    for (int c = 0; c < 2; ++c) want[c] = logits[c] * (1.0f / kDistillTemperature);
    softmax(want, 2, want);
    EXPECT_FLOAT_EQ(soft[(size_t)i * 2], want[0]) << i;
    EXPECT_FLOAT_EQ(soft[(size_t)i * 2 + 1], want[1]) << i;
  }
  // the new class's photos are not distilled: trained alone, the weights are those without distillation
  const std::vector<int> only_new(train.end() - 6, train.end());
  EXPECT_TRUE(run_toy3(toy, on, only_new, val, start, &soft) == run_toy3(toy, off, only_new, val, start, nullptr));

  // refusals: no table, or a sample index beyond it
  ToySession t(toy, on, train, val);
  SessionSetup u = t.setup();
  EXPECT_TRUE(session_init(&t.s, u).ok());
  u.soft_targets = nullptr;
  EXPECT_EQ(session_init(&t.s, u).code, StatusCode::InvalidArgument);
  u = t.setup();
  u.n_indices = train.back();
  EXPECT_EQ(session_init(&t.s, u).code, StatusCode::InvalidArgument);
}
