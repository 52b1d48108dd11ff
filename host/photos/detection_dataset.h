// Detection datasets: photos with object boxes as Label Studio, CVAT, Roboflow and makesense.ai export
// them (YOLO .txt with data.yaml or classes.txt, COCO JSON, Pascal VOC XML), in a folder or a .zip,
// decoded once at the model's input size. The whole photo is the model input (stretched, never cropped:
// tv::resize_nearest), so boxes normalised to the upright photo hold for the input too. The label files'
// parsers are host/photos/detection_labels.h; the per-image split is detection_split (split.h).
#pragma once
#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

#include "host/photos/dataset.h"
#include "host/photos/detection_box.h"
#include "tv/image/image.h"

namespace tvh {

// The label format a dataset folder or zip is in.
enum class DetectionFormat { None, Yolo, Coco, Voc };

// "yolo", "coco", "voc" ("" for None).
const char* detection_format_name(DetectionFormat format);

// The detection format of the folder or .zip at `path`, from its listing and at most a few small label
// files (no photo is read): YOLO when it has a labels/ folder holding .txt files (at its top, or in a
// train/, valid/ or test/ folder as Roboflow writes them), a data.yaml, or CVAT's YOLO 1.1 obj.names; COCO when a .json
// at its top or one folder down has "images", "annotations" and "categories"; VOC when an .xml beside the photos or in
// an Annotations/ folder has an <annotation> root. A single top-level folder inside a zip is looked through. None for a
// classification dataset (and for anything it cannot list: the classification loader says why). Never throws.
DetectionFormat detection_format(const std::string& path);

// detection_format(path) != DetectionFormat::None: tvtrain asks this before listing class folders, so
// that YOLO's images/train is never taken for a class.
bool looks_like_detection_dataset(const std::string& path);

// What to load and at which model input size.
struct DetectionOptions {
  std::string path;  // a folder or a .zip archive
  int height = 64, width = 64, channels = 3;
  tv::ChannelOrder order = tv::ChannelOrder::RGB;  // ignored when channels == 1 (always GRAY)
  int threads = 0;                                 // decoding threads; 0 = one per hardware thread
  uint64_t decode_budget_bytes = 0;                // as DatasetOptions::decode_budget_bytes
  // A photo no label file names: left out and listed as "no_label" (false), or kept as a photo with no
  // objects (true, with one warning counting them).
  bool keep_unlabelled = false;
};

// A decoded detection dataset. Image i is pixels[i * image_bytes() ...], the whole upright photo
// stretched to height x width; boxes[i] are normalised to that upright photo (and so to the input).
// Images are in path order.
struct DetectionDataset {
  std::string source;                // the path that was loaded
  std::string format;                // "yolo", "coco" or "voc"
  std::vector<std::string> classes;  // label -> object class name
  std::vector<std::string> paths;    // image i's file ("archive.zip:inner/path" inside a zip)
  // image i's subset as the layout or data.yaml gave it: "train", "val", "test", or "" (none given).
  std::vector<std::string> subsets;
  std::vector<std::vector<DetectionBox>> boxes;  // image i's objects (empty: a photo with no objects)
  std::vector<int> photo_width, photo_height;    // image i's upright photo in its own pixels
  int height = 0, width = 0, channels = 0;
  tv::ChannelOrder order = tv::ChannelOrder::RGB;
  std::vector<uint8_t> pixels;
  std::vector<std::string> warnings;  // one sentence each
  // Every file not used, with its reason: those of SkippedFile, and
  //   "bad_label"        a label file (or the image it labels) refused with the problem's sentence
  //   "no_label"         an image no label file names (left out unless DetectionOptions::keep_unlabelled;
  //                      an EMPTY label file is a photo with no objects)
  //   "no_image"         a label file whose image is not in the dataset
  //   "size_mismatch"    a COCO or VOC photo whose stored size is not the size its label file gives
  std::vector<SkippedFile> skipped;
  size_t ignored_junk = 0;
  size_t exif_rotated = 0;

  size_t size() const { return paths.size(); }
  size_t image_bytes() const { return (size_t)height * (size_t)width * (size_t)channels; }
  const uint8_t* image(size_t i) const { return pixels.data() + i * image_bytes(); }
  // Number of boxes over all images.
  size_t object_count() const;
  // Number of images in `subset` ("train", "val", "test" or "").
  size_t subset_count(const std::string& subset) const;
};

// Lists, parses and decodes a detection dataset (format as detection_format tells). Layouts: Ultralytics
// images/{train,val,test}/ + labels/{train,val,test}/, flat images/ + labels/, Roboflow {train,valid,
// test}/{images,labels}/ with data.yaml at the top (valid is "val"); the label of images/x/a.jpg is
// labels/x/a.txt (the last images/ component replaced), of an image outside any images/ folder the .txt
// beside it. YOLO's class names come from data.yaml (whose train/val/test folders, relative to its
// `path:` or its own folder, give the subsets; Roboflow's "../train/images" is read as "train/images")
// or classes.txt (CVAT's YOLO 1.1: obj.names, each .txt beside its photo). COCO: every COCO JSON at the top or one
// folder down (a train/valid/test folder or a file name with train/val/test gives the subset), its file_names found
// beside it, in an images/ folder beside it or at the top. VOC: each annotation's photo is its <filename> (or its own
// name with a photo extension) beside it, or in the JPEGImages/ folder beside Annotations/; class names from every
// annotation, sorted. Photos are decoded as the classification datasets' are (JPEG/PNG, EXIF orientation
// applied to pixels and boxes). Throws tvh::Error when the path is not a detection dataset, the class
// names are missing or not allowed (tv::name_allowed; at most tv::kBoardMaxClasses), the options are
// invalid or no photo could be used.
DetectionDataset load_detection_dataset(const DetectionOptions& options);

// One photo as a detection dataset holds it: the whole upright photo (EXIF applied) stretched to the
// input (tv::resize_nearest), and its sizes.
struct WholePhoto {
  int orientation = 1;                      // the EXIF orientation applied
  int stored_width = 0, stored_height = 0;  // the file's pixels before the orientation
  int width = 0, height = 0;                // the upright photo in its own pixels
};

// Decodes a photo file's bytes into dst (height x width x the order's channels); `name` names it in the
// tvh::Error a photo that cannot be read throws.
WholePhoto decode_whole_photo(const std::vector<uint8_t>& bytes, const std::string& name, int height, int width,
                              tv::ChannelOrder order, uint64_t decode_budget_bytes, uint8_t* dst);

// Reads one photo file (opened as every input is: a FIFO or a link loop refused) as decode_whole_photo:
// what `tvtrain detect` runs a detector on.
WholePhoto read_whole_photo(const std::string& path, int height, int width, tv::ChannelOrder order, uint8_t* dst);

}  // namespace tvh
