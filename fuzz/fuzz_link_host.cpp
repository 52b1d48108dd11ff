// The PC's side of the USB link (host/link/link.cpp): what a board — or anything else on the port — sends
// back, fed to tvlink's client as the answers to Hello, Status, List, Crc, Read, ReadModel and Capture. Checked:
// no sanitizer report; every failure is a tvh::Error or the board's refusal, never a crash.
#include <stdint.h>

#include <cstring>
#include <stdexcept>
#include <string>

#include "host/base/error.h"
#include "host/link/link.h"

namespace {

// A port whose input is the fuzzer's bytes; writes vanish. When the bytes run out it throws (as a
// port that went away), so no request waits out its timeout.
class FuzzPort : public tvh::SerialPort {
 public:
  FuzzPort(const uint8_t* d, size_t n) : d_(d), n_(n) {}
  void write(const uint8_t*, size_t) override {}
  size_t read(uint8_t* p, size_t n, int) override {
    if (at_ == n_) throw tvh::Error("the fuzz input ended");
    const size_t k = std::min(n, std::min<size_t>(n_ - at_, 1 + (d_[at_] & 63)));  // uneven reads
    std::memcpy(p, d_ + at_, k);
    at_ += k;
    return k;
  }

 private:
  const uint8_t* d_;
  size_t n_, at_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzPort port(data, size);
  try {
    tvh::LinkClient link(port);
    (void)link.status();
    (void)link.list("");
    uint32_t s = 0, c = 0;
    link.crc("0blank/img_0.jpg", &s, &c);
    (void)link.read("0blank/img_0.jpg");
    std::string card_path;
    (void)link.read_model(tv::link::kModelFile, &card_path);
    (void)link.capture("0blank", 2);
  } catch (const tvh::BoardRefused&) {
  } catch (const tvh::Error&) {
  }
  return 0;
}
