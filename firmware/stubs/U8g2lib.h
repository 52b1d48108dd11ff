// Stand-in for olikraus/u8g2 cppsrc/U8g2lib.h (and the parts of u8g2.h / u8x8.h it needs).
#pragma once
#include <stdint.h>

#include "Arduino.h"

typedef uint8_t u8g2_uint_t;  // u8g2.h without U8G2_16BIT
typedef struct u8g2_cb_struct u8g2_cb_t;
extern const u8g2_cb_t u8g2_cb_r0;
#define U8G2_R0 (&u8g2_cb_r0)
#define U8X8_PIN_NONE 255

extern const uint8_t u8g2_font_6x10_tf[];
extern const uint8_t u8g2_font_5x7_tf[];

class U8G2 : public Print {
 public:
  bool begin(void);
  void setI2CAddress(uint8_t adr);
  void setBusClock(uint32_t clock_speed);
  void clearBuffer(void);
  void sendBuffer(void);
  void firstPage(void);
  uint8_t nextPage(void);
  void setFont(const uint8_t* font);
  u8g2_uint_t drawStr(u8g2_uint_t x, u8g2_uint_t y, const char* s);
  u8g2_uint_t getStrWidth(const char* s);
  void setPowerSave(uint8_t is_enable);
  size_t write(uint8_t v) override;
};

class U8G2_SSD1306_72X40_ER_F_HW_I2C : public U8G2 {
 public:
  U8G2_SSD1306_72X40_ER_F_HW_I2C(const u8g2_cb_t* rotation, uint8_t reset = U8X8_PIN_NONE,
                                 uint8_t clock = U8X8_PIN_NONE, uint8_t data = U8X8_PIN_NONE);
};
