// Stand-in for espressif/esp32-camera conversions/include/img_converters.h (see README.md).
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "esp_camera.h"

#ifdef __cplusplus
extern "C" {
#endif

// Converts a JPEG (or RGB565 / grayscale / ...) buffer to 24-bit pixels in rgb_buf (width * height * 3).
bool fmt2rgb888(const uint8_t* src_buf, size_t src_len, pixformat_t format, uint8_t* rgb_buf);
bool fmt2jpg(uint8_t* src, size_t src_len, uint16_t width, uint16_t height, pixformat_t format, uint8_t quality,
             uint8_t** out, size_t* out_len);

#ifdef __cplusplus
}
#endif
