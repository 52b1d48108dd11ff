// The ESP32-S3 hardware layer (Seeed XIAO ESP32-S3 Sense): OV2640 through esp32-camera, the microSD
// slot over SPI (chip select 21), the analog touch pad on A0, an optional 72x40 SSD1306 OLED through
// U8g2, 8 MB OPI PSRAM through heap_caps, and the second core through a FreeRTOS task.
// Only this file and esp32_hal.cpp (and the sketch) call Arduino / ESP-IDF APIs.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "hal.h"

// Stack sizes of the firmware's tasks, in bytes: loop() (the sketch's SET_LOOP_TASK_STACK_SIZE), the
// second-core gradient lanes and the touch tick. scripts/check-stack.py (run by scripts/test.sh) follows
// each task's deepest call chain (-fstack-usage, -fcallgraph-info) and fails when one does not fit.
#define TV_LOOP_STACK_BYTES (16 * 1024)
#define TV_LANE_STACK_BYTES 8192
#define TV_TICK_STACK_BYTES 3072

namespace tvfw {

// Board wiring and options.
struct Esp32Config {
  int sd_cs = 21;               // microSD chip select on the Sense expansion board
  int touch_pin = -1;           // -1: A0
  uint8_t oled_address = 0x3C;  // probed at boot; no answer = no display
  int jpeg_quality = 12;        // camera JPEG quality (0-63, lower is better)
  bool hmirror = true;          // mirror the sensor horizontally, as the reference firmware
};

class Esp32Hal : public Hal {
 public:
  // Brings up the camera, the card, the display and the second-core worker; prints what it found.
  // Returns false (after printing why) only when PSRAM is missing, which the app cannot run without.
  bool begin(const Esp32Config& config);

  TVFW_HAL_OVERRIDES
  long long sd_free_bytes() override;

 private:
  void print(const char* text);
  bool init_camera();
  void detect_decoder_order();
  static void lane_task(void* self);
  static void tick_task(void* self);

  Esp32Config cfg_;
  bool camera_ok_ = false;
  bool sd_ok_ = false;
  bool oled_ok_ = false;
  bool decoder_bgr_ = false;  // the JPEG decoder writes B, G, R (swapped back to R, G, B)
  void* frame_ = nullptr;     // camera_fb_t held between grab and release
  // second core
  void* lane_task_ = nullptr;
  void* lane_start_ = nullptr;  // semaphores
  void* lane_done_ = nullptr;
  volatile LaneWorkFn lane_fn_ = nullptr;
  void* volatile lane_arg_ = nullptr;
  volatile int lane_count_ = 0;
  // tick
  void* tick_task_ = nullptr;
  volatile TickFn tick_fn_ = nullptr;
  void* volatile tick_ctx_ = nullptr;
  volatile uint32_t tick_period_ = 20;
};

}  // namespace tvfw
