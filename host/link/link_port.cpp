// Serial ports for the USB link: libserialport for real ports, termios for pseudo-terminals
// (libserialport cannot open those: its open asks the port for modem lines, which a pty refuses).
#include <errno.h>
#include <fcntl.h>
#include <libserialport.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <termios.h>
#include <unistd.h>

#include "host/base/error.h"
#include "host/link/link.h"

namespace tvh {

namespace {

// One client per port: an exclusive flock on the open port (it binds root too, unlike TIOCEXCL), held
// until the port is closed (or the process dies). False when another process holds it.
bool lock_port(int fd) {
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0)
    if (errno != EINTR) return false;
  return true;
}

std::string in_use(const std::string& path) {
  return "the port " + path +
         " is in use by another tvlink (or a program that locks it): wait until it finishes, then run this again";
}

class PtyPort : public SerialPort {
 public:
  explicit PtyPort(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_NOCTTY | O_NONBLOCK);
    if (fd_ < 0) throw Error("cannot open the port " + path + ": " + strerror(errno));
    if (!lock_port(fd_)) {
      ::close(fd_);
      throw Error(in_use(path));
    }
    termios t;
    if (tcgetattr(fd_, &t) != 0) {
      ::close(fd_);
      throw Error(path + " is not a serial port or terminal (tcgetattr failed): name the board's port");
    }
    cfmakeraw(&t);
    t.c_cflag &= ~(tcflag_t)HUPCL;  // closing must not drop the modem lines
    tcsetattr(fd_, TCSANOW, &t);
    tcflush(fd_, TCIFLUSH);  // what the board printed before we came
  }
  ~PtyPort() override { ::close(fd_); }
  void write(const uint8_t* p, size_t n) override {
    while (n > 0) {
      const ssize_t w = ::write(fd_, p, n);
      if (w > 0) {
        p += w;
        n -= (size_t)w;
        continue;
      }
      if (w < 0 && errno != EAGAIN && errno != EINTR)
        throw Error("writing to " + path_ + " failed: " + strerror(errno));
      pollfd pf{fd_, POLLOUT, 0};
      if (::poll(&pf, 1, 5000) <= 0) throw Error("the port " + path_ + " takes no more bytes (is the board stuck?)");
    }
  }
  size_t read(uint8_t* p, size_t n, int timeout_ms) override {
    pollfd pf{fd_, POLLIN, 0};
    if (::poll(&pf, 1, timeout_ms) <= 0) return 0;
    const ssize_t r = ::read(fd_, p, n);
    if (r < 0 && errno != EAGAIN && errno != EINTR)
      throw Error("reading from " + path_ + " failed: " + strerror(errno));
    return r > 0 ? (size_t)r : 0;
  }

 private:
  std::string path_;
  int fd_ = -1;
};

std::string sp_error(const std::string& what) {
  char* msg = sp_last_error_message();
  std::string m = what + ": " + (msg ? msg : "unknown error");
  if (msg) sp_free_error_message(msg);
  return m;
}

class UsbPort : public SerialPort {
 public:
  explicit UsbPort(const std::string& path) : path_(path) {
    if (sp_get_port_by_name(path.c_str(), &port_) != SP_OK)
      throw Error(sp_error("cannot use " + path + " as a serial port") + "; name the board's port (e.g. /dev/ttyACM0)");
    if (sp_open(port_, SP_MODE_READ_WRITE) != SP_OK) {
      const std::string m = sp_error("cannot open the port " + path);
      sp_free_port(port_);
      throw Error(m + " (is another program using it? are you in the dialout group?)");
    }
    int fd = -1;
    if (sp_get_port_handle(port_, &fd) == SP_OK && fd >= 0 && !lock_port(fd)) {
      sp_close(port_);
      sp_free_port(port_);
      throw Error(in_use(path));
    }
    // 8N1; DTR and RTS stay as they are (a new configuration leaves them unset): a toggle can reset a
    // board on USB-Serial-JTAG. The baud rate means nothing to a USB CDC port but is set for UARTs.
    sp_port_config* c = nullptr;
    if (sp_new_config(&c) == SP_OK) {
      sp_set_config_baudrate(c, 115200);
      sp_set_config_bits(c, 8);
      sp_set_config_parity(c, SP_PARITY_NONE);
      sp_set_config_stopbits(c, 1);
      sp_set_config(port_, c);
      sp_free_config(c);
    }
    sp_flush(port_, SP_BUF_INPUT);
  }
  ~UsbPort() override {
    sp_close(port_);
    sp_free_port(port_);
  }
  void write(const uint8_t* p, size_t n) override {
    const sp_return r = sp_blocking_write(port_, p, n, 5000);
    if (r < 0 || (size_t)r != n) throw Error(sp_error("writing to " + path_ + " failed"));
  }
  size_t read(uint8_t* p, size_t n, int timeout_ms) override {
    const sp_return r = sp_blocking_read_next(port_, p, n, (unsigned)(timeout_ms > 0 ? timeout_ms : 1));
    if (r < 0) throw Error(sp_error("reading from " + path_ + " failed"));
    return (size_t)r;
  }

 private:
  std::string path_;
  sp_port* port_ = nullptr;
};

bool is_pty(const std::string& path) {
  char* real = realpath(path.c_str(), nullptr);
  const std::string r = real ? real : path;
  free(real);
  return r.rfind("/dev/pts/", 0) == 0 || r == "/dev/ptmx";
}

}  // namespace

std::unique_ptr<SerialPort> open_serial(const std::string& path) {
  if (is_pty(path)) return std::unique_ptr<SerialPort>(new PtyPort(path));
  return std::unique_ptr<SerialPort>(new UsbPort(path));
}

std::vector<std::string> usb_serial_ports() {
  std::vector<std::string> out;
  sp_port** list = nullptr;
  if (sp_list_ports(&list) != SP_OK) return out;
  for (sp_port** p = list; *p; ++p)
    if (sp_get_port_transport(*p) == SP_TRANSPORT_USB) out.push_back(sp_get_port_name(*p));
  sp_free_port_list(list);
  return out;
}

std::string choose_port(const std::string& given) {
  if (!given.empty()) return given;
  const std::vector<std::string> ports = usb_serial_ports();
  if (ports.size() == 1) return ports[0];
  if (ports.empty())
    throw UsageError("no USB serial port is attached: plug the board in, or name its port (e.g. /dev/ttyACM0)");
  std::string names;
  for (const std::string& p : ports) names += (names.empty() ? "" : ", ") + p;
  throw UsageError(std::to_string(ports.size()) + " USB serial ports are attached (" + names +
                   "): name the board's port");
}

}  // namespace tvh
