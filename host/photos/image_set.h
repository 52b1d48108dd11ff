// The decoded pixels a model runs on, whichever dataset holds them: a classification Dataset (class
// folders) or a DetectionDataset (photos with boxes), viewed in place without a copy. What calibration
// and the int8 checks of host/quant read, so a detector calibrates on its photos by the classifier's path.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

#include "host/photos/dataset.h"
#include "host/photos/detection_dataset.h"

namespace tvh {

class ImageSet {
 public:
  // Views of a dataset's images (the dataset must outlive the view); implicit, so a dataset is an image set.
  ImageSet(const Dataset& ds)  // NOLINT(google-explicit-constructor)
      : ImageSet(ds.source, ds.paths, ds.pixels.data(), ds.size(), ds.height, ds.width, ds.channels) {}
  ImageSet(const DetectionDataset& ds)  // NOLINT(google-explicit-constructor)
      : ImageSet(ds.source, ds.paths, ds.pixels.data(), ds.size(), ds.height, ds.width, ds.channels) {}

  // The path the dataset was loaded from.
  const std::string& source() const { return *source_; }
  size_t size() const { return count_; }
  size_t image_bytes() const { return (size_t)height * (size_t)width * (size_t)channels; }
  // First byte of image i (i < size()), height x width x channels, interleaved.
  const uint8_t* image(size_t i) const { return pixels_ + i * image_bytes(); }
  // How a message names image i: its file, or "image i" without paths.
  std::string name(size_t i) const { return i < paths_->size() ? (*paths_)[i] : "image " + std::to_string(i); }

 private:
  ImageSet(const std::string& source, const std::vector<std::string>& paths, const uint8_t* pixels, size_t count, int h,
           int w, int c)
      : source_(&source), paths_(&paths), pixels_(pixels), count_(count), height(h), width(w), channels(c) {}
  const std::string* source_;
  const std::vector<std::string>* paths_;
  const uint8_t* pixels_;
  size_t count_;

 public:
  int height, width, channels;
};

}  // namespace tvh
