// Renaming a class in one step (tvlink rename): its card folder and the model's label. The model on the
// card (or the baked one) is encoded again with the new label, everything else as it was (int8 tensors,
// provenance), written atomically, and loaded again; a failure puts the folder back.
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "tv/crc32.h"
#include "tv/model/blob.h"
#include "tv/names.h"

namespace tvfw {

namespace {

// What one rename works with, static: off the loop task's stack.
struct RenameJob {
  char from[kMaxLabelLength + 1];
  char to[kMaxLabelLength + 1];
  int index = -1;      // the class (0 .. num_classes-1) or new class folder (num_classes ..)
  bool model = false;  // a class of the model, whose label changes
  char src[kPathMax], dst[kPathMax];
  bool moved = false;    // the folder was renamed (to be put back on failure)
  bool adopted = false;  // the folder already had the new name (an interrupted rename finished)
  int photos = 0;        // in the folder afterwards
  const char* labels[kMaxClasses];
  char names[kMaxClasses][kMaxLabelLength + 1];
};
RenameJob job;

// A folder-name comparison of two NUL-terminated names.
bool same_folder(const char* a, const char* b) {
  return tv::same_folder_name(a, strlen(a), b, strlen(b));
}

}  // namespace

bool App::rename_class(const char* from, size_t from_len, const char* to, size_t to_len, Reason* done, Reason* why) {
  job = RenameJob();
  if (!find_rename(from, from_len, to, to_len, why)) return false;
  if (!move_class_folder(why)) return false;
  if (job.model && !relabel_card_model(why)) {
    put_class_folder_back();
    load_weights();
    scan_new_folders();
    return false;
  }
  load_weights();
  scan_new_folders();
  if (menu_index_ >= menu_items()) menu_index_ = 0;
  const char* folder_note =
      job.adopted ? " (an interrupted rename finished)" : (job.moved ? "" : " (made by the first capture)");
  done->set("renamed %s to %s: %s/%s, %d photo%s%s%s%s", job.from, job.to, kImagesDir, job.to, job.photos,
            job.photos == 1 ? "" : "s", folder_note, job.model ? "; model: " : "", job.model ? weights_source_ : "");
  say("Renamed class %s to %s", job.from, job.to);
  print_menu();
  return true;
}

// The class named `from` (its exact spelling, else the one FAT takes for the same folder), and whether `to`
// may become its name: an allowed folder name no other class or new class folder has.
bool App::find_rename(const char* from, size_t from_len, const char* to, size_t to_len, Reason* why) {
  if (!hal_.sd_ready()) {
    why->set("the board has no SD card, and classes are folders on it");
    return false;
  }
  if (!tv::name_allowed(to, to_len, kMaxLabelLength)) {
    why->set("'%.*s' cannot name a class folder: %s", (int)(to_len < 40 ? to_len : 40), to, tv::kClassNameRule);
    return false;
  }
  memcpy(job.to, to, to_len);
  job.to[to_len] = 0;
  scan_new_folders();
  const int total = num_classes_ + num_new_;
  auto name_of = [this](int i) { return i < num_classes_ ? labels_[i] : new_labels_[i - num_classes_]; };
  for (int pass = 0; pass < 2 && job.index < 0; ++pass)
    for (int i = first_class(); i < total && job.index < 0; ++i)  // a detector's background is no class
      if (pass == 0 ? (strlen(name_of(i)) == from_len && memcmp(name_of(i), from, from_len) == 0)
                    : tv::same_folder_name(name_of(i), strlen(name_of(i)), from, from_len))
        job.index = i;
  if (job.index < 0) {
    why->set("the board has no class named '%.*s' (tvlink status lists them)", (int)(from_len < 40 ? from_len : 40),
             from);
    return false;
  }
  snprintf(job.from, sizeof job.from, "%s", name_of(job.index));
  job.model = job.index < num_classes_ && (tier_ == WeightTier::SD || tier_ == WeightTier::Baked);
  if (strcmp(job.from, job.to) == 0) {
    why->set("class %s already has that name", job.from);
    return false;
  }
  if (!join_path(job.src, kImagesDir, "/", job.from) || !join_path(job.dst, kImagesDir, "/", job.to)) {
    why->set("the name is too long for a card path");
    return false;
  }
  for (int i = 0; i < total; ++i) {
    if (i == job.index || !same_folder(name_of(i), job.to)) continue;
    // A model class whose folder is gone and a new folder with the new name: a rename a power cut
    // interrupted after moving the folder; finished by relabelling the model.
    if (job.index < num_classes_ && i >= num_classes_ && !hal_.exists(job.src) && strcmp(name_of(i), job.to) == 0) {
      job.adopted = true;
      continue;
    }
    why->set("'%s' is already the name of %s %s: choose another name", job.to,
             i < num_classes_ ? "the model's class" : "the new class folder", name_of(i));
    return false;
  }
  return true;
}

// Renames /images/<from> to /images/<to> (through a hidden name when only letter case or trailing dots
// differ: FAT takes those for the folder itself). No folder yet is no error: the class has no photos.
bool App::move_class_folder(Reason* why) {
  if (job.adopted || !hal_.exists(job.src)) {
    if (!job.adopted && hal_.exists(job.dst)) {
      why->set("%s exists on the card and is not a class folder: move it away on a computer, then rename", job.dst);
      return false;
    }
    hal_.list_dir(job.dst, count_jpeg, &job.photos);
    return true;
  }
  if (hal_.file_size(job.src) >= 0) {
    why->set("%s is a file, not a class folder: remove it on a computer", job.src);
    return false;
  }
  const bool same = same_folder(job.from, job.to);
  if (!same && hal_.exists(job.dst)) {
    why->set("%s exists on the card and is not a class folder: move it away on a computer, then rename", job.dst);
    return false;
  }
  char hidden[kPathMax];
  const bool ok = join_path(hidden, kImagesDir, "/.renaming") &&
                  (same ? !hal_.exists(hidden) && hal_.rename(job.src, hidden) && hal_.rename(hidden, job.dst)
                        : hal_.rename(job.src, job.dst));
  if (!ok) {
    if (same && hal_.exists(hidden)) hal_.rename(hidden, job.src);
    why->set("the card refused to rename %s to %s: nothing was changed", job.src, job.dst);
    return false;
  }
  job.moved = true;
  hal_.list_dir(job.dst, count_jpeg, &job.photos);
  return true;
}

void App::put_class_folder_back() {
  if (!job.moved) return;
  char hidden[kPathMax];
  if (same_folder(job.from, job.to) && join_path(hidden, kImagesDir, "/.renaming") && hal_.rename(job.dst, hidden) &&
      hal_.rename(hidden, job.src))
    return;
  if (!hal_.rename(job.dst, job.src))
    say("  could not rename %s back to %s: rename it on a computer", job.dst, job.src);
}

// The model in use encoded again with the new label (its other labels as the board names their folders)
// and written as /header/model.tvb with its C header; the model it replaces is the same weights, so the
// backup (Learn's previous model) is kept as it is.
bool App::relabel_card_model(Reason* why) {
  for (int i = 0; i < num_classes_; ++i) {
    snprintf(job.names[i], sizeof job.names[i], "%s", i == job.index ? job.to : labels_[i]);
    job.labels[i] = job.names[i];
  }
  const int classes = num_classes_;
  const bool baked = tier_ == WeightTier::Baked;
  release_model();  // view_ is free for the old model's bytes, and the header's scratch after
  uint8_t* file = nullptr;
  size_t size = 0;
  Reason inner;
  if (baked) {
    size = cfg_.baked_size;
  } else if (!read_whole_file(hal_, kModelPath, kMaxBlobBytes, &file, &size, &inner)) {
    why->set("the model's label was not changed: %s", inner.text);
    return false;
  }
  const uint8_t* bytes = baked ? cfg_.baked_blob : file;
  const tv::Status st = tv::blob_decode(bytes, size, &view_);
  uint8_t* out = nullptr;
  size_t written = 0;
  tv::Status es = tv::ok_status();
  if (st.ok() && view_.num_labels == classes) {
    const tv::BlobContents c = tv::blob_contents_relabeled(view_, job.labels);
    const size_t cap = tv::blob_encoded_size(c);
    out = (uint8_t*)hal_.psram_alloc(cap);
    if (out) es = tv::blob_encode(c, out, cap, &written);
  }
  if (file) hal_.psram_free(file);
  bool ok = false;
  if (!st.ok() || view_.num_labels != classes)
    why->set("the model's label was not changed: %s is not the model in use", baked ? "the baked model" : kModelPath);
  else if (!out)
    why->set("the model's label was not changed: no memory to encode it again");
  else if (!es.ok())
    why->set_status("the model's label was not changed", es);
  else if ((!hal_.exists(kHeaderDir) && !hal_.mkdir(kHeaderDir)) || !check_save_targets(&inner))
    why->set("the model's label was not changed: %s", inner.text[0] ? inner.text : "cannot create the model's folder");
  else if (!write_card_model(out, written, false, &inner))
    why->set("the model's label was not changed: %s", inner.text);
  else
    ok = true;
  if (out) hal_.psram_free(out);
  return ok;
}

}  // namespace tvfw
