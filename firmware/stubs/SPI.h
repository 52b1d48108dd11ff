// Stand-in for arduino-esp32 libraries/SPI/src/SPI.h (see README.md).
#pragma once
#include "Arduino.h"

class SPIClass {
 public:
  explicit SPIClass(uint8_t spi_bus = 0);
  void begin(int8_t sck = -1, int8_t miso = -1, int8_t mosi = -1, int8_t ss = -1);
};
extern SPIClass SPI;
