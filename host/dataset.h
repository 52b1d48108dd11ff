// Image datasets for training: a folder (or .zip) with one sub-folder per class, decoded once into a
// u8 cache at the model's input size with the device's own resize (tv::resize_nearest_crop), and the
// train/validation splits over it.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include <string>
#include <utility>
#include <vector>

#include "tv/image.h"

namespace tvh {

// What to load and at which model input size.
struct DatasetOptions {
  std::string path;                  // a folder or a .zip archive
  std::vector<std::string> classes;  // explicit class order; empty = every folder with images, sorted
  int height = 64, width = 64, channels = 3;
  tv::ChannelOrder order = tv::ChannelOrder::RGB;  // ignored when channels == 1 (always GRAY)
  int threads = 1;                                 // decoding threads; 0 = one per hardware thread
};

// A decoded dataset. Images are grouped by label (0, 1, ...) and, within a class, sorted by path
// byte-wise; image i is pixels[i * height * width * channels ...], interleaved in `order`.
struct Dataset {
  std::string source;                // the path that was loaded
  std::vector<std::string> classes;  // label -> class (folder) name
  std::vector<std::string> paths;    // image i's file ("archive.zip:inner/path" inside a zip)
  std::vector<int> labels;           // image i's class index
  int height = 0, width = 0, channels = 0;
  tv::ChannelOrder order = tv::ChannelOrder::RGB;
  std::vector<uint8_t> pixels;        // size() * image_bytes() bytes
  std::vector<std::string> warnings;  // one sentence each (skipped folders, classes left empty, ...)
  std::vector<std::pair<std::string, std::string>> skipped;  // (path, one-sentence reason) of unreadable files
  double decode_seconds = 0;  // wall time spent reading, decoding and resizing the images

  // Number of images.
  size_t size() const { return labels.size(); }
  // Bytes of one image (height * width * channels).
  size_t image_bytes() const { return (size_t)height * (size_t)width * (size_t)channels; }
  // First byte of image i (i < size()).
  const uint8_t* image(size_t i) const { return pixels.data() + i * image_bytes(); }
  // Number of images of each class (indexed by label).
  std::vector<size_t> class_counts() const;
};

// Loads a dataset: `path` is a folder, or a .zip with the same layout (read in memory, never extracted;
// a single top-level folder holding the class folders is looked through). When no class folder holds
// images directly but an images/ sub-folder exists (the reference layout DATASET/images/<class>/), that
// is used. Only .jpg/.jpeg files (any case) directly inside a class folder are images; hidden files and
// __MACOSX are ignored. Folders without images are skipped with one warning each; files that cannot be
// read or decoded are listed in `skipped`. The result does not depend on options.threads.
// Throws tvh::Error when the path is missing or unreadable, a listed class is missing or has no images,
// no class is found, the options are invalid, or no image at all could be decoded.
Dataset load_dataset(const DatasetOptions& options);

// Indices into a Dataset, each list ordered by class then path (i.e. ascending index).
struct Split {
  std::vector<int> train, val;
};

// The reference rule: in each class the last `last_n` images (by sorted path) are validation, the rest
// training. A class with last_n images or fewer keeps one image in training. Throws if last_n < 0.
Split reference_split(const Dataset& dataset, int last_n = 3);

// A stratified random split: in each class round(count * val_fraction) images (at least one when
// val_fraction > 0 and the class has two or more, never all of them) are validation, chosen by a
// seeded shuffle (splitmix64, the same on every platform). Throws unless 0 <= val_fraction < 1.
Split fraction_split(const Dataset& dataset, double val_fraction, uint64_t seed);

// k stratified folds: each class is shuffled (seeded) and dealt round-robin over the folds, so every
// image is in exactly one fold's val and fold sizes differ by at most one. Throws unless
// 2 <= k <= dataset.size().
std::vector<Split> kfold_splits(const Dataset& dataset, int k, uint64_t seed);

}  // namespace tvh
