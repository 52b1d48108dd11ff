#include "sim_pty.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include <thread>

namespace tvsim {

bool open_pty(Pty* pty, std::string* why) {
  const int m = posix_openpt(O_RDWR | O_NOCTTY);
  if (m < 0 || grantpt(m) != 0 || unlockpt(m) != 0) {
    *why = std::string("cannot open a pseudo-terminal: ") + strerror(errno);
    if (m >= 0) close(m);
    return false;
  }
  const char* name = ptsname(m);
  const int s = name ? open(name, O_RDWR | O_NOCTTY) : -1;
  if (s < 0) {
    *why = std::string("cannot open the pseudo-terminal's slave side: ") + strerror(errno);
    close(m);
    return false;
  }
  termios t;
  if (tcgetattr(s, &t) == 0) {
    cfmakeraw(&t);
    tcsetattr(s, TCSANOW, &t);
  }
  fcntl(m, F_SETFL, fcntl(m, F_GETFL) | O_NONBLOCK);
  pty->master = m;
  pty->slave = s;
  pty->path = name;
  return true;
}

void Pace::take(size_t n) {
  if (rate <= 0) return;
  const auto now = std::chrono::steady_clock::now();
  if (free_at < now) free_at = now;
  free_at += std::chrono::microseconds((long long)((unsigned long long)n * 1000000ull / (unsigned long long)rate));
  std::this_thread::sleep_until(free_at);
}

void write_within(int fd, const void* data, size_t n, int timeout_ms) {
  const char* p = (const char*)data;
  while (n > 0) {
    const ssize_t w = write(fd, p, n);
    if (w > 0) {
      p += w;
      n -= (size_t)w;
      continue;
    }
    if (w < 0 && errno != EAGAIN && errno != EINTR) return;
    pollfd pf{fd, POLLOUT, 0};
    if (poll(&pf, 1, timeout_ms) <= 0) return;  // nobody reads: the rest is lost, as on the wire
  }
}

}  // namespace tvsim
