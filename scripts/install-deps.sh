#!/usr/bin/env bash
# Installs the Debian packages TinyVision builds and tests with, only those that are missing.
set -euo pipefail
PKGS=(cmake make g++ pkg-config libgtest-dev libgmock-dev libcli11-dev nlohmann-json3-dev libturbojpeg0-dev
      libjpeg62-turbo-dev libpng-dev libexif-dev libjpeg-turbo-progs libzip-dev zlib1g-dev libflatbuffers-dev
      flatbuffers-compiler clang libclang-rt-dev python3 libserialport-dev
      g++-multilib gcc-arm-none-eabi libstdc++-arm-none-eabi-newlib libnewlib-arm-none-eabi
      chromium chromium-driver python3-selenium)
# g++-multilib: the core and the firmware app are also built and tested as 32-bit programs (-m32), as on
# the board; gcc-arm-none-eabi + newlib: the ESP32 sources are type-checked against the real headers;
# chromium + chromium-driver + python3-selenium: the HTML report is checked in a real browser
# (tests/browser/report_browser_test.py).
# Optional: the PyTorch peer for bench/ (TV_WITH_TORCH=1).
if [ "${TV_WITH_TORCH:-0}" = 1 ]; then PKGS+=(python3-torch); fi
# Optional: Fashion-MNIST for the figures of docs/recommended-preset.md (TV_WITH_FASHION_MNIST=1;
# build/bin/tvfashion-mnist writes it as class folders of JPEGs).
if [ "${TV_WITH_FASHION_MNIST:-0}" = 1 ]; then PKGS+=(dataset-fashion-mnist); fi
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PKGS[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
