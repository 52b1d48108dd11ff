// Class names as card folders (the rule is the core's, tv/names.h): the model's labels turned into
// distinct folder names, and the class folders found on the card.
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "tv/names.h"

namespace tvfw {

int first_same_card_folder(const char (*labels)[kMaxLabelLength + 1], int n, const char* name) {
  for (int i = 0; i < n; ++i)
    if (tv::same_folder_name(labels[i], strlen(labels[i]), name, strlen(name))) return i;
  return -1;
}

// The model's labels as folder names: each usable label as it is, unless FAT would put it in the folder
// of an earlier class; then, and for labels no folder can have, class<i> (class<i>_2, _3, ... when that
// name is taken by another class). Deterministic, and said.
void App::name_classes(const tv::BlobView& view) {
  if (detector()) {  // a detector's label 0 names its background: never a folder, kept as the blob has it
    const char* t = nullptr;
    size_t len = 0;
    if (!tv::blob_label(view, 0, &t, &len) || len < 1 || len > (size_t)kMaxLabelLength) {
      t = "_background";
      len = strlen(t);
    }
    memcpy(labels_[0], t, len);
    labels_[0][len] = 0;
  }
  for (int i = first_class(); i < num_classes_; ++i) {
    const char* t = nullptr;
    size_t len = 0;
    const bool usable = tv::blob_label(view, i, &t, &len) && tv::name_allowed(t, len, kMaxLabelLength);
    if (usable) {
      memcpy(labels_[i], t, len);
      labels_[i][len] = 0;
      if (first_same_card_folder(labels_, i, labels_[i]) < 0) continue;
    }
    const int other = usable ? first_same_card_folder(labels_, i, labels_[i]) : -1;
    for (int k = 1;; ++k) {  // a name no earlier class has and no later label asks for
      char name[kMaxLabelLength + 1];
      snprintf(name, sizeof name, k == 1 ? "class%d" : "class%d_%d", i, k);
      bool taken = first_same_card_folder(labels_, i, name) >= 0;
      for (int j = i + 1; j < num_classes_ && !taken; ++j)
        taken = tv::blob_label(view, j, &t, &len) && tv::name_allowed(t, len, kMaxLabelLength) &&
                tv::same_folder_name(t, len, name, strlen(name));
      if (taken) continue;
      if (usable)
        say("  note: class %d's label '%s' names the same card folder as class %d's '%s' (FAT ignores letter case and "
            "trailing dots and spaces): class %d is called %s",
            i, labels_[i], other, labels_[other], i, name);
      else
        say("  note: class %d's label cannot name a card folder (1 to %d characters, no '/', '\\' or control "
            "characters, not only dots and spaces): it is called %s",
            i, kMaxLabelLength, name);
      memcpy(labels_[i], name, sizeof name);
      break;
    }
  }
}

namespace {

// The card's class folders by name: the kKept first names in strcmp order (tvtrain's order of class
// folders), whatever order the card lists them in, and how many there are in all. Twice the board's
// classes are kept, so the first 16 folders that are not a model's class are always among them.
struct FolderScan {
  static constexpr int kIgnoredNamed = 3;
  static constexpr int kKept = 2 * kMaxClasses;
  char names[kKept][kMaxLabelLength + 1];
  int count = 0;                          // kept (sorted)
  int total = 0;                          // usable folder names on the card
  int ignored = 0;                        // folders no class can be named after
  char ignored_names[kIgnoredNamed][48];  // the first of them (cut at 44 characters)
};

void scan_class_folder(void* ctx, const char* name, bool is_dir) {
  FolderScan& s = *(FolderScan*)ctx;
  if (!is_dir || !name[0] || name[0] == '.' || name[0] == '_') return;  // hidden, or the board's own (_unsure)
  if (!tv::name_allowed(name, strlen(name), kMaxLabelLength)) {
    if (s.ignored < FolderScan::kIgnoredNamed)
      snprintf(s.ignored_names[s.ignored], sizeof s.ignored_names[0], "%.44s%s", name, strlen(name) > 44 ? "..." : "");
    s.ignored++;
    return;
  }
  s.total++;
  if (s.count == FolderScan::kKept && strcmp(name, s.names[s.count - 1]) >= 0) return;  // later than every kept one
  int at = s.count < FolderScan::kKept ? s.count++ : s.count - 1;  // full: the last kept one drops out
  for (; at > 0 && strcmp(s.names[at - 1], name) > 0; --at) strcpy(s.names[at], s.names[at - 1]);
  strcpy(s.names[at], name);
}

FolderScan folder_scan;  // about 1 KB: kept off the loop task's stack

// The card's class folders into folder_scan, by name.
FolderScan& scan_card_folders(Hal& hal) {
  FolderScan& scan = folder_scan;
  scan = FolderScan();
  if (hal.sd_ready()) hal.list_dir(kImagesDir, scan_class_folder, &scan);
  return scan;
}

// "a, b, c and 4 more": the kept names from `from` on (at most 3 named), of `left` in all.
void name_left_out(const FolderScan& scan, int from, int left, char* out, size_t cap) {
  size_t used = 0;
  out[0] = 0;
  int named = 0;
  for (int i = from; i < scan.count && named < 3 && used < cap; ++i, ++named) {
    const int k = snprintf(out + used, cap - used, "%s%s", named ? ", " : "", scan.names[i]);
    if (k > 0) used += (size_t)k;
  }
  if (left > named && used < cap) snprintf(out + used, cap - used, " and %d more", left - named);
}

}  // namespace

void App::scan_new_folders() {
  const FolderScan& scan = scan_card_folders(hal_);
  num_new_ = 0;
  int model_folders = 0, i = 0;
  for (; i < scan.count; ++i) {
    if (first_same_card_folder(labels_, num_classes_, scan.names[i]) >= 0 ||
        first_same_card_folder(new_labels_, num_new_, scan.names[i]) >= 0) {
      ++model_folders;
      continue;
    }
    if (num_classes_ + num_new_ == kMaxClasses) break;
    strcpy(new_labels_[num_new_++], scan.names[i]);
  }
  // the class folders past the board's classes, by name: said by Learn and New class
  left_out_ = scan.total - model_folders - num_new_;
  if (left_out_ > 0) name_left_out(scan, i, left_out_, left_out_names_, sizeof left_out_names_);
  if (left_out_ < 0) left_out_ = 0;
}

void App::say_left_out() {
  if (left_out_ > 0)
    say("  %d class folder%s left out (a model has at most %d classes; the first by name are taken): %s", left_out_,
        left_out_ == 1 ? " is" : "s are", kMaxClasses, left_out_names_);
}

bool App::find_class_folder(const char* name, char* folder) {
  const int model_class = first_same_card_folder(labels_, num_classes_, name);
  const int new_folder = model_class < 0 ? first_same_card_folder(new_labels_, num_new_, name) : -1;
  if (model_class < 0 && new_folder < 0) return false;
  snprintf(folder, kMaxLabelLength + 1, "%s", model_class >= 0 ? labels_[model_class] : new_labels_[new_folder]);
  return true;
}

int App::he_init_labels(char* ignored, size_t ignored_cap) {
  if (ignored_cap) ignored[0] = 0;
  if (cfg_.num_labels > 0) {
    for (int i = 0; i < cfg_.num_labels && i < kMaxClasses; ++i)
      snprintf(labels_[i], sizeof labels_[i], "%s", cfg_.labels[i]);
    return cfg_.num_labels;
  }
  const FolderScan& scan = scan_card_folders(hal_);
  if (scan.ignored > 0 && ignored_cap) {
    size_t used = 0;
    for (int i = 0; i < scan.ignored && i < FolderScan::kIgnoredNamed && used < ignored_cap; ++i) {
      const int k = snprintf(ignored + used, ignored_cap - used, "%s'%s'", i ? ", " : "", scan.ignored_names[i]);
      if (k > 0) used += (size_t)k;
    }
    if (scan.ignored > FolderScan::kIgnoredNamed && used < ignored_cap)
      snprintf(ignored + used, ignored_cap - used, " and %d more", scan.ignored - FolderScan::kIgnoredNamed);
  }
  // Folders FAT would make one (a card written elsewhere, or tvsim's folder): the first by name is the class.
  int n = 0, i = 0;
  for (; i < scan.count && n < kMaxClasses; ++i) {
    const int same = first_same_card_folder(labels_, n, scan.names[i]);
    if (same < 0)
      strcpy(labels_[n++], scan.names[i]);
    else
      say("  note: the class folder %s/%s is the same folder as %s/%s on a FAT card (letter case, trailing dots and "
          "spaces): ignored",
          kImagesDir, scan.names[i], kImagesDir, labels_[same]);
  }
  left_out_ = scan.total - i;
  if (left_out_ > 0) {
    name_left_out(scan, i, left_out_, left_out_names_, sizeof left_out_names_);
    say_left_out();
  }
  return n;
}

}  // namespace tvfw
