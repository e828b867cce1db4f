#!/usr/bin/env python3
"""What --deterministic costs: step time, memory and traffic against the
default floating-point sums, measured here, and predicted for 8 GPUs.

  python3 bench/deterministic.py [--ranks 2] [--reps 2] [--models gpt2-tiny,gpt2]
                                 [--stages 0,3] [--out bench/results/deterministic.md]

For each model and stage, compiles four programs of the same optimizer step
(--batch sequences of --seq-len tokens over --ranks ranks):
  float      the default: one micro-batch of batch/ranks sequences a rank
  float-1    the default with deterministic's chunking: micro-batches of one
             sequence a rank, accumulated locally (--grad-accum=batch/ranks)
  exact-1    --deterministic: chunks of one sequence (what gives the same
             bits at every world size down to batch/ranks = 1)
  exact-all  --deterministic --chunk-rows=batch/ranks: one chunk a rank, so
             only the exact sums differ from `float`
runs them alternately --reps times (the runtime's "time per step" over
--steps steps; the median over the repetitions, with the spread), and writes the
step times, their ratios to `float`, and the predicted peak memory and
traffic per rank (zero-opt --report, which the runtime's ledger equals: see
test/e2e/deterministic.test) to the results file with the machine
description. The last section predicts the same ratios for 8 GPUs with
zero-opt's time model (--report's schedule) at H100-class numbers: the exact
sums are not implemented on the CUDA backend (NCCL has no 128-bit sum), so
that part is on paper. Run from the repository root after scripts/build.sh.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from overlap import ROOT, machine, mpi_env, sh, token_file  # noqa: E402

ZERO_OPT = os.path.join(ROOT, "build/bin/zero-opt")


def variants(batch, ranks):
    per_rank = batch // ranks
    return {
        "float": [],
        "float-1": [f"--grad-accum={per_rank}", "--accumulate=local"]
        if per_rank > 1 else [],
        "exact-1": ["--deterministic"],
        "exact-all": ["--deterministic", f"--chunk-rows={per_rank}"],
    }


def model_batch(name, flags, batch, ranks):
    """--batch for zero-opt: the step's rows, except for float-1, whose
    --batch is one micro-batch (one row a rank)."""
    return ranks if any(f.startswith("--grad-accum") for f in flags) else batch


def compile_args(options, model, stage, name, flags):
    return [f"--model={model}", f"--seq-len={options.seq_len}",
            f"--batch={model_batch(name, flags, options.batch, options.ranks)}",
            f"--stage={stage}", f"--world-size={options.ranks}", *flags]


def report(args, extra=()):
    out = sh([ZERO_OPT, *args, "--report=json", *extra]).stdout
    return json.loads(out)


def run(exe, options):
    out = sh(["mpirun", "--oversubscribe", "--bind-to", "none", "-np",
              str(options.ranks), exe, f"--data={options.data}",
              f"--steps={options.steps}", "--quiet-memory"], env=mpi_env()).stdout
    for line in out.splitlines():
        if line.startswith("time per step:"):
            return float(line.split()[3])
    raise RuntimeError(f"no step time from {exe}:\n{out[-2000:]}")


def traffic(rep):
    bytes_per_kind = rep["traffic_bytes_per_step"]
    if isinstance(bytes_per_kind, dict):
        return sum(v for k, v in bytes_per_kind.items() if k != "total")
    return bytes_per_kind


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--seq-len", type=int, default=128)
    parser.add_argument("--models", default="gpt2-tiny,gpt2")
    parser.add_argument("--stages", default="0,3")
    parser.add_argument("--out", default=os.path.join(ROOT, "bench/results/deterministic.md"))
    options = parser.parse_args()
    work = tempfile.mkdtemp(prefix="zero-det-")
    options.data = token_file(work)

    rows = []
    for model in options.models.split(","):
        for stage in map(int, options.stages.split(",")):
            programs = {}
            for name, flags in variants(options.batch, options.ranks).items():
                args = compile_args(options, model, stage, name, flags)
                exe = os.path.join(work, f"{model}-s{stage}-{name}")
                sh([ZERO_OPT, *args, "-o", exe])
                programs[name] = (exe, report(args))
            times = {name: [] for name in programs}
            for _ in range(options.reps):  # alternating
                for name, (exe, _) in programs.items():
                    times[name].append(run(exe, options))
                    print(f"{model} stage {stage} {name}: {times[name][-1]:.1f} ms",
                          flush=True)
            base = statistics.median(times["float"])
            for name, (exe, rep) in programs.items():
                t = statistics.median(times[name])
                rows.append((model, stage, name, t, min(times[name]),
                             max(times[name]), t / base,
                             rep["peak_memory_bytes"]["total"], traffic(rep),
                             rep["micro_batches"]))

    # On paper: 8 GPUs, GPT-2 (124M) at the same per-rank work, H100-class
    # numbers for float32 (60 TFLOP/s without tensor cores, 3 TB/s HBM,
    # 150 GB/s of NVLink bus bandwidth a direction, 5 us a ring step).
    paper = []
    h100 = ["--compute-rate=60000", "--memory-bandwidth=3000",
            "--link-bandwidth=150", "--link-latency=5"]
    for stage in (0, 3):
        for name, flags in variants(8 * 2, 8).items():
            args = [f"--model=gpt2", "--seq-len=1024",
                    f"--batch={8 if any(f.startswith('--grad-accum') for f in flags) else 16}",
                    f"--stage={stage}", "--world-size=8", *flags]
            rep = report(args, h100)
            paper.append((stage, name, rep["schedule"]["step_seconds"] * 1e3,
                          rep["peak_memory_bytes"]["total"], traffic(rep)))

    with open(options.out, "w") as f:
        f.write("# The cost of --deterministic\n\n")
        f.write(f"Machine: {machine()}.\n\n")
        f.write(f"Command: `python3 bench/deterministic.py --ranks {options.ranks} "
                f"--reps {options.reps} --steps {options.steps} --batch {options.batch} "
                f"--seq-len {options.seq_len} --models {options.models} "
                f"--stages {options.stages}`\n\n")
        f.write("One optimizer step of `--batch` sequences over the ranks, float32. "
                "`float`: the default (one micro-batch a rank). `float-1`: the "
                "default with `--deterministic`'s chunking (micro-batches of one "
                "sequence a rank, local accumulation). `exact-1`: `--deterministic` "
                "(chunks of one sequence: bitwise identical at every world size "
                "and stage). `exact-all`: `--deterministic --chunk-rows=batch/ranks` "
                "(one chunk a rank: only the sums differ from `float`). Step time: "
                "the runtime's time per step, median over the repetitions (min-max), "
                "runs alternated. Memory and traffic per rank per step: `--report` "
                "(equal to the runtime's ledger).\n\n")
        f.write("| model | stage | variant | micro-batches | ms/step | (min-max) | "
                "vs float | peak memory MB | traffic MB |\n")
        f.write("|---|---|---|---|---|---|---|---|---|\n")
        for (model, stage, name, t, lo, hi, ratio, mem, tr, micro) in rows:
            f.write(f"| {model} | {stage} | {name} | {micro} | {t:.1f} | "
                    f"{lo:.1f}-{hi:.1f} | {ratio:.2f}x | {mem / 1e6:.1f} | "
                    f"{tr / 1e6:.2f} |\n")
        f.write("\n## On paper: 8 GPUs\n\n")
        f.write("GPT-2 (124M), 16 sequences of 1024 tokens a step over 8 ranks, "
                "predicted by zero-opt's time model (`--report`'s schedule) with "
                "`" + " ".join(h100) + "` (float32 without tensor cores, HBM, "
                "NVLink bus bandwidth). The CUDA backend does not run "
                "`--deterministic` programs (NCCL has no 128-bit sum); these are "
                "the time model's numbers for a backend that moves the 16-byte "
                "elements.\n\n")
        f.write("| stage | variant | predicted ms/step | vs float | peak memory MB | "
                "traffic MB |\n|---|---|---|---|---|---|\n")
        base = {s: t for (s, n, t, _, _) in paper if n == "float"}
        for (stage, name, t, mem, tr) in paper:
            f.write(f"| {stage} | {name} | {t:.2f} | {t / base[stage]:.2f}x | "
                    f"{mem / 1e6:.0f} | {tr / 1e6:.1f} |\n")
    print(f"wrote {options.out}")


if __name__ == "__main__":
    main()
