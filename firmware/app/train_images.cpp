// The card's training images: listed per class folder (counted first, sorted by name), then decoded once
// into the PSRAM cache that training reads (App::list_images, App::decode_images).
#include "train_images.h"

#include <stdio.h>
#include <string.h>

#include "app.h"

namespace tvfw {

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

}  // namespace

// Lists /images/<label>/*.jpg|jpeg: counts first (and says what the folders hold that training cannot
// use), refuses a class without photos (unless empty_ok: Learn keeps such a class's row) or more photos
// than the PSRAM can cache (cache_per_photo bytes each) before anything is allocated, then lists the
// names and sorts each class. False (said) when training cannot go on.
bool App::list_images(ImageList& list, int* class_begin, uint64_t cache_per_photo, bool empty_ok) {
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
  for (int c = 0; c < num_classes_ && !empty_ok; ++c) {
    if (list.per_class[c] == 0) {
      say("No images in %s/%s: capture some for every class first", kImagesDir, labels_[c]);
      return false;
    }
  }
  // Everything the list and the cache will take, before either is allocated.
  const uint64_t per_image = cache_per_photo + 5 * sizeof(int32_t);  // the cache, index, 4 ints
  const uint64_t need = per_image * (uint64_t)list.cap + list.pool_cap;
  const uint64_t free_bytes = hal_.psram_free_bytes();
  if (need > free_bytes) {
    int largest = 0;
    for (int c = 1; c < num_classes_; ++c)
      if (list.per_class[c] > list.per_class[largest]) largest = c;
    say("Cannot train: the %d photos in %s need %llu bytes of PSRAM (%llu per photo at the model's %dx%dx%d input%s, "
        "and their names), only %llu are free: about %llu photos fit; move some out of the class folders (the "
        "largest: %s/%s, %d photos)",
        list.cap, kImagesDir, (unsigned long long)need, (unsigned long long)per_image, plan_.input.h, plan_.input.w,
        plan_.input.c, cache_per_photo == plan_.input.size() ? "" : " as cached features",
        (unsigned long long)free_bytes, (unsigned long long)(free_bytes / per_image), kImagesDir, labels_[largest],
        list.per_class[largest]);
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
    if (list.count == class_begin[c] && !empty_ok) {
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

// Decodes image i of the list into pixels + i * stride (keep[i] = 1) once; names the first few skips of
// each kind and counts the rest, then says what the board can decode. With `learn`, each decoded image
// (stride 0: all in one buffer) has its features cached at once (cache_features); false when that
// stops the run (said).
bool App::decode_images(const ImageList& list, uint8_t* pixels, size_t stride, int* keep, LearnRun* learn) {
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
      } else if (!jpeg_to_input(file_buf, (size_t)size, pixels + (size_t)i * stride, &why)) {
        kind = kSkipKinds + (int)decode_fail_;
      }
    }
    if (kind < 0) {
      keep[i] = 1;
      if (learn && !cache_features(*learn, i, path)) {
        if (file_buf) hal_.psram_free(file_buf);
        return false;
      }
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
  if (total == 0) return true;
  say("Skipped %d of %d photos: %s", total, list.count, line);
  if (skips[kSkipKinds + (int)DecodeFail::NotJpeg] || skips[kSkipKinds + (int)DecodeFail::TooLarge] ||
      skips[kSkipKinds + (int)DecodeFail::Corrupt])
    say("The board decodes baseline JPEGs of up to %u pixels (the photos it takes are 240x240); for other photos "
        "train on the PC (tvtrain photos/ -o model.tvb) and copy model.tvb to %s on the card",
        (unsigned)kMaxDecodePixels, kModelPath);
  return true;
}

}  // namespace tvfw
