"""check_token_file.py TRAIN VAL TEXT: both headers are llm.c's, each count
matches its file's size, and the split is 90/10 of the text's bytes."""
import os
import struct
import sys

train, val, text = sys.argv[1:4]
counts = []
for path in (train, val):
    with open(path, "rb") as f:
        header = f.read(1024)
    magic, version, count = struct.unpack_from("<3i", header)
    rest = struct.unpack_from("<253i", header, 12)
    if magic != 20240520 or version != 1 or any(rest):
        sys.exit(f"{path}: bad header {magic} {version} {rest[:3]}")
    if os.path.getsize(path) != 1024 + 2 * count:
        sys.exit(f"{path}: {count} tokens but {os.path.getsize(path)} bytes")
    counts.append(count)
size = os.path.getsize(text)
if counts != [int(size * 0.9), size - int(size * 0.9)]:
    sys.exit(f"split {counts} of {size} bytes is not 90/10")
print("header ok: magic 20240520, version 1, counts match the file sizes, split 90/10")
