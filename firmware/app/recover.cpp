// Boot's card tier and what a power cut in the middle of a save left behind (card.h describes the
// save's steps): a verified model.tvb.tmp is tried whenever model.tvb is missing or refused, and the
// save is finished only once it has loaded; the side files' temporaries (model.h.tmp,
// myWeights.bin.tmp) are finished when they hold exactly what the loaded model gives, else removed.
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "tv/crc32.h"
#include "tv/formats/raw_weights.h"

namespace tvfw {

namespace {

// CRC-32 and length of text written to a sink.
struct CrcSink {
  uint32_t crc = 0;
  size_t bytes = 0;
};

void crc_sink_write(void* ctx, const char* s, size_t n) {
  CrcSink& c = *(CrcSink*)ctx;
  c.crc = tv::crc32(c.crc, s, n);
  c.bytes += n;
}

}  // namespace

bool App::try_interrupted_save(bool main_refused, Reason* why) {
  if (!try_blob_file(kModelTmpPath, why)) {
    say("  SD %s (an interrupted save) refused: %s", kModelTmpPath, why->text);
    return false;
  }
  // Loaded: the save's last steps (the refused or missing model.tvb becomes the backup, as the save
  // would have made it).
  Reason fwhy;
  if (!finish_replace(hal_, kModelPath, true, &fwhy)) {
    say("  SD: loaded %s, but could not finish the interrupted save: %s", kModelTmpPath, fwhy.text);
    return true;
  }
  say("  SD: finished an interrupted save (%s -> %s%s)", kModelTmpPath, kModelPath,
      main_refused ? "; the refused model.tvb is now model.tvb.bak" : "");
  char rest[kPathMax];
  const char* comma = strchr(weights_source_, ',');
  snprintf(rest, sizeof rest, "%s", comma ? comma : "");
  if (snprintf(weights_source_, sizeof weights_source_, "%s (recovered from an interrupted save)%s", kModelPath, rest) <
      0)
    weights_source_[0] = 0;
  return true;
}

bool App::load_card_model(bool* have_main) {
  Reason why;
  *have_main = hal_.exists(kModelPath);
  bool main_loaded = false, done = false;
  if (*have_main) {
    main_loaded = try_blob_file(kModelPath, &why);
    if (!main_loaded) say("  SD %s refused: %s", kModelPath, why.text);
  }
  done = main_loaded;
  // An interrupted save leaves a verified .tmp beside the old model (or its backup): tried whenever
  // model.tvb did not load.
  if (!done && hal_.exists(kModelTmpPath)) {
    done = try_interrupted_save(*have_main, &why);
    main_loaded = done && !hal_.exists(kModelTmpPath);  // model.tvb is what loaded (the save was finished)
  }
  if (!done && hal_.exists(kModelBakPath)) {
    if (try_blob_file(kModelBakPath, &why)) {
      done = true;
      say("  SD: using the backup %s (the previous model)", kModelBakPath);
    } else {
      say("  SD %s refused: %s", kModelBakPath, why.text);
    }
  }
  if (!done && hal_.exists(kRawWeightsPath)) {
    if (try_raw_weights_file(kRawWeightsPath, &why))
      done = true;
    else
      say("  SD %s refused: %s", kRawWeightsPath, why.text);
  }
  if (!done) return false;  // nothing loaded: every temporary stays where it is
  // A model.tvb.tmp beside a model that loaded is an older save's (or a partial one).
  if (hal_.file_size(kModelTmpPath) >= 0 && hal_.remove(kModelTmpPath))
    say("  SD: removed %s, left by an interrupted save", kModelTmpPath);
  settle_side_temporaries(main_loaded);
  return true;
}

// The CRC-32 and length of what a save of the loaded model (from model.tvb) writes to `path` (model.h
// or myWeights.bin): 1 when computed, 0 when this model has no such file (a .tmp of it is stale), -1
// when the board cannot tell now (no memory, an int8 model's raw weights).
int App::expected_side_file(const char* path, uint32_t* crc, size_t* bytes) {
  if (strcmp(path, kRawWeightsPath) == 0) {
    if (!tv::raw_weights_compatible(plan_)) return 0;
    if (int8_engine() || !params_) return -1;
    const size_t n = tv::raw_weights_size(num_classes_);
    uint8_t* raw = (uint8_t*)hal_.psram_alloc(n);
    if (!raw) return -1;
    const bool ok = tv::raw_weights_export(plan_, params_, raw, n).ok();
    *crc = tv::crc32(0, raw, n);
    *bytes = n;
    hal_.psram_free(raw);
    return ok ? 1 : 0;
  }
  uint8_t* data = nullptr;
  size_t size = 0;
  Reason why;
  if (!read_whole_file(hal_, kModelPath, kMaxBlobBytes, &data, &size, &why)) return -1;
  bool ok = tv::blob_decode(data, size, &view_).ok() && tv::same_model(view_.model, plan_.desc);
  if (ok) {
    CrcSink sink;
    const tv::TextSink text{&sink, crc_sink_write};
    ok = tv::write_tinyvision_header(view_, tv::crc32(0, data, size), board_header_options(), text, &plan_).ok();
    *crc = sink.crc;
    *bytes = sink.bytes;
  }
  hal_.psram_free(data);
  return ok ? 1 : -1;
}

void App::settle_side_temporaries(bool main_loaded) {
  const char* const files[][2] = {{kHeaderPath, kHeaderTmpPath}, {kRawWeightsPath, kRawWeightsTmpPath}};
  for (const auto& f : files) {
    const char* path = f[0];
    const char* tmp = f[1];
    if (hal_.file_size(tmp) < 0) continue;
    uint32_t want = 0, got = 1;
    size_t want_bytes = 0, got_bytes = 0;
    const int known = main_loaded ? expected_side_file(path, &want, &want_bytes) : -1;
    if (known < 0) {  // never removed unseen: it may be the only copy
      say("  SD: kept %s (left by an interrupted save; the board cannot check it against the model in use)", tmp);
      continue;
    }
    const bool complete =
        known == 1 && crc_of_file(hal_, tmp, &got, &got_bytes) && got == want && got_bytes == want_bytes;
    Reason why;
    if (complete && finish_replace(hal_, path, false, &why))
      say("  SD: finished an interrupted save (%s -> %s)", tmp, path);
    else if (complete)
      say("  SD: %s is complete but could not take its place: %s", tmp, why.text);
    else if (hal_.remove(tmp))
      say("  SD: removed %s, left by an interrupted save", tmp);
  }
}

}  // namespace tvfw
