// TinyVision firmware for the Seeed XIAO ESP32-S3 Sense: capture, train and infer on the board.
// Edit tinyvision_config.h (classes and preset), then build with PlatformIO (firmware/esp32) or the
// Arduino IDE (see firmware/README.md). All behaviour lives in firmware/app (shared with the Linux
// simulator tvsim); this file only wires the ESP32 hardware layer to it.
#include <TinyVisionCore.h>  // makes the Arduino IDE pick up the core library (common/)
#include "tinyvision_config.h"
#include "tinyvision_app.h"
#include "tinyvision_esp32.h"

// The training loop, the blob decoder and the header writer use a few KB of stack.
SET_LOOP_TASK_STACK_SIZE(16 * 1024);

static tvfw::Esp32Hal board;
static tvfw::App* app = nullptr;

void setup() {
  Serial.begin(115200);
  delay(1500);  // let USB CDC enumerate so the boot log is not lost
  tvfw::Esp32Config hw;
  hw.sd_cs = TV_SD_CS;
  if (!board.begin(hw)) board.halt();
  static const char* const labels[] = {TV_CLASS_LABELS};
  tvfw::AppConfig cfg;
  cfg.preset = TV_PRESET;
  cfg.num_labels = (int)(sizeof labels / sizeof labels[0]);
  for (int i = 0; i < cfg.num_labels && i < tvfw::kMaxClasses; ++i) cfg.labels[i] = labels[i];
  cfg.epochs = TV_EPOCHS;
  static tvfw::App the_app(board, cfg);  // static storage: the model plan and blob view are a few KB
  app = &the_app;
  app->setup();
}

void loop() { app->loop(); }
