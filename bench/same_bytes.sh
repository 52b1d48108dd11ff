#!/usr/bin/env bash
# Same bytes before and after a change that must not change behaviour (a refactor, a move, a faster
# kernel): the tools of two builds each make the same 12 outputs from datasets/shapes, written to the
# same paths (reports and headers name them), and `cmp` compares them one by one.
#
#   bash bench/same_bytes.sh BEFORE_BIN AFTER_BIN      # e.g. /tmp/before/build/bin build/bin
#
# The 12 outputs, for each preset (tinyvision and webmcu): the float model (.tvb), the int8 model
# (.q8.tvb), the float C header, the int8 C header, the ESP-DL model (.espdl) and `tvexport info`'s
# text. Exit 0 when all 12 are identical; 1 naming every one that differs.
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: bash bench/same_bytes.sh BEFORE_BIN AFTER_BIN (two folders holding tvtrain, tvquant and tvexport)" >&2
  exit 2
fi
cd "$(dirname "$0")/.."
before=$(cd "$1" && pwd)
after=$(cd "$2" && pwd)
work=$(mktemp -d /tmp/tv-same-bytes.XXXXXX)
trap 'rm -rf "$work"' EXIT
outputs=(model.tvb model.q8.tvb model.h model.q8.h model.espdl info.txt)

# make BIN: the 12 outputs in $work/out (the same path for both builds).
make_outputs() {
  local bin=$1 out=$work/out preset
  rm -rf "$out"
  for preset in tinyvision webmcu; do
    mkdir -p "$out/$preset"
    "$bin/tvtrain" datasets/shapes --preset "$preset" --epochs 3 --threads 2 -o "$out/$preset/model.tvb" >/dev/null
    "$bin/tvquant" "$out/$preset/model.tvb" --calib datasets/shapes -o "$out/$preset/model.q8.tvb" >/dev/null
    "$bin/tvexport" "$out/$preset/model.tvb" -o "$out/$preset/model.h" >/dev/null
    "$bin/tvexport" "$out/$preset/model.q8.tvb" -o "$out/$preset/model.q8.h" >/dev/null
    "$bin/tvexport" "$out/$preset/model.q8.tvb" -o "$out/$preset/model.espdl" >/dev/null
    "$bin/tvexport" info "$out/$preset/model.q8.tvb" >"$out/$preset/info.txt"
  done
}

make_outputs "$before"
mv "$work/out" "$work/before"
make_outputs "$after"
differ=0
for preset in tinyvision webmcu; do
  for f in "${outputs[@]}"; do
    if cmp -s "$work/before/$preset/$f" "$work/out/$preset/$f"; then
      echo "same   $preset/$f ($(stat -c %s "$work/out/$preset/$f") bytes)"
    else
      echo "DIFFER $preset/$f"
      differ=1
    fi
  done
done
exit $differ
