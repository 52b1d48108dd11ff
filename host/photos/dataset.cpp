#include "host/photos/dataset.h"

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

#include "host/base/error.h"
#include "host/base/files.h"
#include "host/photos/dataset_tree.h"
#include "host/photos/image.h"

namespace tvh {
namespace {

namespace fs = std::filesystem;
using namespace dataset_tree;

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

namespace {

// Lists the folder or the zip archive (kept open in out.archive).
Tree list_source(DatasetListing& out) {
  std::shared_ptr<ZipArchive> archive;
  Tree tree = list_dataset_source(out.source, out.is_zip, &archive);
  out.archive = archive;
  return tree;
}

// The folder holding the class folders: the zip's one top folder, and an images/ folder beside others
// without images (the reference layout).
std::string find_class_root(const Tree& tree, bool is_zip) {
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
  return root;
}

void warn_skipped_loops(const Tree& tree, const DisplayNames& show, DatasetListing& out) {
  for (const auto& loop : tree.loops) {
    const std::string what = loop.too_deep ? "it is " + std::to_string(kMaxFolderDepth) + " folders deep (a link loop?)"
                             : is_under(loop.rel, loop.first)
                                 ? "it is a link back to '" + show.dir(loop.first) + "', which holds it (a link loop)"
                                 : "it is (through a symbolic link) the same folder as '" + show.dir(loop.first) +
                                       "', which comes first by name and is used";
    out.warnings.push_back("skipped folder '" + show.dir(loop.rel) + "': " + what + ".");
  }
}

void warn_no_images(const std::string& folder_rel, const DisplayNames& show, DatasetListing& out) {
  out.warnings.push_back("skipped folder '" + show.dir(folder_rel) + "': it contains no " + kImageKinds + " images.");
}

// The classes of an explicit class list (each must have a folder with images); returns the folders with
// images that the list leaves out.
std::set<std::string> classes_from_list(const DatasetOptions& options, const Tree& tree, const std::string& root,
                                        const DisplayNames& show, DatasetListing& out) {
  const std::vector<std::string> folders = tree.child_dirs(root);
  std::set<std::string> excluded;
  std::set<std::string> seen;
  for (const auto& name : options.classes) {
    if (name.empty()) throw Error("the class list for '" + show.source + "' contains an empty class name.");
    if (name[0] == '_')
      throw Error("the class list for '" + show.source + "' names '" + name +
                  "': a folder whose name starts with '_' is never a class.");
    if (!seen.insert(name).second) {
      throw Error("the class list for '" + show.source + "' names class '" + name + "' twice.");
    }
    if (!std::binary_search(folders.begin(), folders.end(), name)) {
      throw Error("class '" + name + "' from the class list has no folder in '" + show.dir(root) + "'.");
    }
    if (!tree.has_image_under(join(root, name))) {
      throw Error("class folder '" + show.dir(join(root, name)) + "' contains no " + kImageKinds + " images.");
    }
  }
  out.classes = options.classes;
  for (const auto& folder : folders) {
    if (seen.count(folder)) continue;
    if (!tree.has_image_under(join(root, folder))) {
      warn_no_images(join(root, folder), show, out);
    } else {
      excluded.insert(folder);
      out.warnings.push_back("skipped folder '" + show.dir(join(root, folder)) + "': it is not in the class list.");
    }
  }
  return excluded;
}

// The classes: every folder below the root with images, by sorted name.
void classes_from_folders(const Tree& tree, const std::string& root, const DisplayNames& show, DatasetListing& out) {
  for (const auto& folder : tree.child_dirs(root)) {
    if (folder[0] == '_') {  // never a class (tv/names.h): the board's _unsure/, frames still to sort
      if (tree.has_image_under(join(root, folder)))
        out.warnings.push_back("skipped folder '" + show.dir(join(root, folder)) +
                               "': a folder whose name starts with '_' is never a class (the board keeps frames to "
                               "sort there): move its photos into their classes' folders.");
    } else if (!tree.has_image_under(join(root, folder))) {
      warn_no_images(join(root, folder), show, out);
    } else {
      out.classes.push_back(folder);
    }
  }
  if (out.classes.empty()) {
    const bool loose = tree.has_image_directly_in(root);
    throw Error("'" + show.dir(root) + "' contains no class folders with " + kImageKinds + " images" +
                (loose ? " (its images lie directly in it): put the images of each class in a sub-folder named "
                         "after the class."
                       : ": expected one sub-folder of images per class."));
  }
}

// Sorts every file below the root: an image of a class, or skipped with its reason.
class FileSorter {
 public:
  FileSorter(const Tree& tree, const std::string& root, const DisplayNames& show, const std::set<std::string>& excluded,
             DatasetListing& out)
      : tree_(tree), root_(root), show_(show), excluded_(excluded), out_(out), by_class_(out.classes.size()) {
    for (size_t c = 0; c < out.classes.size(); ++c) class_of_[join(root, out.classes[c])] = (int)c;
  }

  // Sorts the files, then lists the images class by class and the skipped files by path.
  void run() {
    for (const auto& rel : tree_.files) {
      if (!is_under(rel, root_)) continue;  // beside the images/ folder of the reference layout
      sort_file(rel);
    }
    for (const auto& p : tree_.pending) {
      if (p.reason != "unsafe_zip_entry" && !is_under(p.rel, root_)) continue;
      skip(p.rel, p.reason, p.what);
    }
    std::sort(out_.skipped.begin(), out_.skipped.end(),
              [](const SkippedFile& a, const SkippedFile& b) { return a.path < b.path; });
    for (auto& list : by_class_) {
      for (auto& e : list) out_.images.push_back(std::move(e));
    }
  }

 private:
  void skip(const std::string& rel, const std::string& reason, const std::string& what) {
    out_.skipped.push_back({show_.file(rel), reason, "'" + show_.file(rel) + "' " + what + "."});
  }

  int class_folder_of(const std::string& rel) const {
    for (std::string p = parent_of(rel); !p.empty() && p != root_; p = parent_of(p)) {
      auto it = class_of_.find(p);
      if (it != class_of_.end()) return it->second;
    }
    return -1;
  }

  void sort_file(const std::string& rel) {
    const int c = class_folder_of(rel);
    const std::string leaf = leaf_of(rel);
    if (c < 0) {
      skip_outside_classes(rel, leaf);
      return;
    }
    if (is_image_name(leaf)) {
      if (out_.is_zip && refused_zip_entry(rel)) return;
      by_class_[(size_t)c].push_back({rel, show_.file(rel), c, out_.is_zip ? tree_.zip_index.at(rel) : 0});
      return;
    }
    const std::string format = unsupported_image_format(leaf);
    if (!format.empty()) {
      skip(rel, "unsupported_format", "is a " + format + " file, which is not read: convert it to JPEG or PNG");
    } else {
      skip(rel, "not_an_image", std::string("is not a ") + kImageKinds + " image");
    }
  }

  void skip_outside_classes(const std::string& rel, const std::string& leaf) {
    const std::string in_root = root_.empty() ? rel : rel.substr(root_.size() + 1);
    const size_t slash = in_root.find('/');
    const std::string folder = slash == std::string::npos ? std::string() : in_root.substr(0, slash);
    if (!folder.empty() && folder[0] == '_') {
      skip(rel, "outside_class_folders",
           "is in folder '" + folder + "', whose name starts with '_': never a class; move it into its class's folder");
    } else if (excluded_.count(folder)) {
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
  }

  // True (and skipped) when the zip entry's declared size refuses it unread.
  bool refused_zip_entry(const std::string& rel) {
    zip_stat_t st;
    zip_stat_init(&st);
    const auto* archive = (const ZipArchive*)out_.archive.get();
    if (zip_stat_index(archive->zip, tree_.zip_index.at(rel), 0, &st) != 0) return false;
    const std::string refusal = zip_size_refusal(st);
    if (refusal.empty()) return false;
    skip(rel, "too_large", refusal);
    return true;
  }

  const Tree& tree_;
  const std::string& root_;
  const DisplayNames& show_;
  const std::set<std::string>& excluded_;
  DatasetListing& out_;
  std::map<std::string, int> class_of_;
  std::vector<std::vector<DatasetListing::Entry>> by_class_;
};

// Nothing the command writes may be one of the files it reads, however it is reached.
void refuse_outputs_among_images(const DatasetOptions& options, const DatasetListing& out) {
  std::vector<NamedPath> inputs;
  if (out.is_zip) inputs.push_back({"the dataset", out.source});
  if (!out.is_zip)
    for (const auto& e : out.images) inputs.push_back({"the dataset image", e.display});
  refuse_output_among_inputs(options.outputs, inputs);
}

}  // namespace

DatasetListing list_dataset(const DatasetOptions& options) {
  const std::string source = strip_trailing_slashes(options.path);
  check_options(options, source);
  DatasetListing out;
  out.source = source;
  out.is_zip = check_source_is_zip(source, "give a folder with one sub-folder per class, or a .zip of one");
  const Tree tree = list_source(out);
  out.ignored_junk = tree.junk;
  const std::string root = find_class_root(tree, out.is_zip);
  out.root = root;
  const DisplayNames show{source, out.is_zip};
  warn_skipped_loops(tree, show, out);
  std::set<std::string> excluded;  // folders with images left out by the class list
  if (!options.classes.empty())
    excluded = classes_from_list(options, tree, root, show, out);
  else
    classes_from_folders(tree, root, show, out);
  FileSorter(tree, root, show, excluded, out).run();
  refuse_outputs_among_images(options, out);
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

std::vector<uint8_t> read_image_file(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) throw Error("'" + path + "' does not exist.");
  // read_file refuses what is not a regular file (a FIFO is never waited on) and says a link loop as such.
  return read_file(path, kMaxImageFileBytes);
}

void read_input_image(const std::string& path, int height, int width, tv::ChannelOrder order, uint8_t* dst) {
  std::vector<uint16_t> lut((size_t)width + (size_t)height);
  decode_and_resize(read_image_file(path), path, width, height, order, dst, lut.data());
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
