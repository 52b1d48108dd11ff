#!/usr/bin/env bash
# The README's first command: install what is missing, build, and run the main job on datasets/:
# photos -> trained model (tvtrain) -> int8 (tvquant) -> C header (tvexport); then a detector from labelled boxes.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== 0. install and build: the Debian packages building needs, then tvtrain, tvquant and tvexport"
bash scripts/install-deps.sh build  # only what building needs; scripts/test.sh installs what the tests need
# only what it runs (scripts/test.sh builds the rest); the compiler's lines go to a log, shown on failure
mkdir -p build
t0=$SECONDS
if ! TV_BUILD_TESTS=OFF bash scripts/build.sh tvtrain tvquant tvexport >build/quickstart-build.log 2>&1; then
  tail -30 build/quickstart-build.log >&2
  echo "quickstart: the build failed (the whole log: build/quickstart-build.log)" >&2
  exit 1
fi
echo "built build/bin/tvtrain, tvquant and tvexport in $((SECONDS - t0)) s (log: build/quickstart-build.log)"
BIN=build/bin
OUT=${TV_OUT:-out}
mkdir -p "$OUT"
echo "== 1. train: datasets/shapes -> $OUT/model.tvb"
"$BIN/tvtrain" datasets/shapes -o "$OUT/model.tvb" --threads "$(nproc)"
if "$BIN/tvquant" --help 2>/dev/null | grep -q -- "--calib"; then
  echo "== 2. quantize: $OUT/model.tvb -> $OUT/model.q8.tvb (power-of-two int8, ESP-DL rules)"
  "$BIN/tvquant" "$OUT/model.tvb" --calib datasets/shapes -o "$OUT/model.q8.tvb"
  MODEL="$OUT/model.q8.tvb"
else
  echo "== 2. quantize: tvquant is not built with quantization yet; exporting the float model"
  MODEL="$OUT/model.tvb"
fi
echo "== 3. export: $MODEL -> $OUT/model.h"
if ! "$BIN/tvexport" "$MODEL" -o "$OUT/model.h"; then
  echo "tvexport could not write the header" >&2
  exit 1
fi
echo "== 4. detect: datasets/detect (labelled boxes) -> $OUT/det.tvb, int8 $OUT/det.q8.tvb, the objects of a photo"
"$BIN/tvtrain" datasets/detect -o "$OUT/det.tvb" --threads "$(nproc)"
"$BIN/tvquant" "$OUT/det.tvb" --calib datasets/detect -o "$OUT/det.q8.tvb"
"$BIN/tvtrain" detect "$OUT/det.q8.tvb" datasets/detect/images/val/img_0000.jpg
echo "done: $OUT/model.tvb (float), $MODEL (exported), $OUT/model.curve.svg, $OUT/model.report.html (open it in a browser), $OUT/model.h;"
echo "      the detector $OUT/det.tvb, its report $OUT/det.report.html and int8 $OUT/det.q8.tvb"
