#!/usr/bin/env bash
# Type-checks every ESP32 source of the firmware against the real headers of both Arduino-ESP32 cores
# the product supports (../shared/esp32-sdk, see its README), with Debian's arm-none-eabi-g++ told it is
# Xtensa (-D__XTENSA__): the hardware layer, the sketch (with and without a baked model.h), the
# examples, the application and the core. A renamed function or a wrong argument fails here.
#   core 2.0.14 (ESP-IDF 4.4.6): as gnu++17 (what platformio.ini and the Arduino IDE's platform.local.txt
#     set), and as gnu++2a/gnu++2b (3.x's standards, on 2.x's headers);
#   core 3.x (3.0.4, ESP-IDF 5.1; what the Arduino IDE installs today): as the standard of its own flags
#     file (gnu++2b) with its own include folders and defines, and as gnu++17 (firmware/esp32/platformio.ini's
#     standard, which a PlatformIO 3.x platform such as pioarduino puts after the core's).
# Each core's control: its esp_arduino_version.h says its major version, and ledcSetup(), which 3.x
# removed, compiles against 2.x and is refused against 3.x (so the 3.x checks do read 3.x's headers).
# Also checks that the core refuses, with its #error, to build below C++17 (the Arduino IDE's default for
# core 2.x is gnu++11), how each core's compile recipe orders its flags, and that no core source
# contracts a*b+c in an Arduino build. Compiles run $TV_CHECK_JOBS (2) at a time.
#   scripts/check-esp32.sh [MODEL_H]     MODEL_H: a header tvexport wrote, baked into a copy of the sketch
# A core whose folder is missing is skipped with a message, except under CI=true, where that is a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
SDK=${TV_ESP32_SDK:-../shared/esp32-sdk}
U=$SDK/u8g2
CORES=()
for core in 2.0.14 3.x; do
  A=$SDK/arduino-esp32-$core
  if [ -f "$A/include-dirs.txt" ]; then
    CORES+=("$core")
  elif [ "${CI:-}" = true ]; then
    echo "check-esp32: $A is missing (CI=true): the ESP32 sources cannot be checked against core $core's headers" >&2
    exit 1
  else
    echo "check-esp32: core $core skipped: $A is absent (a fresh clone without ../shared)"
  fi
done
[ "${#CORES[@]}" -gt 0 ] || exit 0
CXX=${TV_ARM_CXX:-arm-none-eabi-g++}
command -v "$CXX" >/dev/null || { echo "check-esp32: $CXX not found (scripts/install-deps.sh installs gcc-arm-none-eabi)" >&2; exit 1; }
JOBS=${TV_CHECK_JOBS:-2}
FLAGS=(-fsyntax-only -fno-rtti -fno-exceptions -D__XTENSA__ -Wall -Wextra -Wno-attributes -Werror
       -Wno-error=unused-parameter -ffp-contract=off)
OWN=(-Icommon/src -Ifirmware/app -Ifirmware/hal_esp32)
SKETCH=firmware/esp32/TinyVision/TinyVision.ino
mapfile -t CORE_SOURCES < <(find common/src -name '*.cpp' | sort)
fails=0
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() {  # fail WHAT LOG: counts a failure and shows the compiler's first lines
  echo "  FAIL $1"
  head -40 "$2"
  fails=$((fails + 1))
}
# The job queue: job runs a command in the background, at most $JOBS at once, its stdout in $WORK/N.out,
# its stderr in $WORK/N.log and its exit code in $WORK/N.rc (N = $n after the call).
n=0
running=0
job() {  # job CMD...
  n=$((n + 1))
  local i=$n
  {
    local rc=0
    "$@" >"$WORK/$i.out" 2>"$WORK/$i.log" || rc=$?
    echo "$rc" >"$WORK/$i.rc"
  } &
  running=$((running + 1))
  if [ "$running" -ge "$JOBS" ]; then
    wait -n || true
    running=$((running - 1))
  fi
}
settle() {  # waits for every job
  wait
  running=0
}
reported=0
check() {  # check LABEL FILE [extra flags...]: queues a type-check of FILE against core $A as $STD
  local label=$1 file=$2
  shift 2
  job "$CXX" "${FLAGS[@]}" "-std=$STD" "${DEFS[@]}" "${INC[@]}" "${OWN[@]}" "$@" "$file"
  echo "$label" >"$WORK/$n.label"
}
report() {  # waits for the queued checks, then prints each in order
  settle
  local i
  for ((i = reported + 1; i <= n; i++)); do
    [ -f "$WORK/$i.label" ] || continue
    if [ "$(cat "$WORK/$i.rc")" = 0 ]; then
      echo "  ok   $(cat "$WORK/$i.label")"
    else
      fail "$(cat "$WORK/$i.label")" "$WORK/$i.log"
    fi
  done
  reported=$n
}
sketch_copy() {  # sketch_copy INO: a copy of INO's folder with MODEL_H ($1 of the script) as model.h; prints the copy
  local dir
  dir=$(mktemp -d "$WORK/sketch.XXXXXX")
  cp "$(dirname "$1")"/* "$dir/"
  cp "$MODEL_H" "$dir/model.h"
  echo "$dir/$(basename "$1")"
}
check_sources() {  # every ESP32 source, against core $A as $STD
  local at="[$core $STD]" ino f
  check "$at hardware layer firmware/hal_esp32/esp32_hal.cpp" firmware/hal_esp32/esp32_hal.cpp
  check "$at sketch $SKETCH (no baked model)" "$SKETCH" -x c++ -include Arduino.h -I"$(dirname "$SKETCH")"
  for ino in "$SKETCH" firmware/examples/*/*.ino; do
    [ -f "$ino" ] || continue
    if [ -n "$MODEL_H" ] && { [ "$ino" = "$SKETCH" ] || grep -q '"model.h"' "$ino"; }; then
      check "$at $ino with $MODEL_H baked in" "$(sketch_copy "$ino")" -x c++ -include Arduino.h
    elif [ "$ino" != "$SKETCH" ]; then
      check "$at example $ino" "$ino" -x c++ -include Arduino.h -I"$(dirname "$ino")"
    fi
  done
  for f in firmware/app/*.cpp; do
    check "$at $f" "$f" -Wdouble-promotion  # the S3's FPU is single precision: no silent doubles
  done
  # The core (common/, freestanding C++17) reaches the ESP32 folders only through newlib's platform headers
  # (sys/reent.h, sys/lock.h): its sources are checked against each core's headers and in each standard,
  # not in every pair (2 x 61 fewer compiles).
  if [[ " $CORE_STDS_DONE " != *" $STD "* || " $CORE_CORES_DONE " != *" $core "* ]]; then
    for f in "${CORE_SOURCES[@]}"; do
      check "$at $f" "$f"
    done
    CORE_STDS_DONE+=" $STD"
    CORE_CORES_DONE+=" $core"
  else
    echo "  ok   $at the core's ${#CORE_SOURCES[@]} sources: core $core's headers and $STD are each checked above"
  fi
  report
}
CORE_STDS_DONE=""
CORE_CORES_DONE=""
MODEL_H=${1:-}
for core in "${CORES[@]}"; do
  A=$SDK/arduino-esp32-$core
  read -r -a DEFS <<<"$(tr -d '\r' <"$A/defines.txt")"
  INC=()
  while read -r d; do [ -n "$d" ] && INC+=(-isystem "$A/$d"); done < <(tr -d '\r' <"$A/include-dirs.txt")
  INC+=(-isystem "$A/variants/XIAO_ESP32S3" -isystem "$A/libraries/FS/src" -isystem "$A/libraries/SD/src"
        -isystem "$A/libraries/SPI/src" -isystem "$A/libraries/Wire/src" -isystem "$U/cppsrc" -isystem "$U/csrc")
  # The C++ standard the core's own compile recipe sets: 2.x in platform.txt, 3.x in its libs' flags file.
  own=$(cat "$A/tools/esp32-arduino-libs/esp32s3/flags/cpp_flags" 2>/dev/null || grep '^compiler.cpp.flags.esp32s3=' "$A/platform.txt")
  own=$(grep -o -- '-std=[a-z+0-9]*' <<<"$own" | tail -1)
  own=${own#-std=}
  recipe=$(grep '^recipe.cpp.o.pattern=' "$A/platform.txt" || true)
  echo "check-esp32: $($CXX --version | head -1), headers of $A (its own standard: ${own:-none found})"
  case $own in
    gnu++11 | gnu++14 | c++11 | c++14)
      # the #error's fix for this core (compiler.cpp.extra_flags=-std=gnu++17 in platform.local.txt) works
      # only if the core's compile recipe puts the extra flags after its own -std
      STDS="gnu++17 gnu++2a gnu++2b"  # the project's standard, then 3.x's two on this core's headers
      if [[ "$recipe" == *"{compiler.cpp.flags}"*"{compiler.cpp.extra_flags}"* ]]; then
        echo "  ok   $A/platform.txt: compiler.cpp.extra_flags come after the core's -std=$own (the #error's fix takes effect)"
      else
        echo "$recipe" >"$WORK/log"
        fail "$A/platform.txt: compiler.cpp.extra_flags do not follow compiler.cpp.flags, so -std=gnu++17 there would not win" "$WORK/log"
      fi
      ;;
    gnu++17 | gnu++2? | c++17 | c++2?)
      # C++17 or later already: an Arduino IDE build needs no platform.local.txt. PlatformIO with a 3.x
      # platform (pioarduino) adds platformio.ini's -std=gnu++17 after the core's own: checked too.
      STDS=$own
      [ "$own" = gnu++17 ] || STDS="$own gnu++17"
      echo "  ok   $A: the core compiles C++ as $own, which the core's C++17 #error accepts (nothing to add)"
      ;;
    *)
      echo "$recipe" >"$WORK/log"
      fail "$A: no C++ standard found in its compile flags (platform.txt or tools/esp32-arduino-libs/esp32s3/flags/cpp_flags)" "$WORK/log"
      continue
      ;;
  esac
  # The control: these are the core's own headers (its esp_arduino_version.h says the folder's major
  # version) and the check sees its API: ledcSetup, which 3.x removed (ledcAttach), compiles below 3 only.
  major=${core%%.*}
  STD=${STDS%% *}
  printf '#include <Arduino.h>\nstatic_assert(ESP_ARDUINO_VERSION_MAJOR == %s, "core");\nvoid f() { ledcSetup(0, 5000, 8); }\n' \
    "$major" >"$WORK/ledc.cpp"
  rc=0
  "$CXX" "${FLAGS[@]}" "-std=$STD" "${DEFS[@]}" "${INC[@]}" "$WORK/ledc.cpp" 2>"$WORK/log" || rc=$?
  if grep -q 'static assertion failed' "$WORK/log"; then
    fail "[$core] the control: $A's esp_arduino_version.h does not say major version $major" "$WORK/log"
  elif [ "$major" -lt 3 ] && [ "$rc" -eq 0 ]; then
    echo "  ok   [$core] the control: core $major's ledcSetup() compiles"
  elif [ "$major" -ge 3 ] && grep -q "'ledcSetup' was not declared" "$WORK/log"; then
    echo "  ok   [$core] the control: ledcSetup(), removed in core 3, is refused"
  else
    fail "[$core] the control: ledcSetup() against core $major's headers did not compile as expected" "$WORK/log"
  fi
  for STD in $STDS; do
    check_sources
  done
done
# below C++17 the core must stop with its own message naming the fix
if "$CXX" -std=gnu++11 -fsyntax-only -x c++ -Icommon/src common/src/TinyVisionCore.h 2>"$WORK/log"; then
  fail "the core compiled as gnu++11 without its #error" "$WORK/log"
elif grep -q "TinyVision needs C++17" "$WORK/log"; then
  echo "  ok   the core refuses gnu++11 with its #error"
else
  fail "the core refused gnu++11 without its own message:" "$WORK/log"
fi
# An Arduino IDE build passes no -ffp-contract=off: every core source must get it from tv/build_config.h's
# pragma, before its first function. Checked on code, not text: each core source compiled as an Arduino
# build (-DARDUINO, GCC's default -ffp-contract=fast) for a Cortex-M4F, whose FPU has fused multiply-add
# as the S3's has madd.s, must contain no fused multiply-add (vfma/vfms/vfnma/vfnms). The control: the
# same compile without -DARDUINO (no pragma) does fuse in dense.cpp, so the check can see a contraction.
FMA_FLAGS=(-std=gnu++17 -O2 -mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16 -fno-exceptions -fno-rtti
           -Icommon/src -S -o -)
fused() {  # fused N FILE: how many fused multiply-adds job N's assembly of FILE holds (a failed compile fails)
  [ "$(cat "$WORK/$1.rc")" = 0 ] || { echo "check-esp32: $2 does not compile for the fp-contract check" >&2; cat "$WORK/$1.log" >&2; exit 1; }
  grep -cE '\bvfn?m[as]\.f32' "$WORK/$1.out" || true
}
job "$CXX" "${FMA_FLAGS[@]}" common/src/tv/ops/dense.cpp
control=$n
first=$((n + 1))
for f in "${CORE_SOURCES[@]}"; do
  job "$CXX" "${FMA_FLAGS[@]}" -DARDUINO=10812 "$f"
done
settle
k=$(fused "$control" common/src/tv/ops/dense.cpp)
if [ "$k" -eq 0 ]; then
  : >"$WORK/log"
  fail "the fp-contract check's control: dense.cpp compiled without the pragma shows no fused multiply-add" "$WORK/log"
fi
contracted=""
for ((i = 0; i < ${#CORE_SOURCES[@]}; i++)); do
  k=$(fused $((first + i)) "${CORE_SOURCES[i]}")
  [ "$k" -eq 0 ] || contracted+="${CORE_SOURCES[i]}: $k fused multiply-adds"$'\n'
done
reported=$n
if [ -n "$contracted" ]; then
  echo "$contracted" >"$WORK/log"
  fail "core sources an Arduino build contracts into fused multiply-adds (include a core header first: tv/build_config.h)" "$WORK/log"
else
  echo "  ok   no core source contracts a*b+c in an Arduino build (tv/build_config.h's pragma reaches them all)"
fi
if [ "$fails" -gt 0 ]; then
  echo "check-esp32: $fails check(s) failed against the ESP32 headers (cores: ${CORES[*]})" >&2
  exit 1
fi
echo "check-esp32: every ESP32 source compiles against the real headers of core(s) ${CORES[*]}"
