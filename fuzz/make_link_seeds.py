#!/usr/bin/env python3
"""Seeds for fuzz_link: make_link_seeds.py MODEL.tvb OUT_DIR.

push.bin: a model pushed through frames (first byte even); requests.bin: a session of requests in raw
mode (first byte odd, standing for the frame's 0xA5): Hello, Status, List, Crc, Read with its acks, a
path outside /images, Bye. Frames as common/src/tv/link_frame.h lays them out."""
import os
import struct
import sys
import zlib


def frame(kind, seq, payload=b""):
    body = struct.pack("<BIH", kind, seq, len(payload)) + payload
    return b"\xa5\x5a" + body + struct.pack("<I", zlib.crc32(body) & 0xFFFFFFFF)


model, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
with open(model, "rb") as f, open(os.path.join(out, "push.bin"), "wb") as o:
    o.write(b"\x00" + f.read())
s = frame(1, 1) + frame(2, 2) + frame(3, 3, struct.pack("<I", 0)) + frame(3, 4, struct.pack("<I", 0) + b"0blank")
s += frame(4, 5, b"0blank/img_0.jpg") + frame(5, 6, b"0blank/img_0.jpg")
s += frame(0x43, 0, struct.pack("<I", 1)) + frame(0x43, 1, struct.pack("<I", 2))
s += frame(5, 7, b"../header/model.tvb") + frame(9, 8, struct.pack("<H", 2) + b"0blank") + frame(8, 9)
with open(os.path.join(out, "requests.bin"), "wb") as o:
    o.write(b"\x01" + s[1:])
