// The hardware layer the TinyVision application runs on: everything the app needs from a board,
// and nothing else. Two implementations exist: hal_esp32/ (the XIAO ESP32-S3 Sense: esp32-camera,
// SD over SPI, U8g2, analog touch pad, FreeRTOS tasks) and hal_sim/ (Linux: a folder as the SD card,
// image files as camera frames, stdin/stdout as the serial port, threads as the second core).
//
// Contracts every implementation keeps:
// - Paths are absolute card paths ("/images/0Blank/img_3.jpg"), '/'-separated.
// - rename() fails when the destination exists (FAT semantics); callers remove it first.
// - psram_alloc() returns memory aligned to at least 16 bytes (tv::kArenaAlign), or null.
// - jpeg_decode_rgb() writes R, G, B interleaved (channel order fixed up by the HAL if its decoder
//   produces BGR) and counts as one decode.
// - The tick callback runs at about period_ms intervals, possibly on another thread or core, while
//   the app computes; it must be short and touch only what the app made safe for it.
#pragma once
#include <stddef.h>
#include <stdint.h>

namespace tvfw {

// Called for each entry of a directory: its base name and whether it is a folder.
typedef void (*DirEntryFn)(void* ctx, const char* name, bool is_dir);
// One lane of work (tv::LaneFn has the same shape).
typedef void (*LaneWorkFn)(void* arg, int lane);
// A periodic callback.
typedef void (*TickFn)(void* ctx);

class Hal {
 public:
  virtual ~Hal() {}

  // ---- time ----
  // Milliseconds since boot: the user-interface clock (touch timing, debounce).
  virtual uint32_t millis() = 0;
  // Microseconds since boot: the measurement clock (ms per frame, training time).
  virtual uint64_t micros() = 0;
  // Waits (or yields) about ms milliseconds; lets the idle task and the tick run.
  virtual void delay_ms(uint32_t ms) = 0;

  // ---- serial port ----
  // Writes n bytes of text.
  virtual void serial_write(const char* text, size_t n) = 0;
  // The next received byte, or -1 when none is waiting.
  virtual int serial_read() = 0;

  // ---- touch pad ----
  // Raw pad reading; larger means pressed (compared with the app's press/release thresholds).
  virtual int touch_read() = 0;
  // Calls fn(ctx) every period_ms from now on (one callback at a time; a new call replaces it).
  virtual void start_tick(uint32_t period_ms, TickFn fn, void* ctx) = 0;

  // ---- display (optional) ----
  // True when a display answered at boot.
  virtual bool display_present() = 0;
  // Shows up to kDisplayLines lines of text (each cut to kDisplayColumns characters).
  virtual void display_lines(const char* const* lines, int count) = 0;

  // ---- camera ----
  // Takes the current frame as JPEG bytes; they stay valid until camera_release(). False when no
  // frame could be taken.
  virtual bool camera_grab(const uint8_t** jpeg, size_t* size) = 0;
  virtual void camera_release() = 0;

  // ---- JPEG ----
  // Decodes a JPEG of width x height (read from its header by the caller) into rgb (width * height
  // * 3 bytes, R, G, B interleaved). False on corrupt data.
  virtual bool jpeg_decode_rgb(const uint8_t* jpeg, size_t size, int width, int height, uint8_t* rgb) = 0;

  // ---- SD card ----
  // True when a card is mounted.
  virtual bool sd_ready() = 0;
  // Opens a file for reading, or for writing (created or truncated). Returns a handle >= 0, or -1.
  virtual int file_open(const char* path, bool write) = 0;
  // Reads up to n bytes; returns the count (0 at the end), -1 on error.
  virtual long file_read(int handle, void* buf, size_t n) = 0;
  // Writes n bytes; returns how many were written (fewer means the card failed).
  virtual long file_write(int handle, const void* buf, size_t n) = 0;
  // Closes (and flushes) a file; false when the flush failed.
  virtual bool file_close(int handle) = 0;
  // Size in bytes of a regular file, or -1 when absent.
  virtual long file_size(const char* path) = 0;
  virtual bool exists(const char* path) = 0;
  virtual bool remove(const char* path) = 0;
  // Renames a file; fails when `to` exists.
  virtual bool rename(const char* from, const char* to) = 0;
  virtual bool mkdir(const char* path) = 0;
  // Calls fn for every entry of a folder (any order); false when it is not a readable folder.
  virtual bool list_dir(const char* path, DirEntryFn fn, void* ctx) = 0;
  // Free bytes on the card, or -1 when the board cannot tell (the USB link's status and push check).
  virtual long long sd_free_bytes() { return -1; }

  // ---- memory ----
  // Large buffers (external PSRAM on the ESP32-S3), 16-byte aligned; null when out of memory.
  virtual void* psram_alloc(size_t bytes) = 0;
  virtual void psram_free(void* p) = 0;
  // Bytes still free in that memory.
  virtual size_t psram_free_bytes() = 0;

  // ---- parallel work ----
  // Runs fn(arg, lane) for lane = 0 .. lanes-1, spread over the available cores; returns when all
  // are done. Only who computes a lane depends on this, never the results.
  virtual void run_lanes(int lanes, LaneWorkFn fn, void* arg) = 0;
  // Number of cores the lanes are spread over.
  virtual int cores() = 0;

  // ---- fatal stop ----
  // Stops the application for good after the app has printed why (the ESP32 blinks forever; the
  // simulator exits with status 3).
  virtual void halt() = 0;
};

constexpr int kDisplayLines = 4;
constexpr int kDisplayColumns = 12;

}  // namespace tvfw

// What a board class (Esp32Hal, SimHal) declares to implement every call of Hal, in its public part.
#define TVFW_HAL_OVERRIDES                                                                              \
  uint32_t millis() override;                                                                           \
  uint64_t micros() override;                                                                           \
  void delay_ms(uint32_t ms) override;                                                                  \
  void serial_write(const char* text, size_t n) override;                                               \
  int serial_read() override;                                                                           \
  int touch_read() override;                                                                            \
  void start_tick(uint32_t period_ms, tvfw::TickFn fn, void* ctx) override;                             \
  bool display_present() override;                                                                      \
  void display_lines(const char* const* lines, int count) override;                                     \
  bool camera_grab(const uint8_t** jpeg, size_t* size) override;                                        \
  void camera_release() override;                                                                       \
  bool jpeg_decode_rgb(const uint8_t* jpeg, size_t size, int width, int height, uint8_t* rgb) override; \
  bool sd_ready() override;                                                                             \
  int file_open(const char* path, bool write) override;                                                 \
  long file_read(int handle, void* buf, size_t n) override;                                             \
  long file_write(int handle, const void* buf, size_t n) override;                                      \
  bool file_close(int handle) override;                                                                 \
  long file_size(const char* path) override;                                                            \
  bool exists(const char* path) override;                                                               \
  bool remove(const char* path) override;                                                               \
  bool rename(const char* from, const char* to) override;                                               \
  bool mkdir(const char* path) override;                                                                \
  bool list_dir(const char* path, tvfw::DirEntryFn fn, void* ctx) override;                             \
  void* psram_alloc(size_t bytes) override;                                                             \
  void psram_free(void* p) override;                                                                    \
  size_t psram_free_bytes() override;                                                                   \
  void run_lanes(int lanes, tvfw::LaneWorkFn fn, void* arg) override;                                   \
  int cores() override;                                                                                 \
  void halt() override;
