// TinyVision firmware for the Seeed XIAO ESP32-S3 Sense: capture, train and infer on the board.
// Works with any TinyVision model: from the SD card (/header/model.tvb), else baked in (a model.h
// from tvexport placed next to this file), else a new one (tinyvision_config.h). Build with PlatformIO
// (firmware/esp32) or the Arduino IDE (see firmware/README.md). All behaviour lives in firmware/app
// (shared with the Linux simulator tvsim); this file only wires the ESP32 hardware layer to it.
#include <TinyVisionCore.h>  // makes the Arduino IDE pick up the core library (common/)
#include "tinyvision_app.h"
#include "tinyvision_config.h"
#include "tinyvision_esp32.h"

#if __has_include("model.h")
#include "model.h"  // the baked tier: tvexport's header, next to this sketch
#define TV_HAVE_BAKED_MODEL 1
#endif

// The training loop, the blob decoder and the header writer use a few KB of stack (the figure is in
// esp32_hal.h; scripts/check-stack.py checks it against the deepest call chain).
SET_LOOP_TASK_STACK_SIZE(TV_LOOP_STACK_BYTES);

static tvfw::Esp32Hal board;
static tvfw::App* app = nullptr;

void setup() {
  Serial.setRxBufferSize(tvfw::kLinkSerialRxBytes);  // a window of tvlink frames (firmware/README.md)
  Serial.begin(115200);
  delay(1500);  // let USB CDC enumerate so the boot log is not lost
  tvfw::Esp32Config hw;
  hw.sd_cs = TV_SD_CS;
  if (!board.begin(hw)) board.halt();
  tvfw::AppConfig cfg;
  cfg.preset = TV_PRESET;
#ifdef TV_CLASS_LABELS
  static const char* const labels[] = {TV_CLASS_LABELS};
  cfg.num_labels = (int)(sizeof labels / sizeof labels[0]);
  for (int i = 0; i < cfg.num_labels && i < tvfw::kMaxClasses; ++i) cfg.labels[i] = labels[i];
#endif
  cfg.epochs = TV_EPOCHS;
  cfg.backbone = TV_BACKBONE != 0;
#ifdef TV_HAVE_BAKED_MODEL
  cfg.baked_blob = TV_MODEL_blob;
  cfg.baked_size = sizeof TV_MODEL_blob;
  cfg.baked_source = "model.h";
#endif
  static tvfw::App the_app(board, cfg);  // static storage: the model plan and blob view are a few KB
  app = &the_app;
  app->setup();
}

void loop() { app->loop(); }
