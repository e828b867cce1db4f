#!/usr/bin/env python3
"""Overlap benchmark: GPT-2 (124M) at ZeRO stage 3 with prefetch off and on,
and with prefetch and bucketing.

  python3 bench/overlap.py [--ranks 2] [--steps 4] [--out bench/results/overlap.md]

Compiles `zero-opt --model=gpt2 --precision=bf16 --stage=3` twice, with
blocking collectives (--prefetch=-1) and with asynchronous, prefetched ones
(--prefetch=1), runs each under `mpirun -np RANKS --trace=...`, and reports
the step time, the collective time and the part of it not hidden behind
compute (from the runtime's trace), and the ratios between the two runs,
with the machine description, to the results file. Run from the repository
root after scripts/build.sh.
"""
import argparse
import datetime
import os
import platform
import re
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
STEP_TIME = re.compile(r"^time per step: ([\d.]+) ms")
EXPOSED = re.compile(r"^comm exposed: ([\d.]+) ms of ([\d.]+) ms")


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def machine():
    cpu = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    commit = sh(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"]).stdout.strip()
    return (f"{cpu}, {os.cpu_count()} cores, {mem:.0f} GiB, "
            f"{platform.system()} {platform.release()}, commit {commit}")


def mpi_env():
    """mpirun's environment for the benches: root allowed, one OpenBLAS
    thread a rank, and, as ranks and their communication threads share the
    cores, an idle MPI progress loop that yields rather than spin against
    the kernels."""
    return dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
                OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OPENBLAS_NUM_THREADS="1",
                OMPI_MCA_mpi_yield_when_idle="1")


def token_file(work, name="text"):
    """data/shakespeare.txt as llm.c tokens in `work`: the training file."""
    sh([sys.executable, os.path.join(ROOT, "scripts/prepare_data.py"),
        os.path.join(ROOT, "data/shakespeare.txt"), "-o",
        os.path.join(work, name)])
    return os.path.join(work, f"{name}_train.bin")


def run(variant, prefetch, options, work, extra=()):
    exe = os.path.join(work, f"gpt2-{variant}")
    sh([os.path.join(ROOT, "build/bin/zero-opt"), "--model=gpt2",
        "--precision=bf16", f"--batch={options.batch}",
        f"--seq-len={options.seq_len}", "--stage=3",
        f"--world-size={options.ranks}", f"--prefetch={prefetch}", *extra,
        "-o", exe])
    out = sh(["mpirun", "--oversubscribe", "--bind-to", "none", "-np",
              str(options.ranks), exe, f"--data={options.data}",
              f"--steps={options.steps}", f"--trace={exe}.trace.json"],
             env=mpi_env()).stdout
    step = exposed = total = None
    for line in out.splitlines():
        if m := STEP_TIME.match(line):
            step = float(m.group(1))
        if m := EXPOSED.match(line):
            exposed, total = float(m.group(1)), float(m.group(2))
    if step is None or exposed is None:
        sys.exit(f"{variant}: no step time or exposure line in\n{out}")
    return step, exposed, total


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--seq-len", type=int, default=64)
    parser.add_argument("--out", default=os.path.join(ROOT, "bench/results/overlap.md"))
    options = parser.parse_args()
    work = os.path.join(ROOT, "build/bench")
    os.makedirs(work, exist_ok=True)
    options.data = token_file(work, "shakespeare")
    off = run("prefetch-off", -1, options, work)
    on = run("prefetch-on", 1, options, work)
    # One all-gather per transformer block and 25 MiB gradient buckets
    # (PyTorch DDP's default) on top of prefetch.
    bucketed = run("prefetch-bucketed", 1, options, work,
                   ["--bucket-bytes=26214400"])
    command = (f"python3 bench/overlap.py --ranks {options.ranks} --steps "
               f"{options.steps} --batch {options.batch} --seq-len {options.seq_len}")
    lines = [
        f"# Overlap benchmark ({datetime.date.today()})", "",
        f"Machine: {machine()}", "",
        f"Command: `{command}`", "",
        f"GPT-2 (124M), bf16, ZeRO stage 3, {options.ranks} ranks (mpirun), "
        f"global batch {options.batch} x {options.seq_len} tokens, "
        f"{options.steps} steps; times from rank 0, exposure is the max over "
        "ranks of collective time on the comm track not overlapped by "
        "kernels on the compute track (runtime --trace). Open MPI runs with "
        "mpi_yield_when_idle=1: each rank's main and communication threads "
        "share the machine's cores.", "",
        "| run | step time (ms) | collective time (ms) | exposed (ms) | hidden |",
        "|---|---|---|---|---|"]
    for name, (step, exposed, total) in (
            ("prefetch off (blocking)", off),
            ("prefetch on (async, distance 1)", on),
            ("prefetch on + bucketing (block gathers, 25 MiB buckets)",
             bucketed)):
        lines.append(f"| {name} | {step:.1f} | {total:.1f} | {exposed:.1f} | "
                     f"{100 * (1 - exposed / total):.1f}% |")
    lines += ["", f"Step time on / off: {on[0] / off[0]:.3f}; exposed "
              f"communication on / off: {on[1] / off[1]:.3f}; step time "
              f"bucketed / off: {bucketed[0] / off[0]:.3f}, exposed "
              f"communication bucketed / off: {bucketed[1] / off[1]:.3f}."]
    text = "\n".join(lines) + "\n"
    os.makedirs(os.path.dirname(options.out), exist_ok=True)
    with open(options.out, "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
