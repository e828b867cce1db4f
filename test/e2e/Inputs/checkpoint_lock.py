#!/usr/bin/env python3
"""Two jobs on one --checkpoint-dir: the second is refused at start, naming
the first, and changes nothing in the directory.

  checkpoint_lock.py --mpirun CMD --ranks N --dir CK -- PROGRAM ARGS...

Starts job A (`CMD N PROGRAM ARGS... --checkpoint-dir=CK`, which should run
until stopped), waits until it has trained a step, plants a partial
checkpoint in CK as if A were writing one, then starts job B with the same
flags. Prints what B said and whether CK changed, then stops A with SIGTERM
(A checkpoints and exits 0) and prints how A ended. A line starting with
FAIL says what went wrong.
"""
import argparse
import os
import shlex
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from injure_job import find_rank  # noqa: E402


def snapshot(root):
    """Every path under `root` with its size and modification time."""
    seen = {}
    for base, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(base, name)
            st = os.stat(path)
            seen[os.path.relpath(path, root)] = (st.st_size, st.st_mtime_ns)
    return seen


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mpirun", required=True)
    parser.add_argument("--ranks", type=int, required=True)
    parser.add_argument("--dir", required=True)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    job = shlex.split(args.mpirun) + [str(args.ranks)] + command + [f"--checkpoint-dir={args.dir}"]

    first = subprocess.Popen(job, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    # A has claimed the directory once it prints its first step.
    line = ""
    deadline = time.time() + 120
    while time.time() < deadline and not line.startswith("step 1 "):
        line = first.stdout.readline()
        if not line and first.poll() is not None:
            print(f"FAIL: the first job ended early with status {first.returncode}")
            return 1
    holder = find_rank(command[0], 0)
    partial = os.path.join(args.dir, "step-00000009.tmp")
    os.makedirs(partial)
    with open(os.path.join(partial, "rank-00000.safetensors"), "wb") as f:
        f.write(b"\0" * 4096)
    before = snapshot(args.dir)

    second = subprocess.run(job, capture_output=True, text=True, timeout=120)
    errors = [l for l in second.stderr.splitlines() if l.startswith("error:")]
    print(f"second job: status {second.returncode}")
    for l in errors:
        print(l)
    if f"pid {holder}," not in second.stderr:
        print(f"FAIL: the refusal does not name the first job's rank 0 (pid {holder})")
    if any(l.startswith("step ") for l in second.stdout.splitlines()):
        print("FAIL: the second job trained")
    after = snapshot(args.dir)
    print("checkpoint directory unchanged by the second job" if after == before
          else f"FAIL: the second job changed {sorted(set(after.items()) ^ set(before.items()))}")

    os.kill(find_rank(command[0], 0), signal.SIGTERM)
    rest, _ = first.communicate(timeout=120)
    print(f"first job: status {first.returncode}")
    for l in rest.splitlines():
        if l.startswith("stopped by"):
            print(l)
    return 0


if __name__ == "__main__":
    sys.exit(main())
