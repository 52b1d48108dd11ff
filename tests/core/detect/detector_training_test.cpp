// A detector trained end to end on the core (tv/train/train_session.h with a detect plan): synthetic photos
// of bright squares and crosses on a noisy background, boxes as labels, per-cell targets following the flip
// augmentation, keep-best by the validation F1 of centroids; the same weights whatever runs the lanes.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/toy_training.h"
#include "tv/detect/grid.h"
#include "tv/rng.h"
#include "tv/train/presets.h"
#include "tv/train/train_loop.h"
#include "tv/train/train_session.h"

namespace {

constexpr int kSide = 48;

// Photos of 0-3 objects: class 0 a filled 9x9 square, class 1 a 9x9 cross of 3-pixel strokes.
struct ShapesPhotos {
  std::vector<uint8_t> pixels;
  std::vector<std::vector<tv::DetectBox>> boxes;
  int count() const { return (int)boxes.size(); }
  const uint8_t* image(int i) const { return pixels.data() + (size_t)i * kSide * kSide; }
};

ShapesPhotos shapes_photos(int n, uint64_t seed) {
  ShapesPhotos p;
  tv::Rng rng(seed);
  p.pixels.resize((size_t)n * kSide * kSide);
  p.boxes.resize((size_t)n);
  for (int i = 0; i < n; ++i) {
    uint8_t* img = p.pixels.data() + (size_t)i * kSide * kSide;
    for (int k = 0; k < kSide * kSide; ++k) img[k] = (uint8_t)(30 + rng.below(40));
    const int objects = (int)rng.below(4);
    for (int o = 0; o < objects; ++o) {
      const int label = (int)rng.below(2);
      int cx = 0, cy = 0;
      bool clear = false;
      for (int tries = 0; tries < 20 && !clear; ++tries) {  // centres at least 12 pixels apart
        cx = 5 + (int)rng.below(kSide - 10);
        cy = 5 + (int)rng.below(kSide - 10);
        clear = true;
        for (const tv::DetectBox& b : p.boxes[(size_t)i]) {
          const float dx = b.cx * kSide - (float)cx, dy = b.cy * kSide - (float)cy;
          clear = clear && dx * dx + dy * dy >= 144.f;
        }
      }
      if (!clear) continue;
      for (int y = -4; y <= 4; ++y)
        for (int x = -4; x <= 4; ++x)
          if (label == 0 || (x >= -1 && x <= 1) || (y >= -1 && y <= 1)) img[(cy + y) * kSide + cx + x] = 230;
      p.boxes[(size_t)i].push_back(
          {label, ((float)cx + 0.5f) / kSide, ((float)cy + 0.5f) / kSide, 9.f / kSide, 9.f / kSide});
    }
  }
  return p;
}

const uint8_t* photo_image(void* ctx, int i) {
  return ((const ShapesPhotos*)ctx)->image(i);
}
int photo_boxes(void* ctx, int i, const tv::DetectBox** out) {
  const auto& b = ((const ShapesPhotos*)ctx)->boxes[(size_t)i];
  *out = b.data();
  return (int)b.size();
}

// Lanes run in reverse order: the weights must not change.
void reversed_lanes(void*, int lanes, tv::LaneFn fn, void* arg) {
  for (int l = lanes - 1; l >= 0; --l) fn(arg, l);
}

struct DetectRun {
  std::vector<float> weights;
  std::vector<tv::DetectCounts> val;  // per epoch
  int best_epoch = 0;
};

// The detect preset at 48x48x1 for 2 object classes, its recipe, and a session's memory and setup over
// photos: train and val are photo indices (the setup points into this object).
struct DetectSession {
  tv::ModelPlan plan;
  tv::TrainRecipe recipe;
  std::vector<int> train, val, order, scratch;
  std::vector<float> probs;
  std::unique_ptr<tvtest::Arena> train_arena, eval_arena;
  tv::SessionMemory mem;
  DetectSession(int photos, int n_train) {
    tv::DataShape data;
    data.height = data.width = kSide;
    data.channels = 1;
    data.images = photos;
    tv::ModelDesc desc;
    EXPECT_TRUE(tv::preset_model_for("detect", 3, data, &desc));
    EXPECT_TRUE(tv::plan_model(desc, &plan).ok());
    EXPECT_TRUE(tv::preset_recipe_for("detect", data, &recipe));
    for (int i = 0; i < photos; ++i) (i < n_train ? train : val).push_back(i);
    mem = tv::session_memory(plan, recipe, (int)train.size(), (int)val.size());
    train_arena = std::make_unique<tvtest::Arena>(mem.trainer.total_bytes);
    eval_arena = std::make_unique<tvtest::Arena>(mem.eval_work_bytes);
    order.resize(train.size());
    scratch.resize(mem.detect_scratch_bytes / sizeof(int));
    probs.resize(tv::plan_outputs(plan));
  }
  tv::SessionSetup setup(const ShapesPhotos& photos) {
    tv::SessionSetup u;
    u.plan = &plan;
    u.recipe = &recipe;
    u.source.ctx = (void*)&photos;
    u.source.image = photo_image;
    u.source.boxes = photo_boxes;
    u.train = train.data();
    u.n_train = (int)train.size();
    u.val = val.data();
    u.n_val = (int)val.size();
    u.seed = 5;
    u.train_arena = train_arena->p;
    u.train_arena_bytes = mem.trainer.total_bytes;
    u.eval_arena = eval_arena->p;
    u.eval_arena_bytes = mem.eval_work_bytes;
    u.order = order.data();
    u.probs = probs.data();
    u.detect_scratch = scratch.data();
    return u;
  }
};

DetectRun train_detector(const ShapesPhotos& photos, int n_train, int epochs, const tv::LaneRunner* runner) {
  DetectSession d(photos.count(), n_train);
  d.recipe.epochs = epochs;
  EXPECT_GT(d.mem.detect_scratch_bytes, 0u);
  tv::TrainSession s;
  EXPECT_TRUE(tv::session_init(&s, d.setup(photos)).ok());
  tv::he_init(d.plan, s.trainer.params, 9);
  DetectRun run;
  tv::SessionHooks h;
  h.ctx = &run;
  h.runner = runner;
  h.on_epoch = [](void* ctx, const tv::EpochReport& e) { ((DetectRun*)ctx)->val.push_back(e.val_detect); };
  const tv::SessionResult res = tv::session_run(&s, h);
  EXPECT_TRUE(res.status.ok());
  run.best_epoch = res.best_epoch;
  run.weights.assign(s.trainer.params, s.trainer.params + d.plan.param_count);
  return run;
}

double f1(const tv::DetectCounts& c) {
  return c.tp + c.fp + c.fn ? 2.0 * c.tp / (2.0 * c.tp + c.fp + c.fn) : 1.0;
}

TEST(DetectorTraining, LearnsWhereTheObjectsAreAndKeepsTheBestF1) {
  const ShapesPhotos photos = shapes_photos(96, 3);
  const DetectRun a = train_detector(photos, 72, 20, nullptr);
  ASSERT_EQ(a.val.size(), 20u);
  const tv::DetectCounts first = a.val.front(), best = a.val[(size_t)a.best_epoch - 1];
  for (const tv::DetectCounts& c : a.val) EXPECT_FALSE(tv::f1_better(c, best));  // keep-best took the best F1
  EXPECT_GE(f1(best), 0.85) << "tp " << best.tp << " fp " << best.fp << " fn " << best.fn;
  EXPECT_GT(f1(best), f1(first));
  testing::Test::RecordProperty("best_f1", std::to_string(f1(best)));
  std::printf("best epoch %d: tp %d fp %d fn %d, F1 %.3f (first epoch %.3f)\n", a.best_epoch, best.tp, best.fp, best.fn,
              f1(best), f1(first));
}

TEST(DetectorTraining, TheSameBitsWhoeverRunsTheLanes) {
  const ShapesPhotos photos = shapes_photos(24, 4);
  tv::LaneRunner reverse;
  reverse.run = reversed_lanes;
  const DetectRun a = train_detector(photos, 16, 3, nullptr), b = train_detector(photos, 16, 3, &reverse);
  EXPECT_EQ(a.weights, b.weights);
  EXPECT_EQ(a.val.size(), 3u);
}

TEST(DetectorTraining, TheSessionRefusesWhatADetectorCannotTrainOn) {
  const ShapesPhotos photos = shapes_photos(4, 1);
  DetectSession d(4, 2);
  tv::SessionSetup u = d.setup(photos);
  tv::TrainSession s;
  u.source.boxes = nullptr;
  EXPECT_EQ(tv::session_init(&s, u).code, tv::StatusCode::InvalidArgument);  // no boxes
  u.source.boxes = photo_boxes;
  u.detect_scratch = nullptr;
  EXPECT_EQ(tv::session_init(&s, u).code, tv::StatusCode::InvalidArgument);  // no evaluation scratch
  u.detect_scratch = d.scratch.data();
  d.recipe.aug_shift = 2;
  EXPECT_EQ(tv::session_init(&s, u).code, tv::StatusCode::BadParameter);  // a shift the targets cannot follow
  d.recipe.aug_shift = 0;
  EXPECT_TRUE(tv::session_init(&s, u).ok());
}

TEST(DetectorTraining, MatchingCountsRightFalseAndMissed) {
  tv::GridObject objs[3];
  objs[0] = {0, 0.6f, 10.f, 10.f, 1};  // in box 0
  objs[1] = {0, 0.9f, 11.f, 9.f, 1};   // in box 0 too, more probable: takes it
  objs[2] = {1, 0.7f, 40.f, 40.f, 1};  // no box of class 1 there
  const tv::DetectBox boxes[2] = {{0, 10.f / 48, 10.f / 48, 8.f / 48, 8.f / 48}, {1, 0.2f, 0.8f, 0.1f, 0.1f}};
  int box_of[3];
  uint8_t found[2];
  const tv::DetectCounts c = tv::match_objects(objs, 3, boxes, 2, 48, 48, box_of, found);
  EXPECT_EQ(c.tp, 1);
  EXPECT_EQ(c.fp, 2);
  EXPECT_EQ(c.fn, 1);
  EXPECT_EQ(box_of[1], 0);
  EXPECT_EQ(box_of[0], -1);
  EXPECT_EQ(found[0], 1);
  EXPECT_EQ(found[1], 0);
  tv::DetectCounts perfect, none, half;
  perfect.tp = 3;
  half.tp = 1;
  half.fn = 2;
  EXPECT_TRUE(tv::f1_better(perfect, half));
  EXPECT_FALSE(tv::f1_better(half, perfect));
  EXPECT_FALSE(tv::f1_better(none, perfect));  // both 1
  EXPECT_FALSE(tv::f1_better(perfect, none));
}

}  // namespace

// The targets move with the pixels: for many seeded draws of flip and whole-cell shifts, each object's
// square of pixels lands in the cell its moved target names, and an object pushed out of the photo leaves
// no target.
TEST(DetectorTraining, AugmentationMovesTheTargetsWithThePixels) {
  const int side = 48, cells = side / tv::kGridStride;
  tv::TrainRecipe r;
  r.aug_flip = true;
  r.aug_shift_cells = 1;
  // two squares filling one cell each: class 0 at cell (2, 1), class 1 at the edge cell (0, 5)
  struct Square {
    int row, col, label;
  };
  const Square squares[] = {{2, 1, 0}, {0, 5, 1}};
  std::vector<uint8_t> src((size_t)side * side, 0);
  std::vector<tv::DetectBox> boxes;
  for (const Square& q : squares) {
    for (int y = 0; y < tv::kGridStride; ++y)
      for (int x = 0; x < tv::kGridStride; ++x)
        src[(size_t)(q.row * tv::kGridStride + y) * side + q.col * tv::kGridStride + x] =
            (uint8_t)(100 + 100 * q.label);
    boxes.push_back({q.label, (q.col + 0.5f) / cells, (q.row + 0.5f) / cells, 1.f / cells, 1.f / cells});
  }
  int flipped = 0, shifted = 0, pushed_out = 0;
  for (int index = 0; index < 64; ++index) {
    std::vector<uint8_t> dst(src.size());
    const tv::Augmented a = tv::augment_image(r, src.data(), dst.data(), side, side, 1, 3, 0, index);
    ASSERT_EQ(a.dx % tv::kGridStride, 0);
    ASSERT_EQ(a.dy % tv::kGridStride, 0);
    flipped += a.flipped;
    shifted += a.dx != 0 || a.dy != 0;
    std::vector<uint8_t> t((size_t)cells * cells);
    tv::grid_targets(boxes.data(), (int)boxes.size(), cells, cells, t.data());
    tv::augment_targets(a, t.data(), cells, cells);
    for (const Square& q : squares) {
      const uint8_t value = (uint8_t)(100 + 100 * q.label);
      const auto whole = [&](int c) {  // every pixel of cell c is the square's
        for (int y = 0; y < tv::kGridStride; ++y)
          for (int x = 0; x < tv::kGridStride; ++x)
            if (dst[(size_t)((c / cells) * tv::kGridStride + y) * side + (c % cells) * tv::kGridStride + x] != value)
              return false;
        return true;
      };
      int targets = 0;
      for (int c = 0; c < cells * cells; ++c) targets += t[(size_t)c] == q.label + 1;
      // the square was inside the photo after the shift when its moved cell is inside the grid
      const int col = a.flipped ? cells - 1 - q.col : q.col;
      const int moved_col = col - (a.flipped ? -a.dx : a.dx) / tv::kGridStride,
                moved_row = q.row - a.dy / tv::kGridStride;
      const bool inside = moved_col >= 0 && moved_col < cells && moved_row >= 0 && moved_row < cells;
      if (!inside) {
        ++pushed_out;
        EXPECT_EQ(targets, 0) << "index " << index;
        continue;
      }
      ASSERT_EQ(targets, 1) << "index " << index;
      const int cell = moved_row * cells + moved_col;
      EXPECT_TRUE(whole(cell)) << "index " << index;  // the pixels went where the target says
      EXPECT_EQ(t[(size_t)cell], q.label + 1) << "index " << index;
    }
  }
  EXPECT_GT(flipped, 10);
  EXPECT_GT(shifted, 30);
  EXPECT_GT(pushed_out, 3);  // the edge square leaves the photo in some draws
}
