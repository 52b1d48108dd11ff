#!/usr/bin/env bash
# How this machine runs a 32-bit (-m32) program: the one place that decides it, for the -m32 tests
# (tests/m32/CMakeLists.txt, as CROSSCOMPILING_EMULATOR), the 32-bit fuzz target (scripts/test.sh) and
# install-deps.sh (which installs qemu-user only where it is needed).
#
# It builds a tiny 32-bit probe and runs it: a kernel built without IA-32 emulation refuses it ("Exec
# format error"), and the 32-bit programs then run under Debian's user-mode emulator, qemu-i386. The CPU is
# never looked at. TV_M32_RUNNER=native|qemu|auto (default auto) overrides the choice, so the emulated path
# can be tested on a machine that runs 32-bit programs natively.
#
#   m32-runner.sh --prefix     prints the command prefix that runs a 32-bit program (empty: natively)
#   m32-runner.sh --describe   prints "natively" or "under qemu-i386"
#   m32-runner.sh --needs-qemu exits 0 when qemu-i386 is what will run them (installed or not), 1 when not
# Exit 1 with one sentence on stderr when 32-bit programs cannot run here at all.
set -euo pipefail
MODE=${1:---describe}
WANT=${TV_M32_RUNNER:-auto}
CC32=${TV_M32_CC:-cc}
QEMU=(qemu-i386 -L /)

say() { echo "m32-runner: $*" >&2; }
case "$WANT" in
  auto | native | qemu) ;;
  *) say "TV_M32_RUNNER='$WANT' is not one of auto, native, qemu"; exit 1 ;;
esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf 'int main(void) { return sizeof(long) == 4 ? 0 : 3; }\n' >"$work/probe.c"
if ! "$CC32" -m32 -o "$work/probe" "$work/probe.c" 2>"$work/cc.log"; then
  say "$CC32 -m32 cannot build a 32-bit program ($(head -1 "$work/cc.log")): install gcc-multilib and g++-multilib (bash scripts/install-deps.sh test)"
  exit 1
fi
native_ok=0
"$work/probe" >/dev/null 2>&1 && native_ok=1

way=native
if [ "$WANT" = qemu ] || { [ "$WANT" = auto ] && [ $native_ok = 0 ]; }; then way=qemu; fi
if [ "$way" = native ] && [ $native_ok = 0 ]; then
  say "TV_M32_RUNNER=native, but this kernel cannot execute 32-bit programs: unset it to run them under qemu-i386"
  exit 1
fi

if [ "$MODE" = --needs-qemu ]; then
  [ "$way" = qemu ]
  exit
fi
if [ "$way" = qemu ]; then
  if ! command -v qemu-i386 >/dev/null; then
    say "this kernel cannot execute 32-bit programs and qemu-i386 is not installed: run bash scripts/install-deps.sh test (it installs qemu-user)"
    exit 1
  fi
  if ! "${QEMU[@]}" "$work/probe" >/dev/null 2>&1; then
    say "qemu-i386 could not run a 32-bit probe program (${QEMU[*]} $work/probe): the 32-bit tests cannot run on this machine"
    exit 1
  fi
fi
case "$MODE" in
  --prefix) if [ "$way" = qemu ]; then echo "${QEMU[*]}"; else echo; fi ;;
  --describe) if [ "$way" = qemu ]; then echo "under qemu-i386"; else echo "natively"; fi ;;
  *) say "usage: m32-runner.sh [--prefix|--describe|--needs-qemu]"; exit 1 ;;
esac
