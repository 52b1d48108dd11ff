// tvlink's client against a scripted hostile board (in-process, the same frame codec driven to lie), on a
// clock the port moves: endless streams and listings end at their deadlines and caps, an old board is
// refused with what to update, a push the board does not confirm fails, answers of another session are
// never taken, and what a board says reaches the terminal only as visible text.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "host/base/error.h"
#include "host/link/link.h"
#include "host/link/link_pull.h"
#include "test_support.h"
#include "tv/crc32.h"
#include "tv/link/link_frame.h"
#include "tv/little_endian.h"

namespace lk = tv::link;

namespace {

constexpr uint32_t kLinkTestSession = 0x11223344u;

class LinkTestClock : public tvh::Clock {
 public:
  double now_s() override { return t; }
  double t = 0;
};

// A board whose answers a test writes: `answer(request)` returns the frames to send back (each
// {type, seq, payload, session}); with `forever`, it is asked again whenever the client waits.
struct Out {
  uint8_t type;
  uint32_t seq;
  std::string payload;
  uint32_t session = kLinkTestSession;
};

class ScriptedBoard : public tvh::SerialPort {
 public:
  ScriptedBoard(LinkTestClock& clock, std::function<std::vector<Out>(const lk::Frame&)> answer)
      : clock_(clock), answer_(std::move(answer)) {
    parser_.set_session(kLinkTestSession);
  }
  void write(const uint8_t* p, size_t n) override {
    for (size_t i = 0; i < n; ++i)
      for (lk::FrameParser::Result r = parser_.feed(p[i]); r != lk::FrameParser::kNone; r = parser_.drain())
        if (r == lk::FrameParser::kFrame) queue(answer_(parser_.frame()));
  }
  size_t read(uint8_t* p, size_t n, int timeout_ms) override {
    ++reads;
    if (clock_.t > 1e6) throw tvh::Error("the test board: the client never stopped");
    if (out_.empty() && forever) queue(forever());
    if (out_.empty()) {
      clock_.t += timeout_ms / 1000.0;
      return 0;
    }
    clock_.t += 0.001;
    const size_t k = std::min(n, out_.size());
    std::memcpy(p, out_.data(), k);
    out_.erase(out_.begin(), out_.begin() + (long)k);
    return k;
  }
  std::function<std::vector<Out>()> forever;
  long reads = 0;

 private:
  void queue(const std::vector<Out>& frames) {
    for (const Out& o : frames) {
      uint8_t f[lk::kMaxFrameBytes];
      const size_t k = lk::encode_frame(o.type, o.seq, o.payload.data(), o.payload.size(), f, sizeof f, o.session);
      out_.insert(out_.end(), f, f + k);
    }
  }
  LinkTestClock& clock_;
  std::function<std::vector<Out>(const lk::Frame&)> answer_;
  lk::FrameParser parser_;
  std::vector<uint8_t> out_;
};

std::string u32s(std::initializer_list<uint32_t> v) {
  std::string s;
  for (uint32_t x : v) {
    uint8_t b[4];
    tv::write_le32(b, x);
    s.append((const char*)b, 4);
  }
  return s;
}

// The answer to a Hello of this session (version 2), else nothing.
std::vector<Out> greet(const lk::Frame& f, uint32_t version = lk::kVersion) {
  if (f.type != lk::kHello) return {};
  return {{lk::kOk, f.seq, u32s({version, (uint32_t)lk::kMaxPayload, lk::kWindow, kLinkTestSession}), 0}};
}

tvh::LinkOptions test_options(LinkTestClock& clock) {
  tvh::LinkOptions o;
  o.clock = &clock;
  o.session = kLinkTestSession;
  return o;
}

}  // namespace

TEST(LinkClient, AnOldBoardIsRefusedWithWhatToUpdate) {
  LinkTestClock clock;
  ScriptedBoard board(clock, [](const lk::Frame& f) { return greet(f, 1); });
  const std::string e = tvtest::thrown_message([&] { tvh::LinkClient link(board, test_options(clock)); });
  EXPECT_EQ(e, "the board's firmware speaks tvlink protocol 1 and this tvlink 2: update the board's firmware");
}

TEST(LinkClient, AnAnswerOfAnotherSessionIsNeverTaken) {
  LinkTestClock clock;
  // the board answers Status twice: first in another client's session (dropped), then in this one
  ScriptedBoard board(clock, [](const lk::Frame& f) -> std::vector<Out> {
    if (f.type == lk::kHello) return greet(f);
    if (f.type == lk::kStatus)
      return {{lk::kOk, f.seq, "firmware=other client's\n", 0x99999999u}, {lk::kOk, f.seq, "firmware=mine\n"}};
    return {{lk::kOk, f.seq, ""}};
  });
  tvh::LinkClient link(board, test_options(clock));
  EXPECT_EQ(link.status(), "firmware=mine\n");
  // a greeting answered for another session number is refused
  LinkTestClock c2;
  ScriptedBoard other(c2, [](const lk::Frame& f) -> std::vector<Out> {
    if (f.type != lk::kHello) return {};
    return {{lk::kOk, f.seq, u32s({lk::kVersion, (uint32_t)lk::kMaxPayload, lk::kWindow, 42}), 0}};
  });
  EXPECT_EQ(tvtest::thrown_message([&] { tvh::LinkClient l(other, test_options(c2)); }),
            "the board's answer to this tvlink's greeting is not for it (another program on the port?)");
}

TEST(LinkClient, APushTheBoardDoesNotConfirmFails) {
  const std::vector<uint8_t> model(5000, 7);
  for (bool honest : {true, false}) {
    LinkTestClock clock;
    ScriptedBoard board(clock, [&](const lk::Frame& f) -> std::vector<Out> {
      if (f.type == lk::kHello) return greet(f);
      if (f.type == lk::kData) return {{lk::kAck, f.seq, u32s({f.seq + 1})}};
      if (f.type == lk::kPushEnd) {
        const uint32_t size = honest ? (uint32_t)model.size() : 999;
        return {{lk::kOk, f.seq, u32s({size, tv::crc32(0, model.data(), model.size())}) + "installed it"}};
      }
      return {{lk::kOk, f.seq, ""}};
    });
    tvh::LinkClient link(board, test_options(clock));
    if (honest) {
      EXPECT_EQ(link.push(model), "installed it");
    } else {
      EXPECT_TRUE(tvtest::thrown_message([&] {
                    link.push(model);
                  }).find("the board's answer does not confirm this model (5000 bytes") == 0)
          << tvtest::thrown_message([&] { link.push(model); });
    }
  }
}

TEST(LinkClient, AnEndlessDataStreamEndsAtTheDeadline) {
  LinkTestClock clock;
  ScriptedBoard board(clock, [](const lk::Frame& f) -> std::vector<Out> {
    if (f.type == lk::kHello) return greet(f);
    if (f.type == lk::kRead) return {{lk::kOk, f.seq, u32s({4096})}};
    return {};
  });
  tvh::LinkClient link(board, test_options(clock));
  uint32_t k = 0;
  board.forever = [&] {
    return std::vector<Out>{{lk::kData, 100 + k++, std::string(64, 'x')}};
  };  // never the one expected
  const std::string e = tvtest::thrown_message([&] { link.read("a/b.jpg"); });
  EXPECT_EQ(
      e,
      "the board did not finish sending /images/a/b.jpg in time (0 of 4096 bytes): the board or the cable is failing");
  EXPECT_LT(clock.t, 20.0) << "the floor (10 s) plus 4096 bytes at the slowest rate";
}

TEST(LinkClient, AnEndlessListingEndsAtWhatAFolderHolds) {
  LinkTestClock clock;
  ScriptedBoard board(clock, [](const lk::Frame& f) -> std::vector<Out> {
    if (f.type == lk::kHello) return greet(f);
    if (f.type == lk::kList) {  // always more: a page of 150 entries
      std::string page = "\x01";
      for (int i = 0; i < 150; ++i) page += u32s({1}) + std::string("\x00\x05", 2) + "x.jpg";
      return {{lk::kEntries, f.seq, page}};
    }
    return {};
  });
  tvh::LinkClient link(board, test_options(clock));
  const std::string e = tvtest::thrown_message([&] { link.list("a"); });
  EXPECT_EQ(e,
            "the board lists more than 65536 entries in /images/a, more than a FAT folder holds: the board is failing");
}

TEST(LinkClient, WhatABoardSaysIsShownAsVisibleText) {
  LinkTestClock clock;
  ScriptedBoard board(clock, [](const lk::Frame& f) -> std::vector<Out> {
    if (f.type == lk::kHello) return greet(f);
    if (f.type == lk::kStatus) return {{lk::kOk, f.seq, std::string("a\x1b]0;pwned\x07 b\rc\0d\n", 18)}};
    if (f.type == lk::kCapture) return {{lk::kErr, f.seq, "\x1b[2Jno"}};
    return {};
  });
  tvh::LinkClient link(board, test_options(clock));
  const std::string s = link.status();
  EXPECT_EQ(s.find('\x1b'), std::string::npos) << s;
  EXPECT_EQ(s.find('\x07'), std::string::npos) << s;
  EXPECT_EQ(s.find('\r'), std::string::npos) << s;
  EXPECT_EQ(s.find('\0'), std::string::npos) << s;
  EXPECT_EQ(s.back(), '\n') << "its lines stay lines";
  const std::string e = tvtest::thrown_message([&] { link.capture("c", 1); });
  EXPECT_EQ(e.find('\x1b'), std::string::npos) << e;
  EXPECT_NE(e.find("no"), std::string::npos) << e;
}

// Names a hostile board lists that no file here may have are refused as such (not as local files that
// differ), nothing is written outside DEST, and the good photo still comes.
TEST(LinkClient, NamesFromABoardFollowTheCardsRule) {
  LinkTestClock clock;
  const std::string photo = "\xff\xd8\xff\xd9";
  auto entry = [](const std::string& name, bool dir, uint32_t size) {
    return u32s({size}) + std::string(1, dir ? '\1' : '\0') + std::string(1, (char)name.size()) + name;
  };
  ScriptedBoard board(clock, [&](const lk::Frame& f) -> std::vector<Out> {
    if (f.type == lk::kHello) return greet(f);
    if (f.type == lk::kList) {
      const std::string path((const char*)f.payload + 4, f.len - 4u);
      if (path.empty())
        return {{lk::kEntries, f.seq,
                 std::string("\0", 1) + entry("good", true, 0) + entry("..", true, 0) + entry("a:b", true, 0) +
                     entry("a/../../x", true, 0)}};
      return {{lk::kEntries, f.seq,
               std::string("\0", 1) + entry("img_0.jpg", false, 4) + entry("x\x1b[2J.jpg", false, 4) +
                   entry(".hidden.jpg", false, 4)}};
    }
    if (f.type == lk::kRead)
      return {{lk::kOk, f.seq, u32s({4})},
              {lk::kData, 0, photo},
              {lk::kEnd, 1, u32s({tv::crc32(0, photo.data(), photo.size())})}};
    return {{lk::kOk, f.seq, ""}};
  });
  tvh::LinkClient link(board, test_options(clock));
  const std::string dest = tvtest::temp_dir("hostilenames");
  const tvh::PullReport r = tvh::pull_photos(link, dest, nullptr);
  EXPECT_EQ(r.copied, 1);
  EXPECT_TRUE(r.kept.empty());
  EXPECT_TRUE(r.failed.empty());
  ASSERT_EQ(r.refused.size(), 5u);
  std::string all;
  for (const std::string& x : r.refused) all += x + "\n";
  EXPECT_NE(all.find("/images/../ (not a class folder name: "), std::string::npos) << all;
  EXPECT_NE(all.find("/images/a:b/ (not a class folder name: "), std::string::npos) << all;
  EXPECT_NE(all.find("/images/good/x\\x1b[2J.jpg (not a file name a card holds"), std::string::npos) << all;
  EXPECT_EQ(all.find('\x1b'), std::string::npos) << "shown visibly";
  EXPECT_EQ(tvtest::read_text(dest + "/good/img_0.jpg"), photo);
}
