// The weight tiers at boot and the saves after training.
#include <stdio.h>
#include <string.h>

#include <new>

#include "app.h"
#include "tv/backbones/builtin_backbones.h"
#include "tv/crc32.h"
#include "tv/formats/header_writer.h"
#include "tv/formats/raw_weights.h"
#include "tv/train/backbone.h"
#include "tv/train/train_session.h"

namespace tvfw {

namespace {

// Labels as one comma-separated text, for messages.
void join_labels(const char (*labels)[kMaxLabelLength + 1], int n, char* out, size_t cap) {
  size_t used = 0;
  out[0] = 0;
  for (int i = 0; i < n && used + 1 < cap; ++i) {
    const int k = snprintf(out + used, cap - used, "%s%s", i ? "," : "", labels[i]);
    if (k < 0) break;
    used += (size_t)k;
  }
}

}  // namespace

void App::release_model() {
  void** bufs[] = {(void**)&params_,  &infer_arena_,       (void**)&input_, (void**)&lut_,
                   (void**)&q8_work_, (void**)&blob_keep_, &detect_mem_};
  for (void** b : bufs) {
    if (*b) hal_.psram_free(*b);
    *b = nullptr;
  }
  grid_probs_ = nullptr;
  grid_scratch_ = nullptr;
  objects_ = nullptr;
  objects_line_ = nullptr;
  detect_sizes_ = DetectMemory();
  desc_.task = tv::Task::Classify;  // until a model says otherwise
  engine_ = Engine::None;
}

bool App::ensure_float_buffers(Reason* why) {
  if (params_ && infer_arena_) return true;
  const tv::InferenceMemory im = tv::inference_memory(plan_);
  const size_t want = (params_ ? 0 : im.params_bytes) + im.work_bytes;  // what is still missing
  const size_t free_bytes = hal_.psram_free_bytes();
  if (want > free_bytes) {
    why->set("the float engine needs %llu more bytes of PSRAM (weights %llu + work buffer %llu), only %llu are free",
             (unsigned long long)want, (unsigned long long)(params_ ? 0 : im.params_bytes),
             (unsigned long long)im.work_bytes, (unsigned long long)free_bytes);
    return false;
  }
  if (!params_) params_ = (float*)hal_.psram_alloc(im.params_bytes);
  infer_arena_ = hal_.psram_alloc(im.work_bytes);
  if (!params_ || !infer_arena_) {
    why->set("cannot allocate %llu bytes of PSRAM for the float engine (free: %llu)", (unsigned long long)want,
             (unsigned long long)hal_.psram_free_bytes());
    return false;
  }
  const tv::Status is = tv::inference_init(&inf_, &plan_, params_, infer_arena_, im.work_bytes);
  if (!is.ok()) {
    why->set_status("the float engine refused the network", is, &plan_.desc);
    return false;
  }
  return true;
}

bool App::adopt_network(const tv::ModelDesc& desc, bool int8, Reason* why, uint8_t** file, size_t file_bytes) {
  if (desc.task == tv::Task::Detect && desc.num_classes > kMaxClasses) {
    why->set(
        "it is a detector of %d object classes; this firmware runs detectors of 1 to %d (its %d labels hold the "
        "background too)",
        desc.num_classes - 1, kMaxClasses - 1, kMaxClasses);
    return false;
  }
  if (desc.num_classes < 2 || desc.num_classes > kMaxClasses) {
    why->set("it has %d classes; this firmware handles 2 to %d", desc.num_classes, kMaxClasses);
    return false;
  }
  const tv::Status st = tv::plan_model(desc, &plan_);
  if (!st.ok() && st.code == tv::StatusCode::Overflow && plan_.overflow_floats) {
    why->set(
        "its network is too large: %s would hold %llu floats (%llu bytes) at layer %d, more than the %llu a "
        "model may have",
        tv::plan_figure_name(st.a), (unsigned long long)plan_.overflow_floats,
        (unsigned long long)plan_.overflow_floats * 4ull, st.layer, (unsigned long long)tv::kMaxPlanFloats);
    return false;
  }
  if (!st.ok()) {
    why->set_status("its network does not plan", st, &desc);
    return false;
  }
  desc_ = desc;
  num_classes_ = desc.num_classes;
  // Everything inference needs, sized by the core, checked against the free PSRAM before allocating.
  const size_t input_bytes = plan_.input.size();
  const size_t lut_bytes = ((size_t)plan_.input.w + (size_t)plan_.input.h) * sizeof(uint16_t);
  size_t engine_bytes = 0;
  const char* engine_what;
  if (int8) {
    engine_bytes = tv::q8_memory(plan_).work_bytes;
    engine_what = "int8 work buffer";
  } else {
    const tv::InferenceMemory im = tv::inference_memory(plan_);
    engine_bytes = im.params_bytes + im.work_bytes;
    engine_what = "float weights + work buffer";
  }
  const size_t detect_bytes = detect_memory(plan_).total;  // a detector's grid, objects and line (0: a classifier)
  const size_t need = engine_bytes + input_bytes + lut_bytes + detect_bytes;
  // A float model's file is freed once its weights are copied, before the rest is allocated.
  const bool from_file = !int8 && file && *file;
  const size_t free_bytes = hal_.psram_free_bytes() + (from_file ? file_bytes : 0);
  if (need > free_bytes) {
    char detect_part[64] = "";
    if (detect_bytes)
      snprintf(detect_part, sizeof detect_part, ", detector's grid and objects %llu", (unsigned long long)detect_bytes);
    why->set("it needs %llu bytes of PSRAM to run (%s %llu, input image %llu, resize table %llu%s), only %llu are free",
             (unsigned long long)need, engine_what, (unsigned long long)engine_bytes, (unsigned long long)input_bytes,
             (unsigned long long)lut_bytes, detect_part, (unsigned long long)free_bytes);
    return false;
  }
  if (from_file) {
    const size_t params_bytes = tv::inference_memory(plan_).params_bytes;
    params_ = params_bytes <= hal_.psram_free_bytes() ? (float*)hal_.psram_alloc(params_bytes) : nullptr;
    if (!params_) {
      why->set("its %llu bytes of weights do not fit beside its file (%llu bytes) in the %llu bytes of PSRAM free",
               (unsigned long long)params_bytes, (unsigned long long)file_bytes,
               (unsigned long long)hal_.psram_free_bytes());
      return false;
    }
    const tv::Status ls = tv::blob_load_float_params(view_, plan_, params_);
    if (!ls.ok()) {
      why->set_status(nullptr, ls, &plan_.desc);
      return false;
    }
    read_labels_and_recipe();  // view_ points into the file: what else it names is taken before it goes
    hal_.psram_free(*file);
    *file = nullptr;
  }
  input_ = (uint8_t*)hal_.psram_alloc(input_bytes);
  lut_ = (uint16_t*)hal_.psram_alloc(lut_bytes);
  if (!input_ || !lut_) {
    why->set("cannot allocate %u bytes of PSRAM for its input (free: %u)", (unsigned)(input_bytes + lut_bytes),
             (unsigned)hal_.psram_free_bytes());
    return false;
  }
  if (detect_bytes && !allocate_detect_buffers(why)) return false;
  if (int8) {
    q8_work_ = (int8_t*)hal_.psram_alloc(engine_bytes);
    if (!q8_work_) {
      why->set("cannot allocate the %u-byte int8 work buffer (free: %u)", (unsigned)engine_bytes,
               (unsigned)hal_.psram_free_bytes());
      return false;
    }
    return true;
  }
  return ensure_float_buffers(why);
}

void App::choose_recipe(const char* prov, size_t len) {
  const char* name = cfg_.preset;
  char named[sizeof recipe_name_] = {0};
  for (size_t i = 0; prov && i < len;) {  // "key=value" lines
    size_t end = i;
    while (end < len && prov[end] != '\n') ++end;
    if (end - i > 7 && memcmp(prov + i, "preset=", 7) == 0 && end - i - 7 < sizeof named) {
      memcpy(named, prov + i + 7, end - i - 7);
      named[end - i - 7] = 0;
    }
    i = end + 1;
  }
  tv::TrainRecipe r;
  if (named[0] && tv::preset_recipe(named, &r))
    name = named;
  else if (tv::raw_weights_compatible(plan_))
    name = "webmcu";  // the reference network (e.g. imported from a myWeights.bin) trains with its recipe
  if (!tv::preset_recipe(name, &recipe_)) recipe_ = tv::TrainRecipe();
  snprintf(recipe_name_, sizeof recipe_name_, "%s", name);
  if (cfg_.epochs > 0) recipe_.epochs = cfg_.epochs;
  if (cfg_.val_last_n >= 0) recipe_.val_last_n = cfg_.val_last_n;
}

// Takes a blob's network, labels and weights when the board can run it.
bool App::try_blob(const uint8_t* data, size_t size, uint8_t** file, Reason* why) {
  release_model();
  const tv::Status st = tv::blob_decode(data, size, &view_);
  if (st.code == tv::StatusCode::BlobDuplicateLabel) {
    why->set("classes %d and %d have the same label, so the model cannot tell them apart", (int)st.a, (int)st.b);
    return false;
  }
  if (!st.ok()) {  // the network is read before the weights are checked: a non-finite one names its layer's type
    why->set_status(nullptr, st, st.code == tv::StatusCode::NonFiniteWeight ? &view_.model : nullptr);
    return false;
  }
  const bool int8 = view_.is_int8();
  const bool copied = !int8 && file && *file;  // adopt_network copies the weights, then frees the file
  if (!adopt_network(view_.model, int8, why, file, size)) {
    release_model();
    return false;
  }
  if (int8) {
    const tv::Status qs = tv::q8_bind(view_, plan_, &q8_);
    if (!qs.ok()) {
      why->set_status("the int8 engine cannot run it", qs, &plan_.desc);
      release_model();
      return false;
    }
    if (file && *file) {  // the int8 tensors are used in place
      blob_keep_ = *file;
      *file = nullptr;
    }
  } else if (!copied) {
    const tv::Status ls = tv::blob_load_float_params(view_, plan_, params_);
    if (!ls.ok()) {
      why->set_status(nullptr, ls, &plan_.desc);
      release_model();
      return false;
    }
  }
  if (!copied) read_labels_and_recipe();  // a copied float model's were read before its file was freed
  if (cfg_.num_labels > 0) {
    bool same = cfg_.num_labels == num_classes_;
    for (int i = 0; same && i < num_classes_; ++i) same = strcmp(cfg_.labels[i], labels_[i]) == 0;
    if (!same) {
      char got[kMaxClasses * (kMaxLabelLength + 1) + 1];
      join_labels(labels_, num_classes_, got, sizeof got);
      say("  note: the model's classes (%s) are used; the configured labels only name a new (He-init) model", got);
    }
  }
  engine_ = int8 ? Engine::Int8 : Engine::Float;
  return true;
}

void App::read_labels_and_recipe() {
  name_classes(view_);  // the model's labels name the classes (and their /images folders)
  choose_recipe(view_.provenance, view_.provenance_len);
}

bool App::try_blob_file(const char* path, Reason* why) {
  uint8_t* data = nullptr;
  size_t size = 0;
  if (!read_whole_file(hal_, path, kMaxBlobBytes, &data, &size, why)) return false;
  const uint32_t crc = tv::crc32(0, data, size);
  Reason inner;
  const bool ok = try_blob(data, size, &data, &inner);  // may take or free `data`
  if (ok) {
    snprintf(weights_source_, sizeof weights_source_, "%s, %u bytes, CRC-32 0x%08x%s", path, (unsigned)size,
             (unsigned)crc, int8_engine() ? ", int8" : "");
  } else {
    why->set("%s", inner.text);
  }
  if (data) hal_.psram_free(data);
  return ok;
}

bool App::try_raw_weights_file(const char* path, Reason* why) {
  const long n = hal_.file_size(path);
  const int k = n > 0 ? tv::raw_weights_classes_for_size((size_t)n) : 0;
  if (n < 0) {
    why->set("%s is a folder or a device, not a file", path);
    return false;
  }
  if (k < 2 || k > kMaxClasses) {
    why->set("it is %ld bytes, which is the reference network for no class count from 2 to %d", n, kMaxClasses);
    return false;
  }
  release_model();
  tv::ModelDesc desc;
  tv::webmcu_model(k, &desc);
  if (!adopt_network(desc, false, why)) {
    release_model();
    return false;
  }
  uint8_t* data = nullptr;
  size_t size = 0;
  if (!read_whole_file(hal_, path, kMaxBlobBytes, &data, &size, why)) {
    release_model();
    return false;
  }
  const tv::Status st = tv::raw_weights_import(data, size, plan_, params_);
  hal_.psram_free(data);
  if (!st.ok()) {
    why->set_status(nullptr, st);
    release_model();
    return false;
  }
  // The raw file holds no labels: the configured ones, else the card's class folders, else class<i>.
  const int found = he_init_labels(nullptr, 0);
  if (found != k)
    for (int i = 0; i < k; ++i) snprintf(labels_[i], sizeof labels_[i], "class%d", i);
  num_classes_ = k;
  choose_recipe("preset=webmcu", 13);
  snprintf(weights_source_, sizeof weights_source_, "%s, the reference firmware's raw weights, %u bytes, %d classes",
           path, (unsigned)size, k);
  engine_ = Engine::Float;
  return true;
}

void App::print_model() {
  if (!has_model()) {
    say("Model: none yet (%s)", weights_source_);
    return;
  }
  if (detector())
    say("Model: %dx%dx%d input, detector of %d object class%s (a %dx%d grid, threshold %.2f), %u parameters, %.1f "
        "MFLOP per image, %s engine",
        plan_.input.h, plan_.input.w, plan_.input.c, num_classes_ - 1, num_classes_ == 2 ? "" : "es",
        detect_sizes_.grid_h, detect_sizes_.grid_w, (double)desc_.detect_threshold, (unsigned)plan_.param_count,
        (double)plan_.flops_forward / 1e6, int8_engine() ? "int8" : "float");
  else
    say("Model: %dx%dx%d input, %d classes, %u parameters, %.1f MFLOP per image, %s engine, recipe %s", plan_.input.h,
        plan_.input.w, plan_.input.c, num_classes_, (unsigned)plan_.param_count, (double)plan_.flops_forward / 1e6,
        int8_engine() ? "int8" : "float", recipe_name_);
  for (int i = 0; i < num_classes_; ++i)
    say("  class %d: %s%s", i, labels_[i], i < first_class() ? " (background)" : "");
  const size_t used =
      (params_ ? tv::inference_memory(plan_).params_bytes + tv::inference_memory(plan_).work_bytes : 0) +
      (q8_work_ ? tv::q8_memory(plan_).work_bytes : 0) + plan_.input.size() + detect_sizes_.total;
  char detect_part[96] = "";
  if (detect_sizes_.total)
    snprintf(detect_part, sizeof detect_part, ", of it %u B the detector's grid, objects and line",
             (unsigned)detect_sizes_.total);
  say("Memory: %u B of PSRAM for inference%s%s (%u B still free)", (unsigned)used, detect_part,
      blob_keep_ ? " plus the int8 model file itself" : "", (unsigned)hal_.psram_free_bytes());
}

void App::load_weights() {
  say("Weights: looking for a model (SD card > baked header > built-in backbone > He-init)");
  Reason why;
  // Tier 1: the SD card.
  if (hal_.sd_ready()) {
    bool have_main = false;
    const bool done = load_card_model(&have_main);
    if (done) {
      tier_ = WeightTier::SD;
      trained_weights_ = true;
      say("Weights: SD (%s)", weights_source_);
      return;
    }
    if (!have_main) say("  SD: no model on the card (%s)", kModelPath);
  } else {
    say("  SD: no card");
  }
  // Tier 2: the header compiled into the firmware.
  if (cfg_.baked_blob) {
    if (try_blob(cfg_.baked_blob, cfg_.baked_size, nullptr, &why)) {  // the baked bytes live in flash for good
      tier_ = WeightTier::Baked;
      trained_weights_ = true;
      snprintf(weights_source_, sizeof weights_source_, "%s, %u bytes, CRC-32 0x%08x%s", cfg_.baked_source,
               (unsigned)cfg_.baked_size, (unsigned)tv::crc32(0, cfg_.baked_blob, cfg_.baked_size),
               int8_engine() ? ", int8" : "");
      say("Weights: baked (%s)", weights_source_);
      return;
    }
    say("  baked %s refused: %s", cfg_.baked_source, why.text);
  } else {
    say("  baked: none compiled in (put the model.h tvexport wrote next to the sketch to bake one in)");
  }
  // Tiers 3 and 4: the backbone (or random weights) for the configured preset and the card's class
  // folders; none yet on a blank card.
  if (!start_new_model() && hal_.sd_ready())
    say("No model yet: a model needs 2 class folders in %s/. Send 'n NAME' (or select New class) for each class, "
        "capture its photos, then select Learn: it makes the model from them.",
        kImagesDir);
}

bool App::take_backbone(Reason* why) {
  const tv::BuiltinBackbone* b = tv::builtin_backbone(plan_.input.h, plan_.input.w, plan_.input.c);
  if (!b) {
    why->set("none is built in for a %dx%dx%d input", plan_.input.h, plan_.input.w, plan_.input.c);
    return false;
  }
  struct Decoded {  // in PSRAM: a plan and a blob view are too large for the loop task's stack
    tv::BlobView view;
    tv::ModelPlan plan;
  };
  void* mem = hal_.psram_alloc(sizeof(Decoded));
  if (!mem) {
    why->set("no PSRAM to read it (%u bytes)", (unsigned)sizeof(Decoded));
    return false;
  }
  Decoded* d = new (mem) Decoded();
  float* weights = nullptr;
  bool ok = false;
  tv::Status st = tv::blob_decode(b->blob, b->size, &d->view);
  if (st.ok()) st = tv::plan_model(d->view.model, &d->plan);
  if (!st.ok())
    why->set_status(b->name, st);
  else if (!tv::backbone_fits(d->plan, plan_))
    why->set("%s is not the %s network of this model", b->name, cfg_.preset);
  else if (!(weights = (float*)hal_.psram_alloc(d->plan.param_count * sizeof(float))))
    why->set("no PSRAM for its %u weights", (unsigned)d->plan.param_count);
  else if (!(st = tv::blob_load_float_params(d->view, d->plan, weights)).ok())
    why->set_status(b->name, st);
  else
    ok = tv::backbone_params(d->plan, weights, plan_, params_).ok();
  if (ok)
    snprintf(weights_source_, sizeof weights_source_, "built-in %s, %u bytes, CRC-32 0x%08x; the head is Learn's",
             b->name, (unsigned)b->size, (unsigned)tv::crc32(0, b->blob, b->size));
  if (weights) hal_.psram_free(weights);
  d->~Decoded();
  hal_.psram_free(mem);
  return ok;
}

bool App::start_new_model() {
  release_model();
  char ignored[160];
  const int n = he_init_labels(ignored, sizeof ignored);  // at most 16: the first by name (the rest said)
  if (n < 2) {
    if (ignored[0]) say("  ignored in %s (not usable as class names): %s", kImagesDir, ignored);
    if (!hal_.sd_ready())
      fatal(
          "no model (SD card or baked) and no SD card: insert a FAT32 microSD card (classes and photos live on it), "
          "or bake a model in");
    num_classes_ = 0;  // the blank-card state: New class and (with two class folders) Learn
    tier_ = WeightTier::None;
    trained_weights_ = false;
    snprintf(weights_source_, sizeof weights_source_, "%d class folder%s on the card", n, n == 1 ? "" : "s");
    return false;
  }
  tv::ModelDesc desc;
  Reason why;
  if (!tv::preset_model(cfg_.preset, n, &desc)) fatal("unknown model preset '%s'", cfg_.preset);
  if (!adopt_network(desc, false, &why)) fatal("the %s model for %d classes cannot run: %s", cfg_.preset, n, why.text);
  choose_recipe(nullptr, 0);
  engine_ = Engine::Float;
  trained_weights_ = false;
  Reason not_backbone;
  if (!cfg_.backbone)
    not_backbone.set("off in this build's configuration");
  else if (take_backbone(&not_backbone)) {
    tier_ = WeightTier::Backbone;
    say("Weights: backbone (%s): select Learn to learn the %d classes from their photos", weights_source_, n);
    return true;
  }
  tv::he_init(plan_, params_, cfg_.seed);
  tier_ = WeightTier::HeInit;
  snprintf(weights_source_, sizeof weights_source_, "random, preset %s, seed %llu", cfg_.preset,
           (unsigned long long)cfg_.seed);
  say("  backbone: %s", not_backbone.text);
  say("Weights: He-init (%s)", weights_source_);
  return true;
}

tv::HeaderOptions board_header_options() {
  tv::HeaderOptions opt;  // tvexport's defaults, so both write the same bytes
  opt.tool = "tvexport";
  opt.version = TV_VERSION;
  return opt;
}

namespace {

struct HeaderJob {
  const tv::BlobView* view;
  uint32_t crc;
  const tv::ModelPlan* plan;
  CardWriter* out;
};

void sink_write(void* ctx, const char* s, size_t n) {
  ((HeaderJob*)ctx)->out->write(s, n);
}

bool write_header(void* ctx, CardWriter* out, Reason* why) {
  HeaderJob& job = *(HeaderJob*)ctx;
  job.out = out;
  const tv::TextSink sink{&job, sink_write};
  const tv::Status st = tv::write_tinyvision_header(*job.view, job.crc, board_header_options(), sink, job.plan);
  if (!st.ok()) {
    why->set_status("the header writer refused the model", st, job.plan ? &job.plan->desc : nullptr);
    return false;
  }
  return true;
}

}  // namespace

bool App::check_save_targets(Reason* why) {
  if (hal_.exists(kHeaderDir) && hal_.file_size(kHeaderDir) >= 0) {
    why->set("%s is a file, where the model's folder belongs: remove or rename it on a computer", kHeaderDir);
    return false;
  }
  const char* const targets[] = {kModelPath,     kModelTmpPath,   kModelBakPath,     kHeaderPath,
                                 kHeaderTmpPath, kRawWeightsPath, kRawWeightsTmpPath};
  for (const char* t : targets) {
    if (hal_.exists(t) && hal_.file_size(t) < 0) {
      why->set(
          "%s is a folder (or a device), so the trained model could not be saved: remove it from the card on a "
          "computer",
          t);
      return false;
    }
  }
  return true;
}

bool App::write_card_model(const uint8_t* blob, size_t size, bool keep_backup, Reason* why) {
  const uint32_t crc = tv::crc32(0, blob, size);
  const bool had_model = hal_.exists(kModelPath);
  if (!replace_file_atomic(hal_, kModelPath, blob, size, keep_backup, why)) return false;
  snprintf(weights_source_, sizeof weights_source_, "%s, %u bytes, CRC-32 0x%08x", kModelPath, (unsigned)size,
           (unsigned)crc);
  const bool kept = had_model && keep_backup;
  say("Weights saved to SD: %s (%u bytes, CRC-32 0x%08x)%s%s", kModelPath, (unsigned)size, (unsigned)crc,
      kept ? "; the previous model is kept as " : "", kept ? kModelBakPath : "");
  tier_ = WeightTier::SD;

  // The C header of the same blob, as tvexport writes it.
  Reason hwhy;
  HeaderJob job{&view_, crc, &plan_, nullptr};
  const tv::Status ds = tv::blob_decode(blob, size, &view_);
  if (!ds.ok()) hwhy.set_status("the saved blob does not decode", ds);
  if (ds.ok() && replace_file_atomic(hal_, kHeaderPath, write_header, &job, false, &hwhy))
    say("Header written: %s (copy it next to the sketch and rebuild to bake the model in)", kHeaderPath);
  else
    say("Header NOT written: %s (the model itself is saved)", hwhy.text);
  return true;
}

// Saves the current weights: the blob (atomically, previous model kept as .bak), then the C header
// of the same blob, then (webmcu preset) the reference's raw myWeights.bin.
bool App::save_model(Reason* why) {
  if (!hal_.sd_ready()) {
    why->set("no SD card");
    return false;
  }
  if (!hal_.exists(kHeaderDir) && !hal_.mkdir(kHeaderDir)) {
    why->set("cannot create %s", kHeaderDir);
    return false;
  }
  tv::BlobTensor* tensors = (tv::BlobTensor*)hal_.psram_alloc(sizeof(tv::BlobTensor) * tv::kMaxBlobTensors);
  if (!tensors) {
    why->set("no memory for the tensor table");
    return false;
  }
  for (int i = 0; i < tv::kMaxBlobTensors; ++i) tensors[i] = tv::BlobTensor();
  const char* label_ptrs[kMaxClasses];
  for (int i = 0; i < num_classes_; ++i) label_ptrs[i] = labels_[i];
  char provenance[240], update[64] = "";
  if (report_.update) {  // Learn's: the update it ran, the classes it added and distillation (as tvtrain writes it)
    const int n =
        snprintf(update, sizeof update, "update=%s\nclasses_added=%d\n", report_.update, report_.classes_added);
    if (report_.distilled && n > 0 && n < (int)sizeof update)
      snprintf(update + n, sizeof update - (size_t)n, "distill=temperature %g, weight %g\n",
               (double)tv::kDistillTemperature, (double)tv::kDistillWeight);
  }
  snprintf(provenance, sizeof provenance,
           "tool=tinyvision-firmware\nversion=%s\npreset=%s\nepochs=%d\nimages=%d\nweights_before=%s\n%s",
           TV_FIRMWARE_VERSION, recipe_name_, report_.epochs_run, report_.train_images, tier_name(tier_), update);
  tv::BlobContents c;
  c.model = &desc_;
  c.labels = label_ptrs;
  c.num_labels = num_classes_;
  c.provenance = provenance;
  c.tensors = tensors;
  c.num_tensors = tv::float_tensors(plan_, params_, tensors);
  const size_t cap = tv::blob_encoded_size(c);
  uint8_t* blob = (uint8_t*)hal_.psram_alloc(cap);
  if (!blob) {
    hal_.psram_free(tensors);
    why->set("no memory to encode the model (%u bytes)", (unsigned)cap);
    return false;
  }
  size_t size = 0;
  const tv::Status es = tv::blob_encode(c, blob, cap, &size);
  hal_.psram_free(tensors);
  if (!es.ok()) {
    hal_.psram_free(blob);
    why->set_status("cannot encode the model", es);
    return false;
  }
  const bool written = write_card_model(blob, size, true, why);
  hal_.psram_free(blob);
  if (!written) return false;

  // The reference firmware's own file, so its sketches can load this model too.
  if (tv::raw_weights_compatible(plan_)) {
    const size_t n = tv::raw_weights_size(num_classes_);
    uint8_t* raw = (uint8_t*)hal_.psram_alloc(n);
    Reason rwhy;
    if (!raw)
      rwhy.set("no memory");
    else if (!tv::raw_weights_export(plan_, params_, raw, n).ok())
      rwhy.set("the model does not export");
    else if (replace_file_atomic(hal_, kRawWeightsPath, raw, n, false, &rwhy))
      say("Reference weights written: %s (%u bytes)", kRawWeightsPath, (unsigned)n);
    if (rwhy.text[0]) say("Reference weights NOT written: %s", rwhy.text);
    if (raw) hal_.psram_free(raw);
  }
  return true;
}

}  // namespace tvfw
