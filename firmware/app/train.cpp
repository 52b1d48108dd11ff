// Training on the device: the card's images, decoded once into a PSRAM cache, trained with the
// core's shared loop (tv::train_epoch) with the batch split over both cores.
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "tv/int8/q8_dequantize.h"
#include "tv/rng.h"
#include "tv/train_loop.h"

namespace tvfw {

// The card's training images: names in one pool, grouped by class, sorted within a class; and what
// the class folders hold that training cannot use.
struct ImageList {
  char* pool = nullptr;
  size_t pool_cap = 0, pool_used = 0;
  uint32_t* name_at = nullptr;  // offset of image i's name in pool
  int* label = nullptr;
  int cap = 0, count = 0;
  bool overflow = false;
  int current_label = 0;
  int per_class[kMaxClasses] = {};  // JPEG names found by the counting pass
  int subdirs = 0, others = 0;      // sub-folders, files that are not JPEG
  char first_subdir[kMaxLabelLength + 1] = {0}, first_other[48] = {0};
  int subdir_class = 0, other_class = 0;
};

namespace {

void count_entry(void* ctx, const char* name, bool is_dir) {
  ImageList& l = *(ImageList*)ctx;
  if (name[0] == '.') return;  // hidden, and "." / ".."
  if (is_dir || !is_jpeg_name(name)) {
    const size_t n = strlen(name);
    if (!is_dir && n > 4 && strcmp(name + n - 4, ".tmp") == 0) return;  // a capture cut short (removed at capture)
    int& count = is_dir ? l.subdirs : l.others;
    if (count++ == 0) {
      snprintf(is_dir ? l.first_subdir : l.first_other, is_dir ? sizeof l.first_subdir : sizeof l.first_other, "%s",
               name);
      (is_dir ? l.subdir_class : l.other_class) = l.current_label;
    }
    return;
  }
  l.cap++;
  l.per_class[l.current_label]++;
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

bool name_before(const ImageList& l, uint32_t a, uint32_t b) {
  return strcmp(l.pool + a, l.pool + b) < 0;
}

void sift_down(ImageList& l, uint32_t* v, int root, int n) {
  for (;;) {
    int child = 2 * root + 1;
    if (child >= n) return;
    if (child + 1 < n && name_before(l, v[child], v[child + 1])) ++child;
    if (!name_before(l, v[root], v[child])) return;
    const uint32_t t = v[root];
    v[root] = v[child];
    v[child] = t;
    root = child;
  }
}

// Sorts names [from, to) byte-wise (the order tvtrain uses: by path within a class folder). Heap sort:
// n log n for any folder, no recursion and no memory (names are distinct, so stability does not matter).
void sort_names(ImageList& l, int from, int to) {
  uint32_t* v = l.name_at + from;
  const int n = to - from;
  for (int i = n / 2 - 1; i >= 0; --i) sift_down(l, v, i, n);
  for (int end = n - 1; end > 0; --end) {
    const uint32_t t = v[0];
    v[0] = v[end];
    v[end] = t;
    sift_down(l, v, 0, end);
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

// Lists /images/<label>/*.jpg|jpeg: counts first (and says what the folders hold that training cannot
// use), refuses a class without photos or more photos than the PSRAM can cache before anything is
// allocated, then lists the names and sorts each class. False (said) when training cannot go on.
bool App::list_images(ImageList& list, int* class_begin) {
  char dir[kPathMax];
  for (int c = 0; c < num_classes_; ++c) {
    list.current_label = c;
    join_path(dir, kImagesDir, "/", labels_[c]);
    hal_.list_dir(dir, count_entry, &list);
  }
  if (list.subdirs)
    say("Note: %d sub-folder%s in the class folders ignored (e.g. %s/%s/%s): photos must lie directly in %s/<class>/",
        list.subdirs, list.subdirs == 1 ? "" : "s", kImagesDir, labels_[list.subdir_class], list.first_subdir,
        kImagesDir);
  if (list.others)
    say("Note: %d file%s that %s not JPEG ignored (e.g. %s/%s/%s): the board trains on .jpg/.jpeg photos (those it "
        "took itself work); for PNG and other photos train on the PC with tvtrain",
        list.others, list.others == 1 ? "" : "s", list.others == 1 ? "is" : "are", kImagesDir,
        labels_[list.other_class], list.first_other);
  for (int c = 0; c < num_classes_; ++c) {
    if (list.per_class[c] == 0) {
      say("No images in %s/%s: capture some for every class first", kImagesDir, labels_[c]);
      return false;
    }
  }
  // Everything the list and the image cache will take, before either is allocated.
  const uint64_t per_image = (uint64_t)plan_.input.size() + 5 * sizeof(int32_t);  // pixels, index, 4 ints
  const uint64_t need = per_image * (uint64_t)list.cap + list.pool_cap;
  const uint64_t free_bytes = hal_.psram_free_bytes();
  if (need > free_bytes) {
    int largest = 0;
    for (int c = 1; c < num_classes_; ++c)
      if (list.per_class[c] > list.per_class[largest]) largest = c;
    say("Cannot train: the %d photos in %s need %llu bytes of PSRAM (%llu per photo at the model's %dx%dx%d input, "
        "and their names), only %llu are free: about %llu photos fit; move some out of the class folders (the "
        "largest: %s/%s, %d photos)",
        list.cap, kImagesDir, (unsigned long long)need, (unsigned long long)per_image, plan_.input.h, plan_.input.w,
        plan_.input.c, (unsigned long long)free_bytes, (unsigned long long)(free_bytes / per_image), kImagesDir,
        labels_[largest], list.per_class[largest]);
    return false;
  }
  list.pool = (char*)hal_.psram_alloc(list.pool_cap);
  list.name_at = (uint32_t*)hal_.psram_alloc(sizeof(uint32_t) * (size_t)list.cap);
  list.label = (int*)hal_.psram_alloc(sizeof(int) * (size_t)list.cap * 4);  // label, train, val, order
  if (!list.pool || !list.name_at || !list.label) {
    say("Not enough memory to list %d images", list.cap);
    return false;
  }
  for (int c = 0; c < num_classes_; ++c) {
    class_begin[c] = list.count;
    list.current_label = c;
    join_path(dir, kImagesDir, "/", labels_[c]);
    hal_.list_dir(dir, add_entry, &list);
    sort_names(list, class_begin[c], list.count);
    if (list.count == class_begin[c]) {
      say("No images in %s: capture some for every class first", dir);
      return false;
    }
  }
  class_begin[num_classes_] = list.count;
  if (list.overflow) say("Note: the image folders changed while being read; using the images listed first");
  return true;
}

namespace {

// Why a card photo was not used, in the order the checks run.
enum SkipKind { kPathTooLong, kFileSize, kReadMemory, kUnreadable, kDecodeFailed, kSkipKinds };
constexpr int kSkipsNamed = 3;  // per kind; the rest are counted

}  // namespace

// Decodes image i of the list into pixels + i * image_bytes (keep[i] = 1) once; names the first few
// skips of each kind and counts the rest, then says what the board can decode.
void App::decode_images(const ImageList& list, uint8_t* pixels, size_t image_bytes, int* keep) {
  int skips[kSkipKinds + (int)DecodeFail::Count] = {0};  // kDecodeFailed splits by DecodeFail
  uint8_t* file_buf = nullptr;
  size_t file_cap = 0;
  Reason why;
  for (int i = 0; i < list.count; ++i) {
    char folder[kPathMax], path[kPathMax];
    keep[i] = 0;
    int kind = -1;
    const bool path_fits = join_path(folder, kImagesDir, "/", labels_[list.label[i]], "/") &&
                           join_path(path, folder, list.pool + list.name_at[i]);
    const long size = path_fits ? hal_.file_size(path) : -1;
    if (!path_fits) {
      kind = kPathTooLong;
      snprintf(path, sizeof path, "%s", list.pool + list.name_at[i]);
      why.set("the path is too long");
    } else if (size < 0) {
      kind = kUnreadable;
      why.set("not a regular file (a device, or removed since it was listed)");
    } else if (size == 0 || (size_t)size > kMaxImageFileBytes) {
      kind = kFileSize;
      why.set("%ld bytes (a photo is 1 to %u bytes)", size, (unsigned)kMaxImageFileBytes);
    } else if ((size_t)size > file_cap) {
      if (file_buf) hal_.psram_free(file_buf);
      file_buf = (uint8_t*)hal_.psram_alloc((size_t)size);
      file_cap = file_buf ? (size_t)size : 0;
      if (!file_buf) {
        kind = kReadMemory;
        why.set("no memory to read it");
      }
    }
    if (kind < 0) {
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
        kind = kUnreadable;
        why.set("cannot read it");
      } else if (!jpeg_to_input(file_buf, (size_t)size, pixels + (size_t)i * image_bytes, &why)) {
        kind = kSkipKinds + (int)decode_fail_;
      }
    }
    if (kind < 0) {
      keep[i] = 1;
      continue;
    }
    if (skips[kind]++ < kSkipsNamed) say("  skipped %s: %s", path, why.text);
  }
  if (file_buf) hal_.psram_free(file_buf);
  if (rgb_) hal_.psram_free(rgb_);
  rgb_ = nullptr;
  rgb_cap_ = 0;
  static const char* const kWhat[] = {"with too long a path",
                                      "empty or too large",
                                      "without memory to read",
                                      "unreadable",
                                      "",  // kDecodeFailed: by DecodeFail below
                                      "",
                                      "not JPEG (no frame header)",
                                      "over 1 megapixel",
                                      "without memory to decode",
                                      "corrupt",
                                      "not resizable"};
  static_assert(sizeof kWhat / sizeof kWhat[0] == kSkipKinds + (int)DecodeFail::Count, "one text per kind");
  char line[240];
  size_t used = 0;
  int total = 0;
  line[0] = 0;
  for (int k = 0; k < kSkipKinds + (int)DecodeFail::Count; ++k) {
    if (!skips[k]) continue;
    total += skips[k];
    const int w = snprintf(line + used, sizeof line - used, "%s%d %s", used ? ", " : "", skips[k], kWhat[k]);
    if (w > 0 && (size_t)w < sizeof line - used) used += (size_t)w;
  }
  if (total == 0) return;
  say("Skipped %d of %d photos: %s", total, list.count, line);
  if (skips[kSkipKinds + (int)DecodeFail::NotJpeg] || skips[kSkipKinds + (int)DecodeFail::TooLarge] ||
      skips[kSkipKinds + (int)DecodeFail::Corrupt])
    say("The board decodes baseline JPEGs of up to %u pixels (the photos it takes are 240x240); for other photos "
        "train on the PC (tvtrain photos/ -o model.tvb) and copy model.tvb to %s on the card",
        (unsigned)kMaxDecodePixels, kModelPath);
}

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

  // ---- the image list: /images/<label>/*.jpg, sorted per class, counted and checked first
  ImageList list;
  int class_begin[kMaxClasses + 1] = {0};
  Cache cache;
  void* arena = nullptr;
  auto release = [&]() {
    if (list.pool) hal_.psram_free(list.pool);
    if (list.name_at) hal_.psram_free(list.name_at);
    if (list.label) hal_.psram_free(list.label);
    if (cache.pixels) hal_.psram_free(cache.pixels);
    if (arena) hal_.psram_free(arena);
    if (rgb_) hal_.psram_free(rgb_);
    rgb_ = nullptr;
    rgb_cap_ = 0;
  };
  if (!list_images(list, class_begin)) {
    release();
    return;
  }

  // ---- decode every image once into the cache
  const int n = list.count;
  cache.image_bytes = plan_.input.size();
  const uint64_t cache_bytes = (uint64_t)cache.image_bytes * (uint64_t)n;  // 64-bit: size_t is 32 on the board
  if (cache_bytes <= hal_.psram_free_bytes()) cache.pixels = (uint8_t*)hal_.psram_alloc((size_t)cache_bytes);
  if (!cache.pixels) {
    say("Not enough PSRAM for the image cache: %llu bytes for %d images (free: %llu)", (unsigned long long)cache_bytes,
        n, (unsigned long long)hal_.psram_free_bytes());
    release();
    return;
  }
  int* keep = list.label + n;  // 1 when image i decoded
  const uint64_t t_decode = hal_.micros();
  const uint32_t decodes_before = decodes_;
  decode_images(list, cache.pixels, cache.image_bytes, keep);
  report_.decodes = decodes_ - decodes_before;
  const double decode_ms = (double)(hal_.micros() - t_decode) / 1000.0;
  // A class none of whose photos decoded would train as a class without examples.
  for (int c = 0; c < num_classes_; ++c) {
    int good = 0;
    for (int i = class_begin[c]; i < class_begin[c + 1]; ++i) good += keep[i];
    if (good == 0) {
      say("Cannot train: none of the %d photos of class %d (%s/%s) could be decoded (see the skips above); the "
          "model is unchanged",
          class_begin[c + 1] - class_begin[c], c, kImagesDir, labels_[c]);
      release();
      return;
    }
  }

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
  if (n_train == 0) {  // every class has a decoded image, so this needs an empty class list
    say("No training images could be decoded");
    release();
    return;
  }
  say("Decoded %d images once into a %llu-byte PSRAM cache in %.0f ms (%d skipped)", n_train + n_val,
      (unsigned long long)cache_bytes, decode_ms, report_.skipped);
  cache.labels = list.label;

  // ---- a model whose finite weights overflow float (an Inf or NaN output) is not trained from
  const tv::Status runs = tv::infer_u8(inf_, cache.pixels + (size_t)train_idx[0] * cache.image_bytes, probs_);
  if (!runs.ok()) {
    say("Cannot train: layer %d (%s) of the model outputs infinite or NaN values although its weights are finite "
        "(they overflow float); remove /header/model.tvb to start from He-init, or copy a working model",
        (int)runs.layer, tv::layer_type_name(plan_.desc.layers[runs.layer].type));
    release();
    return;
  }

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
