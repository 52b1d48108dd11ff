// Stand-in for espressif/esp32-camera driver/include/sensor.h (the parts TinyVision uses).
#pragma once
#include <stdbool.h>
#include <stdint.h>

typedef enum {
  PIXFORMAT_RGB565,
  PIXFORMAT_YUV422,
  PIXFORMAT_YUV420,
  PIXFORMAT_GRAYSCALE,
  PIXFORMAT_JPEG,
  PIXFORMAT_RGB888,
  PIXFORMAT_RAW,
  PIXFORMAT_RGB444,
  PIXFORMAT_RGB555,
} pixformat_t;

typedef enum {
  FRAMESIZE_96X96,
  FRAMESIZE_QQVGA,
  FRAMESIZE_QCIF,
  FRAMESIZE_HQVGA,
  FRAMESIZE_240X240,
  FRAMESIZE_QVGA,
  FRAMESIZE_CIF,
  FRAMESIZE_HVGA,
  FRAMESIZE_VGA,
  FRAMESIZE_SVGA,
  FRAMESIZE_XGA,
  FRAMESIZE_HD,
  FRAMESIZE_SXGA,
  FRAMESIZE_UXGA,
  FRAMESIZE_INVALID
} framesize_t;

typedef struct _sensor sensor_t;
typedef struct _sensor {
  pixformat_t pixformat;
  int (*set_pixformat)(sensor_t* sensor, pixformat_t pixformat);
  int (*set_framesize)(sensor_t* sensor, framesize_t framesize);
  int (*set_brightness)(sensor_t* sensor, int level);
  int (*set_quality)(sensor_t* sensor, int quality);
  int (*set_hmirror)(sensor_t* sensor, int enable);
  int (*set_vflip)(sensor_t* sensor, int enable);
  int (*set_ae_level)(sensor_t* sensor, int level);
} sensor_t;
