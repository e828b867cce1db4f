"""Writes token files (llm.c's format) for the runtime's tests.

  make_tokens.py OUT COUNT [--vocab V] [--bad-at K] [--magic M]
                 [--version N] [--header-count C]

Token i is (7 i + 3) mod V (default V = 256), except token K, which is V.
--magic, --version and --header-count override the header fields.
"""
import argparse
import struct

parser = argparse.ArgumentParser()
parser.add_argument("out")
parser.add_argument("count", type=int)
parser.add_argument("--vocab", type=int, default=256)
parser.add_argument("--bad-at", type=int, default=-1)
parser.add_argument("--magic", type=int, default=20240520)
parser.add_argument("--version", type=int, default=1)
parser.add_argument("--header-count", type=int)
args = parser.parse_args()

tokens = [args.vocab if i == args.bad_at else (7 * i + 3) % args.vocab
          for i in range(args.count)]
count = args.count if args.header_count is None else args.header_count
header = struct.pack("<3i", args.magic, args.version, count).ljust(1024, b"\0")
with open(args.out, "wb") as f:
    f.write(header + struct.pack("<%dH" % len(tokens), *tokens))
