#include "esp32_hal.h"

#include <Arduino.h>
#include <FS.h>
#include <SD.h>
#include <SPI.h>
#include <U8g2lib.h>
#include <Wire.h>
#include <string.h>

#include "esp_camera.h"
#include "esp_heap_caps.h"
#include "esp_timer.h"
#include "freertos/FreeRTOS.h"
#include "freertos/semphr.h"
#include "freertos/task.h"
#include "img_converters.h"

namespace tvfw {

namespace {

// XIAO ESP32-S3 Sense camera connector (OV2640).
constexpr int kPinPwdn = -1, kPinReset = -1, kPinXclk = 10, kPinSioD = 40, kPinSioC = 39;
constexpr int kPinY9 = 48, kPinY8 = 11, kPinY7 = 12, kPinY6 = 14, kPinY5 = 16, kPinY4 = 18, kPinY3 = 17, kPinY2 = 15;
constexpr int kPinVsync = 38, kPinHref = 47, kPinPclk = 13;

constexpr int kMaxOpenFiles = 4;
fs::File g_files[kMaxOpenFiles];

U8G2_SSD1306_72X40_ER_F_HW_I2C g_oled(U8G2_R0, U8X8_PIN_NONE);

// A 16x16 pure red JPEG (R=255, G=0, B=0; written by tvh::encode_jpeg): decoding it at boot tells
// whether this core's JPEG decoder writes R, G, B or B, G, R.
const uint8_t kRedJpeg[] = {
    0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00,
    0x00, 0xff, 0xdb, 0x00, 0x43, 0x00, 0x03, 0x02, 0x02, 0x03, 0x02, 0x02, 0x03, 0x03, 0x03, 0x03, 0x04, 0x03, 0x03,
    0x04, 0x05, 0x08, 0x05, 0x05, 0x04, 0x04, 0x05, 0x0a, 0x07, 0x07, 0x06, 0x08, 0x0c, 0x0a, 0x0c, 0x0c, 0x0b, 0x0a,
    0x0b, 0x0b, 0x0d, 0x0e, 0x12, 0x10, 0x0d, 0x0e, 0x11, 0x0e, 0x0b, 0x0b, 0x10, 0x16, 0x10, 0x11, 0x13, 0x14, 0x15,
    0x15, 0x15, 0x0c, 0x0f, 0x17, 0x18, 0x16, 0x14, 0x18, 0x12, 0x14, 0x15, 0x14, 0xff, 0xdb, 0x00, 0x43, 0x01, 0x03,
    0x04, 0x04, 0x05, 0x04, 0x05, 0x09, 0x05, 0x05, 0x09, 0x14, 0x0d, 0x0b, 0x0d, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14,
    0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14,
    0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14,
    0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0xff, 0xc0, 0x00, 0x11, 0x08, 0x00, 0x10, 0x00, 0x10, 0x03, 0x01, 0x22, 0x00,
    0x02, 0x11, 0x01, 0x03, 0x11, 0x01, 0xff, 0xc4, 0x00, 0x1f, 0x00, 0x00, 0x01, 0x05, 0x01, 0x01, 0x01, 0x01, 0x01,
    0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a,
    0x0b, 0xff, 0xc4, 0x00, 0xb5, 0x10, 0x00, 0x02, 0x01, 0x03, 0x03, 0x02, 0x04, 0x03, 0x05, 0x05, 0x04, 0x04, 0x00,
    0x00, 0x01, 0x7d, 0x01, 0x02, 0x03, 0x00, 0x04, 0x11, 0x05, 0x12, 0x21, 0x31, 0x41, 0x06, 0x13, 0x51, 0x61, 0x07,
    0x22, 0x71, 0x14, 0x32, 0x81, 0x91, 0xa1, 0x08, 0x23, 0x42, 0xb1, 0xc1, 0x15, 0x52, 0xd1, 0xf0, 0x24, 0x33, 0x62,
    0x72, 0x82, 0x09, 0x0a, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x34, 0x35, 0x36, 0x37,
    0x38, 0x39, 0x3a, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4a, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5a,
    0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x83, 0x84, 0x85,
    0x86, 0x87, 0x88, 0x89, 0x8a, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9a, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6,
    0xa7, 0xa8, 0xa9, 0xaa, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7,
    0xc8, 0xc9, 0xca, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda, 0xe1, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7,
    0xe8, 0xe9, 0xea, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa, 0xff, 0xc4, 0x00, 0x1f, 0x01, 0x00,
    0x03, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x02, 0x03,
    0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0xff, 0xc4, 0x00, 0xb5, 0x11, 0x00, 0x02, 0x01, 0x02, 0x04, 0x04,
    0x03, 0x04, 0x07, 0x05, 0x04, 0x04, 0x00, 0x01, 0x02, 0x77, 0x00, 0x01, 0x02, 0x03, 0x11, 0x04, 0x05, 0x21, 0x31,
    0x06, 0x12, 0x41, 0x51, 0x07, 0x61, 0x71, 0x13, 0x22, 0x32, 0x81, 0x08, 0x14, 0x42, 0x91, 0xa1, 0xb1, 0xc1, 0x09,
    0x23, 0x33, 0x52, 0xf0, 0x15, 0x62, 0x72, 0xd1, 0x0a, 0x16, 0x24, 0x34, 0xe1, 0x25, 0xf1, 0x17, 0x18, 0x19, 0x1a,
    0x26, 0x27, 0x28, 0x29, 0x2a, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3a, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4a,
    0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5a, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x73, 0x74, 0x75,
    0x76, 0x77, 0x78, 0x79, 0x7a, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8a, 0x92, 0x93, 0x94, 0x95, 0x96,
    0x97, 0x98, 0x99, 0x9a, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7,
    0xb8, 0xb9, 0xba, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8,
    0xd9, 0xda, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9,
    0xfa, 0xff, 0xda, 0x00, 0x0c, 0x03, 0x01, 0x00, 0x02, 0x11, 0x03, 0x11, 0x00, 0x3f, 0x00, 0xf9, 0xd2, 0x8a, 0x28,
    0xaf, 0xc3, 0x0f, 0xf5, 0x4c, 0xff, 0xd9,
};

}  // namespace

void Esp32Hal::print(const char* text) {
  Serial.print(text);
}

bool Esp32Hal::begin(const Esp32Config& config) {
  cfg_ = config;
  if (!psramFound()) {
    print("FATAL: no PSRAM found. Arduino IDE: Tools > PSRAM > OPI PSRAM; PlatformIO: see platformio.ini.\n");
    return false;
  }
  char line[160];
  snprintf(line, sizeof line, "Board: XIAO ESP32-S3 Sense, PSRAM %u bytes free\n",
           (unsigned)heap_caps_get_free_size(MALLOC_CAP_SPIRAM));
  print(line);

  camera_ok_ = init_camera();
  print(camera_ok_ ? "Camera: OV2640 ready, 240x240 JPEG\n" : "Camera: init failed (capture and infer disabled)\n");
  detect_decoder_order();  // SD training decodes too, with or without a camera

  sd_ok_ = SD.begin((uint8_t)cfg_.sd_cs);
  if (!sd_ok_) print("SD card: mount failed (is a FAT32 card inserted?)\n");

  Wire.begin();
  Wire.beginTransmission(cfg_.oled_address);
  oled_ok_ = Wire.endTransmission() == 0;
  if (oled_ok_) {
    g_oled.setI2CAddress((uint8_t)(cfg_.oled_address * 2));
    g_oled.begin();
  }
  print(oled_ok_ ? "Display: 72x40 OLED found\n" : "Display: none (serial only)\n");

  // The second core: a worker task on core 0 runs the odd gradient lanes while loop() (core 1) runs
  // the even ones.
  lane_start_ = xSemaphoreCreateBinary();
  lane_done_ = xSemaphoreCreateBinary();
  TaskHandle_t task = nullptr;
  if (lane_start_ && lane_done_ &&
      xTaskCreatePinnedToCore(&Esp32Hal::lane_task, "tv_lanes", TV_LANE_STACK_BYTES, this, 1, &task, 0) == pdPASS)
    lane_task_ = task;
  else
    print("Lanes: no second-core worker (training runs on one core)\n");
  return true;
}

bool Esp32Hal::init_camera() {
  camera_config_t c;
  memset(&c, 0, sizeof c);
  c.ledc_channel = LEDC_CHANNEL_0;
  c.ledc_timer = LEDC_TIMER_0;
  c.pin_d0 = kPinY2;
  c.pin_d1 = kPinY3;
  c.pin_d2 = kPinY4;
  c.pin_d3 = kPinY5;
  c.pin_d4 = kPinY6;
  c.pin_d5 = kPinY7;
  c.pin_d6 = kPinY8;
  c.pin_d7 = kPinY9;
  c.pin_xclk = kPinXclk;
  c.pin_pclk = kPinPclk;
  c.pin_vsync = kPinVsync;
  c.pin_href = kPinHref;
  c.pin_sccb_sda = kPinSioD;
  c.pin_sccb_scl = kPinSioC;
  c.pin_pwdn = kPinPwdn;
  c.pin_reset = kPinReset;
  c.xclk_freq_hz = 20000000;
  c.pixel_format = PIXFORMAT_JPEG;
  c.frame_size = FRAMESIZE_240X240;
  c.jpeg_quality = cfg_.jpeg_quality;
  c.fb_count = 2;
  c.fb_location = CAMERA_FB_IN_PSRAM;
  c.grab_mode = CAMERA_GRAB_LATEST;
  if (esp_camera_init(&c) != ESP_OK) return false;
  sensor_t* s = esp_camera_sensor_get();
  if (s && s->set_hmirror) s->set_hmirror(s, cfg_.hmirror ? 1 : 0);
  return true;
}

void Esp32Hal::detect_decoder_order() {
  uint8_t* rgb = (uint8_t*)heap_caps_malloc(16 * 16 * 3, MALLOC_CAP_SPIRAM | MALLOC_CAP_8BIT);
  if (!rgb) return;
  if (fmt2rgb888(kRedJpeg, sizeof kRedJpeg, PIXFORMAT_JPEG, rgb)) decoder_bgr_ = rgb[2] > rgb[0];
  heap_caps_free(rgb);
  print(decoder_bgr_ ? "JPEG decoder: writes BGR (swapped to RGB)\n" : "JPEG decoder: writes RGB\n");
}

// ---- time and serial

uint32_t Esp32Hal::millis() {
  return (uint32_t)::millis();
}
uint64_t Esp32Hal::micros() {
  return (uint64_t)esp_timer_get_time();
}
void Esp32Hal::delay_ms(uint32_t ms) {
  ::delay(ms ? ms : 1);
}  // always block a tick: feeds the idle task
void Esp32Hal::serial_write(const char* text, size_t n) {
  Serial.write((const uint8_t*)text, n);
}
int Esp32Hal::serial_read() {
  return Serial.available() > 0 ? Serial.read() : -1;
}

// ---- touch pad and tick

int Esp32Hal::touch_read() {
  const int pin = cfg_.touch_pin >= 0 ? cfg_.touch_pin : A0;
  int sum = 0;
  for (int i = 0; i < 3; ++i) sum += analogRead((uint8_t)pin);  // the reference firmware's 3-sample average
  return sum / 3;
}

void Esp32Hal::tick_task(void* self) {
  Esp32Hal& h = *(Esp32Hal*)self;
  for (;;) {
    const TickFn fn = h.tick_fn_;
    if (fn) fn(h.tick_ctx_);
    vTaskDelay(pdMS_TO_TICKS(h.tick_period_));
  }
}

void Esp32Hal::start_tick(uint32_t period_ms, TickFn fn, void* ctx) {
  tick_fn_ = nullptr;
  tick_ctx_ = ctx;
  tick_period_ = period_ms ? period_ms : 1;
  tick_fn_ = fn;
  if (!tick_task_) {
    // Above loop()'s priority on its core, so the pad is read on time even while training.
    TaskHandle_t task = nullptr;
    if (xTaskCreatePinnedToCore(&Esp32Hal::tick_task, "tv_touch", TV_TICK_STACK_BYTES, this, 2, &task, 1) == pdPASS)
      tick_task_ = task;
  }
}

// ---- display

bool Esp32Hal::display_present() {
  return oled_ok_;
}

void Esp32Hal::display_lines(const char* const* lines, int count) {
  if (!oled_ok_) return;
  g_oled.clearBuffer();
  g_oled.setFont(u8g2_font_6x10_tf);  // 12 columns x 4 lines on 72x40
  for (int i = 0; i < count && i < kDisplayLines; ++i) {
    char text[kDisplayColumns + 1];
    strncpy(text, lines[i] ? lines[i] : "", kDisplayColumns);
    text[kDisplayColumns] = 0;
    g_oled.drawStr(0, (u8g2_uint_t)(9 + 10 * i), text);
  }
  g_oled.sendBuffer();
}

// ---- camera and JPEG

bool Esp32Hal::camera_grab(const uint8_t** jpeg, size_t* size) {
  if (!camera_ok_) return false;
  camera_release();
  camera_fb_t* fb = esp_camera_fb_get();
  if (!fb) return false;
  if (fb->format != PIXFORMAT_JPEG) {
    esp_camera_fb_return(fb);
    return false;
  }
  frame_ = fb;
  *jpeg = fb->buf;
  *size = fb->len;
  return true;
}

void Esp32Hal::camera_release() {
  if (frame_) esp_camera_fb_return((camera_fb_t*)frame_);
  frame_ = nullptr;
}

bool Esp32Hal::jpeg_decode_rgb(const uint8_t* jpeg, size_t size, int width, int height, uint8_t* rgb) {
  // The caller sized rgb from the JPEG's header; refuse sides whose byte count would not fit size_t
  // (32 bits here) rather than let the decoder write past the buffer.
  if (width <= 0 || height <= 0 || (uint64_t)width * (uint64_t)height * 3u > (uint64_t)SIZE_MAX) return false;
  if (!fmt2rgb888(jpeg, size, PIXFORMAT_JPEG, rgb)) return false;
  if (decoder_bgr_) {
    const size_t n = (size_t)width * (size_t)height;
    for (size_t i = 0; i < n; ++i) {
      const uint8_t t = rgb[3 * i];
      rgb[3 * i] = rgb[3 * i + 2];
      rgb[3 * i + 2] = t;
    }
  }
  return true;
}

// ---- SD card

bool Esp32Hal::sd_ready() {
  return sd_ok_;
}

int Esp32Hal::file_open(const char* path, bool write) {
  if (!sd_ok_) return -1;
  for (int i = 0; i < kMaxOpenFiles; ++i) {
    if (g_files[i]) continue;
    g_files[i] = SD.open(path, write ? FILE_WRITE : FILE_READ);
    return g_files[i] ? i : -1;
  }
  return -1;
}

long Esp32Hal::file_read(int h, void* buf, size_t n) {
  if (h < 0 || h >= kMaxOpenFiles || !g_files[h]) return -1;
  return (long)g_files[h].read((uint8_t*)buf, n);
}

long Esp32Hal::file_write(int h, const void* buf, size_t n) {
  if (h < 0 || h >= kMaxOpenFiles || !g_files[h]) return 0;
  return (long)g_files[h].write((const uint8_t*)buf, n);
}

bool Esp32Hal::file_close(int h) {
  if (h < 0 || h >= kMaxOpenFiles || !g_files[h]) return false;
  g_files[h].flush();
  g_files[h].close();
  g_files[h] = fs::File();
  return true;  // FS gives no flush status: the app reads every saved file back to check it
}

long Esp32Hal::file_size(const char* path) {
  if (!sd_ok_ || !SD.exists(path)) return -1;
  fs::File f = SD.open(path, FILE_READ);
  if (!f) return -1;
  const long n = f.isDirectory() ? -1 : (long)f.size();
  f.close();
  return n;
}

bool Esp32Hal::exists(const char* path) {
  return sd_ok_ && SD.exists(path);
}
bool Esp32Hal::remove(const char* path) {
  return sd_ok_ && SD.remove(path);
}
bool Esp32Hal::rename(const char* from, const char* to) {
  return sd_ok_ && !SD.exists(to) && SD.rename(from, to);
}
bool Esp32Hal::mkdir(const char* path) {
  return sd_ok_ && SD.mkdir(path);
}

long long Esp32Hal::sd_free_bytes() {
  if (!sd_ok_) return -1;
  const uint64_t total = SD.totalBytes(), used = SD.usedBytes();
  return used <= total ? (long long)(total - used) : 0;
}

bool Esp32Hal::list_dir(const char* path, DirEntryFn fn, void* ctx) {
  if (!sd_ok_) return false;
  fs::File dir = SD.open(path, FILE_READ);
  if (!dir || !dir.isDirectory()) return false;
  for (fs::File e = dir.openNextFile(); e; e = dir.openNextFile()) {
    const char* name = e.name();
    const char* slash = strrchr(name, '/');  // older cores return the whole path
    fn(ctx, slash ? slash + 1 : name, e.isDirectory());
    e.close();
  }
  dir.close();
  return true;
}

// ---- memory

void* Esp32Hal::psram_alloc(size_t bytes) {
  return heap_caps_aligned_alloc(16, bytes ? bytes : 1, MALLOC_CAP_SPIRAM | MALLOC_CAP_8BIT);
}
void Esp32Hal::psram_free(void* p) {
  heap_caps_free(p);
}
size_t Esp32Hal::psram_free_bytes() {
  return heap_caps_get_free_size(MALLOC_CAP_SPIRAM);
}

// ---- the second core

void Esp32Hal::lane_task(void* self) {
  Esp32Hal& h = *(Esp32Hal*)self;
  for (;;) {
    if (xSemaphoreTake((SemaphoreHandle_t)h.lane_start_, portMAX_DELAY) != pdTRUE) continue;
    const LaneWorkFn fn = h.lane_fn_;
    for (int l = 1; l < h.lane_count_; l += 2) fn(h.lane_arg_, l);
    xSemaphoreGive((SemaphoreHandle_t)h.lane_done_);
  }
}

void Esp32Hal::run_lanes(int lanes, LaneWorkFn fn, void* arg) {
  if (!lane_task_ || lanes < 2) {
    for (int l = 0; l < lanes; ++l) fn(arg, l);
    return;
  }
  lane_fn_ = fn;
  lane_arg_ = arg;
  lane_count_ = lanes;
  xSemaphoreGive((SemaphoreHandle_t)lane_start_);  // odd lanes on core 0
  for (int l = 0; l < lanes; l += 2) fn(arg, l);   // even lanes here, on core 1
  xSemaphoreTake((SemaphoreHandle_t)lane_done_, portMAX_DELAY);
}

int Esp32Hal::cores() {
  return lane_task_ ? 2 : 1;
}

void Esp32Hal::halt() {
  Serial.flush();
  for (;;) ::delay(1000);
}

}  // namespace tvfw
