// The application's side of the USB link: the status report and the verified install of a pushed
// model (the protocol itself is in link.cpp).
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "link.h"
#include "tv/crc32.h"
#include "tv/link/link_frame.h"
#include "tv/names.h"

namespace tvfw {

namespace {

struct TextOut {
  char* out;
  size_t cap, used = 0;
  void add(const char* fmt, ...) __attribute__((format(printf, 2, 3)));
};

void TextOut::add(const char* fmt, ...) {
  if (used + 1 >= cap) return;
  va_list ap;
  va_start(ap, fmt);
  const int n = vsnprintf(out + used, cap - used, fmt, ap);
  va_end(ap);
  if (n > 0) used += (size_t)n < cap - used ? (size_t)n : cap - used - 1;
}

}  // namespace

class AppLink : public LinkHandler {
 public:
  explicit AppLink(App& app) : a_(app) {}

  size_t status_text(char* out, size_t cap) override {
    TextOut t{out, cap};
    t.add("firmware=%s\n", TV_FIRMWARE_VERSION);
    if (a_.detector())
      t.add("model=%dx%dx%d input, detector of %d object classes, %u parameters\n", a_.plan_.input.h, a_.plan_.input.w,
            a_.plan_.input.c, a_.num_classes_ - 1, (unsigned)a_.plan_.param_count);
    else if (a_.has_model())
      t.add("model=%dx%dx%d input, %d classes, %u parameters\n", a_.plan_.input.h, a_.plan_.input.w, a_.plan_.input.c,
            a_.num_classes_, (unsigned)a_.plan_.param_count);
    else
      t.add("model=none yet (a blank card: New class for each class, capture, then Learn)\n");
    t.add("network=%s\n", a_.recipe_name_);
    t.add("engine=%s\n", a_.int8_engine() ? "int8" : "float");
    t.add("weights=%s (%s)\n", tier_name(a_.tier_), a_.weights_source_);
    for (int i = a_.first_class(); i < a_.num_classes_; ++i) {  // a detector's background is no class
      char dir[kPathMax];
      int photos = 0;
      if (a_.hal_.sd_ready() && join_path(dir, kImagesDir, "/", a_.labels_[i]))
        a_.hal_.list_dir(dir, count_jpeg, &photos);
      t.add("class=%s %d\n", a_.labels_[i], photos);
    }
    const long long card_free = a_.hal_.sd_free_bytes();
    if (!a_.hal_.sd_ready())
      t.add("card=none\n");
    else if (card_free < 0)
      t.add("card_free=unknown\n");
    else
      t.add("card_free=%lld\n", card_free);
    t.add("psram_free=%u\n", (unsigned)a_.hal_.psram_free_bytes());
    return t.used;
  }

  bool install_model(uint8_t* data, size_t size, Reason* done, Reason* why) override {
    Hal& hal = a_.hal_;
    static Reason inner, card;  // off the loop task's stack
    inner = Reason();
    card = Reason();
    // A folder where model.tvb or its .tmp/.bak belong would be renamed into the backup's place (the
    // real backup removed): refused first, as training refuses it, with the card and model untouched.
    if (!a_.check_save_targets(&card)) {
      why->set("nothing was installed: %s", card.text);
      hal.psram_free(data);
      return false;
    }
    // The same checks as a model read from the card at boot (it decodes, plans, its engine accepts
    // it, it fits the memory; labels become folder names by the same rules), with its bytes held.
    // Not handed over (nullptr): the bytes are written to the card below.
    if (!a_.try_blob(data, size, nullptr, &inner)) {
      why->set("%s", inner.text);
      hal.psram_free(data);
      restore();
      return false;
    }
    if (!hal.exists(kHeaderDir) && !hal.mkdir(kHeaderDir))
      card.set("cannot create %s", kHeaderDir);
    else
      replace_file_atomic(hal, kModelPath, data, size, true, &card);
    if (card.text[0]) {
      why->set("the model is good but installing it failed: %s", card.text);
      a_.release_model();
      hal.psram_free(data);
      restore();
      return false;
    }
    const uint32_t crc = tv::crc32(0, data, size);
    if (a_.int8_engine())
      a_.blob_keep_ = data;  // the int8 tensors are used in place
    else
      hal.psram_free(data);
    a_.tier_ = WeightTier::SD;
    a_.trained_weights_ = true;
    snprintf(a_.weights_source_, sizeof a_.weights_source_, "%s, %u bytes, CRC-32 0x%08x%s", kModelPath, (unsigned)size,
             (unsigned)crc, a_.int8_engine() ? ", int8" : "");
    if (a_.menu_index_ >= a_.menu_items()) a_.menu_index_ = 0;
    a_.say("USB link: installed %s; the previous model is kept as %s", a_.weights_source_, kModelBakPath);
    a_.print_model();
    done->set("installed %s (%u bytes, CRC-32 0x%08x): %d classes, %s engine, in use now", kModelPath, (unsigned)size,
              (unsigned)crc, a_.num_classes_, a_.int8_engine() ? "int8" : "float");
    return true;
  }

  bool capture(const char* label, size_t len, int count, Reason* done, Reason* why) override {
    const char* folder = nullptr;  // a class of the model's, or a new class folder (Learn adds it)
    for (int i = a_.first_class(); i < a_.num_classes_ + a_.num_new_; ++i) {
      const char* l = i < a_.num_classes_ ? a_.labels_[i] : a_.new_labels_[i - a_.num_classes_];
      if (!folder && tv::same_folder_name(l, strlen(l), label, len)) folder = l;  // the folder, as FAT finds it
    }
    if (!folder) {
      why->set("the model in use has no class named '%.*s'", (int)(len < 40 ? len : 40), label);
      return false;
    }
    if (count < 1 || count > tv::link::kMaxCaptures) {
      why->set("%d photos asked for; one request takes 1 to %d", count, tv::link::kMaxCaptures);
      return false;
    }
    a_.enter_capture(folder);
    if (a_.mode_ != App::Mode::Capture) {
      why->set("cannot capture: no SD card, or %s/%s cannot be created", kImagesDir, folder);
      return false;
    }
    const int before = a_.capture_count_;
    for (int i = 0; i < count && a_.capture_count_ - before == i; ++i) a_.capture_one();
    const int saved = a_.capture_count_ - before;
    a_.mode_ = App::Mode::Menu;
    if (saved == 0) {
      why->set("no photo was saved (the camera gave no frame, or the card refused it)");
      return false;
    }
    done->set("saved %d photo%s of %s (%d on the card)", saved, saved == 1 ? "" : "s", folder, a_.capture_count_);
    return true;
  }

  bool rename(const char* from, size_t from_len, const char* to, size_t to_len, Reason* done, Reason* why) override {
    return a_.rename_class(from, from_len, to, to_len, done, why);
  }

 private:
  // The card is unchanged: the model it holds (or the tier after it) is loaded again.
  void restore() {
    a_.say("USB link: the pushed model was not installed; loading the model in use again");
    a_.load_weights();
    if (a_.menu_index_ >= a_.menu_items()) a_.menu_index_ = 0;
  }
  App& a_;
};

void App::serve_link_session() {
  if (inferring()) leave_infer();
  mode_ = Mode::Menu;
  say("USB link: connected (the menu continues when the PC is done)");
  show("USB LINK");
  AppLink handler(*this);
  const bool bye = serve_link(hal_, handler, tv::link::kMagic0);
  say(bye ? "USB link: closed" : "USB link: the PC fell silent; back to the menu");
  // Taps made while the session held the board are dropped, as those made during training.
  touch_reset_.store(true);
  if (pending_gesture_.exchange(0) != 0) say("Ignored a touch gesture made during the USB link session");
  print_menu();
}

}  // namespace tvfw
