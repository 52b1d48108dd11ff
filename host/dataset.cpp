#include "host/dataset.h"

#include <zip.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "host/error.h"
#include "host/files.h"
#include "host/jpeg.h"

namespace tvh {
namespace {

namespace fs = std::filesystem;

// Largest single image file read (a photo is a few MB; this stops a stray video from exhausting memory).
constexpr size_t kMaxImageFileBytes = size_t(64) << 20;

bool is_jpeg_name(const std::string& name) {
  const size_t dot = name.find_last_of('.');
  if (dot == std::string::npos) return false;
  std::string ext = name.substr(dot + 1);
  for (char& ch : ext) ch = (char)std::tolower((unsigned char)ch);
  return ext == "jpg" || ext == "jpeg";
}

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

// True when a path component is hidden (".x") or macOS archive metadata (__MACOSX).
bool has_ignored_component(const std::string& rel) {
  size_t start = 0;
  while (start <= rel.size()) {
    size_t end = rel.find('/', start);
    if (end == std::string::npos) end = rel.size();
    const std::string part = rel.substr(start, end - start);
    if ((!part.empty() && part[0] == '.') || part == "__MACOSX") return true;
    start = end + 1;
  }
  return false;
}

// The listing of a folder or a zip archive: directories and files as '/'-separated relative paths.
struct Tree {
  std::set<std::string> dirs;
  std::vector<std::string> files;
  std::map<std::string, zip_uint64_t> zip_index;  // file -> entry index (zip only)

  std::vector<std::string> child_dirs(const std::string& dir) const {
    std::vector<std::string> out;
    for (const auto& d : dirs) {
      if (parent_of(d) == dir) out.push_back(leaf_of(d));
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  std::vector<std::string> jpegs_in(const std::string& dir) const {
    std::vector<std::string> out;
    for (const auto& f : files) {
      if (parent_of(f) == dir && is_jpeg_name(leaf_of(f))) out.push_back(f);
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  bool has_files_in(const std::string& dir) const {
    for (const auto& f : files) {
      if (parent_of(f) == dir) return true;
    }
    return false;
  }
  bool any_child_has_jpegs(const std::string& dir) const {
    for (const auto& c : child_dirs(dir)) {
      if (!jpegs_in(join(dir, c)).empty()) return true;
    }
    return false;
  }
};

// Adds `rel`'s parent directories to tree.dirs.
void add_parents(Tree& tree, const std::string& rel) {
  for (std::string p = parent_of(rel); !p.empty(); p = parent_of(p)) tree.dirs.insert(p);
}

Tree list_folder(const std::string& root) {
  Tree tree;
  std::error_code ec;
  // Deep enough for root/images/<class>/<file>; deeper files are never images of this layout.
  constexpr int kMaxDepth = 3;
  fs::recursive_directory_iterator it(root, fs::directory_options::follow_directory_symlink, ec);
  if (ec) throw Error("cannot list the dataset folder '" + root + "': " + ec.message() + ".");
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) throw Error("cannot list the dataset folder '" + root + "': " + ec.message() + ".");
    const std::string rel = it->path().lexically_relative(root).generic_string();
    if (has_ignored_component(rel)) {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    if (it->is_directory(ec)) {
      tree.dirs.insert(rel);
      if (it.depth() >= kMaxDepth - 1) it.disable_recursion_pending();
    } else {
      tree.files.push_back(rel);
    }
  }
  if (ec) throw Error("cannot list the dataset folder '" + root + "': " + ec.message() + ".");
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
    throw Error("cannot open the dataset '" + path + "' as a zip archive: " + msg + ".");
  }
}

Tree list_zip(const std::string& path, zip_t* zip) {
  Tree tree;
  const zip_int64_t count = zip_get_num_entries(zip, 0);
  if (count < 0) throw Error("cannot list the zip archive '" + path + "'.");
  for (zip_int64_t i = 0; i < count; ++i) {
    const char* raw = zip_get_name(zip, (zip_uint64_t)i, ZIP_FL_ENC_GUESS);
    if (!raw) continue;
    std::string name = raw;
    std::replace(name.begin(), name.end(), '\\', '/');
    while (name.rfind("./", 0) == 0) name.erase(0, 2);
    while (!name.empty() && name[0] == '/') name.erase(0, 1);
    const bool is_dir = !name.empty() && name.back() == '/';
    while (!name.empty() && name.back() == '/') name.pop_back();
    if (name.empty() || has_ignored_component(name)) continue;
    add_parents(tree, name);
    if (is_dir) {
      tree.dirs.insert(name);
    } else if (!tree.zip_index.count(name)) {
      tree.files.push_back(name);
      tree.zip_index[name] = (zip_uint64_t)i;
    }
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
  if (st.size > kMaxImageFileBytes) {
    throw Error("cannot read '" + display + "': it is " + std::to_string((unsigned long long)st.size) +
                " bytes, more than the limit of " + std::to_string(kMaxImageFileBytes) + ".");
  }
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

// One image to load.
struct Item {
  std::string rel;      // relative to the tree root
  std::string display;  // what the user sees
  int label = 0;
};

std::string strip_trailing_slashes(std::string p) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

}  // namespace

std::vector<size_t> Dataset::class_counts() const {
  std::vector<size_t> counts(classes.size(), 0);
  for (int label : labels) {
    if (label >= 0 && (size_t)label < counts.size()) ++counts[(size_t)label];
  }
  return counts;
}

Dataset load_dataset(const DatasetOptions& options) {
  const std::string source = strip_trailing_slashes(options.path);
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

  std::error_code ec;
  const fs::file_status status = fs::status(source, ec);
  if (ec || !fs::exists(status)) throw Error("the dataset '" + source + "' does not exist.");

  const bool is_zip = fs::is_regular_file(status);
  if (!is_zip && !fs::is_directory(status)) {
    throw Error("the dataset '" + source + "' is neither a folder nor a .zip archive.");
  }
  ZipArchive archive;
  Tree tree;
  if (is_zip) {
    open_zip(source, archive);
    tree = list_zip(source, archive.zip);
  } else {
    tree = list_folder(source);
  }

  // Find the folder holding the class folders.
  std::string root;
  if (is_zip && !tree.has_files_in("")) {
    const std::vector<std::string> top = tree.child_dirs("");
    if (top.size() == 1 && tree.jpegs_in(top[0]).empty()) root = top[0];
  }
  if (!tree.any_child_has_jpegs(root) && tree.dirs.count(join(root, "images"))) root = join(root, "images");

  auto display_dir = [&](const std::string& rel) {
    if (is_zip) return source + ":" + rel;
    return rel.empty() ? source : source + "/" + rel;
  };
  auto display_file = [&](const std::string& rel) { return is_zip ? source + ":" + rel : source + "/" + rel; };

  Dataset ds;
  ds.source = source;
  ds.height = options.height;
  ds.width = options.width;
  ds.channels = options.channels;
  ds.order = options.channels == 1 ? tv::ChannelOrder::GRAY : options.order;

  // Decide the classes.
  const std::vector<std::string> folders = tree.child_dirs(root);
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
      if (tree.jpegs_in(join(root, name)).empty()) {
        throw Error("class folder '" + display_dir(join(root, name)) + "' contains no .jpg/.jpeg images.");
      }
    }
    ds.classes = options.classes;
    for (const auto& folder : folders) {
      if (seen.count(folder)) continue;
      if (tree.jpegs_in(join(root, folder)).empty()) {
        ds.warnings.push_back("skipped folder '" + display_dir(join(root, folder)) +
                              "': it contains no .jpg/.jpeg images.");
      } else {
        ds.warnings.push_back("skipped folder '" + display_dir(join(root, folder)) + "': it is not in the class list.");
      }
    }
  } else {
    for (const auto& folder : folders) {
      if (tree.jpegs_in(join(root, folder)).empty()) {
        ds.warnings.push_back("skipped folder '" + display_dir(join(root, folder)) +
                              "': it contains no .jpg/.jpeg images.");
      } else {
        ds.classes.push_back(folder);
      }
    }
    if (ds.classes.empty()) {
      throw Error("'" + source +
                  "' contains no class folders with .jpg/.jpeg images (expected one sub-folder of images per class).");
    }
  }

  std::vector<Item> items;
  for (size_t c = 0; c < ds.classes.size(); ++c) {
    for (const auto& rel : tree.jpegs_in(join(root, ds.classes[c]))) {
      items.push_back(Item{rel, display_file(rel), (int)c});
    }
  }

  // Decode every image once into its slot; the outcome of item i depends on item i alone, so any
  // number of threads gives the same bytes.
  const size_t image_bytes = ds.image_bytes();
  std::vector<uint8_t> pixels(items.size() * image_bytes);
  std::vector<std::string> failure(items.size());
  std::vector<char> ok(items.size(), 0);
  std::atomic<size_t> next{0};
  auto worker = [&]() {
    std::vector<uint16_t> lut((size_t)ds.width + (size_t)ds.height);
    for (;;) {
      const size_t i = next.fetch_add(1);
      if (i >= items.size()) return;
      const Item& item = items[i];
      try {
        std::vector<uint8_t> bytes = is_zip ? read_zip_entry(archive, tree.zip_index.at(item.rel), item.display)
                                            : read_file(item.display, kMaxImageFileBytes);
        const Image img = decode_jpeg(bytes, item.display, 0);
        if (!tv::resize_nearest_crop(img.pixels.data(), img.width, img.height, img.channels,
                                     pixels.data() + i * image_bytes, ds.width, ds.height, ds.order, false,
                                     lut.data())) {
          throw Error("'" + item.display + "' could not be resized to " + std::to_string(ds.width) + "x" +
                      std::to_string(ds.height) + ".");
        }
        ok[i] = 1;
      } catch (const std::bad_alloc&) {
        failure[i] = "'" + item.display + "' needs more memory to decode than is available.";
      } catch (const std::exception& e) {
        failure[i] = e.what();
      }
    }
  };
  size_t threads = options.threads == 0 ? std::max(1u, std::thread::hardware_concurrency()) : (size_t)options.threads;
  threads = std::max<size_t>(1, std::min(threads, items.size()));
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
      ds.skipped.emplace_back(items[i].display, failure[i]);
      continue;
    }
    if (kept != i) std::memmove(pixels.data() + kept * image_bytes, pixels.data() + i * image_bytes, image_bytes);
    ds.paths.push_back(items[i].display);
    ds.labels.push_back(items[i].label);
    ++kept;
  }
  pixels.resize(kept * image_bytes);
  pixels.shrink_to_fit();
  ds.pixels = std::move(pixels);

  if (kept == 0) {
    throw Error("none of the " + std::to_string(items.size()) + " images in '" + source +
                "' could be decoded; the first failure: " + failure[0]);
  }
  const std::vector<size_t> counts = ds.class_counts();
  for (size_t c = 0; c < counts.size(); ++c) {
    if (counts[c] == 0) {
      ds.warnings.push_back("class '" + ds.classes[c] + "' has no image that could be decoded.");
    }
  }
  return ds;
}

// ---- splits ----

namespace {

// splitmix64: a tiny, well-mixed PRNG whose sequence is the same on every platform.
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n), n >= 1, without modulo bias.
  uint64_t below(uint64_t n) {
    const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    for (;;) {
      const uint64_t x = next();
      if (x < limit) return x % n;
    }
  }
};

// Image indices of each class, ascending (= sorted by path).
std::vector<std::vector<int>> indices_by_class(const Dataset& ds) {
  std::vector<std::vector<int>> by_class(ds.classes.size());
  for (size_t i = 0; i < ds.labels.size(); ++i) {
    const int label = ds.labels[i];
    if (label < 0 || (size_t)label >= by_class.size()) {
      throw Error("dataset '" + ds.source + "' has image " + std::to_string(i) + " with label " +
                  std::to_string(label) + " outside its " + std::to_string(by_class.size()) + " classes.");
    }
    by_class[(size_t)label].push_back((int)i);
  }
  return by_class;
}

// A class's indices in a seeded random order (Fisher-Yates driven by splitmix64).
std::vector<int> shuffled(std::vector<int> v, uint64_t seed, size_t label) {
  SplitMix64 rng{seed ^ (0xD1B54A32D192ED03ull * (uint64_t)(label + 1))};
  for (size_t i = v.size(); i > 1; --i) {
    const size_t j = (size_t)rng.below(i);
    std::swap(v[i - 1], v[j]);
  }
  return v;
}

// Orders both lists by class then path: image indices are already laid out that way.
void sort_split(Split& s) {
  std::sort(s.train.begin(), s.train.end());
  std::sort(s.val.begin(), s.val.end());
}

}  // namespace

Split reference_split(const Dataset& dataset, int last_n) {
  if (last_n < 0) throw Error("cannot split '" + dataset.source + "' with a negative validation count.");
  Split split;
  for (const auto& idx : indices_by_class(dataset)) {
    const size_t n = idx.size();
    const size_t n_val = n > (size_t)last_n ? (size_t)last_n : (n > 0 ? n - 1 : 0);
    for (size_t k = 0; k < n; ++k) (k < n - n_val ? split.train : split.val).push_back(idx[k]);
  }
  sort_split(split);
  return split;
}

Split fraction_split(const Dataset& dataset, double val_fraction, uint64_t seed) {
  if (!(val_fraction >= 0.0 && val_fraction < 1.0)) {
    throw Error("cannot split '" + dataset.source + "' with validation fraction " + std::to_string(val_fraction) +
                ": it must be at least 0 and below 1.");
  }
  Split split;
  const auto by_class = indices_by_class(dataset);
  for (size_t c = 0; c < by_class.size(); ++c) {
    const size_t n = by_class[c].size();
    size_t n_val = (size_t)((double)n * val_fraction + 0.5);
    if (val_fraction > 0.0 && n >= 2 && n_val == 0) n_val = 1;
    if (n_val >= n) n_val = n > 0 ? n - 1 : 0;
    const std::vector<int> order = shuffled(by_class[c], seed, c);
    for (size_t k = 0; k < n; ++k) (k < n_val ? split.val : split.train).push_back(order[k]);
  }
  sort_split(split);
  return split;
}

std::vector<Split> kfold_splits(const Dataset& dataset, int k, uint64_t seed) {
  if (k < 2 || (size_t)k > dataset.size()) {
    throw Error("cannot make " + std::to_string(k) + " folds of '" + dataset.source + "' (" +
                std::to_string(dataset.size()) + " images): k must be 2 or more and at most the image count.");
  }
  std::vector<int> fold_of(dataset.size(), 0);
  const auto by_class = indices_by_class(dataset);
  size_t dealt = 0;
  for (size_t c = 0; c < by_class.size(); ++c) {
    for (int i : shuffled(by_class[c], seed, c)) fold_of[(size_t)i] = (int)(dealt++ % (size_t)k);
  }
  std::vector<Split> folds((size_t)k);
  for (size_t i = 0; i < dataset.size(); ++i) {
    for (int f = 0; f < k; ++f) (fold_of[i] == f ? folds[(size_t)f].val : folds[(size_t)f].train).push_back((int)i);
  }
  return folds;
}

}  // namespace tvh
