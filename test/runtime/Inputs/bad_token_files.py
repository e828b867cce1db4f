"""bad_token_files.py DIR: writes token files that --decode must refuse:
magic.bin (wrong magic), version.bin (uint16 magic, version 7),
truncated.bin (a uint32 header counting 10 tokens over a body of 9) and
short.bin (half a header)."""
import os
import struct
import sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def header(magic, version, count):
    return struct.pack("<3i", magic, version, count) + b"\0" * (1024 - 12)


files = {
    "magic.bin": header(20240521, 1, 2) + struct.pack("<2H", 1, 2),
    "version.bin": header(20240520, 7, 2) + struct.pack("<2H", 1, 2),
    "truncated.bin": header(20240801, 7, 10) + struct.pack("<9I", *range(9)),
    "short.bin": header(20240520, 1, 0)[:512],
}
for name, data in files.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
