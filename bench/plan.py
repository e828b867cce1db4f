#!/usr/bin/env python3
"""The planner's choices, and its predictions against a run on this machine.

  python3 bench/plan.py [--reps 2] [--steps 5] [--out bench/results/plan.md]
                        [--measured-only]

1. Calibrates this machine with the runtime's --calibrate on 2 ranks (GPT-2
   124M, 4 x 128 tokens, --data: the program's own GEMMs).
2. With that time model, `zero-opt --plan` for GPT-2 124M and Llama 3.2 1B
   (bf16, 16 sequences of 1024 tokens a step) at N = 2, 4, 8 under three
   memory limits each: the chosen configuration, its predicted peak and
   step time, and the runner-up. (The calibration is of 2 ranks here; at 4
   and 8 ranks the link numbers are this machine's, so the tables show what
   the planner trades, not a cluster's times.)
3. At N = 2 on this machine: GPT-2 124M (fp32, 4 x 128 tokens) under three
   limits, `--stage=auto` compiles the choice, which runs --reps times for
   --steps steps; the runtime's time per step (the median of the steps
   after each run's first) and its ledger's
   peak against the prediction. The first- and second-ranked configurations
   of the smallest limit run too, to see whether the ranking holds.
   --measured-only skips step 2 (about an hour of planning on 2 cores).
Run from the repository root after scripts/build.sh.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from overlap import ROOT, machine, mpi_env, sh, token_file  # noqa: E402

ZERO_OPT = os.path.join(ROOT, "build/bin/zero-opt")
ROW = re.compile(r"^\s+(\d+)\s+([0-9.]+ (?:s|ms|us))\s+(\d+)\s+(\d+)\s+(--.*)$")
CHOSEN = re.compile(r"^chosen: (.*) \(predicted peak (\d+) bytes a rank, step (.*)\)$")


def seconds(text):
    value, unit = text.split()
    return float(value) * {"s": 1, "ms": 1e-3, "us": 1e-6}[unit]


def plan(args):
    """The ranked rows (step s, peak, flags) and the count searched."""
    result = subprocess.run([ZERO_OPT, *args, "--plan"], capture_output=True,
                            text=True)
    rows = []
    searched = fits = 0
    for line in result.stdout.splitlines():
        if match := ROW.match(line):
            rows.append((seconds(match.group(2)), int(match.group(3)),
                         match.group(5)))
        elif line.startswith("searched"):
            numbers = re.findall(r"\d+", line)
            searched, fits = int(numbers[0]), int(numbers[3])
    return rows, searched, fits, result.stderr.strip()


def run(exe, data, ranks, steps):
    """One run: the median step time after the first (which warms the
    arenas and the caches, and which the prediction, of a steady step, does
    not include), from the runtime's --log-json, and the ledger's peak."""
    log = exe + ".jsonl"
    out = sh(["mpirun", "--oversubscribe", "--bind-to", "none", "-np",
              str(ranks), exe, f"--data={data}", f"--steps={steps}",
              f"--log-json={log}"], env=mpi_env()).stdout
    with open(log) as f:
        ms = [json.loads(line)["ms_per_step"] for line in f
              if "ms_per_step" in line]
    time = statistics.median(ms[1:]) * 1e-3
    peak = None
    for line in out.splitlines():
        if line.startswith("memory peak total:"):
            peak = int(line.split()[3])
    return time, peak


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--out", default=os.path.join(ROOT, "bench/results/plan.md"))
    parser.add_argument("--measured-only", action="store_true",
                        help="skip the planner's tables (step 2; about an hour "
                             "on 2 cores) and write step 3 alone")
    options = parser.parse_args()
    work = tempfile.mkdtemp(prefix="zero-plan-")
    data = token_file(work)
    gpt2 = ["--model=gpt2", "--batch=4", "--seq-len=128"]

    calibration = os.path.join(work, "machine.json")
    exe = os.path.join(work, "calibrate")
    sh([ZERO_OPT, *gpt2, "--stage=0", "--world-size=2", "-o", exe])
    calibrated = sh(["mpirun", "--oversubscribe", "--bind-to", "none", "-np", "2",
                     exe, f"--calibrate={calibration}", f"--data={data}"],
                    env=mpi_env()).stdout.strip().splitlines()[-1]
    print(calibrated, flush=True)
    model = [f"--calibration={calibration}"]

    # The planner's tables: limits chosen around each model's range.
    tables = []
    for name, args, limits in () if options.measured_only else (
            ("GPT-2 124M", ["--model=gpt2", "--seq-len=1024", "--batch=16",
                            "--precision=bf16"], ("8GB", "3GB", "1.5GB")),
            ("Llama 3.2 1B", ["--model=llama3.2-1b", "--seq-len=1024", "--batch=16",
                              "--precision=bf16"], ("40GB", "16GB", "8GB"))):
        for world in (2, 4, 8):
            for limit in limits:
                rows, searched, fits, error = plan(
                    [*args, f"--world-size={world}", f"--memory-limit={limit}", *model])
                tables.append((name, world, limit, searched, fits, rows[:2], error))
                print(name, world, limit, rows[0][2] if rows else error, flush=True)

    # Measured against predicted at N = 2.
    measured = []
    for limit in ("2.2GB", "1.45GB", "1.39GB"):
        rows, searched, fits, error = plan(
            [*gpt2, "--world-size=2", f"--memory-limit={limit}", *model])
        if not rows:
            measured.append((limit, None, None, None, None, None, error))
            continue
        candidates = rows[:2] if limit == "1.39GB" else rows[:1]
        for rank, (step, peak, flags) in enumerate(candidates, start=1):
            exe = os.path.join(work, f"gpt2-{limit}-{rank}")
            sh([ZERO_OPT, *gpt2, "--world-size=2", *flags.split(), *model,
                "-o", exe])
            times, peaks = [], set()
            for _ in range(options.reps):
                t, p = run(exe, data, 2, options.steps)
                times.append(t)
                peaks.add(p)
            t = statistics.median(times)
            measured.append((limit, rank, flags, step, t, (peak, peaks), ""))
            print(limit, rank, flags, f"predicted {step:.3f} s measured {t:.3f} s",
                  flush=True)

    with open(options.out, "w") as f:
        f.write("# The planner: choices, and predictions against runs\n\n")
        f.write(f"Machine: {machine()}.\n\n")
        f.write(f"Command: `python3 bench/plan.py --reps {options.reps} --steps "
                f"{options.steps}{' --measured-only' if options.measured_only else ''}`\n\n")
        f.write(f"Time model: the runtime's `--calibrate` on 2 ranks here (GPT-2 "
                f"124M, its own GEMMs): `{calibrated}`\n\n")
        if tables:
            f.write("## Choices (`zero-opt --plan`)\n\n16 sequences of 1024 tokens "
                    "a step, bf16 with fp32 master weights and moments; the "
                    "limit is per rank. At 4 and 8 ranks the link numbers are "
                    "this machine's (2 ranks on one host): the tables show what "
                    "the planner trades for memory, not a cluster's step "
                    "times.\n\n")
            f.write("| model | N | limit | searched | fit | chosen | peak GB | "
                    "step s | runner-up | peak GB | step s |\n"
                    "|---|---|---|---|---|---|---|---|---|---|---|\n")
        for name, world, limit, searched, fits, rows, error in tables:
            if not rows:
                f.write(f"| {name} | {world} | {limit} | {searched} | 0 | "
                        f"{error} | | | | | |\n")
                continue
            cells = [f"`{r[2]}` | {r[1] / 1e9:.2f} | {r[0]:.2f}" for r in rows]
            while len(cells) < 2:
                cells.append("- | | ")
            f.write(f"| {name} | {world} | {limit} | {searched} | {fits} | "
                    f"{cells[0]} | {cells[1]} |\n")
        f.write("\n## Predicted against measured, N = 2 on this machine\n\n"
                f"GPT-2 124M, fp32, 4 x 128 tokens a step; time per step: the "
                f"runtime's (`--log-json`), median of the steps after the first "
                f"in {options.reps} runs of {options.steps} steps; peak: the "
                "runtime's ledger (max over ranks). Under the smallest limit "
                "the first two ranked configurations run.\n\n")
        f.write("| limit | rank | configuration | predicted step s | measured | "
                "measured / predicted | predicted peak | measured peak |\n"
                "|---|---|---|---|---|---|---|---|\n")
        for limit, rank, flags, step, t, peaks, error in measured:
            if rank is None:
                f.write(f"| {limit} | - | {error} | | | | | |\n")
                continue
            predicted_peak, measured_peaks = peaks
            f.write(f"| {limit} | {rank} | `{flags}` | {step:.3f} | {t:.3f} | "
                    f"{t / step:.2f} | {predicted_peak} | "
                    f"{', '.join(str(p) for p in sorted(measured_peaks))} |\n")
    print(f"wrote {options.out}")


if __name__ == "__main__":
    main()
