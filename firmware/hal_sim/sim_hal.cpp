#include "sim_hal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "host/base/error.h"
#include "host/base/files.h"
#include "host/photos/jpeg.h"
#include "host/train/lane_pool.h"
#include "script.h"
#include "touch.h"

namespace tvsim {

namespace {

constexpr int kPadIdle = 300;      // a released pad reads well below the release threshold
constexpr int kPadPressed = 2000;  // a finger reads well above the press threshold
constexpr uint32_t kTapPressMs = 80, kTapGapMs = 80;
constexpr uint32_t kFramesTimeoutMs = 10000;
constexpr uint32_t kGestureSettleMs = tvfw::kTapWindowMs + 3 * tvfw::kTouchPollMs;

bool jpeg_name(const std::string& n) {
  if (n.empty() || n[0] == '.') return false;
  const size_t dot = n.find_last_of('.');
  if (dot == std::string::npos) return false;
  std::string ext = n.substr(dot + 1);
  for (char& c : ext) c = (char)std::tolower((unsigned char)c);
  return ext == "jpg" || ext == "jpeg";
}

// Opens a file of the card or the camera folder the way every tool opens its inputs: a FIFO, device or
// folder in its place is refused (never waited on), said on stderr; null then.
FILE* open_for_reading(const std::string& path) {
  try {
    const int fd = tvh::open_regular_file(path);
    FILE* f = fdopen(fd, "rb");
    if (!f) close(fd);
    return f;
  } catch (const tvh::Error& e) {
    std::fprintf(stderr, "tvsim: %s\n", e.what());
    return nullptr;
  }
}

// Creates or truncates a regular file of the card for writing; a FIFO or device in its place is
// refused without waiting for a reader.
FILE* open_for_writing(const std::string& path) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_NONBLOCK | O_CLOEXEC, 0644);
  if (fd < 0) return nullptr;
  struct stat st;
  const int flags = fcntl(fd, F_GETFL);
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0 ||
      ftruncate(fd, 0) != 0) {
    std::fprintf(stderr, "tvsim: cannot write '%s': it is not a regular file.\n", path.c_str());
    close(fd);
    return nullptr;
  }
  FILE* f = fdopen(fd, "wb");
  if (!f) close(fd);
  return f;
}

}  // namespace

SimHal::SimHal(const SimOptions& options) : opt_(options), start_(std::chrono::steady_clock::now()) {
  if (!opt_.camera_dir.empty()) {
    if (DIR* d = opendir(opt_.camera_dir.c_str())) {
      while (dirent* e = readdir(d))
        if (jpeg_name(e->d_name)) frames_.push_back(e->d_name);
      closedir(d);
    }
    std::sort(frames_.begin(), frames_.end());
  }
  if (opt_.oled == "-")
    oled_ = stderr;
  else if (!opt_.oled.empty())
    oled_ = std::fopen(opt_.oled.c_str(), "a");
  pool_.reset(new tvh::LanePool(std::max(1, opt_.cores)));
  if (opt_.pty) {
    std::string why;
    if (!open_pty(&pty_, &why)) throw tvh::Error("tvsim: " + why);
    in_fd_ = pty_.master;
    pace_in_.rate = pace_out_.rate = opt_.link_rate;
  }
  ticker_ = std::thread([this] { tick_thread(); });
}

SimHal::~SimHal() {
  quit_ = true;
  if (ticker_.joinable()) ticker_.join();
  for (auto& f : files_) std::fclose(f.second);
  if (oled_ && oled_ != stderr) std::fclose(oled_);
  for (auto& a : allocations_) std::free(a.first);
  if (pty_.master >= 0) ::close(pty_.master);
  if (pty_.slave >= 0) ::close(pty_.slave);
}

// ---------------------------------------------------------------- time

namespace {
// While a tick runs, the clock reads the tick's scheduled time: a late tick (a busy machine) still
// sees the pad as it was when the tick was due, so scripted touches never depend on scheduling.
thread_local bool tl_in_tick = false;
thread_local uint32_t tl_tick_time = 0;
}  // namespace

uint32_t SimHal::millis() {
  if (tl_in_tick) return tl_tick_time;
  const auto real = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start_);
  return (uint32_t)((uint64_t)real.count() + skipped_ms_.load());
}

uint64_t SimHal::micros() {
  return (uint64_t)std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start_)
      .count();
}

void SimHal::delay_ms(uint32_t ms) {
  if (opt_.pty) {  // a PC program is on the other side: real time, woken early by its bytes
    if (input_pos_ >= input_.size()) pump_stdin((int)ms);
    return;
  }
  advance_clock(ms);
}

void SimHal::advance_clock(uint32_t ms) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  uint32_t left = ms;
  while (left > 0) {
    const uint32_t step = std::min(left, tick_period_);
    skipped_ms_ += step;
    left -= step;
    fire_due_ticks();
  }
  if (ms == 0) fire_due_ticks();
}

void SimHal::start_tick(uint32_t period_ms, tvfw::TickFn fn, void* ctx) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  tick_period_ = period_ms ? period_ms : 1;
  tick_fn_ = fn;
  tick_ctx_ = ctx;
  next_tick_ = millis() + tick_period_;
}

void SimHal::fire_due_ticks() {
  if (!tick_fn_) return;
  while ((int32_t)(millis() - next_tick_) >= 0) {
    tl_in_tick = true;
    tl_tick_time = next_tick_;
    tick_fn_(tick_ctx_);
    tl_in_tick = false;
    next_tick_ += tick_period_;
  }
}

void SimHal::tick_thread() {
  // While the app computes for a long time (training), ticks follow real time, as on the board.
  while (!quit_) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    std::lock_guard<std::recursive_mutex> lock(mu_);
    fire_due_ticks();
  }
}

// ---------------------------------------------------------------- serial

void SimHal::serial_write(const char* text, size_t n) {
  if (opt_.pty) {
    pace_out_.take(n);
    write_within(pty_.master, text, n, 50);
    return;
  }
  if (stdout_error_.empty() && (std::fwrite(text, 1, n, stdout) != n || std::fflush(stdout) != 0)) {
    stdout_error_ = std::string("cannot write the serial output to standard output: ") + std::strerror(errno) + ".";
    std::fprintf(stderr, "tvsim: %s\n", stdout_error_.c_str());
  }
}

void SimHal::pump_stdin(int timeout_ms) {
  if (input_eof_) return;
  pollfd p{in_fd_, POLLIN, 0};
  if (poll(&p, 1, timeout_ms) <= 0) return;
  if (input_pos_ > 0 && input_pos_ == input_.size()) {  // a long session: forget what was read
    input_.clear();
    input_pos_ = 0;
  }
  char buf[4096];
  const ssize_t r = ::read(in_fd_, buf, sizeof buf);
  if (r < 0 && opt_.pty) return;  // nothing after all (the port stays open)
  if (r > 0 && opt_.pty) pace_in_.take((size_t)r);
  if (r <= 0)
    input_eof_ = true;
  else
    input_.append(buf, (size_t)r);
}

void SimHal::wait_for_input(int ms) {
  if (input_pos_ >= input_.size()) pump_stdin(ms);
}

bool SimHal::holding_input() {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (hold_until_frame_ > frames_grabbed_ && next_frame_ < frames_.size() &&
      (int32_t)(millis() - frames_deadline_ms_) < 0)
    return true;
  hold_until_frame_ = 0;
  if (hold_until_ms_ && (int32_t)(millis() - hold_until_ms_) < 0) return true;
  // ...and until the ticks have caught up with it, so the app has seen the whole gesture
  if (hold_until_ms_ && tick_fn_ && (int32_t)(next_tick_ - hold_until_ms_) <= 0) return true;
  hold_until_ms_ = 0;
  return false;
}

void SimHal::run_directive(const std::string& line) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  ScriptDirective d;
  std::string why;
  if (!parse_script_line(line, &d, &why)) {
    std::fprintf(stderr, "tvsim: script line '%s' ignored: %s\n", tvh::visible(line).c_str(), why.c_str());
    return;
  }
  const uint32_t now = millis();
  const uint32_t t = now + tvfw::kTouchPollMs;
  switch (d.kind) {
    case ScriptDirective::Tap: {
      uint32_t start = t;
      for (long i = 0; i < d.a; ++i) {
        touch_.push_back({start, start + kTapPressMs, kPadPressed});
        start += kTapPressMs + kTapGapMs;
      }
      hold_until_ms_ = start + kGestureSettleMs;
      break;
    }
    case ScriptDirective::Hold:
      touch_.push_back({t, t + (uint32_t)d.a, kPadPressed});
      hold_until_ms_ = t + (uint32_t)d.a + kGestureSettleMs;
      break;
    case ScriptDirective::Touch:
      touch_.push_back({t, t + (uint32_t)d.b, (int)d.a});
      hold_until_ms_ = t + (uint32_t)d.b + kGestureSettleMs;
      break;
    case ScriptDirective::Wait: hold_until_ms_ = now + (uint32_t)d.a; break;
    case ScriptDirective::Frames:
      hold_until_frame_ = frames_grabbed_ + (uint64_t)d.a;
      frames_deadline_ms_ = now + kFramesTimeoutMs;  // the app may never ask for frames (not in Infer)
      break;
  }
}

int SimHal::serial_read() {
  if (holding_input()) return -1;
  if (input_pos_ >= input_.size()) pump_stdin(0);
  if (input_pos_ >= input_.size()) return -1;
  const char c = input_[input_pos_];
  if (at_line_start_ && c == '~' && !opt_.pty) {
    const size_t nl = input_.find('\n', input_pos_);
    if (nl == std::string::npos && !input_eof_) {
      pump_stdin(0);
      return -1;  // the rest of the directive has not arrived yet
    }
    const size_t end = nl == std::string::npos ? input_.size() : nl;
    std::string line = input_.substr(input_pos_, end - input_pos_);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    input_pos_ = nl == std::string::npos ? input_.size() : nl + 1;
    at_line_start_ = true;
    run_directive(line);
    return -1;
  }
  input_pos_++;
  at_line_start_ = c == '\n';
  return (unsigned char)c;
}

bool SimHal::input_finished() {
  if (opt_.pty) return false;  // served until tvsim is stopped
  if (input_pos_ >= input_.size()) pump_stdin(0);
  if (!input_eof_ || input_pos_ < input_.size()) return false;
  return !holding_input();
}

// ---------------------------------------------------------------- touch and display

int SimHal::touch_read() {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  const uint32_t now = millis();
  int value = kPadIdle;
  for (const Segment& s : touch_)
    if ((int32_t)(now - s.start) >= 0 && (int32_t)(now - s.end) < 0) value = s.value;
  touch_.erase(
      std::remove_if(touch_.begin(), touch_.end(), [now](const Segment& s) { return (int32_t)(now - s.end) >= 0; }),
      touch_.end());
  return value;
}

bool SimHal::display_present() {
  return oled_ != nullptr;
}

void SimHal::display_lines(const char* const* lines, int count) {
  if (!oled_) return;
  std::string out = "+------------+\n";
  for (int i = 0; i < tvfw::kDisplayLines; ++i) {
    std::string l = i < count && lines[i] ? lines[i] : "";
    if (l.size() > (size_t)tvfw::kDisplayColumns) l.resize(tvfw::kDisplayColumns);
    l.resize(tvfw::kDisplayColumns, ' ');
    out += "|" + l + "|\n";
  }
  out += "+------------+\n";
  std::fputs(out.c_str(), oled_);
  std::fflush(oled_);
}

// ---------------------------------------------------------------- camera and JPEG

bool SimHal::camera_grab(const uint8_t** jpeg, size_t* size) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  FILE* f = nullptr;
  std::string path;
  while (!f) {  // a frame that is not a regular file (a FIFO) is said and passed over, never waited on
    if (next_frame_ >= frames_.size()) return false;
    path = opt_.camera_dir + "/" + frames_[next_frame_++];
    f = open_for_reading(path);
  }
  frames_grabbed_++;
  advance_clock(opt_.frame_ms);
  frame_.clear();
  char buf[65536];
  size_t r;
  while ((r = std::fread(buf, 1, sizeof buf, f)) > 0) frame_.insert(frame_.end(), buf, buf + r);
  std::fclose(f);
  std::fprintf(stderr, "tvsim: camera frame %llu: %s\n", (unsigned long long)frames_grabbed_, path.c_str());
  *jpeg = frame_.data();
  *size = frame_.size();
  return true;
}

void SimHal::camera_release() {}

bool SimHal::jpeg_decode_rgb(const uint8_t* jpeg, size_t size, int width, int height, uint8_t* rgb) {
  decodes_++;
  try {
    const tvh::Image img = tvh::decode_jpeg(jpeg, size, "JPEG", 3);
    if (img.width != width || img.height != height || img.channels != 3) return false;
    std::memcpy(rgb, img.pixels.data(), img.pixels.size());
    return true;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tvsim: %s\n", e.what());
    return false;
  }
}

// ---------------------------------------------------------------- SD card

std::string SimHal::card_path(const char* path) const {
  if (!path || path[0] != '/') return "";
  const std::string p(path);
  if (p.find("/../") != std::string::npos || (p.size() >= 3 && p.compare(p.size() - 3, 3, "/..") == 0)) return "";
  return opt_.sd_dir + p;
}

uint64_t SimHal::spend_units(uint64_t n) {
  if (opt_.power_cut_at < 0 || units_ + n <= (uint64_t)opt_.power_cut_at) {
    units_ += n;
    return n;
  }
  const uint64_t allowed = (uint64_t)opt_.power_cut_at - units_;
  units_ += allowed;
  return allowed;
}

void SimHal::power_cut() {
  for (auto& f : files_) std::fflush(f.second);
  std::fflush(stdout);
  std::fprintf(stderr, "tvsim: power cut after %llu card units\n", (unsigned long long)units_);
  std::fflush(stderr);
  _exit(86);
}

bool SimHal::sd_ready() {
  return !opt_.sd_dir.empty();
}

int SimHal::file_open(const char* path, bool write) {
  const std::string p = card_path(path);
  if (p.empty() || !sd_ready()) return -1;
  if (write && spend_units(1) < 1) power_cut();
  FILE* f = write ? open_for_writing(p) : open_for_reading(p);
  if (!f) return -1;
  files_[next_handle_] = f;
  return next_handle_++;
}

long SimHal::file_read(int handle, void* buf, size_t n) {
  auto it = files_.find(handle);
  if (it == files_.end()) return -1;
  const size_t r = std::fread(buf, 1, n, it->second);
  return std::ferror(it->second) ? -1 : (long)r;
}

long SimHal::file_write(int handle, const void* buf, size_t n) {
  auto it = files_.find(handle);
  if (it == files_.end() || card_failed_) return 0;
  size_t take = n;
  if (opt_.fail_write_at >= 0 && bytes_written_ + take > (uint64_t)opt_.fail_write_at) {
    take = (size_t)((uint64_t)opt_.fail_write_at - std::min<uint64_t>(bytes_written_, opt_.fail_write_at));
    card_failed_ = true;
    std::fprintf(stderr, "tvsim: the card stops accepting writes after byte %lld\n", opt_.fail_write_at);
  }
  const uint64_t allowed = spend_units(take);
  const size_t w = std::fwrite(buf, 1, (size_t)allowed, it->second);
  bytes_written_ += w;
  if (allowed < take) power_cut();
  return (long)w;
}

bool SimHal::file_close(int handle) {
  auto it = files_.find(handle);
  if (it == files_.end()) return false;
  const bool ok = std::fclose(it->second) == 0;
  files_.erase(it);
  return ok;
}

long SimHal::file_size(const char* path) {
  const std::string p = card_path(path);
  struct stat st;
  if (p.empty() || !sd_ready() || ::stat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return -1;
  return (long)st.st_size;
}

bool SimHal::exists(const char* path) {
  const std::string p = card_path(path);
  struct stat st;
  return !p.empty() && sd_ready() && ::stat(p.c_str(), &st) == 0;
}

bool SimHal::remove(const char* path) {
  const std::string p = card_path(path);
  if (p.empty() || !sd_ready()) return false;
  if (spend_units(1) < 1) power_cut();
  return ::unlink(p.c_str()) == 0;
}

bool SimHal::rename(const char* from, const char* to) {
  const std::string a = card_path(from), b = card_path(to);
  if (a.empty() || b.empty() || !sd_ready()) return false;
  struct stat st;
  if (::stat(b.c_str(), &st) == 0) return false;  // FAT refuses to rename onto an existing name
  if (spend_units(1) < 1) power_cut();
  return ::rename(a.c_str(), b.c_str()) == 0;
}

bool SimHal::mkdir(const char* path) {
  const std::string p = card_path(path);
  if (p.empty() || !sd_ready()) return false;
  if (spend_units(1) < 1) power_cut();
  return ::mkdir(p.c_str(), 0755) == 0;
}

long long SimHal::sd_free_bytes() {
  if (!sd_ready()) return -1;
  if (opt_.sd_free_bytes >= 0) return opt_.sd_free_bytes;
  struct statvfs v;
  if (::statvfs(opt_.sd_dir.c_str(), &v) != 0) return -1;
  return (long long)v.f_bavail * (long long)v.f_frsize;
}

bool SimHal::list_dir(const char* path, tvfw::DirEntryFn fn, void* ctx) {
  const std::string p = card_path(path);
  if (p.empty() || !sd_ready()) return false;
  DIR* d = opendir(p.c_str());
  if (!d) return false;
  std::vector<std::pair<std::string, bool>> entries;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    struct stat st;
    const bool is_dir = ::stat((p + "/" + name).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
    entries.emplace_back(name, is_dir);
  }
  closedir(d);
  for (const auto& e : entries) fn(ctx, e.first.c_str(), e.second);
  return true;
}

// ---------------------------------------------------------------- memory, lanes, halt

void* SimHal::psram_alloc(size_t bytes) {
  std::lock_guard<std::mutex> lock(mem_mu_);
  if (bytes > opt_.psram_bytes - psram_used_) return nullptr;
  const size_t rounded = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, rounded);
  if (!p) return nullptr;
  allocations_[p] = bytes;
  psram_used_ += bytes;
  psram_peak_ = std::max(psram_peak_, psram_used_);
  return p;
}

void SimHal::psram_free(void* p) {
  if (!p) return;
  std::lock_guard<std::mutex> lock(mem_mu_);
  auto it = allocations_.find(p);
  if (it == allocations_.end()) return;
  psram_used_ -= it->second;
  std::memset(p, 0xA5, it->second);  // freed PSRAM poisoned: a read after free shows as garbage in tests
  allocations_.erase(it);
  std::free(p);
}

size_t SimHal::psram_free_bytes() {
  std::lock_guard<std::mutex> lock(mem_mu_);
  return opt_.psram_bytes - psram_used_;
}

void SimHal::run_lanes(int lanes, tvfw::LaneWorkFn fn, void* arg) {
  const tv::LaneRunner* r = pool_->runner();
  if (r->run)
    r->run(r->ctx, lanes, fn, arg);
  else
    for (int l = 0; l < lanes; ++l) fn(arg, l);
}

int SimHal::cores() {
  return pool_->threads();
}

void SimHal::halt() {
  std::fflush(stdout);
  std::fprintf(stderr, "tvsim: the app halted\n");
  std::fflush(stderr);
  _exit(1);  // a failure, like every tool's exit status 1
}

}  // namespace tvsim
