// A detection box (class + centre and size normalised to the photo) and how it follows the photo's
// EXIF orientation: the box is given in the stored photo, the model sees the upright one (issue 27).
#pragma once

namespace tvh {

struct DetectionBox {
  int label = 0;   // index into the dataset's class names
  float cx = 0.f;  // centre x, 0..1 of the photo's width
  float cy = 0.f;  // centre y, 0..1 of the photo's height
  float w = 0.f;   // width, 0..1 of the photo's width
  float h = 0.f;   // height, 0..1 of the photo's height
};

// The box in the upright photo that tvh::apply_orientation(image, orientation) makes of the stored one:
// 2 mirrors, 3 rotates 180 degrees, 4 flips, 5 transposes, 6 rotates 90 degrees clockwise,
// 7 transverses, 8 rotates 90 degrees counter-clockwise (5..8 swap width and height).
// 1 and values outside 1..8 return the box unchanged.
DetectionBox orient_box(const DetectionBox& box, int orientation);

}  // namespace tvh
