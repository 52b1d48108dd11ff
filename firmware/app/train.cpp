// Training on the device: the card's images (train_images.cpp), decoded once into a PSRAM cache, trained
// by the core's session (tv/train/train_session.h, the same one tvtrain runs) with the batch split over both
// cores. App::train reads as its steps; each step says why it cannot go on.
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "train_images.h"
#include "tv/int8/q8_dequantize.h"
#include "tv/names.h"
#include "tv/train/backbone.h"
#include "tv/train/imprint.h"
#include "tv/train/train_session.h"
#include "tv/train/update.h"

namespace tvfw {

namespace {

const uint8_t* run_image(void* ctx, int i) {
  const TrainRun& r = *(const TrainRun*)ctx;
  return r.pixels + (size_t)i * r.image_bytes;
}

int run_label(void* ctx, int i) {
  return ((const TrainRun*)ctx)->list.label[i];
}

tv::SampleSource run_source(TrainRun& run) {
  tv::SampleSource s;
  s.ctx = &run;
  s.image = run_image;
  s.label = run_label;
  return s;
}

void run_lanes_on_hal(void* ctx, int lanes, tv::LaneFn fn, void* arg) {
  ((Hal*)ctx)->run_lanes(lanes, fn, arg);
}

// Image i of the run's list is a correction from the field (img_<n>c.jpg): the split always trains on it.
bool is_correction(const TrainRun& run, int i) {
  const char* name = run.list.pool + run.list.name_at[i];
  return tv::is_correction_photo(name, strlen(name));
}

}  // namespace

void App::train() {
  report_ = TrainReport();
  report_.ran = true;
  say("%s", "");
  say(">>> Training mode");
  say("Instructions: 3+ taps, 'l' or 'x' = stop (within a batch) and save");
  show("TRAINING", "loading...");
  if (!ready_to_train()) return;
  say(trained_weights_ ? "Continuing from saved weights" : "Starting fresh training");
  for (int j = 0; j < num_new_; ++j)
    say("Note: %s/%s is not a class of the model, so Train leaves it out: Learn adds new classes (then Train "
        "trains every class)",
        kImagesDir, new_labels_[j]);
  say("Recipe: %s (%d epochs, batch %d)", recipe_name_, recipe_.epochs, recipe_.batch_size);
  TrainRun run;
  const bool trained =
      load_training_images(run) && split_training_images(run) && choose_start(run) && run_training(run);
  release_training(run);
  if (trained) save_trained_model();
}

// The card can take the result and the weights are float (an int8 model's are dequantized, exactly).
bool App::ready_to_train() {
  if (!hal_.sd_ready()) {
    say("No SD card: cannot train");
    return false;
  }
  Reason why;
  if (!check_save_targets(&why)) {
    say("Cannot train: %s", why.text);
    return false;
  }
  if (engine_ != Engine::Int8) return true;
  if (!ensure_float_buffers(&why)) {
    say("Cannot train the int8 model: %s", why.text);
    return false;
  }
  tv::q8_dequantize_params(q8_, params_);
  engine_ = Engine::Float;  // from here on the float engine runs the model
  if (q8_work_) hal_.psram_free(q8_work_);
  if (blob_keep_) hal_.psram_free(blob_keep_);
  q8_work_ = nullptr;
  blob_keep_ = nullptr;
  say("The loaded model is int8: continuing from its weights dequantized to float (the trained model is saved");
  say("as a float model; run tvquant on it again for an int8 one)");
  return true;
}

// /images/<label>/*.jpg listed and decoded once into the cache; every class keeps a decoded photo.
bool App::load_training_images(TrainRun& run) {
  if (!list_images(run.list, run.class_begin, plan_.input.size(), false)) return false;
  const int n = run.list.count;
  run.image_bytes = plan_.input.size();
  run.cache_bytes = (uint64_t)run.image_bytes * (uint64_t)n;  // 64-bit: size_t is 32 on the board
  if (run.cache_bytes <= hal_.psram_free_bytes()) run.pixels = (uint8_t*)hal_.psram_alloc((size_t)run.cache_bytes);
  if (!run.pixels) {
    say("Not enough PSRAM for the image cache: %llu bytes for %d images (free: %llu)",
        (unsigned long long)run.cache_bytes, n, (unsigned long long)hal_.psram_free_bytes());
    return false;
  }
  int* keep = run.list.label + n;  // 1 when image i decoded
  const uint64_t t0 = hal_.micros();
  const uint32_t decodes_before = decodes_;
  decode_images(run.list, run.pixels, run.image_bytes, keep, nullptr);
  report_.decodes = decodes_ - decodes_before;
  run.decode_ms = (float)(hal_.micros() - t0) / 1000.f;
  // A class none of whose photos decoded would train as a class without examples.
  for (int c = 0; c < num_classes_; ++c) {
    int good = 0;
    for (int i = run.class_begin[c]; i < run.class_begin[c + 1]; ++i) good += keep[i];
    if (good == 0) {
      say("Cannot train: none of the %d photos of class %d (%s/%s) could be decoded (see the skips above); the "
          "model is unchanged",
          run.class_begin[c + 1] - run.class_begin[c], c, kImagesDir, labels_[c]);
      return false;
    }
  }
  return true;
}

// A new model's start, by the core's rule as tvtrain --start auto picks it: the built-in backbone with a
// head imprinted from the training photos when it helps with this many photos per class, else He-init.
bool App::choose_start(TrainRun& run) {
  if (trained_weights_ || tier_ != WeightTier::Backbone) return true;
  int fewest = run.list.count;
  const int* keep = run.list.label + run.list.count;
  for (int c = 0; c < num_classes_; ++c) {
    int good = 0;
    for (int i = run.class_begin[c]; i < run.class_begin[c + 1]; ++i) good += keep[i];
    if (good < fewest) fewest = good;
  }
  if (!tv::backbone_helps(fewest)) {
    tv::he_init(plan_, params_, cfg_.seed);
    tier_ = WeightTier::HeInit;
    snprintf(weights_source_, sizeof weights_source_, "random, preset %s, seed %llu", cfg_.preset,
             (unsigned long long)cfg_.seed);
    say("Start: He-init (%d photos in the smallest class; the backbone helps up to %d)", fewest,
        tv::kBackboneMaxPhotosPerClass);
    return true;
  }
  // The head's input for every training photo (the layers before it run forward once each), then imprinting.
  const int layer = tv::imprint_layer(plan_);
  const size_t F = tv::prefix_feature_floats(plan_, layer), W = tv::prefix_work_floats(plan_);
  const int n = run.n_train;
  const uint64_t bytes = ((uint64_t)n * F + W + 2u * (uint64_t)n + 2u) * sizeof(float) + (uint64_t)n * sizeof(int);
  float* features = bytes <= hal_.psram_free_bytes() ? (float*)hal_.psram_alloc((size_t)bytes) : nullptr;
  if (!features) {
    say("Cannot train from the backbone: imprinting its head needs %llu bytes of PSRAM, %u are free",
        (unsigned long long)bytes, (unsigned)hal_.psram_free_bytes());
    return false;
  }
  float* work = features + (size_t)n * F;
  float* scratch = work + W;
  int* labels = (int*)(scratch + 2 * (size_t)n + 2);
  tv::Status st;
  int k = 0;
  for (; k < n && st.ok(); ++k) {
    const int i = run.train_idx[k];
    st = tv::prefix_forward(plan_, layer, params_, run.pixels + (size_t)i * run.image_bytes, work,
                            features + (size_t)k * F);
    labels[k] = run.list.label[i];
  }
  const bool features_ok = st.ok();
  if (features_ok) st = tv::imprint_head(plan_, params_, features, labels, n, scratch);
  hal_.psram_free(features);
  if (!features_ok) {
    const int i = run.train_idx[k - 1];
    say("Cannot train from the backbone: its features of %s/%s: %s", labels_[run.list.label[i]],
        run.list.pool + run.list.name_at[i], StatusWords(st, &plan_.desc).text);
    return false;
  }
  if (!st.ok()) {
    say_imprint_refusal(st);
    return false;
  }
  say("Start: the built-in backbone, its head imprinted from the %d training photos (%d in the smallest class)", n,
      fewest);
  return true;
}

// The reference split: the last val_last_n decoded images (by name) of each class that are not corrections
// validate, keeping at least one to train and every correction (tvtrain's reference split).
bool App::split_training_images(TrainRun& run) {
  const int n = run.list.count;
  const int* keep = run.list.label + n;
  run.train_idx = run.list.label + 2 * n;
  run.val_idx = run.list.label + 3 * n;
  int corrections = 0;
  for (int c = 0; c < num_classes_; ++c) {
    int good = 0, plain = 0;
    for (int i = run.class_begin[c]; i < run.class_begin[c + 1]; ++i) {
      good += keep[i];
      plain += keep[i] && !is_correction(run, i);
    }
    const int n_val_c = tv::reference_val_count(good, plain, recipe_.val_last_n);
    int seen = 0;
    for (int i = run.class_begin[c]; i < run.class_begin[c + 1]; ++i) {
      if (!keep[i]) continue;
      const bool correction = is_correction(run, i);
      corrections += correction;
      if (correction || seen++ < plain - n_val_c)
        run.train_idx[run.n_train++] = i;
      else
        run.val_idx[run.n_val++] = i;
    }
  }
  report_.images = n;
  report_.skipped = n - run.n_train - run.n_val;
  report_.train_images = run.n_train;
  report_.val_images = run.n_val;
  if (run.n_train == 0) {  // every class has a decoded image, so this needs an empty class list
    say("No training images could be decoded");
    return false;
  }
  say("Decoded %d images once into a %llu-byte PSRAM cache%s in %.0f ms (%d skipped)", run.n_train + run.n_val,
      (unsigned long long)run.cache_bytes, run.pixels ? "" : " of their features", (double)run.decode_ms,
      report_.skipped);
  if (corrections > 0)
    say("%d of the training photos %s from the field (img_<n>c.jpg): trained on, never validated on", corrections,
        corrections == 1 ? "is a correction" : "are corrections");
  warn_thin_classes(run);
  return true;
}

// The warnings tvtrain gives for the same split (the thresholds are the core's, tv/train/train_session.h).
void App::warn_thin_classes(const TrainRun& run) {
  int train[kMaxClasses] = {}, val[kMaxClasses] = {};
  for (int k = 0; k < run.n_train; ++k) train[run.list.label[run.train_idx[k]]]++;
  for (int k = 0; k < run.n_val; ++k) val[run.list.label[run.val_idx[k]]]++;
  int big = 0, small = 0;
  for (int c = 0; c < num_classes_; ++c) {
    if (train[c] + val[c] == 0) continue;  // a class without photos (Learn keeps its row as it was)
    if (train[c] > train[big]) big = c;
    if (train[small] == 0 || train[c] < train[small]) small = c;
    if (train[c] < tv::kFewTrainingPhotos)
      say("Warning: class %s has only %d training photo%s: %d or more per class are needed to learn anything; "
          "capture more",
          labels_[c], train[c], train[c] == 1 ? "" : "s", tv::kFewTrainingPhotos);
    if (val[c] == 0)
      say("Warning: class %s has no validation photo, so its accuracy is not measured: capture more", labels_[c]);
  }
  if (train[small] > 0 && train[big] > tv::kImbalanceRatio * train[small])
    say("Warning: the classes are out of balance: %s has %d training photos, %s only %d (more than %dx): capture "
        "more of the small class, or the model will favour the large one",
        labels_[big], train[big], labels_[small], train[small], tv::kImbalanceRatio);
}

// The session in its PSRAM arena (and, for a plan other than the loaded one, its evaluation arena),
// from the starting weights; false (said) when it cannot start.
bool App::start_session(TrainRun& run, const SessionPlan& sp, tv::TrainSession& s) {
  const tv::ModelPlan& plan = *sp.plan;
  run.first_layer = sp.first_layer;
  const int n_train = run.samples ? run.n_samples : run.n_train;
  const tv::SessionMemory m = tv::session_memory(plan, *sp.recipe, n_train, run.n_val, sp.features, run.list.count);
  const tv::TrainMemory& tm = m.trainer;
  const size_t free_bytes = hal_.psram_free_bytes();
  const size_t eval_bytes = sp.plan == &plan_ ? 0 : m.eval_work_bytes;  // the loaded plan's inference arena is idle
  run.arena = tm.total_bytes + eval_bytes <= free_bytes ? hal_.psram_alloc(tm.total_bytes) : nullptr;
  if (run.arena && eval_bytes) run.eval_arena = hal_.psram_alloc(eval_bytes);
  if (!run.arena || (eval_bytes && !run.eval_arena)) {
    char eval[64] = "";
    if (eval_bytes) snprintf(eval, sizeof eval, " and %llu bytes of evaluation work", (unsigned long long)eval_bytes);
    say("Cannot train: the %llu-byte training arena (weights %llu, gradients %llu, optimizer %llu, activations %llu, "
        "scratch %llu)%s %s fit in the %llu bytes of PSRAM still free",
        (unsigned long long)tm.total_bytes, (unsigned long long)tm.params_bytes, (unsigned long long)tm.grad_bytes,
        (unsigned long long)tm.optimizer_bytes, (unsigned long long)tm.activation_bytes,
        (unsigned long long)tm.scratch_bytes, eval, eval_bytes ? "do not" : "does not", (unsigned long long)free_bytes);
    return false;
  }
  if (m.soft_target_bytes) {  // distillation (Learn adding classes): the starting model's soft targets
    run.soft_targets =
        m.soft_target_bytes <= hal_.psram_free_bytes() ? (float*)hal_.psram_alloc(m.soft_target_bytes) : nullptr;
    if (!run.soft_targets) {
      say("Cannot train: no PSRAM for the %u bytes of the old classes' soft targets (distillation)",
          (unsigned)m.soft_target_bytes);
      return false;
    }
  }
  tv::SessionSetup setup;
  setup.plan = &plan;
  setup.recipe = sp.recipe;
  setup.source = sp.source;
  setup.train = run.samples ? run.samples : run.train_idx;
  setup.n_train = n_train;
  setup.val = run.val_idx;
  setup.n_val = run.n_val;
  setup.seed = cfg_.seed;  // as tvtrain: the same images, seed and lanes train the same bits as on the host
  setup.train_arena = run.arena;
  setup.train_arena_bytes = tm.total_bytes;
  setup.eval_arena = eval_bytes ? run.eval_arena : infer_arena_;
  setup.eval_arena_bytes = m.eval_work_bytes;
  // `keep` is no longer needed: its ints become the order (n_samples more after the samples' own)
  setup.order = run.samples ? run.samples + run.n_samples : run.list.label + run.list.count;
  setup.probs = probs_;
  setup.soft_targets = run.soft_targets;
  setup.n_indices = run.list.count;
  const tv::Status ts = tv::session_init(&s, setup);
  if (!ts.ok()) fatal("session_init: %s", StatusWords(ts).text);
  say("Training arena: %u bytes in PSRAM (weights %u, gradients %u for %d lanes, optimizer %u, activations %u, "
      "scratch %u); %u bytes still free",
      (unsigned)tm.total_bytes, (unsigned)tm.params_bytes, (unsigned)tm.grad_bytes, s.options.lanes,
      (unsigned)tm.optimizer_bytes, (unsigned)tm.activation_bytes, (unsigned)tm.scratch_bytes,
      (unsigned)hal_.psram_free_bytes());
  memcpy(s.trainer.params, sp.start, plan.param_count * sizeof(float));
  // a model whose finite weights overflow float (an Inf or NaN output) is not trained from
  const tv::Status runs = tv::session_check_start(&s);
  if (!runs.ok()) {
    say("Cannot train: layer %d (%s) of the model outputs infinite or NaN values although its weights are finite "
        "(they overflow float); remove /header/model.tvb to start from He-init, or copy a working model",
        (int)runs.layer + sp.first_layer, tv::layer_type_name(plan.desc.layers[runs.layer].type));
    return false;
  }
  return true;
}

// The board's progress: the epoch headers and lines, every tenth batch, and 3+ taps / 'l' / 'x' to stop.
tv::SessionHooks App::training_hooks(BoardProgress& p) {
  tv::SessionHooks h;
  h.ctx = &p;
  h.runner = &p.runner;
  h.stop = &p.stop;
  h.clock_us = [](void* ctx) { return ((BoardProgress*)ctx)->app->hal_.micros(); };
  h.on_epoch_begin = [](void* ctx, int epoch, int epochs) {
    App& app = *((BoardProgress*)ctx)->app;
    app.say("%s", "");
    app.say("--- Epoch %d/%d ---", epoch, epochs);
    char l1[24];
    snprintf(l1, sizeof l1, "epoch %d/%d", epoch, epochs);
    app.show(((BoardProgress*)ctx)->title, l1, "3 taps=stop");
  };
  h.on_batch = [](void* ctx, int, int, int, const tv::BatchStats& b) {
    BoardProgress& p = *(BoardProgress*)ctx;
    App& app = *p.app;
    if (b.seen > 0) p.batches_done++;
    if (b.seen > 0 && (p.batches_done % 10 == 0 || p.batches_done == p.batches_total))
      app.say("Batch %d/%d - Loss: %.4f - Acc: %.1f%%", p.batches_done, p.batches_total,
              (double)(b.loss_sum / (float)b.seen), 100.0 * b.correct / b.seen);
    const Input in = app.poll_input(true);
    if ((in == Input::Select || in == Input::Stop) && !p.stop.exchange(true))
      app.say("Stop requested: finishing the current batch, then saving");
    app.hal_.delay_ms(0);
  };
  h.on_epoch = [](void* ctx, const tv::EpochReport& e) {
    App& app = *((BoardProgress*)ctx)->app;
    char val[32] = "";
    if (e.val_correct >= 0) snprintf(val, sizeof val, ", validation %d/%d", e.val_correct, e.val_total);
    app.say("Epoch %d/%d: loss %.4f, train accuracy %.1f%%, lr %g, %.0f ms%s%s", e.epoch, e.epochs,
            (double)e.train.mean_loss(), (double)(100.0f * e.train.accuracy()), (double)e.train.lr,
            (double)e.train_us / 1000.0, val,
            e.train.skipped_batches ? " (batches with NaN/Inf gradients were skipped)" : "");
  };
  return h;
}

// Runs a started session with the board's progress and stop keys; says how it ended. False when no
// weights are to be kept.
bool App::run_session(TrainRun& run, tv::TrainSession& s, const char* title, tv::SessionResult* out) {
  const tv::TrainRecipe& recipe = *s.setup.recipe;
  const int bs = recipe.batch_size > 0 ? recipe.batch_size : 1;
  const int batches_per_epoch = (s.setup.n_train + bs - 1) / bs;  // samples: more than images when balanced
  say("Val: %d images  Train: %d images", run.n_val, run.n_train);
  say("Training: %d samples, %d batches (%d epochs of %d, batch %d, %d gradient lanes on %d core%s)", s.setup.n_train,
      batches_per_epoch * recipe.epochs, recipe.epochs, batches_per_epoch, bs, s.options.lanes, hal_.cores(),
      hal_.cores() == 1 ? "" : "s");
  BoardProgress progress;
  progress.app = this;
  progress.title = title;
  progress.batches_total = batches_per_epoch * recipe.epochs;
  progress.runner.ctx = &hal_;
  progress.runner.run = run_lanes_on_hal;
  const tv::SessionResult r = tv::session_run(&s, training_hooks(progress));
  *out = r;
  report_.samples = r.samples;
  report_.epochs_run = r.epochs_run;
  report_.stopped = r.stopped;
  if (!r.status.ok()) {
    // before the first epoch: a training photo's soft targets (distillation); after it: a validation photo
    say("Training ended: layer %d (%s) outputs infinite or NaN values on a %s image (the weights overflow "
        "float)%s",
        (int)r.status.layer + run.first_layer, tv::layer_type_name(s.setup.plan->desc.layers[r.status.layer].type),
        r.epochs_run == 0 ? "training" : "validation", r.best_epoch ? "" : "; the model is unchanged");
    if (!r.best_epoch) return false;
  }
  if (r.best_epoch) say("Keeping the weights of epoch %d, the best on the validation images", r.best_epoch);
  return true;
}

// The session from the loaded weights to the weights to save (params_); false when none are to be saved.
bool App::run_training(TrainRun& run) {
  tv::TrainSession s;
  SessionPlan sp;
  sp.plan = &plan_;
  sp.recipe = &recipe_;
  sp.source = run_source(run);
  sp.start = params_;
  tv::SessionResult r;
  if (!start_session(run, sp, s) || !run_session(run, s, "TRAINING", &r)) return false;
  memcpy(params_, s.trainer.params, plan_.param_count * sizeof(float));
  trained_weights_ = true;
  report_training(run, (float)r.train_us / 1e6f);
  return true;
}

// The run's closing lines: the final validation, the time and the decodes saved by the cache.
void App::report_training(TrainRun& run, float train_s) {
  say("%s", "");
  say(report_.stopped ? "--- Training Stopped (%d images trained) ---" : "--- Training Complete ---", report_.samples);
  if (run.n_val > 0) {
    report_.val_correct = tv::evaluate(inf_, run_source(run), run.val_idx, run.n_val, nullptr, probs_);
    say("Validation Accuracy: %.1f%%  (%d/%d correct)", 100.0 * report_.val_correct / run.n_val, report_.val_correct,
        run.n_val);
  } else {
    say("Validation Accuracy: no validation images (every class needs more than one)");
  }
  report_.reference_decodes = (uint32_t)(report_.samples + run.n_val);
  say("Time: %.1f s for %d images (%.1f ms per image)", (double)train_s, report_.samples,
      report_.samples ? 1000.0 * (double)train_s / report_.samples : 0.0);
  say("JPEG decodes: %u for this run (each image once; the reference decodes every image in every epoch: %u)",
      (unsigned)report_.decodes, (unsigned)report_.reference_decodes);
}

// Frees what the run holds (each pointer once: they are cleared).
void App::release_training(TrainRun& run) {
  void** bufs[] = {(void**)&run.list.pool,
                   (void**)&run.list.name_at,
                   (void**)&run.list.label,
                   (void**)&run.pixels,
                   (void**)&run.samples,
                   (void**)&run.soft_targets,
                   &run.arena,
                   &run.eval_arena,
                   (void**)&rgb_};
  for (void** b : bufs) {
    if (*b) hal_.psram_free(*b);
    *b = nullptr;
  }
  rgb_cap_ = 0;
}

void App::save_trained_model() {
  Reason why;
  show("TRAINING", "saving...");
  if (save_model(&why)) {
    report_.saved = true;
  } else {
    say("SAVE FAILED: %s. The previous model on the card is unchanged; the new weights stay in memory.", why.text);
  }
  char l2[24];
  snprintf(l2, sizeof l2, "val %d/%d", report_.val_correct, report_.val_images);
  show("TRAINED", l2, report_.saved ? "saved" : "NOT saved");
}

}  // namespace tvfw
