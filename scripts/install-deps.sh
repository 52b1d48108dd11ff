#!/usr/bin/env bash
# Installs the Debian packages a command needs, only those that are missing:
#   install-deps.sh build   what building the tools (tvtrain, tvquant, tvexport, tvlink, tvsim) needs: 15 packages,
#                           the first command of the README (scripts/quickstart.sh) installs only these
#   install-deps.sh test    (the default, as scripts/test.sh and CI run it) build + what the tests need:
#                           googletest, clang for the fuzzers, the 32-bit libraries of the -m32 build, the
#                           ARM toolchain of the ESP32 type-check, python3 for check-stack.py, and
#                           chromium + chromium-driver + python3-selenium for the report's browser test
set -euo pipefail
WHAT=${1:-test}
BUILD=(cmake make g++ pkg-config libcli11-dev nlohmann-json3-dev libturbojpeg0-dev libjpeg62-turbo-dev libpng-dev
       libexif-dev libzip-dev zlib1g-dev libflatbuffers-dev flatbuffers-compiler libserialport-dev)
# g++-multilib: the core and the firmware app are also built and tested as 32-bit programs (-m32), as on
# the board; gcc-arm-none-eabi + newlib: the ESP32 sources are type-checked against the real headers;
# chromium + chromium-driver + python3-selenium: the HTML report is checked in a real browser
# (tests/browser/report_browser_test.py).
TEST=(libgtest-dev libgmock-dev libjpeg-turbo-progs clang libclang-rt-dev python3
      g++-multilib gcc-arm-none-eabi libstdc++-arm-none-eabi-newlib libnewlib-arm-none-eabi
      chromium chromium-driver python3-selenium)
case "$WHAT" in
  build) PKGS=("${BUILD[@]}") ;;
  test) PKGS=("${BUILD[@]}" "${TEST[@]}") ;;
  *)
    echo "install-deps: '$WHAT' is not one of build, test (usage: install-deps.sh [build|test])" >&2
    exit 2
    ;;
esac
# Optional: the PyTorch peer for bench/ (TV_WITH_TORCH=1).
if [ "${TV_WITH_TORCH:-0}" = 1 ]; then PKGS+=(python3-torch); fi
# Optional: Fashion-MNIST for the figures of docs/recommended-preset.md and docs/quantization.md
# (TV_WITH_FASHION_MNIST=1; build/bin/tvfashion-mnist writes it as class folders of JPEGs).
if [ "${TV_WITH_FASHION_MNIST:-0}" = 1 ]; then PKGS+=(dataset-fashion-mnist); fi
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PKGS[@]} packages for '$WHAT' present"
  exit 0
fi
echo "install-deps ($WHAT): installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
