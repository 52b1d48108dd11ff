// libFuzzer target: the detection datasets' label parsers (host/photos/detection_labels.h) on arbitrary
// bytes. The first byte picks the parser (0 YOLO .txt, 1 data.yaml, 2 classes.txt, 3 COCO JSON, 4 Pascal
// VOC XML, modulo 5); the rest is the file. A tvh::Error is an accepted outcome; a crash, a hang, an
// out-of-bounds access or a box outside the photo is not.
#include <stddef.h>
#include <stdint.h>

#include <cmath>
#include <string>
#include <vector>

#include "host/base/error.h"
#include "host/photos/detection_labels.h"

namespace {

// Every box a parser returns lies in the photo, with its label among the classes.
void check_boxes(const std::vector<tvh::DetectionBox>& boxes, size_t num_classes) {
  for (const auto& b : boxes) {
    if (b.label < 0 || (size_t)b.label >= num_classes) __builtin_trap();
    if (!std::isfinite(b.cx) || !std::isfinite(b.cy) || !(b.w > 0) || !(b.h > 0)) __builtin_trap();
    if (b.cx - b.w / 2 < -1e-5f || b.cx + b.w / 2 > 1.00001f || b.cy - b.h / 2 < -1e-5f || b.cy + b.h / 2 > 1.00001f)
      __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string text((const char*)data + 1, size - 1);
  try {
    switch (data[0] % 5) {
      case 0: check_boxes(tvh::parse_yolo_labels(text, "fuzz.txt", 16), 16); break;
      case 1: tvh::check_detection_classes(tvh::parse_data_yaml(text, "data.yaml").names, "data.yaml"); break;
      case 2: tvh::check_detection_classes(tvh::parse_class_names(text, "classes.txt"), "classes.txt"); break;
      case 3: {
        const tvh::CocoLabels coco = tvh::parse_coco_json(text, "fuzz.json");
        for (const auto& im : coco.images) check_boxes(im.boxes, coco.classes.size());
        break;
      }
      default: {
        const tvh::VocAnnotation voc = tvh::parse_voc_xml(text, "fuzz.xml");
        std::vector<std::string> names;
        for (const auto& o : voc.objects) names.push_back(o.name);
        check_boxes(tvh::voc_boxes(voc, names, "fuzz.xml"), names.size());
        break;
      }
    }
  } catch (const tvh::Error&) {
  }
  return 0;
}
