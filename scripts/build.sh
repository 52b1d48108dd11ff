#!/usr/bin/env bash
# Configures and builds into build/ (tools land in build/bin/): everything, or only the targets named
# (scripts/quickstart.sh builds just tvtrain, tvquant and tvexport; scripts/test.sh builds everything).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
if [ $# -gt 0 ]; then
  cmake --build build -j"$(nproc)" --target "$@"
else
  cmake --build build -j"$(nproc)"
fi
