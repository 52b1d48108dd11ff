// Stand-in for arduino-esp32's Arduino.h: only what TinyVision's ESP32 code uses (see README.md).
#pragma once
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "esp_heap_caps.h"
#include "freertos/FreeRTOS.h"
#include "freertos/task.h"

typedef bool boolean;
typedef uint8_t byte;

// pins_arduino.h of the XIAO_ESP32S3 variant
static const uint8_t A0 = 1;
static const uint8_t SS = 44;

unsigned long millis(void);
unsigned long micros(void);
void delay(uint32_t ms);
uint16_t analogRead(uint8_t pin);
bool psramFound(void);
void* ps_malloc(size_t size);

// esp32-hal.h: the loop task's stack, chosen by the sketch
#define SET_LOOP_TASK_STACK_SIZE(sz)         \
  size_t getArduinoLoopTaskStackSize(void) { \
    return sz;                               \
  }

class Print {
 public:
  virtual ~Print() {}
  virtual size_t write(uint8_t c) = 0;
  virtual size_t write(const uint8_t* buffer, size_t size);
  size_t print(const char* s);
  size_t println(const char* s);
  virtual void flush() {}
};

class Stream : public Print {
 public:
  virtual int available() = 0;
  virtual int read() = 0;
  virtual int peek() = 0;

 protected:
  unsigned long _timeout = 1000;
};

// The USB CDC serial port (ARDUINO_USB_CDC_ON_BOOT=1 makes it `Serial`).
class HWCDC : public Stream {
 public:
  void begin(unsigned long baud = 0);
  int available() override;
  int read() override;
  int peek() override;
  size_t write(uint8_t c) override;
  size_t write(const uint8_t* buffer, size_t size) override;
  void flush() override;
};
extern HWCDC Serial;
