#!/usr/bin/env bash
# Installs the Debian packages a command needs, only those that are missing:
#   install-deps.sh build   what building the tools (tvtrain, tvquant, tvexport, tvlink, tvsim) needs: 16 packages,
#                           the first command of the README (scripts/quickstart.sh) installs only these
#   install-deps.sh test    (the default, as scripts/test.sh and CI run it) build + what the tests need:
#                           googletest, clang for the fuzzers, the 32-bit libraries of the -m32 build (and
#                           qemu-user where this kernel cannot execute 32-bit programs), the ARM toolchain of
#                           the ESP32 type-check, python3 for check-stack.py, and chromium + chromium-driver +
#                           python3-selenium for the report's browser test
# One line per step; apt's output goes to a log file, named when an install fails.
set -euo pipefail
WHAT=${1:-test}
BUILD=(cmake make ninja-build g++ pkg-config libcli11-dev nlohmann-json3-dev libyaml-cpp-dev libpugixml-dev libturbojpeg0-dev libjpeg62-turbo-dev libpng-dev
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
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
# apt's and dpkg's output goes to a log, named when something fails; one line per step here.
LOG=${TV_INSTALL_LOG:-${TMPDIR:-/tmp}/tinyvision-install-deps.log}
: >"$LOG"
install_now() {  # install_now PACKAGE...
  echo "install-deps ($WHAT): installing $*"
  if ! { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends "$@"; } >>"$LOG" 2>&1; then
    tail -20 "$LOG" >&2
    echo "install-deps: apt-get could not install $* (the whole log: $LOG)" >&2
    exit 1
  fi
}
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PKGS[@]} packages for '$WHAT' present"
else
  install_now "${missing[@]}"
fi
# The 32-bit tests run natively where the kernel executes 32-bit programs and under qemu-i386 where it
# cannot: a probe decides (scripts/m32-runner.sh), and qemu-user is installed only then.
if [ "$WHAT" = test ] && bash "$(dirname "$0")/m32-runner.sh" --needs-qemu 2>>"$LOG"; then
  if ! dpkg-query -W -f='${Status}' qemu-user 2>/dev/null | grep -q "install ok installed"; then
    echo "install-deps: this kernel cannot execute 32-bit programs: the -m32 tests will run under qemu-i386"
    install_now qemu-user
  fi
fi
