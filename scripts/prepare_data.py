#!/usr/bin/env python3
"""Turns a text file into token files for language-model programs.

  python3 scripts/prepare_data.py data/shakespeare.txt -o build/data/shakespeare

writes build/data/shakespeare_train.bin and build/data/shakespeare_val.bin:
the first 90% of the text and the rest (--val-fraction), tokenized byte by
byte (vocabulary 256: a token is a byte's value, so any UTF-8 text round-
trips), in llm.c's format, which the runtime reads with --data:

  256 little-endian int32: [0] = 20240520 (magic), [1] = 1 (version),
  [2] = number of tokens N, the rest 0; then N little-endian uint16 ids.

`--decode FILE.bin` prints a token file back as text. Standard library only.
"""
import argparse
import os
import struct
import sys

MAGIC = 20240520
VERSION = 1
HEADER_INTS = 256


def write_tokens(path, tokens):
    header = struct.pack("<3i", MAGIC, VERSION, len(tokens))
    header += b"\0" * (4 * HEADER_INTS - len(header))
    body = struct.pack("<%dH" % len(tokens), *tokens)
    # Write beside the target and rename, so a reader never sees half a file.
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(header + body)
    os.replace(tmp, path)


def read_tokens(path):
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 4 * HEADER_INTS:
        sys.exit(f"error: {path}: shorter than the {4 * HEADER_INTS}-byte header")
    magic, version, count = struct.unpack_from("<3i", data)
    if magic != MAGIC or version != VERSION:
        sys.exit(f"error: {path}: not a version {VERSION} token file")
    if 4 * HEADER_INTS + 2 * count > len(data):
        sys.exit(f"error: {path}: header counts {count} tokens, file is shorter")
    return list(struct.unpack_from("<%dH" % count, data, 4 * HEADER_INTS))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("text", help="input text file (or a .bin with --decode)")
    parser.add_argument("-o", "--output", help="output prefix: PREFIX_train.bin, PREFIX_val.bin")
    parser.add_argument("--val-fraction", type=float, default=0.1)
    parser.add_argument("--decode", action="store_true", help="print a token file as text")
    args = parser.parse_args()

    if args.decode:
        sys.stdout.buffer.write(bytes(read_tokens(args.text)))
        return
    if not args.output:
        parser.error("-o/--output is required")
    if not 0 < args.val_fraction < 1:
        parser.error("--val-fraction must be between 0 and 1")
    with open(args.text, "rb") as f:
        tokens = list(f.read())
    split = int(len(tokens) * (1 - args.val_fraction))
    directory = os.path.dirname(args.output)
    if directory:
        os.makedirs(directory, exist_ok=True)
    for name, part in (("train", tokens[:split]), ("val", tokens[split:])):
        path = f"{args.output}_{name}.bin"
        write_tokens(path, part)
        print(f"{path}: {len(part)} tokens (vocabulary 256, bytes)")


if __name__ == "__main__":
    main()
