#!/usr/bin/env bash
# The shipped backbones are what their one command makes: runs scripts/make-backbones.sh into a temporary
# folder with the tools of BUILD_DIR and compares every file (the .tvb files and their C headers) with the
# committed ones in common/src/tv/backbones/. Too slow for CI (two pretraining runs: about 4 minutes each on
# 2 cores); exit 0 when all are identical, 1 naming every file that differs.
#   bash bench/backbone_check.sh [BUILD_DIR (default build)]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
work=$(mktemp -d /tmp/tv-backbones.XXXXXX)
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
bash scripts/make-backbones.sh "$build" "$work" >/dev/null
differ=0
for f in "$work"/*; do
  name=$(basename "$f")
  if cmp -s "$f" "common/src/tv/backbones/$name"; then
    echo "same: $name"
  else
    echo "DIFFERS: $name (the committed file is not what scripts/make-backbones.sh makes)"
    differ=1
  fi
done
echo "made and compared in $(( $(date +%s) - start )) s on $(lscpu | sed -n 's/^Model name: *//p' | head -1)"
exit $differ
