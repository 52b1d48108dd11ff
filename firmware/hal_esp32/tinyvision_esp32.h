// The ESP32-S3 hardware layer as an Arduino / PlatformIO library: include this from a sketch.
#pragma once
#include "esp32_hal.h"
