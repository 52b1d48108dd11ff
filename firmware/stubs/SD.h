// Stand-in for arduino-esp32 libraries/SD/src/SD.h (see README.md).
#pragma once
#include "FS.h"
#include "SPI.h"

typedef enum { CARD_NONE, CARD_MMC, CARD_SD, CARD_SDHC, CARD_UNKNOWN } sdcard_type_t;

namespace fs {
class SDFS : public FS {
 public:
  SDFS(FSImplPtr impl);
  bool begin(uint8_t ssPin = SS, SPIClass& spi = SPI, uint32_t frequency = 4000000, const char* mountpoint = "/sd",
             uint8_t max_files = 5, bool format_if_empty = false);
  void end();
  sdcard_type_t cardType();
  uint64_t cardSize();
};
}  // namespace fs

extern fs::SDFS SD;
