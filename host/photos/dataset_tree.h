// How host/photos/dataset.cpp lists a dataset: a folder or a zip archive as a tree of '/'-separated relative
// paths, the OS junk left out, links and unsafe entries noted (internal to the dataset loader).
#pragma once
#include <zip.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "host/photos/image.h"

namespace tvh {
namespace dataset_tree {

// Largest single image file read (a photo is a few MB; this stops a stray video from exhausting memory).
constexpr size_t kMaxImageFileBytes = size_t(64) << 20;
// A zip entry declared larger than this, compressed more than kMaxZipRatio : 1, is refused unread:
// JPEG and PNG data hardly compress, so such an entry is not a photo (and may be a zip bomb).
constexpr uint64_t kZipRatioCheckBytes = uint64_t(1) << 20;
constexpr uint64_t kMaxZipRatio = 100;
// Folder depth below the dataset root that is listed (deeper levels: a link loop or not a dataset).
constexpr int kMaxFolderDepth = 32;

std::string parent_of(const std::string& rel);
std::string leaf_of(const std::string& rel);
std::string join(const std::string& dir, const std::string& name);
// True when `rel` is `dir` itself or lies below it ("" is the root: everything lies below it).
bool is_under(const std::string& rel, const std::string& dir);

// A file skipped while listing, before its display name is known.
struct Pending {
  std::string rel, reason, what;  // `what` completes "'<display>' <what>"
};

// The listing of a folder or a zip archive: directories and files as '/'-separated relative paths.
struct Tree {
  std::set<std::string> dirs;
  std::vector<std::string> files;                 // regular files (or zip entries), sorted
  std::vector<Pending> pending;                   // found unusable while listing
  std::map<std::string, zip_uint64_t> zip_index;  // file -> entry index (zip only)
  // Folders skipped: too deep, or reached a second time through a link (`first`: where it was reached
  // first, by sorted name; "" is the dataset folder itself).
  struct Loop {
    std::string rel, first;
    bool too_deep;
  };
  std::vector<Loop> loops;
  size_t junk = 0;

  std::vector<std::string> child_dirs(const std::string& dir) const {
    std::vector<std::string> out;
    for (const auto& d : dirs) {
      if (parent_of(d) == dir) out.push_back(leaf_of(d));
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  bool has_image_directly_in(const std::string& dir) const {
    for (const auto& f : files) {
      if (parent_of(f) == dir && is_image_name(leaf_of(f))) return true;
    }
    return false;
  }
  bool has_image_under(const std::string& dir) const {
    for (const auto& f : files) {
      if (is_under(f, dir) && is_image_name(leaf_of(f))) return true;
    }
    return false;
  }
  bool has_files_in(const std::string& dir) const {
    for (const auto& f : files) {
      if (parent_of(f) == dir) return true;
    }
    return false;
  }
};

// Lists the dataset folder `root` (links followed, each folder once, entries in sorted name order).
Tree list_folder(const std::string& root);

// An open zip archive, closed on scope exit. libzip handles are not thread-safe: guard with `mutex`.
struct ZipArchive {
  zip_t* zip = nullptr;
  std::mutex mutex;
  ~ZipArchive() {
    if (zip) zip_discard(zip);
  }
};

// Opens the dataset zip archive `path`, refusing a file that is not one with a sentence naming it.
void open_zip(const std::string& path, ZipArchive& archive);
// Why a zip entry's declared size refuses it unread ("" when it may be read).
std::string zip_size_refusal(const zip_stat_t& st);
// Lists a zip archive's entries (unsafe, linked and duplicate entries noted in pending).
Tree list_zip(zip_t* zip);
// Reads one zip entry (under the archive's mutex); throws naming `display` when it cannot.
std::vector<uint8_t> read_zip_entry(ZipArchive& archive, zip_uint64_t index, const std::string& display);
// What a file-system entry that is neither folder nor file is ("is a FIFO (named pipe)", ...).
const char* special_kind(const std::filesystem::file_status& st);

// `p` without its trailing slashes ("/" stays).
std::string strip_trailing_slashes(std::string p);

// Refuses a dataset path that does not exist or is neither a folder nor a file (the sentence ends with
// `what_to_give`); true for a file (a zip).
bool check_source_is_zip(const std::string& source, const std::string& what_to_give);

// Lists the dataset folder, or opens the zip `source` into *archive and lists it.
Tree list_dataset_source(const std::string& source, bool is_zip, std::shared_ptr<ZipArchive>* archive);

// How a folder or file of the dataset is named to the user ("photos/cat", "photos.zip:cat").
struct DisplayNames {
  std::string source;
  bool is_zip;
  std::string dir(const std::string& rel) const {
    if (is_zip) return source + ":" + rel;
    return rel.empty() ? source : source + "/" + rel;
  }
  std::string file(const std::string& rel) const { return is_zip ? source + ":" + rel : source + "/" + rel; }
};

}  // namespace dataset_tree
}  // namespace tvh
