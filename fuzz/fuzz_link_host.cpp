// The PC's side of the USB link (host/link/link.cpp): what a board — or anything else on the port — sends
// back, fed to tvlink's client as the answers to Hello, Status, List, Crc, Read, ReadModel, Capture and
// Rename, on a clock the port moves (so deadlines pass without waiting). The first byte chooses the board:
//   even: raw bytes on the port (broken frames, lying lengths); the port goes away when they end;
//   odd:  a board that answers in well-formed frames of this session, for ever: it greets a Hello as a
//         board does, and the rest is records (type u8, length u8, payload), served in a loop; an answer
//         takes the seq of the request it answers, Data and End count up from 0 after each answer. An endless Data
//         stream or an endless listing can be written this way: the client's overall deadlines and caps must end them.
// Checked: no sanitizer report; every failure is a tvh::Error or the board's refusal, never a crash, and
// no operation outlives the longest deadline the client can set (libFuzzer's -timeout catches a hang).
#include <stdint.h>
#include <stdlib.h>

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "host/base/error.h"
#include "host/link/link.h"
#include "tv/link/link_frame.h"
#include "tv/little_endian.h"

namespace {

namespace lk = tv::link;

constexpr uint32_t kSession = 0x5eed0001u;
// Past every deadline the client can set (the largest read at the slowest rate, with every timeout):
// a client still reading then does not stop.
constexpr double kNoClientWaitsThisLongS = 40000;
// What one read costs on the port's clock (a USB poll), besides the bytes at the slowest rate.
constexpr double kReadS = 0.01;

class FuzzClock : public tvh::Clock {
 public:
  double now_s() override { return t; }
  double t = 0;
};

class FuzzPort : public tvh::SerialPort {
 public:
  FuzzPort(const uint8_t* d, size_t n, FuzzClock& clock) : d_(d), n_(n), clock_(clock) {
    answering_ = n > 0 && (d[0] & 1);
    if (answering_) {
      records_.assign(d + 1, d + n);
      sent_.set_session(kSession);  // a Hello is still read (its CRC-32 starts from 0)
    }
  }
  void write(const uint8_t* p, size_t n) override {
    if (!answering_) return;
    for (size_t i = 0; i < n; ++i)  // what the client asks: the seq to answer
      for (lk::FrameParser::Result r = sent_.feed(p[i]); r != lk::FrameParser::kNone; r = sent_.drain()) {
        if (r != lk::FrameParser::kFrame || sent_.frame().type >= lk::kOk) continue;
        last_request_ = sent_.frame().seq;
        hello_ = sent_.frame().type == lk::kHello;
      }
  }
  size_t read(uint8_t* p, size_t n, int) override {
    if (clock_.t > kNoClientWaitsThisLongS) abort();  // the client never stops waiting: a hang
    if (answering_) return answer(p, n);
    if (at_ == n_) throw tvh::Error("the fuzz input ended");
    const size_t k = std::min(n, std::min<size_t>(n_ - at_, 1 + (d_[at_] & 63)));  // uneven reads
    std::memcpy(p, d_ + at_, k);
    at_ += k;
    clock_.t += kReadS;
    return k;
  }

 private:
  // The next record as a frame (records served in a loop).
  size_t answer(uint8_t* p, size_t n) {
    clock_.t += kReadS;
    if (pending_.empty() && hello_ && last_request_ != greeted_) {  // a Hello is answered as a board does
      greeted_ = last_request_;
      uint8_t greeting[16], frame[lk::kMaxFrameBytes];
      const uint32_t words[4] = {lk::kVersion, (uint32_t)lk::kMaxPayload, lk::kWindow, kSession};
      for (int i = 0; i < 4; ++i) tv::write_le32(greeting + 4 * i, words[i]);
      const size_t k = lk::encode_frame(lk::kOk, last_request_, greeting, sizeof greeting, frame, sizeof frame, 0);
      pending_.assign(frame, frame + k);
    }
    if (pending_.empty()) {
      if (records_.size() < 2) throw tvh::Error("the fuzz board has nothing to say");
      if (pos_ + 2 > records_.size()) pos_ = 0;
      const uint8_t type = records_[pos_];
      const size_t len = std::min<size_t>(records_[pos_ + 1], records_.size() - pos_ - 2);
      const uint8_t* payload = records_.data() + pos_ + 2;
      pos_ += 2 + len;
      uint32_t seq = last_request_;
      if (type == lk::kData || type == lk::kEnd)
        seq = data_seq_++;
      else
        data_seq_ = 0;
      uint8_t frame[lk::kMaxFrameBytes];
      const size_t k = lk::encode_frame(type, seq, payload, len, frame, sizeof frame, hello_ ? 0 : kSession);
      pending_.assign(frame, frame + k);
      clock_.t += (double)k / 8000;  // the bytes at the slowest rate the client allows for
    }
    const size_t k = std::min(n, pending_.size());
    std::memcpy(p, pending_.data(), k);
    pending_.erase(pending_.begin(), pending_.begin() + (long)k);
    return k;
  }

  const uint8_t* d_;
  size_t n_, at_ = 0;
  FuzzClock& clock_;
  bool answering_ = false;
  std::vector<uint8_t> records_, pending_;
  size_t pos_ = 0;
  lk::FrameParser sent_;
  uint32_t last_request_ = 0, data_seq_ = 0, greeted_ = 0;
  bool hello_ = true;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzClock clock;
  FuzzPort port(data, size, clock);
  tvh::LinkOptions options;
  options.clock = &clock;
  options.session = kSession;
  // each operation on its own: one that fails does not keep the others from being tried
  auto attempt = [](const auto& op) {
    try {
      op();
    } catch (const std::exception& e) {  // a refusal or a tvh::Error; FUZZ_LINK_SAY=1 prints them
      if (std::getenv("FUZZ_LINK_SAY")) std::fprintf(stderr, "fuzz_link_host: %s\n", e.what());
    }
  };
  try {
    tvh::LinkClient link(port, options);
    attempt([&] { (void)link.status(); });
    attempt([&] { (void)link.list(""); });
    attempt([&] {
      uint32_t s = 0, c = 0;
      link.crc("0blank/img_0.jpg", &s, &c);
    });
    attempt([&] { (void)link.read("0blank/img_0.jpg"); });
    attempt([&] {
      std::string card_path;
      (void)link.read_model(tv::link::kModelFile, &card_path);
    });
    attempt([&] { (void)link.capture("0blank", 2); });
    attempt([&] { (void)link.rename("0blank", "empty"); });
    attempt([&] { (void)link.push(std::vector<uint8_t>(5000, 7)); });
  } catch (const tvh::BoardRefused&) {
  } catch (const tvh::Error&) {
  }
  return 0;
}
