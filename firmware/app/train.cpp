// Training on the device: the card's images, decoded once into a PSRAM cache, trained with the
// core's shared loop (tv::train_epoch) with the batch split over both cores.
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "tv/int8/q8_dequantize.h"
#include "tv/rng.h"
#include "tv/train_loop.h"

namespace tvfw {

namespace {

// The card's training images: names in one pool, grouped by class, sorted within a class.
struct ImageList {
  char* pool = nullptr;
  size_t pool_cap = 0, pool_used = 0;
  uint32_t* name_at = nullptr;  // offset of image i's name in pool
  int* label = nullptr;
  int cap = 0, count = 0;
  bool overflow = false;
  int current_label = 0;
};

void count_entry(void* ctx, const char* name, bool is_dir) {
  ImageList& l = *(ImageList*)ctx;
  if (is_dir || !is_jpeg_name(name)) return;
  l.cap++;
  l.pool_cap += strlen(name) + 1;
}

void add_entry(void* ctx, const char* name, bool is_dir) {
  ImageList& l = *(ImageList*)ctx;
  if (is_dir || !is_jpeg_name(name)) return;
  const size_t n = strlen(name) + 1;
  if (l.count >= l.cap || l.pool_used + n > l.pool_cap) {
    l.overflow = true;  // the folder changed between the two passes
    return;
  }
  memcpy(l.pool + l.pool_used, name, n);
  l.name_at[l.count] = (uint32_t)l.pool_used;
  l.label[l.count] = l.current_label;
  l.pool_used += n;
  l.count++;
}

// Sorts names [from, to) byte-wise (the order tvtrain uses: by path within a class folder).
void sort_names(ImageList& l, int from, int to) {
  for (int i = from + 1; i < to; ++i) {
    const uint32_t v = l.name_at[i];
    int j = i - 1;
    while (j >= from && strcmp(l.pool + l.name_at[j], l.pool + v) > 0) {
      l.name_at[j + 1] = l.name_at[j];
      --j;
    }
    l.name_at[j + 1] = v;
  }
}

// The decoded images, one model-sized uint8 image each.
struct Cache {
  uint8_t* pixels = nullptr;
  size_t image_bytes = 0;
  int* labels = nullptr;
};

const uint8_t* cache_image(void* ctx, int i) {
  Cache& c = *(Cache*)ctx;
  return c.pixels + (size_t)i * c.image_bytes;
}

int cache_label(void* ctx, int i) {
  return ((Cache*)ctx)->labels[i];
}

struct LaneBridge {
  Hal* hal;
};

void run_lanes_on_hal(void* ctx, int lanes, tv::LaneFn fn, void* arg) {
  ((LaneBridge*)ctx)->hal->run_lanes(lanes, fn, arg);
}

}  // namespace

// Progress, stop requests and the reference's progress lines, called after every batch.
struct TrainProgress {
  App* app;
  int batches_done = 0;
  int batches_total = 0;
  volatile bool stop = false;
  bool stop_reported = false;
};

void App::train() {
  report_ = TrainReport();
  report_.ran = true;
  say("%s", "");
  say(">>> Training mode");
  say("Instructions: 3+ taps, 'l' or 'x' = stop (within a batch) and save");
  show("TRAINING", "loading...");
  if (!hal_.sd_ready()) {
    say("No SD card: cannot train");
    return;
  }
  Reason twhy;
  if (!check_save_targets(&twhy)) {
    say("Cannot train: %s", twhy.text);
    return;
  }
  if (int8_) {
    // Training needs float weights: the int8 model's, dequantized (exact for every weight).
    Reason fwhy;
    if (!ensure_float_buffers(&fwhy)) {
      say("Cannot train the int8 model: %s", fwhy.text);
      return;
    }
    tv::q8_dequantize_params(q8_, params_);
    int8_ = false;  // from here on the float engine runs the model
    if (q8_work_) hal_.psram_free(q8_work_);
    if (blob_keep_) hal_.psram_free(blob_keep_);
    q8_work_ = nullptr;
    blob_keep_ = nullptr;
    say("The loaded model is int8: continuing from its weights dequantized to float (the trained model is saved");
    say("as a float model; run tvquant on it again for an int8 one)");
  }
  say(trained_weights_ ? "Continuing from saved weights" : "Starting fresh training");
  say("Recipe: %s (%d epochs, batch %d)", recipe_name_, recipe_.epochs, recipe_.batch_size);
  Reason why;

  // ---- the image list: /images/<label>/*.jpg, sorted per class
  ImageList list;
  char dir[kPathMax];
  int class_begin[kMaxClasses + 1] = {0};
  for (int c = 0; c < num_classes_; ++c) {
    join_path(dir, kImagesDir, "/", labels_[c]);
    hal_.list_dir(dir, count_entry, &list);
  }
  if (list.cap == 0) {
    say("No images in %s/<class>/ (capture some first)", kImagesDir);
    return;
  }
  list.pool = (char*)hal_.psram_alloc(list.pool_cap);
  list.name_at = (uint32_t*)hal_.psram_alloc(sizeof(uint32_t) * (size_t)list.cap);
  list.label = (int*)hal_.psram_alloc(sizeof(int) * (size_t)list.cap * 4);  // label, train, val, order
  Cache cache;
  uint8_t* file_buf = nullptr;
  void* arena = nullptr;
  auto release = [&]() {
    if (list.pool) hal_.psram_free(list.pool);
    if (list.name_at) hal_.psram_free(list.name_at);
    if (list.label) hal_.psram_free(list.label);
    if (cache.pixels) hal_.psram_free(cache.pixels);
    if (file_buf) hal_.psram_free(file_buf);
    if (arena) hal_.psram_free(arena);
    if (rgb_) hal_.psram_free(rgb_);
    rgb_ = nullptr;
    rgb_cap_ = 0;
  };
  if (!list.pool || !list.name_at || !list.label) {
    say("Not enough memory to list %d images", list.cap);
    release();
    return;
  }
  for (int c = 0; c < num_classes_; ++c) {
    class_begin[c] = list.count;
    list.current_label = c;
    join_path(dir, kImagesDir, "/", labels_[c]);
    hal_.list_dir(dir, add_entry, &list);
    sort_names(list, class_begin[c], list.count);
    if (list.count == class_begin[c]) {
      say("No images in %s: capture some for every class first", dir);
      release();
      return;
    }
  }
  class_begin[num_classes_] = list.count;
  if (list.overflow) say("Note: the image folders changed while being read; using the images listed first");

  // ---- decode every image once into the cache
  const int n = list.count;
  cache.image_bytes = plan_.input.size();
  const uint64_t cache_bytes = (uint64_t)cache.image_bytes * (uint64_t)n;  // 64-bit: size_t is 32 on the board
  if (cache_bytes <= hal_.psram_free_bytes()) cache.pixels = (uint8_t*)hal_.psram_alloc((size_t)cache_bytes);
  if (!cache.pixels) {
    say("Not enough PSRAM for the image cache: %llu bytes for %d images (free: %u)", (unsigned long long)cache_bytes, n,
        (unsigned)hal_.psram_free_bytes());
    release();
    return;
  }
  int* keep = list.label + n;  // 1 when image i decoded
  size_t file_cap = 0;
  const uint64_t t_decode = hal_.micros();
  const uint32_t decodes_before = decodes_;
  for (int i = 0; i < n; ++i) {
    char folder[kPathMax], path[kPathMax];
    keep[i] = 0;
    if (!join_path(folder, kImagesDir, "/", labels_[list.label[i]], "/") ||
        !join_path(path, folder, list.pool + list.name_at[i])) {
      say("  skipped %s: the path is too long", list.pool + list.name_at[i]);
      continue;
    }
    const long size = hal_.file_size(path);
    if (size <= 0 || (size_t)size > kMaxImageFileBytes) {
      say("  skipped %s: %ld bytes", path, size);
      continue;
    }
    if ((size_t)size > file_cap) {
      if (file_buf) hal_.psram_free(file_buf);
      file_buf = (uint8_t*)hal_.psram_alloc((size_t)size);
      file_cap = file_buf ? (size_t)size : 0;
      if (!file_buf) {
        say("  skipped %s: no memory to read it", path);
        continue;
      }
    }
    const int f = hal_.file_open(path, false);
    long got = 0;
    if (f >= 0) {
      while (got < size) {
        const long r = hal_.file_read(f, file_buf + got, (size_t)(size - got));
        if (r <= 0) break;
        got += r;
      }
      hal_.file_close(f);
    }
    if (got != size) {
      say("  skipped %s: cannot read it", path);
      continue;
    }
    if (!jpeg_to_input(file_buf, (size_t)size, cache.pixels + (size_t)i * cache.image_bytes, &why)) {
      say("  skipped %s: %s", path, why.text);
      continue;
    }
    keep[i] = 1;
  }
  report_.decodes = decodes_ - decodes_before;
  const double decode_ms = (double)(hal_.micros() - t_decode) / 1000.0;
  if (file_buf) hal_.psram_free(file_buf);
  file_buf = nullptr;
  if (rgb_) hal_.psram_free(rgb_);
  rgb_ = nullptr;
  rgb_cap_ = 0;

  // ---- the reference split: the last val_last_n images (by name) of each class are validation
  int* train_idx = list.label + 2 * n;
  int* val_idx = list.label + 3 * n;
  int n_train = 0, n_val = 0;
  for (int c = 0; c < num_classes_; ++c) {
    int good[1] = {0};
    for (int i = class_begin[c]; i < class_begin[c + 1]; ++i) good[0] += keep[i];
    const int last = recipe_.val_last_n;
    const int n_val_c = good[0] > last ? last : (good[0] > 0 ? good[0] - 1 : 0);
    int seen = 0;
    for (int i = class_begin[c]; i < class_begin[c + 1]; ++i) {
      if (!keep[i]) continue;
      if (seen++ < good[0] - n_val_c)
        train_idx[n_train++] = i;
      else
        val_idx[n_val++] = i;
    }
  }
  report_.images = n;
  report_.skipped = n - n_train - n_val;
  report_.train_images = n_train;
  report_.val_images = n_val;
  if (n_train == 0) {
    say("No training images could be decoded");
    release();
    return;
  }
  say("Decoded %d images once into a %u-byte PSRAM cache in %.0f ms (%d skipped)", n_train + n_val,
      (unsigned)cache_bytes, decode_ms, report_.skipped);
  cache.labels = list.label;

  // ---- the training arena, sized by the core
  tv::TrainOptions opt = recipe_.opt;
  opt.keep_best = recipe_.restore_best && n_val > 0;
  opt.augment = tv::recipe_augments(recipe_);  // the arena then holds each lane's augmented image
  const tv::TrainMemory tm = tv::training_memory(plan_, opt);
  const size_t free_bytes = hal_.psram_free_bytes();
  arena = tm.total_bytes <= free_bytes ? hal_.psram_alloc(tm.total_bytes) : nullptr;
  if (!arena) {
    say("Cannot train: the %llu-byte training arena (weights %llu, gradients %llu, optimizer %llu, activations %llu, "
        "scratch %llu) does not fit in the %llu bytes of PSRAM still free",
        (unsigned long long)tm.total_bytes, (unsigned long long)tm.params_bytes, (unsigned long long)tm.grad_bytes,
        (unsigned long long)tm.optimizer_bytes, (unsigned long long)tm.activation_bytes,
        (unsigned long long)tm.scratch_bytes, (unsigned long long)free_bytes);
    release();
    return;
  }
  say("Training arena: %u bytes in PSRAM (weights %u, gradients %u for %d lanes, optimizer %u, activations %u, "
      "scratch %u); %u bytes still free",
      (unsigned)tm.total_bytes, (unsigned)tm.params_bytes, (unsigned)tm.grad_bytes, opt.lanes,
      (unsigned)tm.optimizer_bytes, (unsigned)tm.activation_bytes, (unsigned)tm.scratch_bytes,
      (unsigned)hal_.psram_free_bytes());
  tv::Trainer tr;
  const tv::Status ts = tv::trainer_init(&tr, &plan_, opt, arena, tm.total_bytes);
  if (!ts.ok()) fatal("trainer_init: %s", tv::status_text(ts.code));
  memcpy(tr.params, params_, plan_.param_count * sizeof(float));

  const int bs = recipe_.batch_size > 0 ? recipe_.batch_size : 1;
  const int batches_per_epoch = (n_train + bs - 1) / bs;
  say("Val: %d images  Train: %d images", n_val, n_train);
  say("Training: %d images, %d batches (%d epochs of %d, batch %d, %d gradient lanes on %d core%s)", n_train,
      batches_per_epoch * recipe_.epochs, recipe_.epochs, batches_per_epoch, bs, opt.lanes, hal_.cores(),
      hal_.cores() == 1 ? "" : "s");

  TrainProgress progress;
  progress.app = this;
  progress.batches_total = batches_per_epoch * recipe_.epochs;
  LaneBridge bridge{&hal_};
  tv::LaneRunner runner;
  runner.ctx = &bridge;
  runner.run = run_lanes_on_hal;
  tv::EpochJob job;
  job.trainer = &tr;
  job.recipe = &recipe_;
  job.source.ctx = &cache;
  job.source.image = cache_image;
  job.source.label = cache_label;
  job.train = train_idx;
  job.n = n_train;
  job.order = list.label + n;  // `keep` is no longer needed: its ints become the shuffle order
  job.seed = cfg_.seed;        // as tvtrain: the same images, seed and lanes train the same bits as on the host
  job.runner = &runner;
  job.stop = &progress.stop;
  job.on_batch_ctx = &progress;
  job.on_batch = [](void* ctx, int, int, const tv::BatchStats& b) {
    TrainProgress& p = *(TrainProgress*)ctx;
    App& app = *p.app;
    if (b.seen > 0) p.batches_done++;
    if (b.seen > 0 && (p.batches_done % 10 == 0 || p.batches_done == p.batches_total))
      app.say("Batch %d/%d - Loss: %.4f - Acc: %.1f%%", p.batches_done, p.batches_total,
              (double)(b.loss_sum / (float)b.seen), 100.0 * b.correct / b.seen);
    const Input in = app.poll_input(true);
    if (in == Input::Select || in == Input::Stop) {
      p.stop = true;
      app.say("Stop requested: finishing the current batch, then saving");
    }
    app.hal_.delay_ms(0);
  };

  tv::Inference val_inf;  // bound to the trainer's weights, for the keep-best option
  tv::inference_init(&val_inf, &plan_, tr.params, infer_arena_, tv::inference_memory(plan_).work_bytes);
  int best_correct = -1;
  const uint64_t t_train = hal_.micros();
  for (int e = 0; e < recipe_.epochs && !progress.stop; ++e) {
    say("%s", "");
    say("--- Epoch %d/%d ---", e + 1, recipe_.epochs);
    char l1[24];
    snprintf(l1, sizeof l1, "epoch %d/%d", e + 1, recipe_.epochs);
    show("TRAINING", l1, "3 taps=stop");
    const uint64_t t_epoch = hal_.micros();
    job.epoch = e;
    const tv::EpochStats es = tv::train_epoch(job);
    report_.samples += es.seen;
    if (es.seen > 0) report_.epochs_run = e + 1;
    if (es.stopped) break;
    say("Epoch %d/%d: loss %.4f, train accuracy %.1f%%, lr %g, %.0f ms%s", e + 1, recipe_.epochs,
        (double)es.mean_loss(), (double)(100.0f * es.accuracy()), (double)es.lr,
        (double)(hal_.micros() - t_epoch) / 1000.0,
        es.skipped_batches ? " (batches with NaN/Inf gradients were skipped)" : "");
    if (opt.keep_best) {
      const int correct = tv::evaluate(val_inf, job.source, val_idx, n_val, nullptr, probs_);
      if (correct > best_correct) {
        best_correct = correct;
        tv::trainer_save_best(&tr);
      }
    }
  }
  const double train_s = (double)(hal_.micros() - t_train) / 1e6;
  report_.stopped = progress.stop;
  if (opt.keep_best && best_correct >= 0 && !progress.stop) tv::trainer_restore_best(&tr);
  memcpy(params_, tr.params, plan_.param_count * sizeof(float));
  trained_weights_ = true;

  say("%s", "");
  say(progress.stop ? "--- Training Stopped (%d images trained) ---" : "--- Training Complete ---", report_.samples);
  if (n_val > 0) {
    report_.val_correct = tv::evaluate(inf_, job.source, val_idx, n_val, nullptr, probs_);
    say("Validation Accuracy: %.1f%%  (%d/%d correct)", 100.0 * report_.val_correct / n_val, report_.val_correct,
        n_val);
  } else {
    say("Validation Accuracy: no validation images (every class needs more than one)");
  }
  report_.reference_decodes = (uint32_t)(report_.samples + n_val);
  say("Time: %.1f s for %d images (%.1f ms per image)", train_s, report_.samples,
      report_.samples ? 1000.0 * train_s / report_.samples : 0.0);
  say("JPEG decodes: %u for this run (each image once; the reference decodes every image in every epoch: %u)",
      (unsigned)report_.decodes, (unsigned)report_.reference_decodes);
  release();

  Reason swhy;
  show("TRAINING", "saving...");
  if (save_model(&swhy)) {
    report_.saved = true;
  } else {
    say("SAVE FAILED: %s. The previous model on the card is unchanged; the new weights stay in memory.", swhy.text);
  }
  char l2[24];
  snprintf(l2, sizeof l2, "val %d/%d", report_.val_correct, n_val);
  show("TRAINED", l2, report_.saved ? "saved" : "NOT saved");
}

}  // namespace tvfw
