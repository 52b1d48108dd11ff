#include "host/dataset.h"

#include <errno.h>
#include <sys/stat.h>
#include <zip.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <string_view>
#include <thread>

#include "host/error.h"
#include "host/files.h"
#include "host/image.h"

namespace tvh {
namespace {

namespace fs = std::filesystem;

// Largest single image file read (a photo is a few MB; this stops a stray video from exhausting memory).
constexpr size_t kMaxImageFileBytes = size_t(64) << 20;
// A zip entry declared larger than this, compressed more than kMaxZipRatio : 1, is refused unread:
// JPEG and PNG data hardly compress, so such an entry is not a photo (and may be a zip bomb).
constexpr uint64_t kZipRatioCheckBytes = uint64_t(1) << 20;
constexpr uint64_t kMaxZipRatio = 100;
// Folder depth below the dataset root that is listed (deeper levels: a link loop or not a dataset).
constexpr int kMaxFolderDepth = 32;

std::string parent_of(const std::string& rel) {
  const size_t slash = rel.find_last_of('/');
  return slash == std::string::npos ? std::string() : rel.substr(0, slash);
}

std::string leaf_of(const std::string& rel) {
  const size_t slash = rel.find_last_of('/');
  return slash == std::string::npos ? rel : rel.substr(slash + 1);
}

std::string join(const std::string& dir, const std::string& name) {
  return dir.empty() ? name : dir + "/" + name;
}

// True when `rel` is `dir` itself or lies below it ("" is the root: everything lies below it).
bool is_under(const std::string& rel, const std::string& dir) {
  if (dir.empty()) return true;
  return rel.size() > dir.size() && rel.compare(0, dir.size(), dir) == 0 && rel[dir.size()] == '/';
}

// OS junk: hidden names (.DS_Store, AppleDouble ._x, .git...), Windows' Thumbs.db/desktop.ini and
// recycle bins, macOS' __MACOSX archive folder and Icon\r files.
bool is_os_junk(const std::string& part) {
  if (part.empty()) return false;
  if (part[0] == '.' || part == "__MACOSX" || part == "Icon\r") return true;
  std::string lower = part;
  for (char& ch : lower) ch = (char)std::tolower((unsigned char)ch);
  return lower == "thumbs.db" || lower == "desktop.ini" || lower == "ehthumbs.db" || lower == "ehthumbs_vista.db" ||
         lower == "$recycle.bin" || lower == "system volume information";
}

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

// Adds `rel`'s parent directories to tree.dirs.
void add_parents(Tree& tree, const std::string& rel) {
  for (std::string p = parent_of(rel); !p.empty(); p = parent_of(p)) tree.dirs.insert(p);
}

const char* special_kind(const fs::file_status& st) {
  switch (st.type()) {
    case fs::file_type::fifo: return "is a FIFO (named pipe)";
    case fs::file_type::socket: return "is a socket";
    case fs::file_type::block: return "is a block device";
    case fs::file_type::character: return "is a character device";
    default: return "is not a regular file";
  }
}

// Lists `rel_dir` below `root` into `tree`, entries in sorted name order so that a folder reached twice
// through links is always kept under the same (the first sorted) name, whatever order the file system
// lists it in. `seen` maps each folder's device and inode to where it was first reached.
void walk_folder(const fs::path& root, const std::string& rel_dir, int depth,
                 std::map<std::pair<dev_t, ino_t>, std::string>& seen, Tree& tree) {
  std::error_code ec;
  const fs::path dir = rel_dir.empty() ? root : root / rel_dir;
  fs::directory_iterator it(dir, ec);
  if (ec) throw Error("cannot list the dataset folder '" + dir.string() + "': " + ec.message() + ".");
  std::vector<std::string> names;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) throw Error("cannot list the dataset folder '" + dir.string() + "': " + ec.message() + ".");
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    const fs::path path = dir / name;
    const std::string rel = join(rel_dir, name);
    if (is_os_junk(name)) {
      ++tree.junk;
      continue;
    }
    // stat() follows links; the file is never opened here.
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) {
      tree.pending.push_back({rel, "not_a_regular_file",
                              errno == ELOOP ? "is a symbolic link loop (links that lead back to themselves)"
                                             : "is a broken link or cannot be examined"});
      continue;
    }
    if (S_ISDIR(st.st_mode)) {
      if (depth >= kMaxFolderDepth) {
        tree.loops.push_back({rel, "", true});
        continue;
      }
      const auto first = seen.emplace(std::make_pair(st.st_dev, st.st_ino), rel);
      if (!first.second) {
        tree.loops.push_back({rel, first.first->second, false});
        continue;
      }
      tree.dirs.insert(rel);
      walk_folder(root, rel, depth + 1, seen, tree);
    } else if (S_ISREG(st.st_mode)) {
      tree.files.push_back(rel);
    } else {
      tree.pending.push_back({rel, "not_a_regular_file",
                              std::string(special_kind(fs::status(path, ec))) + ", not a file: it was not opened"});
    }
  }
}

Tree list_folder(const std::string& root) {
  Tree tree;
  std::map<std::pair<dev_t, ino_t>, std::string> seen;
  struct stat st;
  if (::stat(root.c_str(), &st) == 0) seen.emplace(std::make_pair(st.st_dev, st.st_ino), "");
  walk_folder(fs::path(root), "", 0, seen, tree);
  std::sort(tree.files.begin(), tree.files.end());
  return tree;
}

// An open zip archive, closed on scope exit. libzip handles are not thread-safe: guard with `mutex`.
struct ZipArchive {
  zip_t* zip = nullptr;
  std::mutex mutex;
  ~ZipArchive() {
    if (zip) zip_discard(zip);
  }
};

void open_zip(const std::string& path, ZipArchive& archive) {
  int err = 0;
  archive.zip = zip_open(path.c_str(), ZIP_RDONLY, &err);
  if (!archive.zip) {
    zip_error_t ze;
    zip_error_init_with_code(&ze, err);
    const std::string msg = zip_error_strerror(&ze);
    zip_error_fini(&ze);
    if (err == ZIP_ER_NOZIP) {
      throw Error("the dataset '" + path +
                  "' is a file but not a zip archive: give a folder with one sub-folder per class, or a .zip of one.");
    }
    throw Error("cannot open the dataset '" + path + "' as a zip archive: " + msg + ".");
  }
}

// Why a zip entry's declared size refuses it unread ("" when it may be read).
std::string zip_size_refusal(const zip_stat_t& st) {
  if (!(st.valid & ZIP_STAT_SIZE)) return "";
  if (st.size > kMaxImageFileBytes) {
    return "declares " + std::to_string((unsigned long long)st.size) + " bytes, more than the limit of " +
           std::to_string(kMaxImageFileBytes) + " for one image: it was not inflated";
  }
  if ((st.valid & ZIP_STAT_COMP_SIZE) && st.size > kZipRatioCheckBytes &&
      st.size / std::max<zip_uint64_t>(1, st.comp_size) > kMaxZipRatio) {
    return "declares " + std::to_string((unsigned long long)st.size) + " bytes packed into " +
           std::to_string((unsigned long long)st.comp_size) + " (more than " + std::to_string(kMaxZipRatio) +
           ":1, which no photo compresses to): it was not inflated";
  }
  return "";
}

Tree list_zip(zip_t* zip) {
  Tree tree;
  const zip_int64_t count = zip_get_num_entries(zip, 0);
  if (count < 0) throw Error("cannot list the zip archive.");
  for (zip_int64_t i = 0; i < count; ++i) {
    const char* raw = zip_get_name(zip, (zip_uint64_t)i, ZIP_FL_ENC_GUESS);
    if (!raw) continue;
    std::string name = raw;
    std::replace(name.begin(), name.end(), '\\', '/');
    const bool is_dir = !name.empty() && name.back() == '/';
    // Split into components; "." components are dropped, ".." and absolute paths make the entry unsafe.
    const bool absolute = (!name.empty() && name[0] == '/') ||
                          (name.size() >= 2 && name[1] == ':' && std::isalpha((unsigned char)name[0]));
    bool dotdot = false, junk = false;
    std::string clean;
    size_t start = 0;
    while (start <= name.size()) {
      size_t end = name.find('/', start);
      if (end == std::string::npos) end = name.size();
      const std::string part = name.substr(start, end - start);
      start = end + 1;
      if (part.empty() || part == ".") continue;
      if (part == "..") dotdot = true;
      if (is_os_junk(part)) junk = true;
      clean = join(clean, part);
    }
    if (absolute || dotdot) {
      if (!is_dir) {
        tree.pending.push_back({name, "unsafe_zip_entry",
                                std::string("has ") + (absolute ? "an absolute path" : "a '..' component") +
                                    ", which would lie outside the archive's folder: it was not read"});
      }
      continue;
    }
    if (clean.empty()) continue;
    if (junk) {
      ++tree.junk;
      continue;
    }
    add_parents(tree, clean);
    if (is_dir) {
      tree.dirs.insert(clean);
      continue;
    }
    zip_uint8_t opsys = 0;
    zip_uint32_t attributes = 0;
    if (zip_file_get_external_attributes(zip, (zip_uint64_t)i, 0, &opsys, &attributes) == 0 &&
        opsys == ZIP_OPSYS_UNIX && ((attributes >> 16) & S_IFMT) != 0 && ((attributes >> 16) & S_IFMT) != S_IFREG) {
      tree.pending.push_back(
          {clean, "not_a_regular_file", "is a link or special file stored in the zip: it was not read"});
      continue;
    }
    if (tree.zip_index.count(clean)) {
      tree.pending.push_back({clean, "unsafe_zip_entry", "appears twice in the zip: only its first copy is used"});
      continue;
    }
    tree.files.push_back(clean);
    tree.zip_index[clean] = (zip_uint64_t)i;
  }
  std::sort(tree.files.begin(), tree.files.end());
  return tree;
}

std::vector<uint8_t> read_zip_entry(ZipArchive& archive, zip_uint64_t index, const std::string& display) {
  std::lock_guard<std::mutex> lock(archive.mutex);
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat_index(archive.zip, index, 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE)) {
    throw Error("cannot read '" + display + "': " + zip_strerror(archive.zip) + ".");
  }
  const std::string refusal = zip_size_refusal(st);
  if (!refusal.empty()) throw Error("'" + display + "' " + refusal + ".");
  zip_file_t* file = zip_fopen_index(archive.zip, index, 0);
  if (!file) throw Error("cannot read '" + display + "': " + zip_strerror(archive.zip) + ".");
  std::vector<uint8_t> bytes((size_t)st.size);
  zip_int64_t done = 0;
  while ((zip_uint64_t)done < st.size) {
    const zip_int64_t got = zip_fread(file, bytes.data() + done, st.size - (zip_uint64_t)done);
    if (got <= 0) {
      const std::string msg = got < 0 ? zip_file_strerror(file) : "unexpected end of the entry";
      zip_fclose(file);
      throw Error("cannot read '" + display + "': " + msg + ".");
    }
    done += got;
  }
  // zip_fclose reports a CRC mismatch, i.e. a damaged entry.
  const int rc = zip_fclose(file);
  if (rc != 0) {
    zip_error_t ze;
    zip_error_init_with_code(&ze, rc);
    const std::string msg = zip_error_strerror(&ze);
    zip_error_fini(&ze);
    throw Error("cannot read '" + display + "': " + msg + ".");
  }
  return bytes;
}

std::string strip_trailing_slashes(std::string p) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

void check_options(const DatasetOptions& options, const std::string& source) {
  if (source.empty()) throw Error("no dataset path was given.");
  if (options.channels != 1 && options.channels != 3) {
    throw Error("cannot load '" + source + "' with " + std::to_string(options.channels) +
                " channels: the model input must have 1 (gray) or 3 (colour) channels.");
  }
  if (options.height < 1 || options.width < 1 || options.height > 4096 || options.width > 4096) {
    throw Error("cannot load '" + source + "' at " + std::to_string(options.height) + "x" +
                std::to_string(options.width) + ": the input size must be 1..4096 per side.");
  }
  if (options.channels == 3 && options.order == tv::ChannelOrder::GRAY) {
    throw Error("cannot load '" + source + "' with 3 channels in GRAY order: use RGB or BGR, or 1 channel.");
  }
  if (options.threads < 0) {
    throw Error("cannot load '" + source + "' with " + std::to_string(options.threads) + " threads.");
  }
}

const char* const kImageKinds = ".jpg/.jpeg/.png";

// Decodes a JPEG or PNG for a width x height input and resizes it into dst with the shared rule.
InputImage decode_and_resize(const std::vector<uint8_t>& bytes, const std::string& name, int width, int height,
                             tv::ChannelOrder order, uint8_t* dst, uint16_t* lut, uint64_t max_bytes = 0) {
  InputImage in = decode_for_input(bytes.data(), bytes.size(), name, width, height, max_bytes);
  if (!tv::resize_nearest_crop(in.image.pixels.data(), in.image.width, in.image.height, in.image.channels, dst, width,
                               height, order, false, lut)) {
    throw Error("'" + name + "' could not be resized to " + std::to_string(width) + "x" + std::to_string(height) + ".");
  }
  return in;
}

}  // namespace

std::vector<size_t> Dataset::class_counts() const {
  std::vector<size_t> counts(classes.size(), 0);
  for (int label : labels) {
    if (label >= 0 && (size_t)label < counts.size()) ++counts[(size_t)label];
  }
  return counts;
}

size_t DatasetListing::cache_bytes(const DatasetOptions& options) const {
  return images.size() * (size_t)options.height * (size_t)options.width * (size_t)options.channels;
}

DatasetListing list_dataset(const DatasetOptions& options) {
  const std::string source = strip_trailing_slashes(options.path);
  check_options(options, source);

  std::error_code ec;
  const fs::file_status status = fs::status(source, ec);
  if (ec == std::errc::too_many_symbolic_link_levels)
    throw Error("the dataset '" + source +
                "' is a symbolic link loop (links that lead back to themselves); give the "
                "folder itself.");
  if (ec || !fs::exists(status)) throw Error("the dataset '" + source + "' does not exist.");
  const bool is_zip = fs::is_regular_file(status);
  if (!is_zip && !fs::is_directory(status)) {
    throw Error("the dataset '" + source + "' " + special_kind(status) +
                ": give a folder with one sub-folder per class, or a .zip of one.");
  }
  DatasetListing out;
  out.source = source;
  out.is_zip = is_zip;
  Tree tree;
  if (is_zip) {
    auto archive = std::make_shared<ZipArchive>();
    open_zip(source, *archive);
    tree = list_zip(archive->zip);
    out.archive = archive;
  } else {
    tree = list_folder(source);
  }
  out.ignored_junk = tree.junk;

  // Find the folder holding the class folders.
  std::string root;
  if (is_zip && !tree.has_files_in("")) {
    const std::vector<std::string> top = tree.child_dirs("");
    if (top.size() == 1 && !tree.has_image_directly_in(top[0])) root = top[0];
  }
  const std::string images_dir = join(root, "images");
  if (tree.dirs.count(images_dir) && !tree.has_image_directly_in(images_dir)) {
    bool others = false;
    for (const auto& c : tree.child_dirs(root)) {
      if (c != "images" && tree.has_image_under(join(root, c))) others = true;
    }
    if (!others) root = images_dir;
  }

  out.root = root;
  auto display_dir = [&](const std::string& rel) {
    if (is_zip) return source + ":" + rel;
    return rel.empty() ? source : source + "/" + rel;
  };
  auto display_file = [&](const std::string& rel) { return is_zip ? source + ":" + rel : source + "/" + rel; };

  for (const auto& loop : tree.loops) {
    const std::string what =
        loop.too_deep ? "it is " + std::to_string(kMaxFolderDepth) + " folders deep (a link loop?)"
        : is_under(loop.rel, loop.first)
            ? "it is a link back to '" + display_dir(loop.first) + "', which holds it (a link loop)"
            : "it is (through a symbolic link) the same folder as '" + display_dir(loop.first) +
                  "', which comes first by name and is used";
    out.warnings.push_back("skipped folder '" + display_dir(loop.rel) + "': " + what + ".");
  }

  // Decide the classes.
  const std::vector<std::string> folders = tree.child_dirs(root);
  std::set<std::string> excluded;  // folders with images left out by the class list
  if (!options.classes.empty()) {
    std::set<std::string> seen;
    for (const auto& name : options.classes) {
      if (name.empty()) throw Error("the class list for '" + source + "' contains an empty class name.");
      if (!seen.insert(name).second) {
        throw Error("the class list for '" + source + "' names class '" + name + "' twice.");
      }
      if (!std::binary_search(folders.begin(), folders.end(), name)) {
        throw Error("class '" + name + "' from the class list has no folder in '" + display_dir(root) + "'.");
      }
      if (!tree.has_image_under(join(root, name))) {
        throw Error("class folder '" + display_dir(join(root, name)) + "' contains no " + kImageKinds + " images.");
      }
    }
    out.classes = options.classes;
    for (const auto& folder : folders) {
      if (seen.count(folder)) continue;
      if (!tree.has_image_under(join(root, folder))) {
        out.warnings.push_back("skipped folder '" + display_dir(join(root, folder)) + "': it contains no " +
                               kImageKinds + " images.");
      } else {
        excluded.insert(folder);
        out.warnings.push_back("skipped folder '" + display_dir(join(root, folder)) +
                               "': it is not in the class list.");
      }
    }
  } else {
    for (const auto& folder : folders) {
      if (!tree.has_image_under(join(root, folder))) {
        out.warnings.push_back("skipped folder '" + display_dir(join(root, folder)) + "': it contains no " +
                               kImageKinds + " images.");
      } else {
        out.classes.push_back(folder);
      }
    }
    if (out.classes.empty()) {
      const bool loose = tree.has_image_directly_in(root);
      throw Error("'" + display_dir(root) + "' contains no class folders with " + kImageKinds + " images" +
                  (loose ? " (its images lie directly in it): put the images of each class in a sub-folder named "
                           "after the class."
                         : ": expected one sub-folder of images per class."));
    }
  }

  // Every file below the root: an image of a class, or skipped with its reason.
  std::map<std::string, int> class_of;
  for (size_t c = 0; c < out.classes.size(); ++c) class_of[join(root, out.classes[c])] = (int)c;
  std::vector<std::vector<DatasetListing::Entry>> by_class(out.classes.size());
  auto skip = [&](const std::string& rel, const std::string& reason, const std::string& what) {
    out.skipped.push_back({display_file(rel), reason, "'" + display_file(rel) + "' " + what + "."});
  };
  auto class_folder_of = [&](const std::string& rel) -> int {
    for (std::string p = parent_of(rel); !p.empty() && p != root; p = parent_of(p)) {
      auto it = class_of.find(p);
      if (it != class_of.end()) return it->second;
    }
    return -1;
  };
  for (const auto& rel : tree.files) {
    if (!is_under(rel, root)) continue;  // beside the images/ folder of the reference layout
    const int c = class_folder_of(rel);
    const std::string leaf = leaf_of(rel);
    if (c < 0) {
      const std::string in_root = root.empty() ? rel : rel.substr(root.size() + 1);
      const size_t slash = in_root.find('/');
      const std::string folder = slash == std::string::npos ? std::string() : in_root.substr(0, slash);
      if (excluded.count(folder)) {
        skip(rel, "outside_class_folders", "is in folder '" + folder + "', which is not in the class list");
      } else if (!is_image_name(leaf) && unsupported_image_format(leaf).empty()) {
        // A model, header or note kept beside the class folders (the reference's header/myWeights.bin):
        // not a photo, so not one to move into a class.
        skip(rel, "outside_class_folders",
             std::string("is not a ") + kImageKinds + " image and not in a class folder: left out");
      } else {
        skip(rel, "outside_class_folders",
             "is not inside a class folder: move it into the sub-folder of its class, or remove it");
      }
      continue;
    }
    if (is_image_name(leaf)) {
      if (is_zip) {
        zip_stat_t st;
        zip_stat_init(&st);
        const auto* archive = (const ZipArchive*)out.archive.get();
        if (zip_stat_index(archive->zip, tree.zip_index.at(rel), 0, &st) == 0) {
          const std::string refusal = zip_size_refusal(st);
          if (!refusal.empty()) {
            skip(rel, "too_large", refusal);
            continue;
          }
        }
      }
      by_class[(size_t)c].push_back({rel, display_file(rel), c, is_zip ? tree.zip_index.at(rel) : 0});
      continue;
    }
    const std::string format = unsupported_image_format(leaf);
    if (!format.empty()) {
      skip(rel, "unsupported_format", "is a " + format + " file, which is not read: convert it to JPEG or PNG");
    } else {
      skip(rel, "not_an_image", std::string("is not a ") + kImageKinds + " image");
    }
  }
  for (const auto& p : tree.pending) {
    if (p.reason != "unsafe_zip_entry" && !is_under(p.rel, root)) continue;
    skip(p.rel, p.reason, p.what);
  }
  std::sort(out.skipped.begin(), out.skipped.end(),
            [](const SkippedFile& a, const SkippedFile& b) { return a.path < b.path; });
  for (auto& list : by_class) {
    for (auto& e : list) out.images.push_back(std::move(e));
  }
  // Nothing the command writes may be one of the files it reads, however it is reached.
  std::vector<NamedPath> inputs;
  if (is_zip) inputs.push_back({"the dataset", source});
  if (!is_zip)
    for (const auto& e : out.images) inputs.push_back({"the dataset image", e.display});
  refuse_output_among_inputs(options.outputs, inputs);
  return out;
}

Dataset decode_dataset(const DatasetListing& listing, const DatasetOptions& options) {
  check_options(options, listing.source);
  Dataset ds;
  ds.source = listing.source;
  ds.classes = listing.classes;
  ds.warnings = listing.warnings;
  ds.skipped = listing.skipped;
  ds.ignored_junk = listing.ignored_junk;
  ds.height = options.height;
  ds.width = options.width;
  ds.channels = options.channels;
  ds.order = options.channels == 1 ? tv::ChannelOrder::GRAY : options.order;
  const auto& items = listing.images;
  ZipArchive* archive = (ZipArchive*)listing.archive.get();
  if (listing.is_zip && !archive) throw Error("the zip archive '" + listing.source + "' is not open.");

  // Decode every image once into its slot; the outcome of item i depends on item i alone, so any
  // number of threads gives the same bytes.
  const size_t image_bytes = ds.image_bytes();
  std::vector<uint8_t> pixels(items.size() * image_bytes);
  std::vector<std::string> failure(items.size());
  std::vector<char> ok(items.size(), 0), scaled(items.size(), 0), rotated(items.size(), 0);
  std::vector<uint64_t> hashes(items.size(), 0);
  std::atomic<size_t> next{0};
  size_t done = 0;
  std::mutex progress_mutex;
  auto worker = [&]() {
    std::vector<uint16_t> lut((size_t)ds.width + (size_t)ds.height);
    for (;;) {
      const size_t i = next.fetch_add(1);
      if (i >= items.size()) return;
      const auto& item = items[i];
      try {
        std::vector<uint8_t> bytes;
        if (listing.is_zip) {
          bytes = read_zip_entry(*archive, item.zip_index, item.display);
        } else {
          bytes = read_file(item.display, kMaxImageFileBytes);
        }
        hashes[i] = std::hash<std::string_view>()(std::string_view((const char*)bytes.data(), bytes.size()));
        const InputImage in =
            decode_and_resize(bytes, item.display, ds.width, ds.height, ds.order, pixels.data() + i * image_bytes,
                              lut.data(), options.decode_budget_bytes);
        ok[i] = 1;
        scaled[i] = in.scale_denom > 1;
        rotated[i] = in.orientation > 1;
      } catch (const std::bad_alloc&) {
        failure[i] = "'" + item.display + "' needs more memory to decode than is available.";
      } catch (const std::exception& e) {
        failure[i] = e.what();
      }
      if (options.on_progress) {
        std::lock_guard<std::mutex> lock(progress_mutex);
        options.on_progress(++done, items.size());
      }
    }
  };
  size_t threads = options.threads == 0 ? std::max(1u, std::thread::hardware_concurrency()) : (size_t)options.threads;
  threads = std::max<size_t>(1, std::min(threads, items.size()));
  ds.decode_threads = (int)threads;
  const auto start = std::chrono::steady_clock::now();
  if (threads == 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    for (size_t t = 0; t < threads; ++t) pool.emplace_back(worker);
    for (auto& th : pool) th.join();
  }
  ds.decode_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  // Keep the decoded images in order, compacting the pixel buffer in place.
  size_t kept = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    if (!ok[i]) {
      const bool too_large = failure[i].find("more than the limit") != std::string::npos ||
                             failure[i].find("each decoding thread can have") != std::string::npos;
      ds.skipped.push_back({items[i].display, too_large ? "too_large" : "unreadable", failure[i]});
      continue;
    }
    if (kept != i) std::memmove(pixels.data() + kept * image_bytes, pixels.data() + i * image_bytes, image_bytes);
    ds.paths.push_back(items[i].display);
    ds.labels.push_back(items[i].label);
    ds.file_hashes.push_back(hashes[i]);
    ds.scaled_decodes += (size_t)scaled[i];
    ds.exif_rotated += (size_t)rotated[i];
    ++kept;
  }
  std::stable_sort(ds.skipped.begin(), ds.skipped.end(),
                   [](const SkippedFile& a, const SkippedFile& b) { return a.path < b.path; });
  pixels.resize(kept * image_bytes);
  pixels.shrink_to_fit();
  ds.pixels = std::move(pixels);

  if (kept == 0) {
    throw Error("none of the " + std::to_string(items.size()) + " images in '" + listing.source +
                "' could be decoded; the first failure: " + (failure.empty() ? std::string("-") : failure[0]));
  }
  const std::vector<size_t> counts = ds.class_counts();
  for (size_t c = 0; c < counts.size(); ++c) {
    if (counts[c] == 0) {
      ds.warnings.push_back("class '" + ds.classes[c] + "' has no image that could be decoded.");
    }
  }
  return ds;
}

Dataset load_dataset(const DatasetOptions& options) {
  return decode_dataset(list_dataset(options), options);
}

void read_input_image(const std::string& path, int height, int width, tv::ChannelOrder order, uint8_t* dst) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) throw Error("'" + path + "' does not exist.");
  // read_file refuses what is not a regular file (a FIFO is never waited on) and says a link loop as such.
  std::vector<uint16_t> lut((size_t)width + (size_t)height);
  decode_and_resize(read_file(path, kMaxImageFileBytes), path, width, height, order, dst, lut.data());
}

uint64_t available_memory_bytes() {
  uint64_t avail = 0;
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  uint64_t value = 0;
  std::string unit;
  while (meminfo >> key >> value >> unit) {
    if (key == "MemAvailable:") {
      avail = value * 1024;
      break;
    }
  }
  // A cgroup v2 limit (containers, CI runners) may be tighter than the machine's free memory.
  std::ifstream max_file("/sys/fs/cgroup/memory.max"), current_file("/sys/fs/cgroup/memory.current");
  std::string max_text;
  uint64_t current = 0;
  if (max_file >> max_text && max_text != "max" && current_file >> current) {
    const uint64_t limit = std::strtoull(max_text.c_str(), nullptr, 10);
    const uint64_t left = limit > current ? limit - current : 0;
    if (avail == 0 || left < avail) avail = left;
  }
  return avail;
}

}  // namespace tvh
