#!/usr/bin/env python3
"""token_data.py header FILE.bin: the header of a token file, and whether its
ids go above 65,535 (what only llm.c's uint32 form can hold)."""
import struct
import sys

import numpy as np


def main():
    if len(sys.argv) != 3 or sys.argv[1] != "header":
        sys.exit(__doc__)
    with open(sys.argv[2], "rb") as f:
        magic, version, count = struct.unpack("<3i", f.read(12))
        f.seek(1024)
        ids = np.fromfile(f, dtype="<u4" if magic == 20240801 else "<u2", count=count)
    print(f"magic {magic} version {version}, largest id "
          f"{'above' if ids.max() > 65535 else 'at most'} 65535")


if __name__ == "__main__":
    main()
