#!/usr/bin/env bash
# Builds the installable Arduino library dist/TinyVision.zip (Arduino IDE: Sketch > Include Library >
# Add .ZIP Library; arduino-cli: arduino-cli lib install --zip-path dist/TinyVision.zip):
#   TinyVision/library.properties
#   TinyVision/src/        the core (common/src), the application (firmware/app), the ESP32 layer (firmware/hal_esp32)
#   TinyVision/examples/   TinyVision (the full app) and ClassifyCamera (a baked model, about 60 lines)
# The same files as the repository's, copied; the zip's entries are sorted and dated 1980, so the same
# sources always give the same bytes.   usage: scripts/arduino-library.sh [OUT.zip]
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-dist/TinyVision.zip}
mkdir -p "$(dirname "$OUT")"
python3 - "$OUT" <<'PY'
import os, sys, zipfile
out = sys.argv[1]
version = "0.1.0"
for line in open("CMakeLists.txt"):
    if line.startswith("project(TinyVision VERSION"):
        version = line.split()[2]
files = {}
def add_tree(src, dst, exts):
    for root, _, names in os.walk(src):
        for n in names:
            if os.path.splitext(n)[1] in exts:
                p = os.path.join(root, n)
                files[os.path.join(dst, os.path.relpath(p, src))] = open(p, "rb").read()
add_tree("common/src", "TinyVision/src", {".h", ".cpp"})
add_tree("firmware/app", "TinyVision/src", {".h", ".cpp"})
add_tree("firmware/hal_esp32", "TinyVision/src", {".h", ".cpp"})
add_tree("firmware/esp32/TinyVision", "TinyVision/examples/TinyVision", {".h", ".ino"})
add_tree("firmware/examples", "TinyVision/examples", {".h", ".ino"})
files["TinyVision/library.properties"] = f"""name=TinyVision
version={version}
author=TinyVision
maintainer=TinyVision
sentence=Train and run small image classifiers on the ESP32-S3 (XIAO ESP32-S3 Sense): core, app and camera layer.
paragraph=Needs C++17: Arduino-ESP32 core 3.x, or core 2.x with compiler.cpp.extra_flags=-std=gnu++17 -ffp-contract=off (see TinyVisionCore.h's #error).
category=Data Processing
url=https://example.invalid/tinyvision
architectures=esp32
includes=TinyVisionCore.h
depends=U8g2
""".encode()
with zipfile.ZipFile(out + ".tmp", "w", zipfile.ZIP_DEFLATED) as z:
    for name in sorted(files):
        info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
        info.external_attr = 0o644 << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        z.writestr(info, files[name])
os.replace(out + ".tmp", out)
print(f"arduino-library: wrote {out} ({len(files)} files)")
PY
