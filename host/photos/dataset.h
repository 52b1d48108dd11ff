// Image datasets for training: a folder (or .zip) with one sub-folder per class, decoded once into a
// u8 cache at the model's input size with the device's own resize (tv::resize_nearest_crop). Their
// train/validation splits are in host/photos/split.h.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "host/base/files.h"
#include "tv/image/image.h"

namespace tvh {

// What to load and at which model input size.
struct DatasetOptions {
  std::string path;                  // a folder or a .zip archive
  std::vector<std::string> classes;  // explicit class order; empty = every folder with images, sorted
  int height = 64, width = 64, channels = 3;
  tv::ChannelOrder order = tv::ChannelOrder::RGB;  // ignored when channels == 1 (always GRAY)
  int threads = 0;                                 // decoding threads; 0 = one per hardware thread
  // The memory one decoding thread may take for one image (0 = no limit): an image whose
  // decode_memory_estimate (host/photos/image.h) is larger is skipped as "too_large" with the figures, unread.
  uint64_t decode_budget_bytes = 0;
  // The files the command writes: list_dataset refuses (before any decoding) an output that is the same
  // file as a listed image or the zip (tvh::refuse_output_among_inputs).
  std::vector<NamedPath> outputs;
  // Called from the decoding threads (one call at a time) after each image: done of total.
  std::function<void(size_t done, size_t total)> on_progress;
};

// A file or zip entry that is not used, and why. `reason` is one of:
//   "unreadable"          the image could not be read or decoded (corrupt, truncated, too many pixels)
//   "unsupported_format"  a picture format that is not read (HEIC, WebP, GIF, BMP, TIFF, RAW...)
//   "not_an_image"        any other file inside a class folder (.txt, .mov, no extension...)
//   "not_a_regular_file"  a FIFO, socket or device node (never opened), or a broken link
//   "outside_class_folders"  a file beside the class folders, or in a folder that is not a class
//   "unsafe_zip_entry"    a zip entry with an absolute path or a ".." component
//   "too_large"           bigger than the 64 MB per image limit, needing more memory to decode than
//                         DatasetOptions::decode_budget_bytes, or a zip entry whose declared size
//                         and compression ratio say it would inflate to a bomb (refused unread)
// OS junk (.DS_Store, Thumbs.db, desktop.ini, AppleDouble ._*, hidden files and folders, __MACOSX)
// is not listed: it is counted in Dataset::ignored_junk only.
struct SkippedFile {
  std::string path;     // as the user sees it ("archive.zip:inner/path" inside a zip)
  std::string reason;   // one of the keys above
  std::string message;  // one sentence naming the file, the problem and the fix
};

// A decoded dataset. Images are grouped by label (0, 1, ...) and, within a class, sorted by path
// byte-wise; image i is pixels[i * height * width * channels ...], interleaved in `order`.
struct Dataset {
  std::string source;                 // the path that was loaded
  std::vector<std::string> classes;   // label -> class (folder) name
  std::vector<std::string> paths;     // image i's file ("archive.zip:inner/path" inside a zip)
  std::vector<int> labels;            // image i's class index
  std::vector<uint64_t> file_hashes;  // image i's file bytes, hashed (to find copies of one photo)
  int height = 0, width = 0, channels = 0;
  tv::ChannelOrder order = tv::ChannelOrder::RGB;
  std::vector<uint8_t> pixels;        // size() * image_bytes() bytes
  std::vector<std::string> warnings;  // one sentence each (skipped folders, classes left empty, ...)
  std::vector<SkippedFile> skipped;   // every file that is not used (see SkippedFile), in path order
  size_t ignored_junk = 0;            // OS junk files and folders passed over quietly
  size_t scaled_decodes = 0;          // images decoded with the scaled DCT (larger than the board decodes)
  size_t exif_rotated = 0;            // images turned upright by their EXIF orientation
  double decode_seconds = 0;          // wall time spent reading, decoding and resizing the images
  int decode_threads = 0;             // threads that decoded

  // Number of images.
  size_t size() const { return labels.size(); }
  // Bytes of one image (height * width * channels).
  size_t image_bytes() const { return (size_t)height * (size_t)width * (size_t)channels; }
  // First byte of image i (i < size()).
  const uint8_t* image(size_t i) const { return pixels.data() + i * image_bytes(); }
  // Number of images of each class (indexed by label).
  std::vector<size_t> class_counts() const;
  // How a message names image i: its file, or "image i" in a dataset built in memory without paths.
  std::string name(size_t i) const { return i < paths.size() ? paths[i] : "image " + std::to_string(i); }
};

// The files of a dataset, found without reading any image: the first half of load_dataset.
struct DatasetListing {
  struct Entry {
    std::string rel;      // path relative to the folder or inside the zip
    std::string display;  // what the user sees
    int label = 0;
    uint64_t zip_index = 0;  // the entry's index in the zip (zip only)
  };
  std::string source;
  bool is_zip = false;
  std::string root;  // the folder holding the class folders, relative to source ("" = source itself)
  std::vector<std::string> classes;
  std::vector<Entry> images;  // grouped by label, sorted by path within a class
  std::vector<SkippedFile> skipped;
  std::vector<std::string> warnings;
  size_t ignored_junk = 0;
  std::shared_ptr<void> archive;  // the open zip (internal)
  // Bytes the decoded cache of all images takes at the options' input size.
  size_t cache_bytes(const DatasetOptions& options) const;
};

// Lists a dataset: `path` is a folder, or a .zip with the same layout (read in memory, never extracted;
// a single top-level folder holding the class folders is looked through). When no class folder holds
// images directly but an images/ sub-folder exists (the reference layout DATASET/images/<class>/), that
// is used. Every .jpg/.jpeg/.jpe/.jfif/.png file (any case) anywhere below a class folder, at any depth,
// is an image of that class; OS junk is ignored quietly; every other file is listed in `skipped` with
// its reason (FIFOs, sockets and devices are never opened). Folders without images are skipped with one
// warning each. Throws tvh::Error when the path is missing, unreadable or a plain file that is not a
// zip, a listed class is missing or has no images, no class is found, the options are invalid, or one
// of options.outputs is a listed image or the zip.
DatasetListing list_dataset(const DatasetOptions& options);

// Decodes every listed image once (EXIF orientation applied; JPEGs larger than the board decodes use
// the scaled DCT, see decode_for_input) and resizes it with tv::resize_nearest_crop. Images that cannot
// be read are added to `skipped` ("unreadable" or "too_large"). The result does not depend on
// options.threads (only on decode_budget_bytes, which a caller may derive from it). Throws tvh::Error
// when no image at all could be decoded.
Dataset decode_dataset(const DatasetListing& listing, const DatasetOptions& options);

// list_dataset then decode_dataset.
Dataset load_dataset(const DatasetOptions& options);

// The bytes of one image file given on a command line, read as every input is (at most kMaxImageFileBytes;
// a FIFO or a link loop refused); throws tvh::Error naming the file.
std::vector<uint8_t> read_image_file(const std::string& path);

// Reads one image file (JPEG or PNG, EXIF applied, scaled DCT above the board's size) into dst, a
// height x width image in `order` (tv::resize_nearest_crop); throws tvh::Error naming the file.
void read_input_image(const std::string& path, int height, int width, tv::ChannelOrder order, uint8_t* dst);

// Memory the system can still give this process, in bytes (MemAvailable, capped by a cgroup limit);
// 0 when it cannot be told.
uint64_t available_memory_bytes();

}  // namespace tvh
