#!/usr/bin/env bash
# Configures and builds into build/ (tools land in build/bin/): everything, or only the targets named
# (scripts/quickstart.sh builds just tvtrain, tvquant and tvexport; scripts/test.sh builds everything).
# TV_BUILD_TESTS=OFF configures without the test suites (googletest then need not be installed).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/stages.sh
trap - EXIT  # no stage table here: its caller's, if any
tv_configure build -DCMAKE_BUILD_TYPE=Release -DTV_BUILD_TESTS="${TV_BUILD_TESTS:-ON}"
if [ $# -gt 0 ]; then
  cmake --build build -j"$(nproc)" --target "$@"
else
  cmake --build build -j"$(nproc)"
fi
