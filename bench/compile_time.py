#!/usr/bin/env python3
"""Compile time of zero-opt, one binary against another, in the same run.

  bench/compile_time.py BASELINE_ZERO_OPT CANDIDATE_ZERO_OPT [--runs N]

Compiles GPT-2 124M at stage 3 on 4 ranks (--emit=mlir: the whole pipeline
to the LLVM dialect; and -o exe: through LLVM to a linked executable) with
each binary, alternating, and prints the median CPU time (user + system) of
each and the candidate's ratio to the baseline. CPU time, not wall time: a
loaded machine stretches wall time but hardly the CPU a compile needs.
The baseline is zero-opt built from an older commit (a second build
directory: git worktree add OLD_DIR COMMIT; cmake -B OLD_DIR/build ...).
"""
import argparse
import os
import resource
import statistics
import subprocess
import tempfile

CONFIGS = {
    "gpt2 stage 3 --emit=mlir": ["--model=gpt2", "--stage=3", "--world-size=4",
                                 "--emit=mlir", "-o", os.devnull],
    "gpt2 stage 3 -o exe": ["--model=gpt2", "--stage=3", "--world-size=4",
                            "-o", "EXE"],
}


def cpu_seconds(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("baseline")
    parser.add_argument("candidate")
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        print(f"| configuration | baseline (s) | candidate (s) | ratio |")
        print(f"|---|---|---|---|")
        for name, flags in CONFIGS.items():
            flags = [os.path.join(tmp, "g.exe") if f == "EXE" else f
                     for f in flags]
            times = {"baseline": [], "candidate": []}
            for _ in range(args.runs):
                for which in ("baseline", "candidate"):
                    binary = getattr(args, which)
                    times[which].append(cpu_seconds([binary] + flags))
            base = statistics.median(times["baseline"])
            cand = statistics.median(times["candidate"])
            print(f"| {name} | {base:.3f} | {cand:.3f} | {cand / base:.3f} |")


if __name__ == "__main__":
    main()
