#!/usr/bin/env bash
# The README's second command (and CI's, through .ci/run): install what the tests need, build everything
# and run every test — googletest via ctest, the device-safety build of common/, the core and the firmware
# app as 32-bit programs, the AVX2 build, the ESP32 type-check and stack check, the Arduino library, and
# bounded libFuzzer runs of every parser of outside input. Each stage prints its time at its end and its
# budget (README, "The test command's budget"); the total comes last, also when a stage fails.
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
source scripts/stages.sh
JOBS=$(nproc)

# ctest_counted DIR: runs DIR's tests and adds their counts to the closing line (scripts/stages.sh).
ctest_counted() {
  local rc=0 line
  (cd "$1" && ctest -j"$JOBS" --output-on-failure --timeout 900) 2>&1 | tee "$1/ctest.log" || rc=$?
  line=$(grep -E '^[0-9]+% tests passed, [0-9]+ tests failed out of [0-9]+' "$1/ctest.log" | tail -1) || true
  if [ -n "$line" ]; then
    local failed total
    failed=$(sed -E 's/.* ([0-9]+) tests failed out of ([0-9]+).*/\1/' <<<"$line")
    total=$(sed -E 's/.* ([0-9]+) tests failed out of ([0-9]+).*/\2/' <<<"$line")
    TV_TESTS_PASSED=$((TV_TESTS_PASSED + total - failed))
    TV_TESTS_FAILED=$((TV_TESTS_FAILED + failed))
  fi
  return $rc
}

install_packages() { bash scripts/install-deps.sh test; }

build_release() {
  tv_configure build -DCMAKE_BUILD_TYPE=Release -DTV_BUILD_TESTS=ON  # ON: a quickstart build had them off
  cmake --build build -j"$JOBS"
}

device_safety() {  # -fno-exceptions -fno-rtti -Werror, no host library on the include path
  cmake --build build --target tvcore_device -j"$JOBS"
}

# The core and the firmware app as 32-bit programs (long and size_t of 32 bits, as on the board), with the
# reference kernels, as the board runs them: TrainBits.PinnedOnEveryBuild then proves that this build and
# the 64-bit one (fast kernels) train the same bits. Natively where the kernel runs 32-bit programs, under
# qemu-i386 where it cannot (scripts/m32-runner.sh; TV_M32_RUNNER=qemu forces the emulator).
m32_tests() {
  echo "32-bit programs run $(bash scripts/m32-runner.sh --describe) on this machine"
  tv_configure build/m32 -DTV_M32=ON -DTV_FAST_KERNELS=OFF -DCMAKE_BUILD_TYPE=Release
  cmake --build build/m32 -j"$JOBS" --target test_m32
  ctest_counted build/m32
}

# The fast kernels as a CPU with AVX2 but no AVX-512 runs them (most laptops), with no target clones:
# TrainBits.PinnedOnEveryBuild proves it trains the same bits as the other builds. The one stage that may
# not run: a CPU without AVX2 cannot execute it, and nothing here emulates it.
avx2_tests() {
  if ! grep -qw avx2 /proc/cpuinfo; then
    echo "NOT RUN: this CPU has no AVX2, so the AVX2 build's tests cannot execute here"
    return
  fi
  tv_configure build/avx2 -DTV_AVX2=ON -DCMAKE_BUILD_TYPE=Release
  cmake --build build/avx2 -j"$JOBS" --target test_avx2
  ctest_counted build/avx2
}

esp32_check() { bash scripts/check-esp32.sh build/firmware/baked/model.h; }

# Each firmware task's deepest call chain against its stack size; then the check itself: a touch tick
# stack of 1 KB must fail, naming the task and the numbers.
stack_check() {
  python3 scripts/check-stack.py --keep build/stack build/firmware/baked/model.h
  if ! ls build/stack/*.ci >/dev/null 2>&1; then
    if [ "${CI:-}" = true ]; then
      echo "check-stack compiled nothing, so its must-fail check cannot run (CI=true: that is a failure)" >&2
      return 1
    fi
    echo "check-stack compiled nothing (../shared/esp32-sdk absent): its must-fail check not run"
    return
  fi
  if python3 scripts/check-stack.py --reuse build/stack --stack tick=1024 >build/stack/too-small.log 2>&1; then
    cat build/stack/too-small.log
    echo "check-stack accepted a 1024-byte touch tick stack" >&2
    return 1
  fi
  grep -E "FAIL touch tick task .*needs [0-9]+ bytes, has 1024 \(TV_TICK_STACK_BYTES overridden\)" build/stack/too-small.log \
    || { cat build/stack/too-small.log; echo "check-stack failed without naming the touch tick task and its numbers" >&2; return 1; }
}

arduino_library() { bash scripts/arduino-library.sh build/TinyVision.zip; }

# The fuzz configuration: clang, the core, the host library and the firmware app compiled once,
# instrumented, and linked by every target (fuzz/CMakeLists.txt).
fuzz_build() {
  CC=clang CXX=clang++ tv_configure build/fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTV_BUILD_FUZZ=ON -DTV_BUILD_TESTS=OFF
  cmake --build build/fuzz -j"$JOBS" --target fuzz_blob fuzz_espdl fuzz_image fuzz_zip fuzz_config fuzz_numbers \
    fuzz_weights fuzz_tvsim_script fuzz_svg_text fuzz_model_run fuzz_update fuzz_link fuzz_link_m32 fuzz_link_host \
    fuzz_menu fuzz_labels fuzz_make_seed fuzz_make_photo_seeds
}

# The corpora: generated JPEG/PNG/zip files and ../shared's photos, the repository's configs, ../shared's
# myWeights.bin files, the directives of tvsim's README, fuzz_make_seed's float and int8 models, a session
# of link requests (fuzz/make_link_seeds.py) and the README's keystrokes.
fuzz_seeds() {
  local F=build/fuzz t
  for t in blob espdl image zip config numbers weights tvsim_script svg_text model_run update link link_m32 \
    link_host menu labels; do
    mkdir -p $F/corpus-$t
  done
  $F/bin/fuzz_make_seed $F/corpus-blob/seed.tvb
  if [ -d ../shared/espdl-golden ]; then cp ../shared/espdl-golden/*.espdl $F/corpus-espdl/ 2>/dev/null || true; fi
  $F/bin/fuzz_make_photo_seeds $F/corpus-image $F/corpus-zip
  if [ -d ../shared/datasets/webmcu-a/images ]; then
    find ../shared/datasets/webmcu-a/images -name '*.jpg' | head -4 | xargs -I{} cp {} $F/corpus-image/
  fi
  cp $F/corpus-blob/seed.tvb $F/corpus-model_run/seed.tvb
  cp $F/corpus-blob/seed.tvb $F/corpus-update/seed.tvb
  printf 'sparse=2' >$F/corpus-update/seed.txt
  printf '18446744073709551615' >$F/corpus-numbers/seed-whole.txt
  printf '3e-4' >$F/corpus-numbers/seed-real.txt
  printf '64x64x3' >$F/corpus-numbers/seed-input.txt
  printf 'mixed,classes=1024,images=30,seed=1' >$F/corpus-numbers/seed-procedural.txt
  cp bench/configs/*.json $F/corpus-config/
  for f in ../shared/datasets/webmcu-*/header/myWeights.bin; do
    [ -f "$f" ] && cp "$f" "$F/corpus-weights/$(basename "$(dirname "$(dirname "$f")")").bin"
  done
  printf '~tap 3\nt\n~hold 1200\n~touch 20000 150\n~wait 500\n~frames 2\nl\n?\nx\n' >$F/corpus-tvsim_script/seed.txt
  printf '\x40\x05tinyvision on <photos>/ "validation" & \xe7\x8c\xab e\xcc\x81' >$F/corpus-svg_text/seed.txt
  for t in link link_m32; do
    python3 fuzz/make_link_seeds.py $F/corpus-blob/seed.tvb $F/corpus-$t $F/corpus-link_host
  done
  # the label parsers: the first byte picks the format (fuzz/fuzz_labels.cpp)
  printf '\x00%s' '0 0.5 0.5 0.2 0.4
1 0.25 0.75 0.1 0.1
' >$F/corpus-labels/yolo.txt
  printf '\x01%s' 'path: .
train: ../train/images
val: images/val
nc: 2
names:
  0: cat
  1: dog
' >$F/corpus-labels/data.yaml
  printf '\x02%s' 'cat
dog
' >$F/corpus-labels/classes.txt
  printf '\x03%s' '{"categories": [{"id": 0, "name": "pets", "supercategory": "none"}, {"id": 1, "name": "cat",
 "supercategory": "pets"}], "images": [{"id": 1, "file_name": "a.jpg", "width": 40, "height": 20}],
 "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [10, 5, 20, 10], "iscrowd": 0}]}' \
    >$F/corpus-labels/coco.json
  printf '\x04%s' '<annotation><filename>a.jpg</filename><size><width>40</width><height>20</height></size>
<object><name>dog</name><bndbox><xmin>10</xmin><ymin>5</ymin><xmax>30</xmax><ymax>15</ymax></bndbox></object>
</annotation>' >$F/corpus-labels/voc.xml
  printf 'ttl\n' >$F/corpus-menu/train.txt
  printf 'n 4star\ntt\nl\ntttttl\n' >$F/corpus-menu/learn.txt
  printf 'tttttttl\nt\nl\nttttttl\n' >$F/corpus-menu/touch-new-class.txt
  printf 'ttttl\nc 1circle\nc ../x\nc _unsure\nc 4new\nc\nl\nc 0blank\n' >$F/corpus-menu/corrections.txt
}

# fuzz_run TARGET SECONDS [FLAG...]: runs build/fuzz/bin/fuzz_TARGET on its corpus for SECONDS in the
# background, $JOBS at a time; fuzz_wait waits for them all and fails on any finding.
FUZZ_QUEUED=()
FUZZ_M32_PREFIX=()  # set by fuzz_runs: how fuzz_link_m32 runs (m32_fuzz_prefix)
fuzz_run() {
  local t=$1 secs=$2
  shift 2
  local prefix=()
  if [ "$t" = link_m32 ]; then prefix=("${FUZZ_M32_PREFIX[@]}"); fi
  if [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; then wait -n || true; fi
  FUZZ_QUEUED+=("$t")
  (
    rc=0
    # a deadline past libFuzzer's own: a fuzzer that does not stop (or a sanitizer that hangs at exit) fails
    timeout -k 10 $((secs + 120)) "${prefix[@]}" build/fuzz/bin/fuzz_$t -max_total_time="$secs" -seed=1 "$@" \
      build/fuzz/corpus-$t 2>build/fuzz/fuzz_$t.log || rc=$?
    if [ $rc = 124 ] || [ $rc = 137 ]; then echo "fuzz_$t did not stop within $((secs + 120)) s" >>build/fuzz/fuzz_$t.log; fi
    echo $rc >build/fuzz/fuzz_$t.rc
  ) &
}
fuzz_wait() {
  wait
  local t failed=0
  for t in "${FUZZ_QUEUED[@]}"; do
    if [ "$(cat build/fuzz/fuzz_$t.rc)" != 0 ]; then
      tail -40 build/fuzz/fuzz_$t.log
      echo "fuzz_$t found a crash (build/fuzz/fuzz_$t.log)"
      failed=1
    else
      grep -E '^Done [0-9]+ runs' build/fuzz/fuzz_$t.log | sed "s/^/fuzz_$t: /"
    fi
  done
  FUZZ_QUEUED=()
  return $failed
}

fuzz_runs() {
  local blob=${TV_FUZZ_SECONDS:-20} photo=${TV_FUZZ_PHOTO_SECONDS:-15} more=${TV_FUZZ_MORE_SECONDS:-15}
  local rss=(-rss_limit_mb=2048) t
  fuzz_seeds
  fuzz_run blob "$blob" "${rss[@]}"
  fuzz_run espdl "$blob" "${rss[@]}"
  for t in image zip; do fuzz_run $t "$photo" "${rss[@]}" -max_len=65536; done
  for t in config numbers weights tvsim_script svg_text model_run update link; do
    fuzz_run $t "$more" "${rss[@]}"
  done
  # the host's link client against boards that never stop: an input that runs 10 s is a hang (its deadlines
  # run on the fuzz port's clock, so a working client ends every input in milliseconds)
  fuzz_run link_host "$more" "${rss[@]}" -timeout=10
  read -ra FUZZ_M32_PREFIX <<<"$(m32_fuzz_prefix)"
  echo "fuzz_link_m32 runs $(bash scripts/m32-runner.sh --describe): ${FUZZ_M32_PREFIX[*]}"
  fuzz_run link_m32 "$more" -rss_limit_mb=1024
  fuzz_run menu "$more" "${rss[@]}" -max_len=512
  fuzz_run labels "$more" "${rss[@]}"
  fuzz_wait
}

# How fuzz_link_m32 runs: natively, or under qemu-i386 (scripts/m32-runner.sh). ASan's quarantine of freed
# memory is kept at 16 MB: with the 32-bit default the heap grew to ~250 MB and, under qemu-i386, ASan's
# allocator then failed inside itself ("CHECK failed: asan_poisoning.cpp:36"). Under qemu-i386 there is no
# LeakSanitizer: its stop-the-world cannot run under user-mode emulation and the process never exits
# (the 64-bit fuzz_link looks for leaks in the same code).
m32_fuzz_prefix() {
  local runner asan=quarantine_size_mb=16
  runner=$(bash scripts/m32-runner.sh --prefix)
  [ -z "$runner" ] || asan+=:detect_leaks=0
  echo "env ASAN_OPTIONS=$asan $runner"
}

ctest_all() { ctest_counted build; }

stage "install: the Debian packages the tests need" 30 install_packages
stage "build (Release): tools, tests, tvsim, benchmarks" 260 build_release
stage "device-safety build of common/ (-fno-exceptions -fno-rtti -Werror)" 30 device_safety
stage "32-bit (-m32): the core and the firmware app with their tests" 140 m32_tests
stage "AVX2 without AVX-512: the fast kernels as such a CPU runs them" 60 avx2_tests
stage "ESP32 sources against the real Arduino-ESP32 / ESP-IDF / esp32-camera / U8g2 headers" 135 esp32_check
stage "each firmware task's deepest call chain against its stack size" 40 stack_check
stage "the installable Arduino library" 5 arduino_library
stage "fuzz build (clang, instrumented)" 230 fuzz_build
stage "fuzz runs (libFuzzer, bounded, $JOBS at a time)" 170 fuzz_runs
stage "tests (ctest: every googletest, slow and browser tests included)" 100 ctest_all
