// The framed protocol between the board and the PC over the serial port (tvlink), the part both
// sides share: frame layout, message types, sizes, and an incremental decoder. Device-safe: fixed
// buffers, no allocation, 32-bit clean.
//
// Frame (little endian):  A5 5A | type u8 | seq u32 | len u16 | payload[len] | crc32 u32
//   The CRC-32 covers type, seq, len and the payload. len <= kMaxPayload. A session binds every frame:
//   the PC's Hello names a random 32-bit session number, and from its answer on both sides start each
//   frame's CRC-32 from that number instead of 0 (Hello and its answer start from 0). A frame of
//   another session (a second client, an answer to an earlier client) fails the CRC and is dropped
//   as noise is; only a Hello is taken from outside the session (a new client after one that died). The board's text
//   menu ignores bytes >= 127, so the first byte of a frame is never read as a key: the board enters the protocol when
//   it sees it (see firmware/README.md, "The USB link").
#pragma once
#include <stddef.h>
#include <stdint.h>

namespace tv {
namespace link {

constexpr uint8_t kMagic0 = 0xA5;
constexpr uint8_t kMagic1 = 0x5A;
constexpr uint32_t kVersion = 2;      // protocol version (in Hello); 2: sessions
constexpr size_t kMaxPayload = 2048;  // payload bytes of one frame
constexpr size_t kHeaderBytes = 9;    // magic, type, seq, len
constexpr size_t kCrcBytes = 4;
constexpr size_t kMaxFrameBytes = kHeaderBytes + kMaxPayload + kCrcBytes;
constexpr uint32_t kWindow = 8;        // data frames in flight before an ack is needed
constexpr size_t kMaxPath = 128;       // longest path in a request (bytes, no terminator)
constexpr int kMaxCaptures = 1000;     // most photos one Capture request takes
constexpr uint32_t kRetryMs = 400;     // resend what is not acknowledged after this
constexpr uint32_t kMaxRetries = 8;    // then the transfer is abandoned
constexpr uint32_t kIdleMs = 4000;     // the board leaves the protocol after this silence
constexpr uint32_t kFrameGapMs = 300;  // a frame in progress silent this long was a lie: read again

// Message types. Requests go from the PC to the board; the board answers each with Ok, Err or the
// answer named beside it, echoing the request's seq.
enum Type : uint8_t {
  kHello = 0x01,      // u32 version, u32 session -> Ok: u32 version, u32 max payload, u32 window, u32 session
  kStatus = 0x02,     // -> Ok: "key=value\n" text
  kList = 0x03,       // u32 first index, path -> Entries: u8 more, then {u32 size, u8 is_dir, u8 n, name[n]}...
  kCrc = 0x04,        // path -> Ok: u32 size, u32 crc32
  kRead = 0x05,       // path -> Ok: u32 size, then Data frames seq 0.. (acked by Ack), then End: u32 crc32
  kPushBegin = 0x06,  // u32 size, u32 crc32 -> Ok (send the Data), or Err
  kPushEnd = 0x07,    // (after every Data is acked) -> Ok: u32 size, u32 crc32 installed, then what; or Err: why not
  kBye = 0x08,        // -> Ok; the board returns to its text menu
  kCapture = 0x09,    // u16 count, class label -> Ok: what was saved, or Err
  kReadModel = 0x0A,  // u8 ModelFile -> as Read (Ok: u32 size, card path), or Err (no such file on the card)
  kRename = 0x0B,     // u8 n, old class name[n], new name -> Ok: what was renamed (folder and model), or Err
  kOk = 0x40,
  kErr = 0x41,   // payload: one sentence, why
  kData = 0x42,  // seq = index of the chunk, payload = bytes
  kAck = 0x43,   // payload: u32 next expected data seq (cumulative)
  kEntries = 0x44,
  kEnd = 0x45,
};

// The files a ReadModel may name: the board serves these two fixed card files and nothing else outside
// its photo folders.
enum ModelFile : uint8_t {
  kModelFile = 0,    // /header/model.tvb, the model the card holds
  kModelBackup = 1,  // /header/model.tvb.bak, the one it replaced
};

struct Frame {
  uint8_t type = 0;
  uint32_t seq = 0;
  uint16_t len = 0;
  uint8_t payload[kMaxPayload];
};

// Writes one frame into out (kHeaderBytes + len + kCrcBytes bytes), its CRC-32 started from `session`;
// 0 when len > kMaxPayload or the frame does not fit in cap.
size_t encode_frame(uint8_t type, uint32_t seq, const void* payload, size_t len, uint8_t* out, size_t cap,
                    uint32_t session = 0);

// Reads frames out of a byte stream that may hold other bytes (the board's text) between them. A
// frame that fails (its CRC, or a header announcing too much) is dropped and its bytes after its
// first one are read again: a real frame that a lying header swallowed still comes through.
//   for (Result r = p.feed(byte); r != kNone; r = p.drain()) { ... }
// and call drain() before waiting for more bytes: bytes read again may hold more than one frame.
class FrameParser {
 public:
  enum Result : uint8_t {
    kNone,       // nothing complete yet
    kFrame,      // frame() holds a checked frame
    kBadCrc,     // a frame arrived whose CRC does not match: dropped
    kBadLength,  // a header announced more than kMaxPayload bytes: dropped
  };
  // Takes the next byte of the stream and reads on until a result (or the bytes run out).
  Result feed(uint8_t byte);
  // Reads on in the bytes still to be read again (kNone when there are none, or none gave a result).
  Result drain();
  const Frame& frame() const { return frame_; }
  // Forgets a frame in progress and whatever was to be read again.
  void reset() {
    state_ = kSeek0;
    raw_len_ = pend_len_ = pend_pos_ = 0;
  }
  // True between the first magic byte and the end of a frame.
  bool in_frame() const { return state_ != kSeek0; }
  // From now on a frame's CRC-32 must start from `session` (a Hello's may start from 0).
  void set_session(uint32_t session) { session_ = session; }
  uint32_t session() const { return session_; }
  // Gives up the frame in progress (its sender went quiet for kFrameGapMs: its header promised bytes
  // that are not coming) and reads its bytes after the first again; then call drain().
  void abandon() {
    if (state_ == kSeek0) return;
    state_ = kSeek0;
    replay();
  }

 private:
  enum State : uint8_t { kSeek0, kSeek1, kHeader, kPayload, kTrailer };
  Result step(uint8_t byte);
  // Queues the failed frame's bytes after its first for reading again.
  void replay();
  State state_ = kSeek0;
  uint8_t head_[kHeaderBytes - 2] = {};
  uint8_t tail_[kCrcBytes] = {};
  size_t got_ = 0;
  uint32_t session_ = 0;
  Frame frame_;
  uint8_t raw_[kMaxFrameBytes];  // the bytes of the frame in progress, as they came
  size_t raw_len_ = 0;
  uint8_t pend_[2 * kMaxFrameBytes + 1];  // bytes to read (again) before anything new
  size_t pend_len_ = 0, pend_pos_ = 0;
};

}  // namespace link
}  // namespace tv

namespace tv {
namespace link {

// Go-back-N bookkeeping of a sender of chunks 0 .. total-1: at most kWindow unacknowledged, a
// cumulative ack moves the window, silence for kRetryMs sends everything unacknowledged again, and
// after kMaxRetries silent rounds the transfer is abandoned. Both sides send with it.
struct SendWindow {
  uint32_t base = 0;  // oldest chunk not acknowledged
  uint32_t next = 0;  // next chunk to send
  uint32_t sent = 0;  // chunks sent at least once (acks up to here are real, even after a rewind)
  uint32_t total = 0;
  uint32_t last_ms = 0;  // time of the last progress (or resend)
  uint32_t retries = 0;

  void start(uint32_t chunks, uint32_t now_ms) {
    base = next = sent = 0;
    total = chunks;
    last_ms = now_ms;
    retries = 0;
  }
  bool can_send() const { return next < total && next - base < kWindow; }
  // Takes the next chunk to send (call only when can_send()).
  uint32_t take() {
    if (next + 1 > sent) sent = next + 1;
    return next++;
  }
  bool done() const { return base >= total; }
  // An Ack saying `next_expected`; true when it moved the window. An ack of chunks sent before a
  // rewind still counts (they were in flight); one beyond what was ever sent is stale or wrong.
  bool ack(uint32_t next_expected, uint32_t now_ms) {
    if (next_expected <= base || next_expected > sent) return false;
    base = next_expected;
    if (next < base) next = base;
    last_ms = now_ms;
    retries = 0;
    return true;
  }
  // Rewinds to the oldest unacknowledged chunk after kRetryMs of silence; false when the transfer
  // has been silent for kMaxRetries rounds (give up).
  bool tick(uint32_t now_ms) {
    if (now_ms - last_ms < kRetryMs) return true;
    if (++retries > kMaxRetries) return false;
    next = base;
    last_ms = now_ms;
    return true;
  }
};

}  // namespace link
}  // namespace tv
