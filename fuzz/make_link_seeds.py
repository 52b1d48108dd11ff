#!/usr/bin/env python3
"""Seeds for fuzz_link and fuzz_link_host: make_link_seeds.py MODEL.tvb OUT_DIR [HOST_OUT_DIR].

push.bin: a model pushed through frames (first byte even); requests.bin: a session of requests in raw
mode (first byte odd, standing for the frame's 0xA5): Hello (opening session SESSION), Status, List, Crc,
Read with its acks, a path outside /images, ReadModel of the model, its backup and another number, Rename,
Bye. For fuzz_link_host: answers.bin (raw bytes, first byte even): the board's answers to the client's
Hello, Status, List, Crc, Read, ReadModel and Capture; endless-listing.bin and endless-data.bin (records
of the answering board, first byte odd): a listing that always says there is more, and a read whose Data
never ends. Frames as common/src/tv/link/link_frame.h lays them out (CRC-32 from the session after Hello)."""
import os
import struct
import sys
import zlib


SESSION = 0x5EED0001  # fuzz_link_host's session; fuzz_link's board takes it from the Hello


def frame(kind, seq, payload=b"", session=SESSION):
    body = struct.pack("<BIH", kind, seq, len(payload)) + payload
    return b"\xa5\x5a" + body + struct.pack("<I", zlib.crc32(body, session) & 0xFFFFFFFF)


def hello(seq):
    return frame(1, seq, struct.pack("<II", 2, SESSION), session=0)


def record(kind, payload=b""):
    return struct.pack("<BB", kind, len(payload)) + payload


model, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
with open(model, "rb") as f, open(os.path.join(out, "push.bin"), "wb") as o:
    o.write(b"\x00" + f.read())
s = hello(1) + frame(2, 2) + frame(3, 3, struct.pack("<I", 0)) + frame(3, 4, struct.pack("<I", 0) + b"0blank")
s += frame(4, 5, b"0blank/img_0.jpg") + frame(5, 6, b"0blank/img_0.jpg")
s += frame(0x43, 0, struct.pack("<I", 1)) + frame(0x43, 1, struct.pack("<I", 2))
s += frame(5, 7, b"../header/model.tvb") + frame(9, 8, struct.pack("<H", 2) + b"0blank")
s += frame(0x0A, 10, b"\x00") + frame(0x43, 0, struct.pack("<I", 1)) + frame(0x0A, 11, b"\x01")
s += frame(0x0A, 12, b"\x07") + frame(0x0B, 13, b"\x060blankempty") + frame(8, 9)
with open(os.path.join(out, "requests.bin"), "wb") as o:
    o.write(b"\x01" + s[1:])
if len(sys.argv) > 3:
    os.makedirs(sys.argv[3], exist_ok=True)
    img = b"\xff\xd8" + bytes(range(256)) * 10 + b"\xff\xd9"
    a = b"\n=== MENU ===\n" + frame(0x40, 1, struct.pack("<IIII", 2, 2048, 8, SESSION), session=0)
    a += frame(0x40, 2, b"firmware=0.1.0\nclass=0blank 1\n")
    a += frame(0x44, 3, b"\x00" + struct.pack("<IBB", 0, 1, 6) + b"0blank")
    a += frame(0x40, 4, struct.pack("<II", len(img), zlib.crc32(img)))
    a += frame(0x40, 5, struct.pack("<I", len(img)))
    for k in range(0, (len(img) + 2047) // 2048):
        a += frame(0x42, k, img[k * 2048:(k + 1) * 2048])
    a += frame(0x45, (len(img) + 2047) // 2048, struct.pack("<I", zlib.crc32(img)))
    a += frame(0x40, 6, struct.pack("<I", len(img)) + b"/header/model.tvb")  # ReadModel: the same bytes
    for k in range(0, (len(img) + 2047) // 2048):
        a += frame(0x42, k, img[k * 2048:(k + 1) * 2048])
    a += frame(0x45, (len(img) + 2047) // 2048, struct.pack("<I", zlib.crc32(img)))
    a += frame(0x40, 7, b"saved 2 photos of 0blank (3 on the card)")
    a += frame(0x40, 8, b"renamed 0blank to empty: /images/empty, 1 photo")
    with open(os.path.join(sys.argv[3], "answers.bin"), "wb") as o:
        o.write(a)
    entry = struct.pack("<IBB", 0, 1, 6) + b"0blank"
    with open(os.path.join(sys.argv[3], "endless-listing.bin"), "wb") as o:
        o.write(b"\x01" + record(0x44, b"\x01" + entry))  # every answer: one entry, and more to come
    with open(os.path.join(sys.argv[3], "endless-data.bin"), "wb") as o:
        o.write(b"\x01" + record(0x40, b"firmware=0.1.0\n") + record(0x44, b"\x00" + entry)
                + record(0x40, struct.pack("<II", 4096, 0)) + record(0x40, struct.pack("<I", 4096))
                + record(0x42, bytes(200)) * 3)
