// The USB link's frame codec and send window (common/src/tv/link/link_frame.h): round trips, every
// corruption caught, lying lengths, text between frames, and the go-back-N window's rules.
#include "tv/link/link_frame.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace lk = tv::link;

namespace {

std::vector<uint8_t> encode(uint8_t type, uint32_t seq, const std::vector<uint8_t>& payload) {
  std::vector<uint8_t> out(lk::kMaxFrameBytes);
  const size_t n = lk::encode_frame(type, seq, payload.data(), payload.size(), out.data(), out.size());
  out.resize(n);
  return out;
}

// Feeds bytes; the frames that came out whole, and how many were dropped for a bad CRC / length.
struct Parsed {
  std::vector<lk::Frame> frames;
  int bad_crc = 0, bad_length = 0;
};
Parsed parse(const std::vector<uint8_t>& bytes) {
  static lk::FrameParser p;
  p.reset();
  p.set_session(0);
  Parsed r;
  auto take = [&](lk::FrameParser::Result res) {
    if (res == lk::FrameParser::kFrame) r.frames.push_back(p.frame());
    if (res == lk::FrameParser::kBadCrc) r.bad_crc++;
    if (res == lk::FrameParser::kBadLength) r.bad_length++;
  };
  for (uint8_t b : bytes)
    for (auto res = p.feed(b); res != lk::FrameParser::kNone; res = p.drain()) take(res);
  for (auto res = p.drain(); res != lk::FrameParser::kNone; res = p.drain()) take(res);
  return r;
}

std::vector<uint8_t> pattern(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = (uint8_t)(i * 31 + 7);
  return v;
}

}  // namespace

TEST(LinkFrame, RoundTripsEverySizeUpToTheLimit) {
  for (size_t n : {size_t(0), size_t(1), size_t(2), size_t(255), size_t(1000), lk::kMaxPayload}) {
    const std::vector<uint8_t> payload = pattern(n);
    const std::vector<uint8_t> bytes = encode(lk::kData, 0xdeadbeefu - (uint32_t)n, payload);
    ASSERT_EQ(bytes.size(), lk::kHeaderBytes + n + lk::kCrcBytes);
    const Parsed r = parse(bytes);
    ASSERT_EQ(r.frames.size(), 1u) << n;
    EXPECT_EQ(r.frames[0].type, lk::kData);
    EXPECT_EQ(r.frames[0].seq, 0xdeadbeefu - (uint32_t)n);
    EXPECT_EQ(std::vector<uint8_t>(r.frames[0].payload, r.frames[0].payload + r.frames[0].len), payload);
  }
}

TEST(LinkFrame, RefusesToEncodeTooMuch) {
  std::vector<uint8_t> payload(lk::kMaxPayload + 1), out(lk::kMaxFrameBytes + 100);
  EXPECT_EQ(lk::encode_frame(lk::kData, 0, payload.data(), payload.size(), out.data(), out.size()), 0u);
  EXPECT_EQ(lk::encode_frame(lk::kData, 0, payload.data(), 10, out.data(), 10 + lk::kHeaderBytes + 3), 0u);
}

TEST(LinkFrame, EveryFlippedBitIsCaught) {
  const std::vector<uint8_t> good = encode(lk::kStatus, 5, pattern(40));
  for (size_t i = 0; i < good.size(); ++i)
    for (int bit = 0; bit < 8; ++bit) {
      std::vector<uint8_t> bad = good;
      bad[i] ^= (uint8_t)(1 << bit);
      const Parsed r = parse(bad);
      EXPECT_TRUE(r.frames.empty()) << "byte " << i << " bit " << bit;
    }
}

TEST(LinkFrame, ALyingLengthIsDroppedAndTheNextFrameStillComesThrough) {
  std::vector<uint8_t> lie = encode(lk::kStatus, 1, {});
  lie[7] = 0xff;  // 65535 bytes: more than any frame holds
  lie[8] = 0xff;
  const std::vector<uint8_t> good = encode(lk::kHello, 2, {});
  std::vector<uint8_t> bytes = lie;
  bytes.insert(bytes.end(), good.begin(), good.end());
  Parsed r = parse(bytes);
  EXPECT_EQ(r.bad_length, 1);
  ASSERT_EQ(r.frames.size(), 1u);
  EXPECT_EQ(r.frames[0].type, lk::kHello);
  // a length shorter than the payload: the CRC lands on payload bytes and fails
  std::vector<uint8_t> shorter = encode(lk::kStatus, 3, pattern(20));
  shorter[7] = 10;
  r = parse(shorter);
  EXPECT_TRUE(r.frames.empty());
  EXPECT_GE(r.bad_crc, 1);
  // a header claiming more than it holds swallows the frames after it; they are read again
  std::vector<uint8_t> longer = encode(lk::kStatus, 4, {});
  longer[7] = 200;
  for (uint32_t seq = 5; seq < 8; ++seq) {
    const std::vector<uint8_t> f = encode(lk::kData, seq, pattern(30));
    longer.insert(longer.end(), f.begin(), f.end());
  }
  longer.resize(longer.size() + 100, 0);  // then more bytes, to complete the lie
  r = parse(longer);
  EXPECT_EQ(r.bad_crc, 1);
  ASSERT_EQ(r.frames.size(), 3u);
  for (uint32_t i = 0; i < 3; ++i) EXPECT_EQ(r.frames[i].seq, 5 + i);
}

TEST(LinkFrame, AFrameSwallowedByAStalledLieComesThroughWhenItIsAbandoned) {
  // a header promising 40 bytes, then a real 13-byte frame and silence: the lie is given up
  std::vector<uint8_t> bytes = encode(lk::kStatus, 1, {});
  bytes[7] = 40;
  bytes.resize(lk::kHeaderBytes);
  const std::vector<uint8_t> hello = encode(lk::kHello, 2, {});
  bytes.insert(bytes.end(), hello.begin(), hello.end());
  static lk::FrameParser p;
  p.reset();
  for (uint8_t b : bytes) EXPECT_EQ(p.feed(b), lk::FrameParser::kNone);
  EXPECT_TRUE(p.in_frame());
  p.abandon();
  EXPECT_EQ(p.drain(), lk::FrameParser::kFrame);
  EXPECT_EQ(p.frame().seq, 2u);
  EXPECT_EQ(p.drain(), lk::FrameParser::kNone);
  EXPECT_FALSE(p.in_frame());
}

TEST(LinkFrame, AFrameInsideABrokenFramesPayloadComesThrough) {
  // a frame whose payload holds a whole frame, with its own CRC broken: the inner frame is found
  const std::vector<uint8_t> inner = encode(lk::kHello, 42, pattern(5));
  std::vector<uint8_t> outer = encode(lk::kData, 1, inner);
  outer.back() ^= 1;
  const Parsed r = parse(outer);
  EXPECT_EQ(r.bad_crc, 1);
  ASSERT_EQ(r.frames.size(), 1u);
  EXPECT_EQ(r.frames[0].seq, 42u);
  EXPECT_EQ(r.frames[0].type, lk::kHello);
}

TEST(LinkFrame, TextAndStrayMagicBytesBetweenFramesAreSkipped) {
  const std::string text = "=== MENU ===\n> 1. 0blank\n\xa5\xa5 stray \xa5";
  std::vector<uint8_t> bytes(text.begin(), text.end());
  const std::vector<uint8_t> a = encode(lk::kOk, 9, pattern(3)), b = encode(lk::kAck, 10, pattern(4));
  bytes.insert(bytes.end(), a.begin(), a.end());
  bytes.insert(bytes.end(), text.begin(), text.end());
  bytes.insert(bytes.end(), b.begin(), b.end());
  const Parsed r = parse(bytes);
  ASSERT_EQ(r.frames.size(), 2u);
  EXPECT_EQ(r.frames[0].seq, 9u);
  EXPECT_EQ(r.frames[1].seq, 10u);
}

TEST(LinkWindow, AcksMoveTheWindowOnlyForward) {
  lk::SendWindow w;
  w.start(20, 1000);
  while (w.can_send()) w.take();
  EXPECT_EQ(w.next, lk::kWindow);              // a full window, then wait
  EXPECT_FALSE(w.ack(0, 1001));                // nothing new
  EXPECT_FALSE(w.ack(lk::kWindow + 1, 1001));  // beyond what was sent: a wrong or stale seq
  EXPECT_TRUE(w.ack(3, 1002));
  EXPECT_EQ(w.base, 3u);
  EXPECT_FALSE(w.ack(2, 1003));  // an old ack
  EXPECT_TRUE(w.can_send());
  while (w.can_send()) w.take();
  EXPECT_EQ(w.next, 3 + lk::kWindow);
  EXPECT_TRUE(w.ack(20 > w.next ? w.next : 20, 1004));
  EXPECT_FALSE(w.done());
}

TEST(LinkWindow, SilenceResendsFromTheOldestThenGivesUp) {
  lk::SendWindow w;
  w.start(5, 0);
  while (w.can_send()) w.take();
  ASSERT_TRUE(w.ack(2, 10));
  EXPECT_TRUE(w.tick(10 + lk::kRetryMs - 1));
  EXPECT_EQ(w.next, 5u);  // not yet
  uint32_t t = 10;
  for (uint32_t i = 0; i < lk::kMaxRetries; ++i) {
    t += lk::kRetryMs;
    EXPECT_TRUE(w.tick(t));
    EXPECT_EQ(w.next, 2u);  // go back to the oldest unacknowledged
    while (w.can_send()) w.take();
  }
  EXPECT_FALSE(w.tick(t + lk::kRetryMs));
  // an ack resets the count
  lk::SendWindow v;
  v.start(3, 0);
  while (v.can_send()) v.take();
  EXPECT_TRUE(v.tick(lk::kRetryMs));
  EXPECT_EQ(v.next, 0u);
  EXPECT_TRUE(v.ack(3, lk::kRetryMs + 1));  // the frames sent before the rewind arrived after all
  EXPECT_EQ(v.retries, 0u);
  EXPECT_TRUE(v.done());
}

// A session binds every frame: in session S only frames whose CRC-32 starts from S come through; one of
// another session (or of none) is dropped as a bad CRC, except a Hello, which opens a new session.
TEST(LinkFrame, OnlyTheSessionsFramesAndAHelloComeThrough) {
  const uint32_t s = 0xa1b2c3d4u;
  auto frame = [](uint8_t type, uint32_t seq, uint32_t session) {
    std::vector<uint8_t> out(lk::kMaxFrameBytes);
    const std::vector<uint8_t> payload = pattern(9);
    out.resize(lk::encode_frame(type, seq, payload.data(), payload.size(), out.data(), out.size(), session));
    return out;
  };
  static lk::FrameParser p;
  p.reset();
  p.set_session(s);
  std::vector<uint32_t> seqs;
  int bad = 0;
  std::vector<uint8_t> bytes;
  for (const auto& f : {frame(lk::kOk, 1, s), frame(lk::kOk, 2, s + 1), frame(lk::kOk, 3, 0), frame(lk::kHello, 4, 0),
                        frame(lk::kData, 5, 0), frame(lk::kData, 6, s)})
    bytes.insert(bytes.end(), f.begin(), f.end());
  for (uint8_t b : bytes)
    for (auto r = p.feed(b); r != lk::FrameParser::kNone; r = p.drain()) {
      if (r == lk::FrameParser::kFrame) seqs.push_back(p.frame().seq);
      if (r == lk::FrameParser::kBadCrc) ++bad;
    }
  EXPECT_EQ(seqs, (std::vector<uint32_t>{1, 4, 6}));
  EXPECT_EQ(bad, 3);
  // outside any session (0), a frame of a session is noise too
  EXPECT_EQ(parse(frame(lk::kOk, 7, s)).frames.size(), 0u);
  EXPECT_EQ(parse(frame(lk::kOk, 7, 0)).frames.size(), 1u);
}
