// tvsim --pty: the simulated board's serial port as a pseudo-terminal, as the board's USB serial
// port appears on a PC. tvsim keeps the slave side open itself, so one PC program after another can
// open it (nothing is lost or hung up between them); what the board writes while nobody reads is
// dropped after a short wait, as a USB CDC port drops it with no host listening.
#pragma once
#include <stddef.h>

#include <chrono>
#include <string>

namespace tvsim {

struct Pty {
  int master = -1;
  int slave = -1;  // held open by tvsim
  std::string path;
};

// One direction of a link of `rate` bytes per second (tvsim --link-rate, for the bench and the
// interrupted-transfer test); 0 = as fast as the pty goes.
struct Pace {
  long long rate = 0;
  std::chrono::steady_clock::time_point free_at{};  // when the bytes taken so far are through
  // Waits until n more bytes have had time to pass (an idle link banks no time).
  void take(size_t n);
};

// Opens a pseudo-terminal in raw mode; false with the reason.
bool open_pty(Pty* pty, std::string* why);
// Writes n bytes to fd, waiting at most timeout_ms for room; the rest is dropped.
void write_within(int fd, const void* data, size_t n, int timeout_ms);

}  // namespace tvsim
