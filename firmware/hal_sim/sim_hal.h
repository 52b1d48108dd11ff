// The simulated board: the app's hardware layer on Linux, driven by tests.
//
// - SD card: a folder (paths map below it). rename() refuses an existing destination, as FAT does.
//   Fault injection: --sd-fail-write-at N makes the card stop accepting file bytes after N bytes
//   (writes come back short, the app sees a failed write and carries on); --power-cut-at N cuts the
//   power after N "units" of card work (one per byte written, one per file created, renamed,
//   removed or folder made): the bytes up to the cut reach the folder and the process exits with
//   status 86 on the spot, as a board would lose power.
// - Camera: the .jpg files of a folder, one per grab, in sorted order, then no more frames. With
//   --frame-ms N each grab takes N ms of the virtual clock (a camera giving 1000/N frames a second).
// - Serial: stdin (bytes go to the app) and stdout (everything the app prints). A line starting
//   with '~' is a script directive for the board, not serial input:
//     ~tap [N]       N quick taps on the touch pad (default 1; 3 or more = select)
//     ~hold MS       press and hold the pad for MS milliseconds
//     ~touch V MS    a raw pad reading V for MS milliseconds (for threshold checks)
//     ~wait MS       deliver nothing for MS milliseconds
//     ~frames N      deliver nothing until the camera has given N more frames (or has none left,
//                    or 10 s of simulated time have passed)
//   Input after a touch directive waits until the app has seen the whole gesture.
// - Time: millis() runs on a virtual clock (real time plus every delay, which returns at once), so
//   scripted touches are deterministic and idle loops cost nothing; micros() is real time (used
//   for the figures the app reports).
// - Display: optional text rendering of the 72x40 OLED (--oled FILE, or - for stderr).
// - PSRAM: a budget (--psram-bytes) so an allocation failure can be provoked.
// - Lanes: a thread pool with one thread per simulated core.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "hal.h"
#include "sim_pty.h"

namespace tvh {
class LanePool;
}

namespace tvsim {

struct SimOptions {
  std::string sd_dir;             // empty: no card
  std::string camera_dir;         // empty: no camera frames
  std::string oled;               // empty: no display; "-": stderr; else a file (appended)
  size_t psram_bytes = 8u << 20;  // the XIAO ESP32-S3 Sense's 8 MB
  long long fail_write_at = -1;   // bytes accepted before writes fail; -1 = never
  long long power_cut_at = -1;    // card units before the power goes; -1 = never
  int cores = 2;
  bool pty = false;              // the serial port is a pseudo-terminal (tvsim --pty), not stdin/stdout
  long long sd_free_bytes = -1;  // the card's free bytes as the board reports them; -1 = the folder's
  long long link_rate = 0;       // --pty: bytes per second each way (0 = the pty's own speed)
  uint32_t frame_ms = 0;         // virtual milliseconds each camera grab takes
};

class SimHal : public tvfw::Hal {
 public:
  explicit SimHal(const SimOptions& options);
  ~SimHal() override;

  TVFW_HAL_OVERRIDES

  // True when stdin has ended and every scripted action has played out.
  bool input_finished();
  // --pty: the path of the pseudo-terminal's slave side (what a PC program opens).
  const std::string& pty_path() const { return pty_.path; }
  long long sd_free_bytes() override;
  // Blocks up to ms real milliseconds for more stdin (used while the app is idle).
  void wait_for_input(int ms);
  // Counters for the report at exit.
  uint64_t decodes() const { return decodes_.load(); }
  uint64_t card_units() const { return units_; }
  uint64_t card_bytes_written() const { return bytes_written_; }
  size_t psram_peak() const { return psram_peak_; }
  // The sentence of a failed write of the serial output to stdout ("" when every write succeeded).
  const std::string& stdout_error() const { return stdout_error_; }

 private:
  struct Segment {
    uint32_t start, end;
    int value;
  };
  std::string card_path(const char* path) const;
  // Spends n card units; returns how many may be done before the power cut (n when none is due).
  uint64_t spend_units(uint64_t n);
  [[noreturn]] void power_cut();
  void pump_stdin(int timeout_ms);
  bool holding_input();
  void run_directive(const std::string& line);
  void fire_due_ticks();
  // Moves the virtual clock on by ms, one tick period at a time so every tick sees its reading.
  void advance_clock(uint32_t ms);
  void tick_thread();

  SimOptions opt_;
  // time
  std::chrono::steady_clock::time_point start_;
  std::atomic<uint64_t> skipped_ms_{0};
  // serial input
  Pty pty_;
  Pace pace_in_, pace_out_;
  int in_fd_ = 0;
  std::string input_;
  size_t input_pos_ = 0;
  bool input_eof_ = false;
  bool at_line_start_ = true;
  uint32_t hold_until_ms_ = 0;
  uint64_t hold_until_frame_ = 0;
  uint32_t frames_deadline_ms_ = 0;
  // touch and tick
  std::recursive_mutex mu_;
  std::vector<Segment> touch_;
  tvfw::TickFn tick_fn_ = nullptr;
  void* tick_ctx_ = nullptr;
  uint32_t tick_period_ = 20;
  uint32_t next_tick_ = 0;
  std::atomic<bool> quit_{false};
  std::thread ticker_;
  // camera
  std::vector<std::string> frames_;
  std::string stdout_error_;
  size_t next_frame_ = 0;
  uint64_t frames_grabbed_ = 0;
  std::vector<uint8_t> frame_;
  // card
  std::map<int, FILE*> files_;
  int next_handle_ = 1;
  uint64_t units_ = 0;
  uint64_t bytes_written_ = 0;
  bool card_failed_ = false;
  // memory
  std::mutex mem_mu_;
  std::map<void*, size_t> allocations_;
  size_t psram_used_ = 0, psram_peak_ = 0;
  // work
  std::atomic<uint64_t> decodes_{0};
  std::unique_ptr<tvh::LanePool> pool_;
  FILE* oled_ = nullptr;
};

}  // namespace tvsim
