#include "tv/link/link_frame.h"

#include <string.h>

#include "tv/crc32.h"
#include "tv/little_endian.h"

namespace tv {
namespace link {

size_t encode_frame(uint8_t type, uint32_t seq, const void* payload, size_t len, uint8_t* out, size_t cap,
                    uint32_t session) {
  if (len > kMaxPayload || cap < kHeaderBytes + kCrcBytes || len > cap - kHeaderBytes - kCrcBytes) return 0;
  out[0] = kMagic0;
  out[1] = kMagic1;
  out[2] = type;
  write_le32(out + 3, seq);
  write_le16(out + 7, (uint16_t)len);
  if (len) memcpy(out + kHeaderBytes, payload, len);
  write_le32(out + kHeaderBytes + len, crc32(session, out + 2, kHeaderBytes - 2 + len));
  return kHeaderBytes + len + kCrcBytes;
}

FrameParser::Result FrameParser::feed(uint8_t b) {
  if (pend_len_ == sizeof pend_) reset();  // cannot happen (see replay); never write past the buffer
  pend_[pend_len_++] = b;
  return drain();
}

FrameParser::Result FrameParser::drain() {
  while (pend_pos_ < pend_len_) {
    const Result r = step(pend_[pend_pos_++]);
    if (r != kNone) return r;
  }
  pend_pos_ = pend_len_ = 0;
  return kNone;
}

void FrameParser::replay() {
  // raw_[1..] in front of what is still to be read: at most kMaxFrameBytes - 1 + (what remains of
  // the pending bytes, which held these raw bytes before) — never more than the buffer.
  const size_t keep = pend_len_ - pend_pos_, again = raw_len_ > 1 ? raw_len_ - 1 : 0;
  if (again + keep > sizeof pend_) {
    pend_pos_ = pend_len_ = 0;
    return;
  }
  memmove(pend_ + again, pend_ + pend_pos_, keep);
  memcpy(pend_, raw_ + 1, again);
  pend_pos_ = 0;
  pend_len_ = again + keep;
  raw_len_ = 0;
}

FrameParser::Result FrameParser::step(uint8_t b) {
  if (state_ != kSeek0 && raw_len_ < sizeof raw_) raw_[raw_len_++] = b;
  switch (state_) {
    case kSeek0:
      if (b == kMagic0) {
        state_ = kSeek1;
        raw_[0] = b;
        raw_len_ = 1;
      }
      return kNone;
    case kSeek1:
      if (b == kMagic1) {
        state_ = kHeader;
      } else if (b == kMagic0) {
        raw_len_ = 1;  // this one may start the frame
      } else {
        state_ = kSeek0;
      }
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
        replay();
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
      const uint32_t want = read_le32(tail_);
      const bool hello = frame_.type == kHello && session_ != 0 &&
                         crc32(crc32(0, head_, sizeof head_), frame_.payload, frame_.len) == want;
      if (hello || crc32(crc32(session_, head_, sizeof head_), frame_.payload, frame_.len) == want) {
        raw_len_ = 0;
        return kFrame;
      }
      replay();
      return kBadCrc;
    }
  }
  state_ = kSeek0;
  return kNone;
}

}  // namespace link
}  // namespace tv
