// Learning in seconds on the device: Learn adds the class folders the model does not have yet by weight
// imprinting (tv/train/imprint.h) and then runs the head update (tv/train/update.h): the frozen part of the network
// runs once per photo, right after its decode, into a PSRAM cache of features, and only the last layer
// trains, epoch after epoch, on that cache. The same core code as `tvtrain DATASET --init MODEL --update
// head`, with the same split, recipe and seed, so both write the same weights. New class: a new folder
// /images/<name>/ to capture into ('n NAME' on the serial port, or the menu's New class item: class<k>).
#include <stdio.h>
#include <string.h>

#include <new>

#include "app.h"
#include "train_images.h"
#include "tv/names.h"
#include "tv/train/backbone.h"
#include "tv/train/feature_source.h"
#include "tv/train/imprint.h"
#include "tv/train/train_session.h"
#include "tv/train/update.h"

namespace tvfw {

// One Learn run. In PSRAM: its two plans are too large for the loop task's stack.
struct LearnRun {
  TrainRun data;               // the card's photos, the split and the training arena
  tv::TrainRecipe recipe;      // the model's recipe as the head update runs it (no augmentation)
  bool from_backbone = false;  // the built-in backbone's start: every class is new (imprinted)
  int classes_before = 0;      // the model's classes before Learn (it goes back to them when Learn fails)
  int old_classes = 0;         // the classes the model had learned (0 from the backbone); the new ones follow
  int first = 0;               // the head: the only layer that trains
  tv::ModelPlan grown;         // the model with a row for each new class
  tv::ModelPlan suffix;        // the head as a network of its own, on the features
  float* params = nullptr;     // grown.param_count floats
  float* before = nullptr;     // params before training: the rows of classes without photos go back
  bool no_photos[kMaxClasses] = {};
  tv::FeatureSource fs;  // the features of every decoded photo
  float* cache = nullptr;
  int* slot = nullptr;
  void* lane = nullptr;
  const uint8_t* staged = nullptr;  // the photo decode_images just decoded (its features are cached next)
  uint64_t cache_us = 0, imprint_us = 0;
  tv::SessionResult result;
  // The validation photos of the classes the model had, right before Learn and after (-1: not measured).
  int before_correct = -1, after_correct = -1, old_val = 0;
};

namespace {

const uint8_t* staged_image(void* ctx, int) {
  return ((const LearnRun*)ctx)->staged;
}

int listed_label(void* ctx, int i) {
  return ((const LearnRun*)ctx)->data.list.label[i];
}

}  // namespace

// ---------------------------------------------------------------- new classes

void App::read_class_name(char* name, size_t cap) {
  size_t n = 0;
  const uint32_t t0 = hal_.millis();
  for (;;) {  // the rest of the line, as a terminal sends it (a pause of half a second ends it)
    const int c = hal_.serial_read();
    if (c < 0) {
      if (hal_.millis() - t0 > 500) break;
      hal_.delay_ms(1);
      continue;
    }
    if (c == '\n' || c == '\r') break;
    if ((c == ' ' || c == '\t') && n == 0) continue;
    if (n + 1 < cap) name[n++] = (char)c;
  }
  while (n > 0 && (name[n - 1] == ' ' || name[n - 1] == '\t')) --n;
  name[n] = 0;
}

void App::new_class(const char* asked) {
  say("%s", "");
  scan_new_folders();
  if (!hal_.sd_ready()) {
    say("No SD card: a new class needs a folder on the card");
    print_menu();
    return;
  }
  const bool existing = asked[0] && (first_same_card_folder(labels_, num_classes_, asked) >= 0 ||
                                     first_same_card_folder(new_labels_, num_new_, asked) >= 0);
  if (!existing && num_classes_ + num_new_ >= kMaxClasses) {
    say("Cannot add a class: the model and the new class folders already make %d classes, the most a model has "
        "(an existing class's name captures into it)",
        kMaxClasses);
    say_left_out();
    print_menu();
    return;
  }
  char name[kMaxLabelLength + 1];
  if (asked[0]) {
    if (!tv::name_allowed(asked, strlen(asked), kMaxLabelLength)) {
      say("'%s' cannot name a class folder: %s", asked, tv::kClassNameRule);
      print_menu();
      return;
    }
    snprintf(name, sizeof name, "%s", asked);
  } else {
    for (int k = num_classes_ + num_new_;; ++k) {  // class<k>: renamable later on the PC (tvtrain takes folder names)
      snprintf(name, sizeof name, "class%d", k);
      if (first_same_card_folder(labels_, num_classes_, name) < 0 &&
          first_same_card_folder(new_labels_, num_new_, name) < 0)
        break;
    }
  }
  // A name FAT takes for an existing class's folder captures into that folder, spelled as it is.
  const int model_class = first_same_card_folder(labels_, num_classes_, name);
  const int new_folder = first_same_card_folder(new_labels_, num_new_, name);
  if (model_class >= 0) {
    if (strcmp(labels_[model_class], name) != 0) say("%s is the card folder of class %s", name, labels_[model_class]);
    snprintf(name, sizeof name, "%s", labels_[model_class]);
    say("%s is already a class of the model: capturing into it", name);
  } else if (new_folder >= 0) {
    snprintf(name, sizeof name, "%s", new_labels_[new_folder]);
    say("%s is already a new class folder: capturing into it", name);
  } else {
    say("New class: %s (capture its photos, then Learn adds it to the model)", name);
  }
  enter_capture(name);
  scan_new_folders();
  for (int i = 0; i < menu_items(); ++i)
    if (tv::same_folder_name(item_name(i), strlen(item_name(i)), name, strlen(name))) menu_index_ = i;
}

// ---------------------------------------------------------------- Learn

// Learn before anything was learned (a blank card, the backbone's zero head, or random He-init weights):
// the first model, for every class folder captured so far. From the built-in backbone, Learn as always
// with every class new (imprinted from the backbone's features, then the head update: `tvtrain --start
// backbone --update head`); without one, trained whole on their photos (the menu's Train, from He-init
// weights): imprinting needs features that a trained network computes.
void App::learn_first_model() {
  say("%s", "");
  scan_new_folders();
  const int classes = num_classes_ + num_new_;
  if (classes < 2) {
    say("Learn needs 2 class folders with photos to make the first model; the card has %d: send 'n NAME' to add one",
        classes);
    return;
  }
  if (!start_new_model()) return;
  if (tier_ == WeightTier::Backbone) {
    say(">>> Learn: no trained model yet: the built-in backbone's features and a head for the %d class folders",
        num_classes_);
    learn_classes(true);
    return;
  }
  say(">>> Learn: no trained model yet: a new %s model for the %d class folders, trained on their photos", cfg_.preset,
      num_classes_);
  print_model();
  scan_new_folders();
  train();
}

void App::learn() {
  if (!has_model() || !trained_weights_) {  // nothing learned yet: the first model
    learn_first_model();
    return;
  }
  learn_classes(false);
}

void App::learn_classes(bool from_backbone) {
  report_ = TrainReport();
  report_.ran = true;
  report_.update = "head";
  say("%s", "");
  say(">>> Learn mode: new class folders added by imprinting, then the head update (the last layer trains on "
      "features the rest computes once per photo)");
  say("Instructions: 3+ taps, 'l' or 'x' = stop (within a batch) and save");
  show("LEARN", "loading...");
  scan_new_folders();
  say_left_out();
  if (!ready_to_train()) return;
  void* mem = hal_.psram_alloc(sizeof(LearnRun));
  if (!mem) {
    say("Cannot learn: no PSRAM for its %u-byte state", (unsigned)sizeof(LearnRun));
    return;
  }
  LearnRun* run = new (mem) LearnRun();
  run->from_backbone = from_backbone;
  const uint64_t t0 = hal_.micros();
  bool learned = plan_learning(*run) && cache_card_features(*run) && split_training_images(run->data) &&
                 measure_old_classes(*run, plan_, params_, &run->before_correct) && imprint_new_classes(*run) &&
                 run_head_update(*run) && measure_old_classes(*run, run->grown, run->params, &run->after_correct);
  if (learned) {
    report_learning(*run, (float)(hal_.micros() - t0) / 1e6f);
    compare_old_classes(*run);
    learned = adopt_learned(*run);
  } else {
    num_classes_ = run->classes_before;  // the model as it was
  }
  release_learning(run);
  scan_new_folders();
  if (learned) save_trained_model();
}

// The new classes (the card's new class folders with photos) after the model's, the grown model and
// its weights, and the recipe the head update runs.
bool App::plan_learning(LearnRun& run) {
  run.classes_before = num_classes_;
  run.old_classes = run.from_backbone ? 0 : num_classes_;
  scan_new_folders();
  for (int j = 0; j < num_new_; ++j) {
    char dir[kPathMax];
    int photos = 0;
    if (join_path(dir, kImagesDir, "/", new_labels_[j])) hal_.list_dir(dir, count_jpeg, &photos);
    if (photos == 0) {
      say("%s has no photos yet: it is left out (capture some, then Learn)", dir);
      continue;
    }
    strcpy(labels_[num_classes_++], new_labels_[j]);  // num_classes_ goes back if Learn fails
    say("New class %d: %s (%d photos)", num_classes_ - 1, new_labels_[j], photos);
  }
  const int added = num_classes_ - run.old_classes;
  report_.classes_added = added;
  tv::UpdateSpec head;
  head.mode = tv::UpdateMode::Head;
  run.recipe = recipe_;
  tv::update_recipe(head, &run.recipe);
  // the classes the model had keep its soft targets on their photos (as tvtrain --init adding classes does)
  if (run.recipe.epochs > 0) report_.distilled = tv::distill_new_classes(&run.recipe, run.old_classes, num_classes_);
  tv::Status st = tv::update_first_layer(plan_, head, &run.first);
  if (st.ok() && added > 0 && tv::imprint_layer(plan_) < 0) {
    say("Cannot learn new classes: they are added to the dense layer that produces the scores, and this model's "
        "last layer with weights is not one; train a model with every class on the PC");
    return false;
  }
  if (st.ok() && added > 0)
    st = tv::plan_with_classes(plan_, num_classes_, &run.grown);
  else if (st.ok())
    run.grown = plan_;
  if (!st.ok()) {
    say("Cannot learn: the model does not plan with %d classes: %s", num_classes_, StatusWords(st).text);
    return false;
  }
  const size_t bytes = run.grown.param_count * sizeof(float);
  run.params = bytes <= hal_.psram_free_bytes() ? (float*)hal_.psram_alloc(bytes) : nullptr;
  if (!run.params) {
    say("Cannot learn: no PSRAM for the %u bytes of weights with the new classes", (unsigned)bytes);
    return false;
  }
  tv::grow_class_params(plan_, params_, run.grown, run.params);
  say("Recipe: %s (%d epochs of the head update, batch %d; no augmentation: the frozen part runs once per photo)",
      recipe_name_, run.recipe.epochs, run.recipe.batch_size);
  return true;
}

// Every photo decoded once, its features (the head's input) cached at once: the decoded image is not kept.
bool App::cache_card_features(LearnRun& run) {
  TrainRun& d = run.data;
  const size_t feature_bytes = tv::prefix_feature_floats(run.grown, run.first) * sizeof(float);
  if (!list_images(d.list, d.class_begin, feature_bytes, true)) return false;
  tv::FeatureSourceSetup s;
  s.full = &run.grown;
  s.first = run.first;
  s.params = run.params;
  s.images.ctx = &run;
  s.images.image = staged_image;
  s.images.label = listed_label;
  s.n_samples = d.list.count;
  s.recipe = &run.recipe;
  s.seed = cfg_.seed;
  s.lanes = 1;  // without augmentation the lanes read the cache: one lane's buffers fill it
  const tv::FeatureSourceMemory m = tv::feature_source_memory(s, d.list.count);
  // the cache, and room left to decode the board's 240x240 photos into
  if (m.total_bytes + tv::kBoardDecodeBytes <= hal_.psram_free_bytes()) {
    run.cache = (float*)hal_.psram_alloc(m.cache_bytes ? m.cache_bytes : 1);
    run.slot = (int*)hal_.psram_alloc(m.slot_bytes ? m.slot_bytes : 1);
    run.lane = hal_.psram_alloc(m.lane_bytes);
  }
  if (!run.cache || !run.slot || !run.lane) {
    say("Cannot learn: the feature cache of %d photos needs %llu bytes of PSRAM and decoding a 240x240 photo %u more, "
        "%u are free",
        d.list.count, (unsigned long long)m.total_bytes, (unsigned)tv::kBoardDecodeBytes,
        (unsigned)hal_.psram_free_bytes());
    return false;
  }
  tv::Status st = tv::feature_source_init(&run.fs, s, run.cache, d.list.count, run.slot, run.lane, m.lane_bytes);
  if (!st.ok()) fatal("feature_source_init: %s", StatusWords(st).text);
  d.cache_bytes = m.cache_bytes;
  int* keep = d.list.label + d.list.count;
  const uint64_t t0 = hal_.micros();
  const uint32_t decodes_before = decodes_;
  if (!decode_images(d.list, input_, 0, keep, &run)) return false;
  report_.decodes = decodes_ - decodes_before;
  run.cache_us = hal_.micros() - t0;
  d.decode_ms = (float)run.cache_us / 1000.f;
  for (int c = 0; c < num_classes_; ++c) {
    int good = 0;
    for (int i = d.class_begin[c]; i < d.class_begin[c + 1]; ++i) good += keep[i];
    if (good > 0) continue;
    if (c >= run.old_classes) {
      say("Cannot learn class %s: none of its photos could be decoded (see the skips above)", labels_[c]);
      return false;
    }
    run.no_photos[c] = true;
    say("Note: class %s has no %sphoto on the card: its row stays as it is (removing a class means training anew)",
        labels_[c], d.class_begin[c + 1] > d.class_begin[c] ? "usable " : "");
  }
  return true;
}

bool App::cache_features(LearnRun& run, int index, const char* path) {
  run.staged = input_;
  int failed = -1;
  const tv::Status st = tv::feature_cache_add(&run.fs, &index, 1, &failed);
  if (st.ok()) return true;
  if (st.code == tv::StatusCode::NonFiniteActivation)
    say("Cannot learn: on %s layer %d (%s) of the model outputs infinite or NaN values (its weights overflow "
        "float); the model is unchanged",
        path, (int)st.layer, tv::layer_type_name(run.grown.desc.layers[st.layer].type));
  else
    say("Cannot learn: caching the features of %s failed: %s", path, StatusWords(st, &run.grown.desc).text);
  return false;
}

// Each new class's row from its training photos' features, its bias calibrated against the classes before it.
bool App::imprint_new_classes(LearnRun& run) {
  if (num_classes_ == run.old_classes) return true;
  const TrainRun& d = run.data;
  const int n = d.n_train;
  const size_t F = run.fs.feature_floats;
  const uint64_t bytes = ((uint64_t)n * F + 2u * (uint64_t)n + 2u) * sizeof(float) + (uint64_t)n * sizeof(int);
  float* features = bytes <= hal_.psram_free_bytes() ? (float*)hal_.psram_alloc((size_t)bytes) : nullptr;
  if (!features) {
    say("Cannot learn: imprinting needs %llu bytes of PSRAM, %u are free", (unsigned long long)bytes,
        (unsigned)hal_.psram_free_bytes());
    return false;
  }
  float* scratch = features + (size_t)n * F;
  int* labels = (int*)(scratch + 2 * (size_t)n + 2);
  for (int k = 0; k < n; ++k) {
    const int i = d.train_idx[k];
    memcpy(features + (size_t)k * F, run.cache + (size_t)run.slot[i] * F, F * sizeof(float));
    labels[k] = d.list.label[i];
  }
  const uint64_t t0 = hal_.micros();
  const tv::Status st = run.from_backbone
                            ? tv::imprint_head(run.grown, run.params, features, labels, n, scratch)
                            : tv::imprint_classes(run.grown, run.params, run.old_classes, features, labels, n, scratch);
  run.imprint_us = hal_.micros() - t0;
  for (int c = run.old_classes; c < num_classes_ && st.ok(); ++c) {
    int photos = 0;
    for (int k = 0; k < n; ++k) photos += labels[k] == c;
    say("Imprinted class %d (%s) from %d training photos", c, labels_[c], photos);
  }
  hal_.psram_free(features);
  if (!st.ok()) say_imprint_refusal(st);
  return st.ok();
}

void App::say_imprint_refusal(const tv::Status& st) {
  say("Cannot learn class %s: %s; the model is unchanged",
      st.layer >= 0 && st.layer < num_classes_ ? labels_[st.layer] : "?",
      st.code == tv::StatusCode::NonFiniteActivation
          ? "the model's features of its photos are infinite or NaN"
          : "the model's features of its photos are all zero, so they say nothing about it (train on the PC)");
}

// The samples the head trains on: the new classes' photos repeat up to the old classes' mean count
// (tv::balanced_samples, as tvtrain does), so that 5 new photos weigh about as much as an old class.
bool App::balance_new_classes(TrainRun& data, int first_new) {
  const TrainRun& d = data;
  const int count = tv::balanced_samples(d.train_idx, d.n_train, d.list.label, num_classes_, first_new, nullptr);
  if (count <= d.n_train) return true;                   // nothing to repeat (or too many: trained as they are)
  const size_t bytes = 2 * (size_t)count * sizeof(int);  // the samples, then the session's order
  data.samples = bytes <= hal_.psram_free_bytes() ? (int*)hal_.psram_alloc(bytes) : nullptr;
  if (!data.samples) {
    say("Cannot learn: no PSRAM for the %d training samples (%u bytes)", count, (unsigned)bytes);
    return false;
  }
  data.n_samples = tv::balanced_samples(d.train_idx, d.n_train, d.list.label, num_classes_, first_new, data.samples);
  say("The new classes' photos repeat up to the old classes' mean count: %d samples per epoch from %d photos",
      data.n_samples, d.n_train);
  return true;
}

// The training photos of the classes the model had: distillation computes their soft targets once.
int App::distilled_photos(const LearnRun& run) const {
  int n = 0;
  for (int k = 0; k < run.data.n_train; ++k) n += run.data.list.label[run.data.train_idx[k]] < run.old_classes;
  return n;
}

// The head trained on the cached features, from the imprinted weights.
bool App::run_head_update(LearnRun& run) {
  tv::Status st = tv::plan_suffix(run.grown, run.first, &run.suffix);
  if (!st.ok()) {
    say("Cannot learn: the model's last layer does not plan on its own: %s", StatusWords(st).text);
    return false;
  }
  const size_t base = run.grown.layers[run.first].param_offset;
  bool keep_rows = false;
  for (int c = 0; c < num_classes_; ++c) keep_rows |= run.no_photos[c];
  if (keep_rows) {
    const size_t bytes = run.grown.param_count * sizeof(float);
    run.before = bytes <= hal_.psram_free_bytes() ? (float*)hal_.psram_alloc(bytes) : nullptr;
    if (!run.before) {
      say("Cannot learn: no PSRAM to keep the rows of the classes without photos (%u bytes)", (unsigned)bytes);
      return false;
    }
    memcpy(run.before, run.params, bytes);
  }
  // Balanced against the classes the model had (none from the backbone: every class trains as it is).
  if (run.old_classes > 0 && num_classes_ > run.old_classes && !balance_new_classes(run.data, run.old_classes))
    return false;
  SessionPlan sp;
  sp.plan = &run.suffix;
  sp.recipe = &run.recipe;
  sp.source = tv::feature_samples(&run.fs);
  sp.features = true;
  sp.start = run.params + base;
  sp.first_layer = run.first;
  tv::TrainSession s;
  if (!start_session(run.data, sp, s)) return false;
  if (report_.distilled)
    say("Distillation: the %d old classes' %d training photos keep the model's soft targets (temperature %g, "
        "weight %g)",
        run.old_classes, distilled_photos(run), (double)tv::kDistillTemperature, (double)tv::kDistillWeight);
  if (!run_session(run.data, s, "LEARNING", &run.result)) return false;
  memcpy(run.params + base, s.trainer.params, run.suffix.param_count * sizeof(float));
  for (int c = 0; c < num_classes_; ++c)
    if (run.no_photos[c]) tv::copy_class_row(run.grown, c, run.before, run.params);
  if (run.data.n_val > 0) {
    if (keep_rows) memcpy(s.trainer.params, run.params + base, run.suffix.param_count * sizeof(float));
    report_.val_correct =
        tv::evaluate(s.eval, sp.source, run.data.val_idx, run.data.n_val, nullptr, probs_);  // on the cached features
  }
  return true;
}

// The run's closing lines: validation, time per photo and in all, and what the head update cost
// against a full update of the same epochs (FLOPs, and the board's peak memory).
void App::report_learning(LearnRun& run, float total_s) {
  const TrainRun& d = run.data;
  say("%s", "");
  say(report_.stopped ? "--- Learning Stopped (%d images trained) ---" : "--- Learning Complete ---", report_.samples);
  if (d.n_val > 0)
    say("Validation Accuracy: %.1f%%  (%d/%d correct)", 100.0 * report_.val_correct / d.n_val, report_.val_correct,
        d.n_val);
  else
    say("Validation Accuracy: no validation images (every class needs more than one)");
  const int photos = d.n_train + d.n_val;
  say("Time: features %.2f s for %d photos (%.1f ms per photo, decode included), imprinting %.3f s, head update "
      "%.2f s for %d images (%.3f ms per image), %.2f s in all",
      (double)run.cache_us / 1e6, photos, photos ? (double)run.cache_us / 1e3 / photos : 0.0,
      (double)run.imprint_us / 1e6, (double)run.result.train_us / 1e6, report_.samples,
      report_.samples ? (double)run.result.train_us / 1e3 / report_.samples : 0.0, (double)total_s);
  tv::UpdateRun u;
  u.train_images = d.n_train;
  u.train_samples = d.samples ? d.n_samples : d.n_train;
  u.val_images = d.n_val;
  u.epochs = run.recipe.epochs;
  u.distill_outputs = tv::distill_outputs(run.grown, run.recipe.opt);
  u.distilled_images = u.distill_outputs > 0 ? distilled_photos(run) : 0;
  const tv::TrainOptions opt = tv::session_options(run.recipe, d.n_val, true);
  const tv::UpdateFlops head = tv::update_run_flops(run.grown, run.first, u);
  const tv::UpdateMemory head_mem = tv::update_memory(run.grown, run.first, opt, u);
  tv::UpdateRun uf = u;
  uf.augment = tv::recipe_augments(recipe_);
  uf.distill_outputs = uf.distilled_images = 0;  // what a full update of the recipe, as Train runs it, costs
  const tv::UpdateFlops full = tv::update_run_flops(run.grown, 0, uf);
  const tv::UpdateMemory full_mem = tv::update_memory(run.grown, 0, tv::session_options(recipe_, d.n_val), uf);
  char soft[48] = "";
  if (head_mem.soft_target_bytes)
    snprintf(soft, sizeof soft, " + soft targets %llu", (unsigned long long)head_mem.soft_target_bytes);
  say("Head update: %llu FLOPs (a full update of the same epochs: %llu, %.0fx more); board peak %llu bytes = weights "
      "%llu + arena %llu + feature cache %llu + decode buffer %llu%s (a full update's: %llu)",
      (unsigned long long)head.total, (unsigned long long)full.total,
      head.total ? (double)full.total / (double)head.total : 0.0, (unsigned long long)head_mem.board_peak_bytes,
      (unsigned long long)head_mem.weights_bytes,
      (unsigned long long)(head_mem.train_arena_bytes > head_mem.infer_arena_bytes ? head_mem.train_arena_bytes
                                                                                   : head_mem.infer_arena_bytes),
      (unsigned long long)head_mem.cache_bytes, (unsigned long long)head_mem.decode_bytes, soft,
      (unsigned long long)full_mem.board_peak_bytes);
}

// The learned model becomes the loaded one (with its new classes): weights, plan and inference buffers.
// The run's other memory goes first, so the inference arena fits where the run's arenas were.
// How many validation photos of the classes the model had `model` (with `params`) gets right: its head
// (the layers from run.first) on the cached features. Not measured (-1) when they have no validation
// photo or the PSRAM cannot hold the evaluation; Learn goes on either way.
bool App::measure_old_classes(LearnRun& run, const tv::ModelPlan& model, const float* params, int* correct) {
  *correct = -1;
  const TrainRun& d = run.data;
  tv::ModelPlan* head = (tv::ModelPlan*)hal_.psram_alloc(sizeof(tv::ModelPlan));
  if (!head) return true;
  const tv::Status planned = tv::plan_suffix(model, run.first, head);
  const size_t work = planned.ok() ? tv::inference_memory(*head).work_bytes : 0;
  const bool fits = planned.ok() && work + (size_t)d.n_val * sizeof(int) <= hal_.psram_free_bytes();
  void* arena = fits ? hal_.psram_alloc(work) : nullptr;
  int* idx = arena ? (int*)hal_.psram_alloc((size_t)d.n_val * sizeof(int) + sizeof(int)) : nullptr;
  float probs[kMaxClasses];
  tv::Inference inf;
  run.old_val = 0;
  for (int k = 0; idx && k < d.n_val; ++k)
    if (d.list.label[d.val_idx[k]] < run.old_classes) idx[run.old_val++] = d.val_idx[k];
  if (idx && run.old_val > 0 &&
      tv::inference_init(&inf, head, params + model.layers[run.first].param_offset, arena, work).ok()) {
    tv::Status st;
    const int right = tv::evaluate(inf, tv::feature_samples(&run.fs), idx, run.old_val, nullptr, probs, &st);
    if (st.ok()) *correct = right;
  }
  void* const held[] = {idx, arena, head};
  for (void* p : held)
    if (p) hal_.psram_free(p);
  return true;
}

// Says how the classes the model had fare after Learn; a worse result is said, never silent (the
// previous model stays on the card as the backup every save keeps).
void App::compare_old_classes(const LearnRun& run) {
  if (run.before_correct < 0 || run.after_correct < 0) return;
  say("The %d class%s the model had: %d/%d validation photos right before Learn, %d/%d after", run.old_classes,
      run.old_classes == 1 ? "" : "es", run.before_correct, run.old_val, run.after_correct, run.old_val);
  if (run.after_correct < run.before_correct)
    say("Warning: the learned model validates worse on the classes it had (%d/%d, was %d/%d); the previous model is "
        "kept as %s (tvlink push it to go back); capturing more photos of the new classes usually helps",
        run.after_correct, run.old_val, run.before_correct, run.old_val, kModelBakPath);
}

bool App::adopt_learned(LearnRun& run) {
  float* learned = run.params;
  run.params = nullptr;
  release_learning_buffers(run);
  if (run.grown.param_count == plan_.param_count && run.grown.desc.num_classes == plan_.desc.num_classes) {
    memcpy(params_, learned, plan_.param_count * sizeof(float));
    hal_.psram_free(learned);
  } else {
    hal_.psram_free(params_);
    hal_.psram_free(infer_arena_);
    params_ = learned;
    infer_arena_ = nullptr;
    plan_ = run.grown;
    desc_ = run.grown.desc;
    Reason why;
    if (!ensure_float_buffers(&why)) {  // not expected: the run's arenas were larger
      say("The learned model cannot run here: %s; it is not saved, and the card's model is loaded again", why.text);
      load_weights();
      return false;
    }
  }
  trained_weights_ = true;
  return true;
}

void App::release_learning_buffers(LearnRun& run) {
  release_training(run.data);
  void** bufs[] = {(void**)&run.params, (void**)&run.before, (void**)&run.cache, (void**)&run.slot, &run.lane};
  for (void** b : bufs) {
    if (*b) hal_.psram_free(*b);
    *b = nullptr;
  }
}

void App::release_learning(LearnRun* run) {
  release_learning_buffers(*run);
  run->~LearnRun();
  hal_.psram_free(run);
}

}  // namespace tvfw
