#!/usr/bin/env bash
# Type-checks every ESP32 source of the firmware against the real Arduino-ESP32 2.0.14 / ESP-IDF 4.4.6 /
# esp32-camera / U8g2 headers (../shared/esp32-sdk, see its README) with Debian's arm-none-eabi-g++
# told it is Xtensa (-D__XTENSA__): the hardware layer, the sketch (with and without a baked model.h),
# the examples, the application and the core. A renamed function or a wrong argument fails here.
# Also checks that the core refuses, with its #error, to build below C++17 (the Arduino IDE's
# default for core 2.x is gnu++11).
#   scripts/check-esp32.sh [MODEL_H]     MODEL_H: a header tvexport wrote, baked into a copy of the sketch
# Without ../shared/esp32-sdk it skips with a message, except under CI=true, where that is a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
SDK=${TV_ESP32_SDK:-../shared/esp32-sdk}
A=$SDK/arduino-esp32-2.0.14
U=$SDK/u8g2
if [ ! -f "$A/include-dirs.txt" ]; then
  if [ "${CI:-}" = true ]; then
    echo "check-esp32: $A is missing (CI=true): the ESP32 sources cannot be checked against the real headers" >&2
    exit 1
  fi
  echo "check-esp32: skipped: $A is absent (a fresh clone without ../shared)"
  exit 0
fi
CXX=${TV_ARM_CXX:-arm-none-eabi-g++}
command -v "$CXX" >/dev/null || { echo "check-esp32: $CXX not found (scripts/install-deps.sh installs gcc-arm-none-eabi)" >&2; exit 1; }
FLAGS=(-std=gnu++17 -fsyntax-only -fno-rtti -fno-exceptions -D__XTENSA__ -Wall -Wextra -Wno-attributes -Werror
       -Wno-error=unused-parameter -ffp-contract=off)
read -r -a DEFS <<<"$(cat "$A/defines.txt")"
INC=()
while read -r d; do [ -n "$d" ] && INC+=(-isystem "$A/$d"); done <"$A/include-dirs.txt"
INC+=(-isystem "$A/variants/XIAO_ESP32S3" -isystem "$A/libraries/FS/src" -isystem "$A/libraries/SD/src" -isystem "$A/libraries/SPI/src"
      -isystem "$A/libraries/Wire/src" -isystem "$U/cppsrc" -isystem "$U/csrc")
OWN=(-Icommon/src -Ifirmware/app -Ifirmware/hal_esp32)
SDKFLAGS=(-isystem "$A/cores/esp32")  # the SDK's own warnings are not ours
fails=0
LOG=$(mktemp)
trap 'rm -f "$LOG"' EXIT
fail() {  # fail WHAT: counts a failure and shows the compiler's first lines
  echo "  FAIL $1"
  head -40 "$LOG"
  fails=$((fails + 1))
}
check() {  # check LABEL FILE [extra flags...]
  local label=$1 file=$2
  shift 2
  if "$CXX" "${FLAGS[@]}" "${DEFS[@]}" "${INC[@]}" "${OWN[@]}" "$@" "$file" 2>"$LOG"; then
    echo "  ok   $label"
  else
    fail "$label"
  fi
}
echo "check-esp32: $($CXX --version | head -1), headers of $A"
check "hardware layer firmware/hal_esp32/esp32_hal.cpp" firmware/hal_esp32/esp32_hal.cpp
SKETCH=firmware/esp32/TinyVision/TinyVision.ino
check "sketch $SKETCH (no baked model)" "$SKETCH" -x c++ -include Arduino.h -Ifirmware/esp32/TinyVision
if [ -n "${1:-}" ]; then
  tmp=$(mktemp -d)
  cp firmware/esp32/TinyVision/* "$tmp/"
  cp "$1" "$tmp/model.h"
  check "sketch $SKETCH with $1 baked in" "$tmp/TinyVision.ino" -x c++ -include Arduino.h
  rm -rf "$tmp"
fi
for ino in firmware/examples/*/*.ino; do
  [ -f "$ino" ] || continue
  dir=$(dirname "$ino")
  if grep -q '"model.h"' "$ino" && [ -n "${1:-}" ]; then
    tmp=$(mktemp -d)
    cp "$dir"/* "$tmp/"
    cp "$1" "$tmp/model.h"
    check "example $ino (with $1)" "$tmp/$(basename "$ino")" -x c++ -include Arduino.h
    rm -rf "$tmp"
  else
    check "example $ino" "$ino" -x c++ -include Arduino.h -I"$dir"
  fi
done
for f in firmware/app/*.cpp; do
  check "$f" "$f" -Wdouble-promotion  # the S3's FPU is single precision: no silent doubles
done
for f in $(find common/src -name '*.cpp' | sort); do
  check "$f" "$f"
done
# Arduino-ESP32 core 3.x compiles C++ as C++20/23 (its flags file: -std=gnu++2b ... -std=gnu++2a) where
# 2.x used gnu++11: the same sources must compile in those standards too (against 2.0.14's headers: 3.x's
# are not here).
for std in gnu++2a gnu++2b; do
  check "hardware layer as $std (Arduino-ESP32 core 3.x)" firmware/hal_esp32/esp32_hal.cpp -std=$std
  for f in firmware/app/*.cpp $(find common/src -name '*.cpp' | sort); do
    check "$f as $std" "$f" -std=$std
  done
  for ino in "$SKETCH" firmware/examples/*/*.ino; do
    tmp=$(mktemp -d)
    cp "$(dirname "$ino")"/* "$tmp/"
    [ -n "${1:-}" ] && cp "$1" "$tmp/model.h"
    check "$ino as $std${1:+ with $1}" "$tmp/$(basename "$ino")" -x c++ -include Arduino.h -std=$std
    rm -rf "$tmp"
  done
done
# The #error's fix for core 2.x (compiler.cpp.extra_flags=-std=gnu++17 in platform.local.txt) works only
# if the core's compile recipe puts the extra flags after its own -std=gnu++11.
recipe=$(grep '^recipe.cpp.o.pattern=' "$A/platform.txt" || true)
if [[ "$recipe" == *"{compiler.cpp.flags}"*"{compiler.cpp.extra_flags}"* ]]; then
  echo "  ok   $A/platform.txt: compiler.cpp.extra_flags come after the core's -std=gnu++11 (the #error's fix takes effect)"
else
  echo "$recipe" >"$LOG"
  fail "$A/platform.txt: compiler.cpp.extra_flags do not follow compiler.cpp.flags, so -std=gnu++17 there would not win"
fi
# below C++17 the core must stop with its own message naming the fix
if "$CXX" -std=gnu++11 -fsyntax-only -x c++ -Icommon/src common/src/TinyVisionCore.h 2>"$LOG"; then
  fail "the core compiled as gnu++11 without its #error"
elif grep -q "TinyVision needs C++17" "$LOG"; then
  echo "  ok   the core refuses gnu++11 with its #error"
else
  fail "the core refused gnu++11 without its own message:"
fi
# An Arduino IDE build passes no -ffp-contract=off: every core source must get it from tv/build_config.h's
# pragma, before its first function. Checked on code, not text: each core source compiled as an Arduino
# build (-DARDUINO, GCC's default -ffp-contract=fast) for a Cortex-M4F, whose FPU has fused multiply-add
# as the S3's has madd.s, must contain no fused multiply-add (vfma/vfms/vfnma/vfnms). The control: the
# same compile without -DARDUINO (no pragma) does fuse in dense.cpp, so the check can see a contraction.
FMA_FLAGS=(-std=gnu++17 -O2 -mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16 -fno-exceptions -fno-rtti
           -Icommon/src -S -o -)
fused() {  # fused FILE [flags]: how many fused multiply-adds the compiled FILE holds (a failed compile fails)
  local f=$1 asm
  shift
  asm=$("$CXX" "${FMA_FLAGS[@]}" "$@" "$f") || { echo "check-esp32: $f does not compile for the fp-contract check" >&2; exit 1; }
  grep -cE '\bvfn?m[as]\.f32' <<<"$asm" || true
}
control=$(fused common/src/tv/ops/dense.cpp)  # under set -e, a failed compile ends the script here
if [ "$control" -eq 0 ]; then
  : >"$LOG"
  fail "the fp-contract check's control: dense.cpp compiled without the pragma shows no fused multiply-add"
fi
contracted=""
for f in $(find common/src -name '*.cpp' | sort); do
  n=$(fused "$f" -DARDUINO=10812)
  [ "$n" -eq 0 ] || contracted+="$f: $n fused multiply-adds"$'\n'
done
if [ -n "$contracted" ]; then
  echo "$contracted" >"$LOG"
  fail "core sources an Arduino build contracts into fused multiply-adds (include a core header first: tv/build_config.h)"
else
  echo "  ok   no core source contracts a*b+c in an Arduino build (tv/build_config.h's pragma reaches them all)"
fi
if [ "$fails" -gt 0 ]; then
  echo "check-esp32: $fails file(s) do not compile against the ESP32 headers" >&2
  exit 1
fi
echo "check-esp32: every ESP32 source compiles against the real headers"
