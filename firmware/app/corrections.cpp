// Corrections from the field, and the frames Infer is unsure of.
//
// A person who sees the board wrong tells it the right class: 'c NAME' on the serial port, or a long press
// on the pad (a class picker: 1-2 taps = next, 3+ taps = choose; short taps alone still go back to the
// menu). The frame Infer classified last (its JPEG bytes, kept by infer_frame) is saved as
// /images/<class>/img_<n>c.jpg: numbered with the folder's photos (img_<n>.jpg, the board's one photo
// name), the 'c' marking a correction. The next Learn (or Train) reads it as any photo of its class.
// NAME is found as FAT finds a folder (a model class or a new class folder, letter case and trailing dots
// ignored); a name no class may have (tv/names.h: no '/' or '\', not only dots, not starting with '_') is
// refused before anything is written, so nothing lands outside /images/<class>/. A name of no class yet
// makes its folder, as 'n NAME' does, while the model and the new class folders make fewer than 16 classes.
//
// Unsure frames: a frame whose two most probable classes are less than AppConfig::unsure_margin apart
// (config.h) is saved as /images/_unsure/<counter>_<class it was seen as>.jpg, at most one every
// kUnsureIntervalMs and at most kUnsureMaxFiles of them: the oldest (the lowest counter) is removed first,
// and the counter goes on from the highest on the card, so the names sort by age. Folders starting with
// '_' are never classes (tv/names.h), so the board never trains on them; tvlink pull copies them.
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "tv/names.h"

namespace tvfw {

namespace {

constexpr int kUnsureDigits = 8;  // <counter> written with 8 digits, so name order is age order

// The counter of an unsure frame's name, "<digits>_<label><ext>"; -1 for any other name.
long unsure_counter(const char* name, const char* ext) {
  long n = 0;
  int digits = 0;
  for (; name[digits] >= '0' && name[digits] <= '9'; ++digits) {
    if (digits == 9) return -1;
    n = n * 10 + (name[digits] - '0');
  }
  const size_t len = strlen(name), ext_len = strlen(ext);
  if (digits == 0 || name[digits] != '_' || len < (size_t)digits + 1 + ext_len) return -1;
  return strcmp(name + len - ext_len, ext) == 0 ? n : -1;
}

// What /images/_unsure holds of the board's own: its frames (the oldest named) and the temporary of
// one a power cut interrupted.
struct UnsureScan {
  int count = 0;
  long oldest = -1, newest = 0;  // the first frame is 1
  char oldest_name[kPathMax] = {};
  char stale[kPathMax] = {};
};

void scan_unsure_entry(void* ctx, const char* name, bool is_dir) {
  UnsureScan& s = *(UnsureScan*)ctx;
  if (is_dir) return;
  if (unsure_counter(name, ".tmp") >= 0) snprintf(s.stale, sizeof s.stale, "%s", name);
  const long n = unsure_counter(name, ".jpg");
  if (n < 0) return;  // not the board's: left as it is
  s.count++;
  if (n > s.newest) s.newest = n;
  if (s.oldest < 0 || n < s.oldest) {
    s.oldest = n;
    snprintf(s.oldest_name, sizeof s.oldest_name, "%s", name);
  }
}

UnsureScan unsure_scan;  // off the loop task's stack

// Lists /images/_unsure into unsure_scan; a temporary a power cut left is removed.
UnsureScan& scan_unsure(Hal& hal) {
  UnsureScan& s = unsure_scan;
  s = UnsureScan();
  hal.list_dir(kUnsureDir, scan_unsure_entry, &s);
  char stale[kPathMax];
  if (s.stale[0] && join_path(stale, kUnsureDir, "/", s.stale)) hal.remove(stale);
  return s;
}

}  // namespace

// ---------------------------------------------------------------- corrections

void App::correct_frame(const char* asked) {
  say("%s", "");
  if (!inferring()) {
    say("c NAME works only in Infer: it saves the frame Infer just classified into class NAME's folder; select "
        "Infer in the menu, then send c NAME when a frame is seen wrong");
    return;
  }
  mode_ = Mode::Infer;  // from the picker too: back to inferring, whatever happens
  if (detector()) {
    say("c NAME corrects a classifier's frame; the model is a detector, whose frames are not corrected on the board: "
        "label the photos on the PC and train there");
    return;
  }
  if (!asked[0]) {
    say("c needs the right class: c NAME (a class of the menu, or a new class's name)");
    return;
  }
  if (asked[0] == '_') {
    say("'%s' is no class: folders starting with _ are the board's own (%s holds the frames it is unsure of); "
        "send c with the right class's name",
        asked, kUnsureDir);
    return;
  }
  if (!tv::name_allowed(asked, strlen(asked), kMaxLabelLength)) {
    say("'%s' cannot name a class folder: %s", asked, tv::kClassNameRule);
    return;
  }
  save_correction(asked);
}

void App::save_correction(const char* asked) {
  if (!frame_kept_) {
    say("Nothing to correct yet: no frame has been classified since Infer started (a correction saves the frame of "
        "the last 'Frame' line)");
    return;
  }
  if (!hal_.sd_ready()) {
    say("No SD card: a correction is saved as a photo on the card; insert one and start Infer again");
    return;
  }
  scan_new_folders();
  char folder[kMaxLabelLength + 1];
  const bool existing = find_class_folder(asked, folder);
  if (!existing && num_classes_ + num_new_ >= kMaxClasses) {
    say("Correction not saved: '%s' is no class, and the model and the new class folders already make %d classes, "
        "the most a model has; send c with one of the menu's classes",
        asked, kMaxClasses);
    return;
  }
  if (!existing) snprintf(folder, sizeof folder, "%s", asked);
  char dir[kPathMax], path[kPathMax], tmp[kPathMax];
  join_path(dir, kImagesDir, "/", folder);
  // The same frame corrected again (a slip of the finger): its photo moves, so it is in one class only.
  const bool again = corrected_frame_ == frame_kept_;
  if (again && strncmp(corrected_path_, dir, strlen(dir)) == 0 && corrected_path_[strlen(dir)] == '/') {
    say("Frame %u is already saved as %s", (unsigned)frame_kept_, corrected_path_);
    return;
  }
  Reason why;
  bool saved = false;
  if (make_images_folder(hal_, dir, &why)) {
    scan_capture_folder(dir);
    int next = capture_scan_.max_n + 1;
    if (!next_photo_path(dir, "c", &next, path, tmp))
      why.set("the name of a new photo in %s is too long for the card", dir);
    else if (!again)
      saved = write_new_file(hal_, tmp, path, frame_, frame_size_, &why);
    else if (!(saved = hal_.rename(corrected_path_, path)))
      why.set("cannot move %s to %s", corrected_path_, path);
  }
  if (!saved) {
    say("Correction not saved: %s", why.text);
    return;
  }
  if (!existing) {
    scan_new_folders();
    say("New class %s: its folder %s is made; Learn adds it to the model", folder, dir);
  }
  const char* seen = labels_[frame_best_];
  if (again) {
    say("Correction %d moved: frame %u is %s, not the class said before: %s is now %s", corrections_,
        (unsigned)frame_kept_, folder, corrected_path_, path);
  } else {
    corrections_++;
    say("Correction %d: frame %u, seen as %s (%.1f%%), is %s: saved as %s (%u bytes)%s", corrections_,
        (unsigned)frame_kept_, seen, (double)(100.f * frame_prob_), folder, path, (unsigned)frame_size_,
        strcmp(seen, folder) == 0 ? "; the model said so too" : "");
  }
  corrected_frame_ = frame_kept_;
  snprintf(corrected_path_, sizeof corrected_path_, "%s", path);
  say("%d correction%s since the last Learn: Learn (or Train) uses them with the class's other photos", corrections_,
      corrections_ == 1 ? "" : "s");
  char l2[24];
  snprintf(l2, sizeof l2, "fix %d", corrections_);
  show("CORRECTED", folder, l2, "for Learn");
}

void App::corrections_learned() {
  if (corrections_ > 0)
    say("The model learned from the %d correction%s saved since the last Learn", corrections_,
        corrections_ == 1 ? "" : "s");
  corrections_ = 0;
}

// ---------------------------------------------------------------- the class picker (a long press)

const char* App::picker_name(int i) const {
  if (i < num_classes_) return labels_[i];
  if (i < num_classes_ + num_new_) return new_labels_[i - num_classes_];
  return "Cancel";
}

void App::enter_picker() {
  say("%s", "");
  if (detector()) {
    say("A long press corrects a classifier's frame; the model is a detector, whose frames are not corrected on the "
        "board: inferring again");
    return;
  }
  if (!frame_kept_) {
    say("Nothing to correct yet: no frame has been classified since Infer started");
    return;
  }
  scan_new_folders();
  mode_ = Mode::Pick;
  pick_index_ = (frame_best_ + 1) % (picker_items() - 1);  // the class after the one it was seen as
  touch_reset_.store(true);
  pending_gesture_.store(0);
  say(">>> Correct frame %u (seen as %s, %.1f%%): which class is it?", (unsigned)frame_kept_, labels_[frame_best_],
      (double)(100.f * frame_prob_));
  say("  1-2 taps or 't' = next class, 3+ taps or 'l' = save the frame as that class, Cancel or 'x' = back to "
      "Infer, nothing saved");
  print_picker();
}

void App::print_picker() {
  for (int i = 0; i < picker_items(); ++i) say("%s%d. %s", i == pick_index_ ? "> " : "", i + 1, picker_name(i));
  char l1[24], l2[24];
  snprintf(l1, sizeof l1, "> %s", picker_name(pick_index_));
  snprintf(l2, sizeof l2, "%d/%d", pick_index_ + 1, picker_items());
  show("FIX AS", l1, l2, "3 taps=save");
}

void App::picker_input(Input in) {
  if (in == Input::Next) {
    pick_index_ = (pick_index_ + 1) % picker_items();
    print_picker();
    return;
  }
  if (in != Input::Select && in != Input::Stop) return;
  mode_ = Mode::Infer;
  touch_reset_.store(true);
  pending_gesture_.store(0);
  if (in == Input::Stop || pick_index_ == picker_items() - 1) {
    say("Correction cancelled: nothing saved; inferring again");
    return;
  }
  char name[kMaxLabelLength + 1];  // a copy: saving scans the new class folders again
  snprintf(name, sizeof name, "%s", picker_name(pick_index_));
  save_correction(name);
}

// ---------------------------------------------------------------- unsure frames

void App::keep_if_unsure(int best) {
  if (cfg_.unsure_margin <= 0 || !trained_weights_ || unsure_stopped_ || !hal_.sd_ready()) return;
  int second = -1;
  for (int k = 0; k < num_classes_; ++k)
    if (k != best && (second < 0 || probs_[k] > probs_[second])) second = k;
  if (second < 0) return;
  const float margin = probs_[best] - probs_[second];
  if (!(margin < cfg_.unsure_margin)) return;
  const uint32_t now = hal_.millis();
  if (unsure_kept_any_ && now - unsure_last_ms_ < kUnsureIntervalMs) return;  // one a second at most
  char path[kPathMax];
  Reason why;
  if (!save_unsure_frame(labels_[best], path, &why)) {
    unsure_stopped_ = true;
    say("Unsure frames: %s; no more are kept until Infer starts again (free space on the card)", why.text);
    return;
  }
  unsure_kept_any_ = true;
  unsure_last_ms_ = now;
  say("Frame %u: unsure (%s %.0f%%, %s %.0f%%: %.2f apart, under %.2f): kept as %s", (unsigned)frame_kept_,
      labels_[best], (double)(100.f * probs_[best]), labels_[second], (double)(100.f * probs_[second]), (double)margin,
      (double)cfg_.unsure_margin, path);
}

bool App::save_unsure_frame(const char* label, char* path, Reason* why) {
  if (!make_images_folder(hal_, kUnsureDir, why)) return false;
  const UnsureScan& s = scan_unsure(hal_);
  while (s.count >= kUnsureMaxFiles) {  // full: the oldest go first (more than the bound: back to it)
    char oldest[kPathMax];
    if (!join_path(oldest, kUnsureDir, "/", s.oldest_name) || !hal_.remove(oldest)) {
      why->set("cannot remove the oldest unsure frame %s", oldest);
      return false;
    }
    scan_unsure(hal_);  // s again, one fewer
  }
  char name[kMaxLabelLength + 16], tmp[kPathMax];
  snprintf(name, sizeof name, "/%0*ld_%s", kUnsureDigits, s.newest + 1, label);
  if (!join_path(path, kUnsureDir, name, ".jpg") || !join_path(tmp, kUnsureDir, name, ".tmp")) {
    why->set("the name of an unsure frame in %s is too long for the card", kUnsureDir);
    return false;
  }
  return write_new_file(hal_, tmp, path, frame_, frame_size_, why);
}

}  // namespace tvfw
