// Stand-in for espressif/esp32-camera driver/include/esp_camera.h (see README.md).
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "driver/ledc.h"
#include "esp_err.h"
#include "sensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { CAMERA_GRAB_WHEN_EMPTY, CAMERA_GRAB_LATEST } camera_grab_mode_t;
typedef enum { CAMERA_FB_IN_PSRAM, CAMERA_FB_IN_DRAM } camera_fb_location_t;

typedef struct {
  int pin_pwdn;
  int pin_reset;
  int pin_xclk;
  union {
    int pin_sccb_sda;
    int pin_sscb_sda __attribute__((deprecated("please use pin_sccb_sda instead")));
  };
  union {
    int pin_sccb_scl;
    int pin_sscb_scl __attribute__((deprecated("please use pin_sccb_scl instead")));
  };
  int pin_d7, pin_d6, pin_d5, pin_d4, pin_d3, pin_d2, pin_d1, pin_d0;
  int pin_vsync;
  int pin_href;
  int pin_pclk;
  int xclk_freq_hz;
  ledc_timer_t ledc_timer;
  ledc_channel_t ledc_channel;
  pixformat_t pixel_format;
  framesize_t frame_size;
  int jpeg_quality;
  size_t fb_count;
  camera_fb_location_t fb_location;
  camera_grab_mode_t grab_mode;
  int sccb_i2c_port;
} camera_config_t;

typedef struct {
  uint8_t* buf;
  size_t len;
  size_t width;
  size_t height;
  pixformat_t format;
} camera_fb_t;

esp_err_t esp_camera_init(const camera_config_t* config);
esp_err_t esp_camera_deinit(void);
camera_fb_t* esp_camera_fb_get(void);
void esp_camera_fb_return(camera_fb_t* fb);
sensor_t* esp_camera_sensor_get(void);

#ifdef __cplusplus
}
#endif

#include "img_converters.h"
