#!/usr/bin/env bash
# The README's second command: build everything and run every test (googletest via ctest, the
# device-safety build of common/, and bounded libFuzzer runs of the blob and .espdl readers, photo
# loading and zip datasets).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh test
JOBS=$(nproc)
echo "== build (Release) =="
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DTV_BUILD_TESTS=ON >/dev/null  # ON: a quickstart build had them off
cmake --build build -j"$JOBS"
echo "== device-safety build of common/ (-fno-exceptions -fno-rtti -Werror) =="
cmake --build build --target tvcore_device -j"$JOBS"
echo "== 32-bit (-m32, as the board's long and size_t): the core and the firmware app with their tests =="
# With the reference kernels, as the board runs them: TrainBits.PinnedOnEveryBuild then proves that this
# build and the 64-bit one (fast kernels) train the same bits.
cmake -S . -B build/m32 -DTV_M32=ON -DTV_FAST_KERNELS=OFF -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/m32 -j"$JOBS" --target test_m32
(cd build/m32 && ctest -j"$JOBS" --output-on-failure --timeout 900)
echo "== AVX2 without AVX-512 (most laptops' CPUs): the fast kernels as such a CPU runs them, with the same tests =="
# No target clones here: the code an AVX2-only CPU runs, tested on this machine. TrainBits.PinnedOnEveryBuild
# proves it trains the same bits as the other builds.
if grep -q avx2 /proc/cpuinfo; then
  cmake -S . -B build/avx2 -DTV_AVX2=ON -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build/avx2 -j"$JOBS" --target test_avx2
  (cd build/avx2 && ctest -j"$JOBS" --output-on-failure --timeout 900)
else
  echo "this CPU has no AVX2: skipped"
fi
echo "== ESP32 sources against the real Arduino-ESP32 / ESP-IDF / esp32-camera / U8g2 headers =="
bash scripts/check-esp32.sh build/firmware/baked/model.h
echo "== each firmware task's deepest call chain against its stack size (scripts/check-stack.py) =="
python3 scripts/check-stack.py --keep build/stack build/firmware/baked/model.h
if [ -d build/stack ] && ls build/stack/*.ci >/dev/null 2>&1; then
  # the check itself: a touch tick stack of 1 KB must fail, naming the task and the numbers
  if python3 scripts/check-stack.py --reuse build/stack --stack tick=1024 >build/stack/too-small.log 2>&1; then
    cat build/stack/too-small.log
    echo "check-stack accepted a 1024-byte touch tick stack" >&2
    exit 1
  fi
  grep -E "FAIL touch tick task .*needs [0-9]+ bytes, has 1024 \(TV_TICK_STACK_BYTES overridden\)" build/stack/too-small.log \
    || { cat build/stack/too-small.log; echo "check-stack failed without naming the touch tick task and its numbers" >&2; exit 1; }
fi
echo "== the installable Arduino library (scripts/arduino-library.sh) =="
bash scripts/arduino-library.sh build/TinyVision.zip
echo "== fuzz (libFuzzer, bounded) =="
FUZZ_SECONDS=${TV_FUZZ_SECONDS:-20}
CC=clang CXX=clang++ cmake -S . -B build/fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTV_BUILD_FUZZ=ON -DTV_BUILD_TESTS=OFF >/dev/null
cmake --build build/fuzz -j"$JOBS" --target fuzz_blob fuzz_make_seed $(grep -q fuzz_espdl fuzz/CMakeLists.txt && [ -f fuzz/fuzz_espdl.cpp ] && echo fuzz_espdl)
mkdir -p build/fuzz/corpus-blob build/fuzz/corpus-espdl
build/fuzz/bin/fuzz_make_seed build/fuzz/corpus-blob/seed.tvb
build/fuzz/bin/fuzz_blob -max_total_time="$FUZZ_SECONDS" -seed=1 -rss_limit_mb=2048 build/fuzz/corpus-blob 2>build/fuzz/fuzz_blob.log \
  || { tail -40 build/fuzz/fuzz_blob.log; echo "fuzz_blob found a crash"; exit 1; }
tail -1 build/fuzz/fuzz_blob.log
if [ -x build/fuzz/bin/fuzz_espdl ]; then
  if [ -d ../shared/espdl-golden ]; then cp ../shared/espdl-golden/*.espdl build/fuzz/corpus-espdl/ 2>/dev/null || true; fi
  build/fuzz/bin/fuzz_espdl -max_total_time="$FUZZ_SECONDS" -seed=1 -rss_limit_mb=2048 build/fuzz/corpus-espdl 2>build/fuzz/fuzz_espdl.log \
    || { tail -40 build/fuzz/fuzz_espdl.log; echo "fuzz_espdl found a crash"; exit 1; }
  tail -1 build/fuzz/fuzz_espdl.log
fi
# Photo loading and zip datasets, seeded from generated JPEG/PNG/zip files and ../shared's photos.
PHOTO_FUZZ_SECONDS=${TV_FUZZ_PHOTO_SECONDS:-15}
cmake --build build/fuzz -j"$JOBS" --target fuzz_image fuzz_zip fuzz_make_photo_seeds
mkdir -p build/fuzz/corpus-image build/fuzz/corpus-zip
build/fuzz/bin/fuzz_make_photo_seeds build/fuzz/corpus-image build/fuzz/corpus-zip
if [ -d ../shared/datasets/webmcu-a/images ]; then
  find ../shared/datasets/webmcu-a/images -name '*.jpg' | head -4 | xargs -I{} cp {} build/fuzz/corpus-image/
fi
for target in image zip; do
  build/fuzz/bin/fuzz_$target -max_total_time="$PHOTO_FUZZ_SECONDS" -seed=1 -rss_limit_mb=2048 -max_len=65536 \
    build/fuzz/corpus-$target 2>build/fuzz/fuzz_$target.log \
    || { tail -40 build/fuzz/fuzz_$target.log; echo "fuzz_$target found a crash"; exit 1; }
  grep -E '^Done [0-9]+ runs' build/fuzz/fuzz_$target.log | sed "s/^/fuzz_$target: /"
done
# tvtrain's JSON config, typed numbers and choices, the reference myWeights.bin, tvsim's script input, the
# SVG text layout, forged models (valid CRC) through calibration, quantization and classify, and the update
# modes and imprinting on decoded models (fuzz_update); seeded
# from the repository's configs, ../shared's myWeights.bin files, the directives of tvsim's README and
# fuzz_make_seed's float and int8 models.
MORE_FUZZ_SECONDS=${TV_FUZZ_MORE_SECONDS:-15}
cmake --build build/fuzz -j"$JOBS" --target fuzz_config fuzz_numbers fuzz_weights fuzz_tvsim_script fuzz_svg_text fuzz_model_run fuzz_update fuzz_make_seed
mkdir -p build/fuzz/corpus-config build/fuzz/corpus-numbers build/fuzz/corpus-weights build/fuzz/corpus-tvsim_script \
  build/fuzz/corpus-svg_text build/fuzz/corpus-model_run build/fuzz/corpus-update
build/fuzz/bin/fuzz_make_seed build/fuzz/corpus-model_run/seed.tvb
cp build/fuzz/corpus-model_run/seed.tvb build/fuzz/corpus-update/seed.tvb
printf 'sparse=2' >build/fuzz/corpus-update/seed.txt
printf '18446744073709551615' >build/fuzz/corpus-numbers/seed-whole.txt
printf '3e-4' >build/fuzz/corpus-numbers/seed-real.txt
printf '64x64x3' >build/fuzz/corpus-numbers/seed-input.txt
cp bench/configs/*.json build/fuzz/corpus-config/
for f in ../shared/datasets/webmcu-*/header/myWeights.bin; do
  [ -f "$f" ] && cp "$f" "build/fuzz/corpus-weights/$(basename "$(dirname "$(dirname "$f")")").bin"
done
printf '~tap 3\nt\n~hold 1200\n~touch 20000 150\n~wait 500\n~frames 2\nl\n?\nx\n' >build/fuzz/corpus-tvsim_script/seed.txt
printf '\x40\x05tinyvision on <photos>/ "validation" & \xe7\x8c\xab e\xcc\x81' >build/fuzz/corpus-svg_text/seed.txt
for target in config numbers weights tvsim_script svg_text model_run update; do
  build/fuzz/bin/fuzz_$target -max_total_time="$MORE_FUZZ_SECONDS" -seed=1 -rss_limit_mb=2048 \
    build/fuzz/corpus-$target 2>build/fuzz/fuzz_$target.log \
    || { tail -40 build/fuzz/fuzz_$target.log; echo "fuzz_$target found a crash"; exit 1; }
  grep -E '^Done [0-9]+ runs' build/fuzz/fuzz_$target.log | sed "s/^/fuzz_$target: /"
done
# The board's USB link protocol with the firmware app behind it, 64- and 32-bit, seeded with a pushed
# model and a session of requests, and the PC's client fed a board's answers (fuzz/make_link_seeds.py).
cmake --build build/fuzz -j"$JOBS" --target fuzz_link fuzz_link_m32 fuzz_link_host fuzz_make_seed
build/fuzz/bin/fuzz_make_seed build/fuzz/seed-link.tvb
for target in link link_m32 link_host; do
  python3 fuzz/make_link_seeds.py build/fuzz/seed-link.tvb build/fuzz/corpus-$target build/fuzz/corpus-link_host
  build/fuzz/bin/fuzz_$target -max_total_time="$MORE_FUZZ_SECONDS" -seed=1 -rss_limit_mb=2048 \
    build/fuzz/corpus-$target 2>build/fuzz/fuzz_$target.log \
    || { tail -40 build/fuzz/fuzz_$target.log; echo "fuzz_$target found a crash"; exit 1; }
  grep -E '^Done [0-9]+ runs' build/fuzz/fuzz_$target.log | sed "s/^/fuzz_$target: /"
done
# The board's text menu with the app behind it: any keys and `n NAME` lines, capture, Train and Learn,
# seeded with the README's keystrokes and a new class learned.
cmake --build build/fuzz -j"$JOBS" --target fuzz_menu
mkdir -p build/fuzz/corpus-menu
printf 'ttl\n' >build/fuzz/corpus-menu/train.txt
printf 'n 4star\ntt\nl\ntttttl\n' >build/fuzz/corpus-menu/learn.txt
printf 'tttttttl\nt\nl\nttttttl\n' >build/fuzz/corpus-menu/touch-new-class.txt
build/fuzz/bin/fuzz_menu -max_total_time="$MORE_FUZZ_SECONDS" -seed=1 -rss_limit_mb=2048 -max_len=512 \
  build/fuzz/corpus-menu 2>build/fuzz/fuzz_menu.log \
  || { tail -40 build/fuzz/fuzz_menu.log; echo "fuzz_menu found a crash"; exit 1; }
grep -E '^Done [0-9]+ runs' build/fuzz/fuzz_menu.log | sed "s/^/fuzz_menu: /"
echo "== tests =="
cd build
ctest -j"$JOBS" --output-on-failure --timeout 900
