#include "host/photos/detection_box.h"

namespace tvh {

DetectionBox orient_box(const DetectionBox& box, int orientation) {
  DetectionBox out = box;
  const float u = box.cx, v = box.cy;
  switch (orientation) {
    case 2: out.cx = 1.f - u; break;
    case 3:
      out.cx = 1.f - u;
      out.cy = 1.f - v;
      break;
    case 4: out.cy = 1.f - v; break;
    case 5:
      out.cx = v;
      out.cy = u;
      break;
    case 6:
      out.cx = 1.f - v;
      out.cy = u;
      break;
    case 7:
      out.cx = 1.f - v;
      out.cy = 1.f - u;
      break;
    case 8:
      out.cx = v;
      out.cy = 1.f - u;
      break;
    default: return box;
  }
  if (orientation >= 5) {
    out.w = box.h;
    out.h = box.w;
  }
  return out;
}

}  // namespace tvh
