// ClassifyCamera: the smallest TinyVision sketch. Classifies camera frames with a baked-in model through
// the core's API. Put the model.h that tvexport wrote next to this file (float or int8), then build for
// the XIAO ESP32-S3 Sense (Tools > PSRAM > OPI PSRAM). The full app (capture, training) is TinyVision.ino.
#include <TinyVisionCore.h>
#include "jpeg_info.h"           // JPEG width and height from its header (TinyVisionApp)
#include "model.h"               // TV_MODEL_blob: the model, baked in
#include "tinyvision_esp32.h"    // the camera and its JPEG decoder (TinyVisionESP32)

static tvfw::Esp32Hal board;
static tv::BlobView view;
static tv::ModelPlan plan;
static tv::Q8Model q8;           // int8 models run here,
static tv::Inference inf;        // float ones here
static void* work;
static uint8_t *rgb, *input;
static uint16_t* lut;
static float probs[256];

static void stop(const char* why) { Serial.println(why); board.halt(); }

void setup() {
  Serial.begin(115200);
  delay(1500);
  if (!board.begin(tvfw::Esp32Config())) board.halt();
  if (!tv::blob_decode(TV_MODEL_blob, sizeof TV_MODEL_blob, &view).ok()) stop("model.h: not a valid model");
  if (!tv::plan_model(view.model, &plan).ok()) stop("model.h: its network does not plan");
  rgb = (uint8_t*)board.psram_alloc(240 * 240 * 3);  // the camera's 240x240 frame
  input = (uint8_t*)board.psram_alloc(plan.input.size());
  lut = (uint16_t*)board.psram_alloc((plan.input.w + plan.input.h) * sizeof(uint16_t));
  if (view.is_int8()) {  // the int8 tensors are used in place, in flash
    work = board.psram_alloc(tv::q8_memory(plan).work_bytes);
    if (!tv::q8_bind(view, plan, &q8).ok()) stop("model.h: the int8 engine cannot run it");
  } else {
    const tv::InferenceMemory m = tv::inference_memory(plan);
    float* params = (float*)board.psram_alloc(m.params_bytes);
    work = board.psram_alloc(m.work_bytes);
    if (!params || !work || !tv::blob_load_float_params(view, plan, params).ok() ||
        !tv::inference_init(&inf, &plan, params, work, m.work_bytes).ok())
      stop("model.h: no memory for the float engine");
  }
  if (!rgb || !input || !lut || !work) stop("not enough PSRAM");
}

void loop() {
  const uint8_t* jpeg;
  size_t size;
  int w = 0, h = 0;
  if (!board.camera_grab(&jpeg, &size)) return;
  const bool ok = tvfw::jpeg_dimensions(jpeg, size, &w, &h) && w <= 240 && h <= 240 &&
                  board.jpeg_decode_rgb(jpeg, size, w, h, rgb) &&
                  tv::resize_nearest_crop(rgb, w, h, 3, input, plan.input.w, plan.input.h, view.model.input.order,
                                          false, lut);
  board.camera_release();
  if (!ok) return;
  if (view.is_int8())
    tv::q8_infer_u8(q8, input, (int8_t*)work, probs);
  else
    tv::infer_u8(inf, input, probs);
  const int best = tv::argmax(probs, view.model.num_classes);
  const char* label;
  size_t len;
  if (!tv::blob_label(view, best, &label, &len)) label = "?", len = 1;
  Serial.printf("%.*s (%.0f%%)\n", (int)len, label, (double)(100.f * probs[best]));
}
