#include "tv/train/train_loop.h"

#include <math.h>
#include <string.h>

#include "tv/float_math.h"
#include "tv/ops/simd.h"
#include "tv/rng.h"

namespace tv {

float recipe_lr(const TrainRecipe& r, int epoch) {
  const float base = r.opt.lr;
  if (r.warmup_epochs > 0 && epoch < r.warmup_epochs) return base * (float)(epoch + 1) / (float)(r.warmup_epochs + 1);
  if (!r.cosine) return base;
  const int span = r.epochs - r.warmup_epochs;
  if (span <= 1) return base;
  const float t = (float)(epoch - r.warmup_epochs) / (float)(span - 1);
  const float lo = base * r.lr_min_factor;
  return lo + 0.5f * (base - lo) * (1.0f + math::cospi(t));
}

bool recipe_augments(const TrainRecipe& r) {
  return r.aug_flip || r.aug_shift > 0 || r.aug_shift_cells > 0 || r.aug_brightness > 0.f;
}

// One row mirrored and shifted by dx (edges replicated); C: the channels when known (0: c).
template <int C>
static inline void flip_row(const uint8_t* s, uint8_t* d, int w, int dx, int c_runtime) {
  const int c = C ? C : c_runtime;
  for (int x = 0; x < w; ++x) {
    int sx = w - 1 - x + dx;
    sx = sx < 0 ? 0 : (sx >= w ? w - 1 : sx);
    for (int k = 0; k < c; ++k) d[(size_t)x * c + k] = s[(size_t)sx * c + k];
  }
}

// Brightness: every byte v becomes (v * gain + 128) >> 8, capped at 255 (the AVX2 clone does many
// bytes per instruction).
TV_TARGET_CLONES static void apply_gain(uint8_t* p, size_t n, int gain) {
  for (size_t i = 0; i < n; ++i) {
    const int v = (p[i] * gain + 128) >> 8;
    p[i] = (uint8_t)(v > 255 ? 255 : v);
  }
}

Augmented augment_image(const TrainRecipe& r, const uint8_t* src, uint8_t* dst, int h, int w, int c, uint64_t seed,
                        int epoch, int index) {
  Rng rng(mix_seed(seed, (uint64_t)epoch + 1, (uint64_t)index + 1));
  const bool flip = r.aug_flip && (rng.next() & 1);
  int dx = 0, dy = 0;
  if (r.aug_shift > 0) {
    dx = (int)rng.below((uint32_t)(2 * r.aug_shift + 1)) - r.aug_shift;
    dy = (int)rng.below((uint32_t)(2 * r.aug_shift + 1)) - r.aug_shift;
  }
  if (r.aug_shift_cells > 0) {  // whole cells: the targets move by whole cells too
    dx = ((int)rng.below((uint32_t)(2 * r.aug_shift_cells + 1)) - r.aug_shift_cells) * kGridStride;
    dy = ((int)rng.below((uint32_t)(2 * r.aug_shift_cells + 1)) - r.aug_shift_cells) * kGridStride;
  }
  // Brightness as a fixed-point gain so the result is exact integer arithmetic.
  int gain = 256;
  if (r.aug_brightness > 0.f) gain = (int)lroundf(256.f * (1.f + r.aug_brightness * (2.f * rng.uniform() - 1.f)));
  // Each row: the shifted (and flipped) pixels, edges replicated; then the gain over the whole image.
  const size_t row = (size_t)w * c;
  for (int y = 0; y < h; ++y) {
    int sy = y + dy;
    sy = sy < 0 ? 0 : (sy >= h ? h - 1 : sy);
    const uint8_t* s = src + (size_t)sy * row;
    uint8_t* d = dst + (size_t)y * row;
    if (!flip) {  // columns [lo, hi) read the run of source columns from lo + dx; the others an edge
      int lo = dx < 0 ? -dx : 0, hi = dx > 0 ? w - dx : w;
      if (lo > w) lo = w;
      if (hi < lo) hi = lo;
      for (int x = 0; x < lo; ++x) memcpy(d + (size_t)x * c, s, (size_t)c);
      memcpy(d + (size_t)lo * c, s + (size_t)(lo + dx) * c, (size_t)(hi - lo) * c);
      for (int x = hi; x < w; ++x) memcpy(d + (size_t)x * c, s + (size_t)(w - 1) * c, (size_t)c);
    } else if (c == 3) {
      flip_row<3>(s, d, w, dx, c);
    } else if (c == 1) {
      flip_row<1>(s, d, w, dx, c);
    } else {
      flip_row<0>(s, d, w, dx, c);
    }
  }
  if (gain != 256) apply_gain(dst, (size_t)h * row, gain);  // (v * 256 + 128) >> 8 == v
  Augmented a;
  a.flipped = flip;
  a.dx = dx;
  a.dy = dy;
  return a;
}

void augment_targets(const Augmented& a, uint8_t* targets, int grid_h, int grid_w) {
  if (a.flipped)
    for (int y = 0; y < grid_h; ++y)
      for (int x = 0, z = grid_w - 1; x < z; ++x, --z) {
        const uint8_t v = targets[y * grid_w + x];
        targets[y * grid_w + x] = targets[y * grid_w + z];
        targets[y * grid_w + z] = v;
      }
  // A flipped row reads source column w - 1 - x + dx: in the mirrored grid that is a shift of -dx.
  const int cx = (a.flipped ? -a.dx : a.dx) / kGridStride, cy = a.dy / kGridStride;
  if (cx == 0 && cy == 0) return;
  // Cell (y, x) takes cell (y + cy, x + cx): walk in the order that reads each cell before it is written.
  const int ys = cy > 0 ? 0 : grid_h - 1, ye = cy > 0 ? grid_h : -1, yi = cy > 0 ? 1 : -1;
  const int xs = cx > 0 ? 0 : grid_w - 1, xe = cx > 0 ? grid_w : -1, xi = cx > 0 ? 1 : -1;
  for (int y = ys; y != ye; y += yi)
    for (int x = xs; x != xe; x += xi) {
      const int sy = y + cy, sx = x + cx;
      targets[y * grid_w + x] = sy >= 0 && sy < grid_h && sx >= 0 && sx < grid_w ? targets[sy * grid_w + sx] : 0;
    }
}

namespace {

struct BatchWork {
  Trainer* tr;
  const TrainRecipe* recipe;
  const SampleSource* src;
  const int* idx;  // the batch's samples, in batch order
  int n;
  int epoch;
  uint64_t seed;
  bool augment;
  const std::atomic<bool>* stop;
  const float* soft_targets;  // EpochJob::soft_targets
  int distilled;              // their floats per sample (0: no distillation)
};

// The sample's soft targets, or null when it is not distilled.
const float* soft_target_of(const BatchWork& b, int index, int label) {
  if (!b.soft_targets || b.distilled <= 0 || label < 0 || label >= b.tr->opt.distill_old_classes) return nullptr;
  return b.soft_targets + (size_t)index * (size_t)b.distilled;
}

// A detector's sample: its boxes' cell targets in the lane's buffer, moved as the image was. Null for a
// classifier.
const uint8_t* cell_targets_of(const BatchWork& b, int lane, int index, const Augmented& aug) {
  uint8_t* t = b.tr->lanes[lane].targets;
  if (!t || !b.src->boxes) return nullptr;
  const ModelPlan& plan = *b.tr->plan;
  const Shape& grid = plan.layers[plan.num_layers - 1].out;
  const DetectBox* boxes = nullptr;
  const int n = b.src->boxes(b.src->ctx, index, &boxes);
  grid_targets(boxes, n, grid.h, grid.w, t);
  augment_targets(aug, t, grid.h, grid.w);
  return t;
}

bool stop_requested(const std::atomic<bool>* stop) {
  return stop && stop->load(std::memory_order_relaxed);
}

void run_lane(void* arg, int lane) {
  BatchWork& b = *(BatchWork*)arg;
  const ModelPlan& plan = *b.tr->plan;
  const int lanes = b.tr->opt.lanes;
  for (int j = lane; j < b.n; j += lanes) {
    if (stop_requested(b.stop)) return;
    const int index = b.idx[j];
    int pred;
    const int label = b.src->label ? b.src->label(b.src->ctx, index) : 0;  // a detector may have none
    const float* soft = soft_target_of(b, index, label);
    if (b.src->features) {  // float features (a suffix plan): the source augments, when it does
      trainer_sample_f32(b.tr, lane, b.src->features(b.src->ctx, index, lane, b.epoch), label, &pred, soft);
      continue;
    }
    const uint8_t* img = b.src->image(b.src->ctx, index);
    uint8_t* dst = b.tr->lanes[lane].aug;
    Augmented aug;
    if (b.augment && dst) {
      aug = augment_image(*b.recipe, img, dst, plan.input.h, plan.input.w, plan.input.c, b.seed, b.epoch, index);
      img = dst;
    }
    trainer_sample(b.tr, lane, img, label, &pred, soft, cell_targets_of(b, lane, index, aug));
  }
}

}  // namespace

EpochStats train_epoch(const EpochJob& job) {
  EpochStats es;
  Trainer* tr = job.trainer;
  const TrainRecipe& r = *job.recipe;
  for (int i = 0; i < job.n; ++i) job.order[i] = job.train[i];
  Rng rng(mix_seed(job.seed, 0x5eedULL, (uint64_t)job.epoch));
  shuffle(job.order, job.n, rng);
  es.lr = tr->opt.lr;
  const int bs = r.batch_size > 0 ? r.batch_size : 1;
  BatchWork work;
  work.tr = tr;
  work.recipe = &r;
  work.src = &job.source;
  work.epoch = job.epoch;
  work.seed = job.seed;
  work.augment = recipe_augments(r);
  work.stop = job.stop;
  work.soft_targets = job.soft_targets;
  work.distilled = distill_outputs(*tr->plan, tr->opt);
  for (int start = 0; start < job.n; start += bs) {
    work.idx = job.order + start;
    work.n = job.n - start < bs ? job.n - start : bs;
    trainer_begin_batch(tr);
    if (job.runner && job.runner->run)
      job.runner->run(job.runner->ctx, tr->opt.lanes, run_lane, &work);
    else
      for (int l = 0; l < tr->opt.lanes; ++l) run_lane(&work, l);
    BatchStats bst;
    for (int l = 0; l < tr->opt.lanes; ++l) {
      bst.loss_sum += tr->lanes[l].loss_sum;
      bst.correct += tr->lanes[l].correct;
      bst.seen += tr->lanes[l].seen;
    }
    if (stop_requested(job.stop)) {
      bst.stopped = true;
      es.stopped = true;
    } else {
      bst.stepped = trainer_end_batch(tr);
      if (!bst.stepped) es.skipped_batches++;
    }
    es.loss_sum += bst.loss_sum;
    es.correct += bst.correct;
    es.seen += bst.seen;
    if (job.on_batch) job.on_batch(job.on_batch_ctx, start + work.n, job.n, bst);
    if (es.stopped) break;
  }
  return es;
}

int evaluate(const Inference& inf, const SampleSource& src, const int* idx, int n, int* confusion, float* probs,
             Status* status, const EvalObserver* observer) {
  const int k = inf.plan->desc.num_classes;
  int correct = 0;
  if (status) *status = ok_status();
  for (int i = 0; i < n; ++i) {
    const Status st = src.features ? infer_f32(inf, src.features(src.ctx, idx[i], 0, -1), probs)
                                   : infer_u8(inf, src.image(src.ctx, idx[i]), probs);
    if (!st.ok()) {
      if (status) *status = st;
      break;
    }
    const int pred = argmax(probs, k);
    const int truth = src.label(src.ctx, idx[i]);
    correct += pred == truth;
    if (confusion) confusion[truth * k + pred]++;
    if (observer && observer->sample) observer->sample(observer->ctx, idx[i], probs);
  }
  return correct;
}

// The ints one GridObject takes in a detector's evaluation scratch.
constexpr size_t kObjectInts = (sizeof(GridObject) + sizeof(int) - 1) / sizeof(int);

size_t detect_eval_scratch_ints(const ModelPlan& plan) {
  if (plan.desc.task != Task::Detect || plan.num_layers == 0) return 0;
  const Shape& grid = plan.layers[plan.num_layers - 1].out;
  const size_t cells = (size_t)grid.h * (size_t)grid.w;
  // grid_objects' scratch, up to one object per cell and its match, the boxes' found flags
  return grid_objects_scratch_ints(grid.h, grid.w) + cells * (kObjectInts + 1) + (kMaxBoxesPerPhoto + 4) / 4;
}

DetectCounts evaluate_detector(const Inference& inf, const SampleSource& src, const int* idx, int n, float* probs,
                               int* scratch, Status* status, const EvalObserver* observer) {
  DetectCounts total;
  if (status) *status = ok_status();
  const ModelPlan& plan = *inf.plan;
  const Shape& grid = plan.layers[plan.num_layers - 1].out;
  const int cells = grid.h * grid.w;
  int* grid_scratch = scratch;
  GridObject* objects = (GridObject*)(grid_scratch + grid_objects_scratch_ints(grid.h, grid.w));
  int* box_of_object = (int*)objects + (size_t)cells * kObjectInts;
  uint8_t* box_found = (uint8_t*)(box_of_object + cells);
  for (int i = 0; i < n; ++i) {
    const Status st = infer_u8(inf, src.image(src.ctx, idx[i]), probs);
    if (!st.ok()) {
      if (status) *status = st;
      break;
    }
    if (observer && observer->sample) observer->sample(observer->ctx, idx[i], probs);
    const int found = grid_objects(probs, grid.h, grid.w, plan.desc.num_classes, plan.desc.detect_threshold,
                                   plan.input.h, plan.input.w, grid_scratch, objects, cells);
    const DetectBox* boxes = nullptr;
    int nb = src.boxes ? src.boxes(src.ctx, idx[i], &boxes) : 0;
    if (nb > kMaxBoxesPerPhoto) nb = kMaxBoxesPerPhoto;
    const DetectCounts c = match_objects(objects, found < cells ? found : cells, boxes, nb, plan.input.h, plan.input.w,
                                         box_of_object, box_found);
    total.tp += c.tp;
    total.fp += c.fp;
    total.fn += c.fn;
  }
  return total;
}

}  // namespace tv
