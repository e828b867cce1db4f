"""Compares the `step <k> loss <value>` lines of two runs of one program on
different backends (CPU and CUDA), which may differ by more than float
summation order: a GPU's GEMMs may use TF32 tensor cores.

  close_losses.py TOLERANCE A B   both runs have the same steps and every
                                  loss of B is within a relative TOLERANCE
                                  of A's
"""
import re
import sys

STEP = re.compile(r"^step (\d+) loss (\S+)$")


def read_losses(path):
    losses = []
    with open(path) as f:
        for line in f:
            match = STEP.match(line.strip())
            if match:
                losses.append(float(match.group(2)))
    if not losses:
        sys.exit(f"{path}: no step lines")
    return losses


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    tolerance = float(sys.argv[1])
    a, b = read_losses(sys.argv[2]), read_losses(sys.argv[3])
    if len(a) != len(b):
        sys.exit(f"error: {len(a)} steps in {sys.argv[2]}, {len(b)} in {sys.argv[3]}")
    worst = max(abs(x - y) / max(abs(x), 1e-30) for x, y in zip(a, b))
    print(f"losses close: {len(a)} steps, max relative difference {worst:.2g}")
    if not worst <= tolerance:
        sys.exit(f"error: losses differ by {worst:.3g} (tolerance {tolerance})")


if __name__ == "__main__":
    main()
