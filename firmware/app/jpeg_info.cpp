#include "jpeg_info.h"

#include "tv/image/jpeg_markers.h"

namespace tvfw {

bool jpeg_dimensions(const uint8_t* d, size_t size, int* width, int* height) {
  tv::JpegSegments segments(d, size);
  tv::JpegSegment s;
  while (segments.next(&s)) {
    if (!tv::jpeg_is_frame_header(s.marker)) continue;
    if (s.size < 5) return false;  // precision, height (2 bytes), width (2 bytes)
    *height = (s.payload[1] << 8) | s.payload[2];
    *width = (s.payload[3] << 8) | s.payload[4];
    return *width > 0 && *height > 0;
  }
  return false;
}

}  // namespace tvfw
