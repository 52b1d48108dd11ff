// What every file of the core needs from its compiler; included by the core's root headers.
//
// - C++17 (inline variables, constexpr rules, <atomic> users): the Arduino IDE's Arduino-ESP32 core 2.x
//   compiles libraries as gnu++11, which fails later with far less clear errors, so stop here.
// - No contraction of a*b+c into a fused multiply-add: the ESP32-S3's FPU has madd.s, and a contracted
//   sum rounds once where the host rounds twice, so the board would train other bits than tvtrain.
//   CMake, platformio.ini, library.json and the ESP-IDF component pass -ffp-contract=off; the pragma
//   below holds it in an Arduino build that passes nothing (the Arduino IDE, arduino-cli; scripts/check-esp32.sh
//   compiles every core source as such a build and finds no fused multiply-add). It is
//   limited to Arduino builds because GCC does not inline across functions whose optimize options
//   differ, which would slow the host tools for nothing.
#pragma once

#if !defined(__cplusplus) || __cplusplus < 201703L
#error \
    "TinyVision needs C++17 (-std=gnu++17). Arduino-ESP32 core 2.x compiles libraries as gnu++11: put a platform.local.txt containing 'compiler.cpp.extra_flags=-std=gnu++17 -ffp-contract=off' beside that core's platform.txt (arduino-cli: --build-property compiler.cpp.extra_flags=\"-std=gnu++17 -ffp-contract=off\"), or use Arduino-ESP32 core 3.x, or PlatformIO (firmware/esp32/platformio.ini)."
#endif

#if defined(ARDUINO) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=off")
#endif
