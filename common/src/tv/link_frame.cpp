#include "tv/link_frame.h"

#include <string.h>

#include "tv/crc32.h"
#include "tv/little_endian.h"

namespace tv {
namespace link {

size_t encode_frame(uint8_t type, uint32_t seq, const void* payload, size_t len, uint8_t* out, size_t cap) {
  if (len > kMaxPayload || cap < kHeaderBytes + kCrcBytes || len > cap - kHeaderBytes - kCrcBytes) return 0;
  out[0] = kMagic0;
  out[1] = kMagic1;
  out[2] = type;
  write_le32(out + 3, seq);
  write_le16(out + 7, (uint16_t)len);
  if (len) memcpy(out + kHeaderBytes, payload, len);
  write_le32(out + kHeaderBytes + len, crc32(0, out + 2, kHeaderBytes - 2 + len));
  return kHeaderBytes + len + kCrcBytes;
}

FrameParser::Result FrameParser::feed(uint8_t b) {
  switch (state_) {
    case kSeek0:
      if (b == kMagic0) state_ = kSeek1;
      return kNone;
    case kSeek1:
      state_ = b == kMagic1 ? kHeader : (b == kMagic0 ? kSeek1 : kSeek0);
      got_ = 0;
      return kNone;
    case kHeader:
      head_[got_++] = b;
      if (got_ < sizeof head_) return kNone;
      frame_.type = head_[0];
      frame_.seq = read_le32(head_ + 1);
      frame_.len = read_le16(head_ + 5);
      got_ = 0;
      if (frame_.len > kMaxPayload) {
        state_ = kSeek0;
        return kBadLength;
      }
      state_ = frame_.len ? kPayload : kTrailer;
      return kNone;
    case kPayload:
      frame_.payload[got_++] = b;
      if (got_ == frame_.len) {
        state_ = kTrailer;
        got_ = 0;
      }
      return kNone;
    case kTrailer: {
      tail_[got_++] = b;
      if (got_ < kCrcBytes) return kNone;
      state_ = kSeek0;
      const uint32_t c = crc32(crc32(0, head_, sizeof head_), frame_.payload, frame_.len);
      return c == read_le32(tail_) ? kFrame : kBadCrc;
    }
  }
  state_ = kSeek0;
  return kNone;
}

}  // namespace link
}  // namespace tv
