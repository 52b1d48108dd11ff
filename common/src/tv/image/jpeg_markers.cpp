#include "tv/image/jpeg_markers.h"

namespace tv {

JpegSegments::JpegSegments(const uint8_t* data, size_t size) : d_(data), n_(size), pos_(2) {
  if (!data || size < 4 || data[0] != 0xFF || data[1] != 0xD8) pos_ = size;  // not a JPEG: no segments
}

bool JpegSegments::next(JpegSegment* segment) {
  while (pos_ + 4 <= n_) {
    if (d_[pos_] != 0xFF) break;
    const uint8_t marker = d_[pos_ + 1];
    if (marker == 0xFF) {  // fill byte
      ++pos_;
      continue;
    }
    if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD8)) {  // TEM, RSTn, SOI: no length
      pos_ += 2;
      continue;
    }
    if (marker == 0xDA || marker == 0xD9) break;  // start of scan, end of image
    const size_t len = ((size_t)d_[pos_ + 2] << 8) | d_[pos_ + 3];
    if (len < 2 || len > n_ - pos_ - 2) break;
    segment->marker = marker;
    segment->payload = d_ + pos_ + 4;
    segment->size = len - 2;
    pos_ += 2 + len;
    return true;
  }
  pos_ = n_;
  return false;
}

bool jpeg_is_frame_header(uint8_t marker) {
  return marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
}

}  // namespace tv
