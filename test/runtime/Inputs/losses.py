"""Checks the `step <k> loss <value>` lines that a zrt program prints.

  losses.py falls OUT            the loss falls: the mean of the last five
                                 steps is below 0.7 x the mean of the first
                                 five (single steps are noisy: every step
                                 sees a fresh batch)
  losses.py same OUT OUT...      every file has the same steps and losses
                                 within a relative 1e-5 of the first file
                                 (runs differ only in float summation order)
  losses.py close TOL OUT OUT... the same within a relative TOL: runs on
                                 different backends (a GPU's GEMMs may use
                                 TF32, its reductions another order)
  losses.py resumed FULL OUT...  each OUT, a run resumed from a checkpoint
                                 (its step lines start after step 1), has
                                 the losses of FULL's same steps within a
                                 relative 1e-5
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
                if int(match.group(1)) != len(losses) + 1:
                    sys.exit(f"{path}: step {match.group(1)} out of order")
                losses.append(float(match.group(2)))
    if not losses:
        sys.exit(f"{path}: no step lines")
    return losses


def read_resumed(path):
    """{step: loss} of a run whose step lines are consecutive from any step."""
    losses = {}
    with open(path) as f:
        for line in f:
            match = STEP.match(line.strip())
            if match:
                step = int(match.group(1))
                if losses and step != max(losses) + 1:
                    sys.exit(f"{path}: step {step} out of order")
                losses[step] = float(match.group(2))
    if not losses:
        sys.exit(f"{path}: no step lines")
    return losses


def resumed(full_path, paths, tolerance=1e-5):
    full = dict(enumerate(read_losses(full_path), start=1))
    for path in paths:
        losses = read_resumed(path)
        missing = [step for step in losses if step not in full]
        if missing:
            sys.exit(f"{path}: step {missing[0]}, which {full_path} does not have")
        worst = max(abs(losses[s] - full[s]) / max(abs(full[s]), 1e-6) for s in losses)
        print(f"resumed losses agree: steps {min(losses)} to {max(losses)}, "
              f"max relative difference {worst:.2g}")
        if not worst <= tolerance:
            sys.exit(f"error: {path} differs from {full_path} by {worst:.3g} "
                     f"(tolerance {tolerance})")


def falls(path):
    losses = read_losses(path)
    if len(losses) < 10:
        sys.exit(f"{path}: need at least 10 steps, got {len(losses)}")
    first = sum(losses[:5]) / 5
    last = sum(losses[-5:]) / 5
    print(f"loss falls: first five {first:.4f}, last five {last:.4f}")
    if not last < 0.7 * first:
        sys.exit("error: loss did not fall enough")


def same(paths, tolerance=1e-5):
    reference = read_losses(paths[0])
    for path in paths[1:]:
        losses = read_losses(path)
        if len(losses) != len(reference):
            sys.exit(f"{path}: {len(losses)} steps, {paths[0]} has {len(reference)}")
        worst = max(abs(a - b) / max(abs(b), 1e-6) for a, b in zip(losses, reference))
        print(f"losses agree: {len(losses)} steps, max relative difference {worst:.2g}")
        if not worst <= tolerance:
            sys.exit(f"error: {path} differs from {paths[0]} by {worst:.3g} "
                     f"(tolerance {tolerance})")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "falls":
        falls(sys.argv[2])
    elif len(sys.argv) >= 4 and sys.argv[1] == "same":
        same(sys.argv[2:])
    elif len(sys.argv) >= 5 and sys.argv[1] == "close":
        same(sys.argv[3:], float(sys.argv[2]))
    elif len(sys.argv) >= 4 and sys.argv[1] == "resumed":
        resumed(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(__doc__)
