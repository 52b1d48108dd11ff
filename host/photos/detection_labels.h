// The label files of detection datasets, parsed from their bytes: YOLO .txt (one `class cx cy w h` line
// per object), Ultralytics' data.yaml and classes.txt (the class names), COCO JSON and Pascal VOC XML.
// Every box ends as a tvh::DetectionBox normalised to the STORED photo (before its EXIF orientation);
// every problem is a tvh::Error naming the file (its `display` name), the line or the entry, and what to
// do. Reading the files and matching them to photos is host/photos/detection_dataset.h.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

#include "host/photos/detection_box.h"

namespace tvh {

// How far (as a fraction of the photo's side) a box may reach past the photo's edge and still be read:
// an overshoot up to this much is clipped to the edge (labelling tools round a box drawn to the border
// a little past it); more is refused as a wrong box.
constexpr float kBoxEdgeTolerance = 0.01f;

// Largest label file read (a COCO JSON of a large dataset is tens of MB; a .txt or .xml a few KB).
constexpr size_t kMaxLabelFileBytes = size_t(256) << 20;

// The boxes of one YOLO label file: one `class cx cy w h` line per object, whitespace-separated, all
// normalised to the photo; blank lines are skipped and an empty file is a photo with no objects. The
// class must be an integer in 0 .. num_classes - 1, coordinates finite numbers, cx and cy in [0, 1], w
// and h in (0, 1], and the box inside the photo (an overshoot up to kBoxEdgeTolerance is clipped).
// A segmentation polygon line (class x1 y1 x2 y2 ...) is refused as such. Throws tvh::Error naming
// `display`, the line number and the fix.
std::vector<DetectionBox> parse_yolo_labels(const std::string& text, const std::string& display, size_t num_classes);

// What an Ultralytics data.yaml says. Paths are as written ('/'-separated); train/val/test each hold one
// or more folders (a list in the yaml) or are empty when absent.
struct DataYaml {
  std::vector<std::string> names;  // class names, by class number
  std::string path;                // the `path:` key ("" when absent)
  std::vector<std::string> train, val, test;
};

// Parses a data.yaml: `names:` as a list or as a map {0: a, 1: b} (keys exactly 0 .. n-1), an optional
// `nc` that must equal the number of names, optional path/train/val/test strings or lists of strings.
// Throws tvh::Error naming `display` (and the line where the YAML itself is broken).
DataYaml parse_data_yaml(const std::string& text, const std::string& display);

// Parses a classes.txt: one class name per line (surrounding spaces and a CR removed); blank lines at
// the end are ignored, a blank line between names is refused (it would shift every class number after
// it). Throws tvh::Error naming `display` and the line.
std::vector<std::string> parse_class_names(const std::string& text, const std::string& display);

// Refuses object class names the board cannot keep: none at all, more than tv::kBoardMaxClasses, a name
// twice, or one that tv::name_allowed refuses; each with a sentence naming `display` (where the names
// came from).
void check_detection_classes(const std::vector<std::string>& classes, const std::string& display);

// One photo of a COCO JSON with its boxes.
struct CocoImage {
  int64_t id = 0;
  std::string file_name;  // as written ('/'-separated, relative to the images' folder)
  int width = 0, height = 0;
  std::vector<DetectionBox> boxes;
};

// A COCO JSON's classes and photos.
struct CocoLabels {
  std::vector<std::string> classes;  // the used categories, in order of category id
  std::vector<CocoImage> images;     // in the file's order
  std::vector<std::string> warnings;
};

// Parses a COCO object-detection JSON: images (id, file_name, width, height), annotations (image_id,
// category_id, bbox [x, y, w, h] in pixels, iscrowd) and categories (id, name, supercategory).
// Categories become classes 0 .. K-1 in order of id, except a category no annotation uses that is the
// supercategory of another category (Roboflow's category 0, the dataset's name): it is dropped, never a
// class. Crowd annotations (iscrowd 1: a region of many objects, no centroid) are left out with one
// warning. Boxes are converted to normalised centre form with the image's width and height from the
// JSON (an overshoot up to kBoxEdgeTolerance clipped). Throws tvh::Error naming `display` and the entry.
CocoLabels parse_coco_json(const std::string& text, const std::string& display);

// True when `text` is a JSON object with "images", "annotations" and "categories" arrays (no throw).
bool is_coco_json(const std::string& text);

// One Pascal VOC annotation file.
struct VocAnnotation {
  std::string filename;  // <filename> ("" when absent)
  int width = 0, height = 0;
  struct Object {
    std::string name;
    double xmin = 0, ymin = 0, xmax = 0, ymax = 0;  // pixels, as written
  };
  std::vector<Object> objects;
};

// Parses a Pascal VOC XML: <annotation> with <filename>, <size><width><height>, and <object><name>
// <bndbox><xmin><ymin><xmax><ymax>. Throws tvh::Error naming `display` (and the object) when it is not
// XML, has no <annotation>, no positive size, or an object without a name or with a broken box.
VocAnnotation parse_voc_xml(const std::string& text, const std::string& display);

// True when `text` is XML whose root element is <annotation> (no throw).
bool is_voc_xml(const std::string& text);

// The boxes of a VOC annotation, its names looked up in `classes`. The corners are read as pixel edges
// (a box from xmin to xmax is xmax - xmin wide), as CVAT, Roboflow and LabelImg write them: the original
// VOC 1-based inclusive convention differs by one pixel, under 1/width of the photo. A box reaching past
// the photo by up to kBoxEdgeTolerance is clipped. Throws tvh::Error naming `display` and the object.
std::vector<DetectionBox> voc_boxes(const VocAnnotation& voc, const std::vector<std::string>& classes,
                                    const std::string& display);

}  // namespace tvh
