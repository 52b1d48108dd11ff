// The weight tiers at boot and the saves after training.
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "baked.h"
#include "tv/crc32.h"
#include "tv/header_writer.h"
#include "tv/legacy.h"

namespace tvfw {

namespace {

// The blob's class count and labels, for messages.
void describe_labels(const tv::BlobView& v, char* out, size_t cap) {
  size_t used = 0;
  out[0] = 0;
  for (int i = 0; i < v.num_labels && used + 4 < cap; ++i) {
    const char* t;
    size_t len;
    if (!tv::blob_label(v, i, &t, &len)) break;
    const int n = snprintf(out + used, cap - used, "%s%.*s", i ? "," : "", (int)len, t);
    if (n < 0) break;
    used += (size_t)n;
    if (used >= cap) {
      used = cap - 1;
      break;
    }
  }
}

}  // namespace

// Checks a blob against the compiled model and, when it fits, loads its weights into params_.
bool App::try_blob(const uint8_t* data, size_t size, bool* keep, Why* why) {
  *keep = false;
  const tv::Status st = tv::blob_decode(data, size, &view_);
  if (!st.ok()) {
    why->set("%s", tv::status_text(st.code));
    return false;
  }
  if (view_.model.num_classes != desc_.num_classes) {
    why->set("it holds %d classes, this firmware is built for %d", view_.model.num_classes, desc_.num_classes);
    return false;
  }
  if (!tv::same_model(view_.model, desc_)) {
    why->set("its model (input %dx%dx%d, %d layers) is not the compiled %s model", view_.model.input.height,
             view_.model.input.width, view_.model.input.channels, view_.model.num_layers, cfg_.preset);
    return false;
  }
  if (view_.is_int8()) {
    const tv::Status qs = tv::q8_bind(view_, plan_, &q8_);
    if (!qs.ok()) {
      why->set("its int8 tensors do not fit the model: %s (layer %d)", tv::status_text(qs.code), qs.layer);
      return false;
    }
    const tv::Q8Memory qm = tv::q8_memory(plan_);
    if (!q8_work_) q8_work_ = (int8_t*)hal_.psram_alloc(qm.work_bytes);
    if (!q8_work_) {
      why->set("no memory for the int8 work buffer (%u bytes)", (unsigned)qm.work_bytes);
      return false;
    }
    int8_ = true;
    *keep = true;
  } else {
    const tv::Status ls = tv::blob_load_float_params(view_, plan_, params_);
    if (!ls.ok()) {
      why->set("%s", tv::status_text(ls.code));
      return false;
    }
    int8_ = false;
  }
  // Labels: the firmware's own names decide the /images folders; a difference is worth a warning.
  bool same = view_.num_labels == num_classes_;
  for (int i = 0; same && i < num_classes_; ++i) {
    const char* t;
    size_t len;
    same = tv::blob_label(view_, i, &t, &len) && len == strlen(labels_[i]) && memcmp(t, labels_[i], len) == 0;
  }
  if (!same) {
    char got[160];
    describe_labels(view_, got, sizeof got);
    say("  note: the model's labels (%s) differ from the firmware's; using the firmware's", got);
  }
  return true;
}

bool App::try_blob_file(const char* path, Why* why) {
  uint8_t* data = nullptr;
  size_t size = 0;
  if (!read_whole_file(hal_, path, kMaxBlobBytes, &data, &size, why)) return false;
  Why inner;
  bool keep = false;
  const bool ok = try_blob(data, size, &keep, &inner);
  if (ok) {
    snprintf(weights_source_, sizeof weights_source_, "%s, %u bytes, CRC-32 0x%08x%s", path, (unsigned)size,
             (unsigned)tv::crc32(0, data, size), int8_ ? ", int8" : "");
  } else {
    why->set("%s", inner.text);
  }
  if (keep) {
    if (blob_keep_) hal_.psram_free(blob_keep_);
    blob_keep_ = data;
  } else {
    hal_.psram_free(data);
  }
  return ok;
}

bool App::try_legacy_file(const char* path, Why* why) {
  if (!tv::legacy_compatible(plan_)) {
    why->set("raw weight files only describe the webmcu network, this firmware runs %s", cfg_.preset);
    return false;
  }
  const long n = hal_.file_size(path);
  if (n >= 0 && (size_t)n != tv::legacy_size(num_classes_)) {
    const int k = tv::legacy_classes_for_size((size_t)n);
    if (k > 0)
      why->set("it is %ld bytes, i.e. %d classes; this firmware is built for %d (%u bytes)", n, k, num_classes_,
               (unsigned)tv::legacy_size(num_classes_));
    else
      why->set("it is %ld bytes, which fits no class count (this firmware needs %u)", n,
               (unsigned)tv::legacy_size(num_classes_));
    return false;
  }
  uint8_t* data = nullptr;
  size_t size = 0;
  if (!read_whole_file(hal_, path, kMaxBlobBytes, &data, &size, why)) return false;
  const tv::Status st = tv::legacy_import(data, size, plan_, params_);
  if (st.ok())
    snprintf(weights_source_, sizeof weights_source_, "%s, the reference firmware's raw weights, %u bytes", path,
             (unsigned)size);
  else
    why->set("%s", tv::status_text(st.code));
  hal_.psram_free(data);
  return st.ok();
}

void App::load_weights() {
  say("Weights: looking for them (SD card > baked header > He-init)");
  Why why;
  // Tier 1: the SD card.
  if (hal_.sd_ready()) {
    bool done = false;
    const bool have_main = hal_.exists(kModelPath);
    if (have_main) {
      if (try_blob_file(kModelPath, &why))
        done = true;
      else
        say("  SD %s refused: %s", kModelPath, why.text);
    }
    // An interrupted save leaves a verified .tmp beside the backup; finish it.
    if (!done && !have_main && hal_.exists(kModelTmpPath)) {
      if (try_blob_file(kModelTmpPath, &why)) {
        done = true;
        if (hal_.rename(kModelTmpPath, kModelPath)) {
          say("  SD: finished an interrupted save (%s -> %s)", kModelTmpPath, kModelPath);
          char rest[kPathMax];
          const char* comma = strchr(weights_source_, ',');
          snprintf(rest, sizeof rest, "%s", comma ? comma : "");
          if (snprintf(weights_source_, sizeof weights_source_, "%s (recovered from an interrupted save)%s", kModelPath,
                       rest) < 0)
            weights_source_[0] = 0;
        }
      } else {
        say("  SD %s (an interrupted save) refused: %s", kModelTmpPath, why.text);
      }
    }
    if (!done && hal_.exists(kModelBakPath)) {
      if (try_blob_file(kModelBakPath, &why)) {
        done = true;
        say("  SD: using the backup %s (the previous model)", kModelBakPath);
      } else {
        say("  SD %s refused: %s", kModelBakPath, why.text);
      }
    }
    if (!done && strcmp(cfg_.preset, "webmcu") == 0 && hal_.exists(kLegacyPath)) {
      if (try_legacy_file(kLegacyPath, &why))
        done = true;
      else
        say("  SD %s refused: %s", kLegacyPath, why.text);
    }
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
  const BakedModel baked = baked_model();
  if (baked.blob) {
    bool keep = false;  // the baked bytes live in flash for good
    if (try_blob(baked.blob, baked.size, &keep, &why)) {
      tier_ = WeightTier::Baked;
      trained_weights_ = true;
      snprintf(weights_source_, sizeof weights_source_, "%s, %u bytes, CRC-32 0x%08x%s", baked.source,
               (unsigned)baked.size, (unsigned)tv::crc32(0, baked.blob, baked.size), int8_ ? ", int8" : "");
      say("Weights: baked (%s)", weights_source_);
      return;
    }
    say("  baked %s refused: %s", baked.source, why.text);
  } else {
    say("  baked: none compiled in (build with -DTV_BAKED_HEADER=\\\"model.h\\\" to add one)");
  }
  // Tier 3: random weights.
  tv::he_init(plan_, params_, cfg_.seed);
  tier_ = WeightTier::HeInit;
  trained_weights_ = false;
  snprintf(weights_source_, sizeof weights_source_, "random, seed %llu", (unsigned long long)cfg_.seed);
  say("Weights: He-init (%s)", weights_source_);
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

bool write_header(void* ctx, CardWriter* out, Why* why) {
  HeaderJob& job = *(HeaderJob*)ctx;
  job.out = out;
  tv::HeaderOptions opt;  // tvexport's defaults, so both write the same bytes
  opt.tool = "tvexport";
  opt.version = TV_VERSION;
  const tv::TextSink sink{&job, sink_write};
  const tv::Status st = tv::write_tinyvision_header(*job.view, job.crc, opt, sink, job.plan);
  if (!st.ok()) {
    why->set("the header writer refused the model: %s", tv::status_text(st.code));
    return false;
  }
  return true;
}

}  // namespace

// Saves the current weights: the blob (atomically, previous model kept as .bak), then the C header
// of the same blob, then (webmcu preset) the reference's raw myWeights.bin.
bool App::save_model(Why* why) {
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
  char provenance[200];
  snprintf(provenance, sizeof provenance,
           "tool=tinyvision-firmware\nversion=%s\npreset=%s\nepochs=%d\nimages=%d\nweights_before=%s\n",
           TV_FIRMWARE_VERSION, cfg_.preset, report_.epochs_run, report_.train_images, tier_name(tier_));
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
    why->set("cannot encode the model: %s", tv::status_text(es.code));
    return false;
  }
  const uint32_t crc = tv::crc32(0, blob, size);
  const bool had_model = hal_.exists(kModelPath);
  if (!replace_file_atomic(hal_, kModelPath, blob, size, true, why)) {
    hal_.psram_free(blob);
    return false;
  }
  snprintf(weights_source_, sizeof weights_source_, "%s, %u bytes, CRC-32 0x%08x", kModelPath, (unsigned)size,
           (unsigned)crc);
  say("Weights saved to SD: %s (%u bytes, CRC-32 0x%08x)%s%s", kModelPath, (unsigned)size, (unsigned)crc,
      had_model ? "; the previous model is kept as " : "", had_model ? kModelBakPath : "");
  tier_ = WeightTier::SD;

  // The C header of the same blob, as tvexport writes it.
  Why hwhy;
  HeaderJob job{&view_, crc, &plan_, nullptr};
  const tv::Status ds = tv::blob_decode(blob, size, &view_);
  if (!ds.ok()) hwhy.set("the saved blob does not decode: %s", tv::status_text(ds.code));
  if (ds.ok() && replace_file_atomic(hal_, kHeaderPath, write_header, &job, false, &hwhy))
    say("Header written: %s (copy it next to the sketch and build with -DTV_BAKED_HEADER to bake the model in)",
        kHeaderPath);
  else
    say("Header NOT written: %s (the model itself is saved)", hwhy.text);
  hal_.psram_free(blob);

  // The reference firmware's own file, so its sketches can load this model too.
  if (tv::legacy_compatible(plan_) && strcmp(cfg_.preset, "webmcu") == 0) {
    const size_t n = tv::legacy_size(num_classes_);
    uint8_t* raw = (uint8_t*)hal_.psram_alloc(n);
    Why rwhy;
    if (!raw)
      rwhy.set("no memory");
    else if (!tv::legacy_export(plan_, params_, raw, n).ok())
      rwhy.set("the model does not export");
    else if (replace_file_atomic(hal_, kLegacyPath, raw, n, false, &rwhy))
      say("Reference weights written: %s (%u bytes)", kLegacyPath, (unsigned)n);
    if (rwhy.text[0]) say("Reference weights NOT written: %s", rwhy.text);
    if (raw) hal_.psram_free(raw);
  }
  return true;
}

}  // namespace tvfw
