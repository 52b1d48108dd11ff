// The PC's side of the USB link to the board (tvlink): serial ports and the protocol client. The
// frame codec and the window rules are the board's own (common/src/tv/link/link_frame.h).
#pragma once
#include <stddef.h>
#include <stdint.h>

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "tv/link/link_frame.h"

namespace tvh {

// A byte pipe to the board.
class SerialPort {
 public:
  virtual ~SerialPort() {}
  // Writes every byte; throws tvh::Error when the port fails.
  virtual void write(const uint8_t* data, size_t n) = 0;
  // Reads up to n bytes, waiting at most timeout_ms for the first; 0 when none came.
  virtual size_t read(uint8_t* data, size_t n, int timeout_ms) = 0;
};

// Opens a serial port without touching DTR/RTS (on the XIAO's USB-Serial-JTAG a toggle can reset the
// board): pseudo-terminals (tvsim --pty) with termios, other ports with libserialport. Input already
// waiting is discarded. Throws tvh::Error naming the port.
std::unique_ptr<SerialPort> open_serial(const std::string& path);
// The USB serial ports attached (libserialport's list), for choosing the board when none is named.
std::vector<std::string> usb_serial_ports();
// The port to use: `given`, else the one USB serial port attached; throws tvh::UsageError listing the
// candidates when there are none or several.
std::string choose_port(const std::string& given);

struct RemoteEntry {
  std::string name;
  uint32_t size = 0;
  bool is_dir = false;
};

// Thrown when the board answers a request with a refusal (Err): what() is its reason.
struct BoardRefused : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Transfer figures, for the bench.
struct LinkStats {
  uint64_t payload_bytes = 0;  // file or model bytes moved
  double seconds = 0;          // time in transfers
  double waiting_seconds = 0;  // of which: waiting with a full window (for acks)
  uint64_t resends = 0;        // windows sent again after silence
  uint64_t requests = 0;       // request/answer round trips
};

// The time the link's deadlines are measured in (seconds): the steady clock, or a test's.
class Clock {
 public:
  virtual ~Clock() {}
  virtual double now_s() = 0;
};
Clock& steady_clock();

struct LinkOptions {
  Clock* clock = nullptr;  // null: steady_clock()
  uint32_t session = 0;    // the session number of the Hello; 0: a random one (tests fix it)
};

// The most entries a listing may have: what one FAT32 folder holds. A board listing more is failing.
constexpr size_t kMaxListEntries = 65536;

// Every operation ends: each wait has its timeout, and each transfer an overall deadline from the sizes
// it was told (a floor plus the bytes at the slowest working rate), after which it throws tvh::Error.
class LinkClient {
 public:
  // Greets the board (retrying while it finishes what it is doing) and opens a session (a random number
  // every frame's CRC-32 starts from: answers to any other client are dropped); throws tvh::Error when
  // it never answers or speaks another protocol version.
  explicit LinkClient(SerialPort& port, const LinkOptions& options = LinkOptions());
  ~LinkClient();
  // Ends the session: the board returns to its text menu.
  void bye();

  std::string status();
  // The entries of a folder relative to the card's /images ("" = /images itself).
  std::vector<RemoteEntry> list(const std::string& rel);
  // Size and CRC-32 of a file under /images, computed by the board.
  void crc(const std::string& rel, uint32_t* size, uint32_t* crc);
  // A file under /images; `progress` gets the bytes received so far. Checked against the board's CRC.
  std::vector<uint8_t> read(const std::string& rel, const std::function<void(uint64_t)>& progress = nullptr);
  // The card's model file (which = tv::link::kModelFile: /header/model.tvb) or its backup
  // (kModelBackup: /header/model.tvb.bak), checked against the board's size and CRC-32 as read() is;
  // *card_path gets the board's name of the file. BoardRefused when the card holds no such file.
  std::vector<uint8_t> read_model(uint8_t which, std::string* card_path = nullptr,
                                  const std::function<void(uint64_t)>& progress = nullptr);
  // Sends a model; returns what the board installed (its answer must confirm this model's size and
  // CRC-32, else tvh::Error), or throws BoardRefused with its reason.
  std::string push(const std::vector<uint8_t>& blob, const std::function<void(uint64_t)>& progress = nullptr);
  // Has the board take `count` photos of a class; returns what it saved, or throws BoardRefused.
  std::string capture(const std::string& label, int count);
  // Has the board rename a class: its /images folder and the model's label, in one step; returns what
  // it did, or throws BoardRefused with its reason.
  std::string rename(const std::string& from, const std::string& to);

  const LinkStats& stats() const { return stats_; }

 private:
  void send(uint8_t type, uint32_t seq, const void* payload, size_t len, uint32_t session);
  void send(uint8_t type, uint32_t seq, const void* payload, size_t len) { send(type, seq, payload, len, session_); }
  // The clock's time now + the floor + `bytes` at the slowest working rate.
  double deadline_for(uint64_t bytes);
  uint32_t ms();
  // The next frame within timeout_ms, or null.
  const tv::link::Frame* next(int timeout_ms);
  // Sends a request and waits for its answer (a frame echoing its seq, of another type than Ack and
  // Data), sending it again on silence (up to `attempts` times in all); throws BoardRefused on Err,
  // tvh::Error when the board stays silent. `session`: the CRC-32's start (-1: the session's).
  tv::link::Frame request(uint8_t type, const void* payload, size_t len, int timeout_ms = 1500, int attempts = 4,
                          int64_t session = -1);
  // The Data and End frames of a file whose size the board announced in `ok` (Read, ReadModel), acked
  // as they come; checked against the size and the End's CRC-32. `name` is the file in messages; t0
  // when the request was sent (for the stats).
  std::vector<uint8_t> receive(const tv::link::Frame& ok, const std::string& name, double t0,
                               const std::function<void(uint64_t)>& progress);

  SerialPort& port_;
  Clock& clock_;
  uint32_t session_;
  tv::link::FrameParser parser_;
  std::vector<uint8_t> rx_, tx_;
  size_t rx_pos_ = 0, rx_fill_ = 0;
  uint32_t seq_ = 0;
  bool open_ = false;
  LinkStats stats_;
};

}  // namespace tvh
