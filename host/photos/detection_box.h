// A detection box (class + centre and size normalised to the photo) and how it follows the photo's
// EXIF orientation: the box is given in the stored photo, the model sees the upright one (issue 27).
#pragma once

#include "tv/detect/grid.h"

namespace tvh {

// The core's box (label, centre and size as fractions of the photo): one type on the PC and the board.
using DetectionBox = tv::DetectBox;

// The box in the upright photo that tvh::apply_orientation(image, orientation) makes of the stored one:
// 2 mirrors, 3 rotates 180 degrees, 4 flips, 5 transposes, 6 rotates 90 degrees clockwise,
// 7 transverses, 8 rotates 90 degrees counter-clockwise (5..8 swap width and height).
// 1 and values outside 1..8 return the box unchanged.
DetectionBox orient_box(const DetectionBox& box, int orientation);

}  // namespace tvh
