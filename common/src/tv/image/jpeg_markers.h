// Walking the marker segments of a JPEG header (SOI up to the start of scan) without decoding it:
// the board reads the frame size from them, the host finds the EXIF block.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "tv/build_config.h"

namespace tv {

// One marker segment that carries a length: its marker (the byte after 0xFF) and its payload (the
// bytes after the two length bytes).
struct JpegSegment {
  uint8_t marker;
  const uint8_t* payload;
  size_t size;
};

// The segments of the JPEG in data[0 .. size), in file order. next() skips fill bytes and markers
// without a length; it returns false at the start of scan or the end of image, at the end of the
// data, and at anything malformed (no SOI, a byte where a marker should be, a length below 2 or past
// the end of the data).
class JpegSegments {
 public:
  JpegSegments(const uint8_t* data, size_t size);
  bool next(JpegSegment* segment);

 private:
  const uint8_t* d_;
  size_t n_, pos_;
};

// True for the markers of a frame header (SOF0..SOF15 except DHT C4, JPG C8 and DAC CC).
bool jpeg_is_frame_header(uint8_t marker);

}  // namespace tv
