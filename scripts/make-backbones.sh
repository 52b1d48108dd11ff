#!/bin/bash
# Makes the built-in backbones (common/src/tv/backbones/): pretrains the default network on the drawn
# pretraining set at each input (docs/few-shot.md, "The recipe"), then bakes each as a C header (tvexport
# drops the pretraining head). The same command gives the same bytes on every machine and thread count;
# bench/backbone_check.sh checks the committed files against it.
#   scripts/make-backbones.sh [BUILD_DIR (default build)] [OUT_DIR (default common/src/tv/backbones)]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=${2:-common/src/tv/backbones}
source=procedural:mixed,classes=1024,images=30
for input in 64x64x3 64x64x1; do
  tvb=$out/tinyvision-$input.tvb
  "$build/bin/tvtrain" "$source" --input "$input" -o "$tvb" --no-report --no-curve --no-confusion -q
  "$build/bin/tvexport" "$tvb" --name "TV_BACKBONE_${input^^}" -o "$out/tinyvision_${input}.h"
  echo "made $tvb and $out/tinyvision_${input}.h"
done
