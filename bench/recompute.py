#!/usr/bin/env python3
"""What --recompute=blocks buys and costs: activation and total peak memory
per rank, traffic, and step time against the same program without it.

  python3 bench/recompute.py [--ranks 2] [--reps 2] [--steps 3]
                             [--models gpt2-tiny,gpt2] [--stages 0,3]
                             [--batch 4] [--seq-len 256]
                             [--out bench/results/recompute.md]

For each model and stage, compiles the optimizer step of --batch sequences
of --seq-len tokens over --ranks ranks twice (--recompute=none and
--recompute=blocks), runs both alternately --reps times, and writes, with
the machine description: the runtime's time per step (median over the
repetitions, min-max) and its ratio to `none`; the peak activation and
total memory the runtime's ledger measured next to what `--report`
predicted; and the bytes moved per step. The last section gives the
report's predictions for GPT-2 (124M) and Llama 3.2 1B at 1024 and 2048
tokens a sequence on 8 ranks (memory only: nothing runs). Run from the
repository root after scripts/build.sh.
"""
import argparse
import json
import os
import re
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from overlap import ROOT, machine, mpi_env, sh, token_file  # noqa: E402

ZERO_OPT = os.path.join(ROOT, "build/bin/zero-opt")
VARIANTS = ("none", "blocks")
PEAK = re.compile(r"^memory peak (\w+): (\d+) bytes$")
COMM_TOTAL = re.compile(r"^comm total: (\d+) bytes$")


def report(args):
    return json.loads(sh([ZERO_OPT, *args, "--report=json"]).stdout)


def run(exe, options):
    """Step time (ms), measured peaks by category, bytes moved per step."""
    out = sh(["mpirun", "--oversubscribe", "--bind-to", "none", "-np",
              str(options.ranks), exe, f"--data={options.data}",
              f"--steps={options.steps}"], env=mpi_env()).stdout
    time, peaks, moved = None, {}, None
    for line in out.splitlines():
        if line.startswith("time per step:"):
            time = float(line.split()[3])
        elif match := PEAK.match(line):
            peaks[match.group(1)] = int(match.group(2))
        elif match := COMM_TOTAL.match(line):
            moved = int(match.group(1)) / options.steps
    if time is None or "total" not in peaks:
        raise RuntimeError(f"no step time or ledger from {exe}:\n{out[-2000:]}")
    return time, peaks, moved


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--seq-len", type=int, default=256)
    parser.add_argument("--models", default="gpt2-tiny,gpt2")
    parser.add_argument("--stages", default="0,3")
    parser.add_argument("--out", default=os.path.join(ROOT, "bench/results/recompute.md"))
    options = parser.parse_args()
    work = tempfile.mkdtemp(prefix="zero-recompute-")
    options.data = token_file(work)

    rows = []
    for model in options.models.split(","):
        seq_len = min(options.seq_len, 64) if model == "gpt2-tiny" else options.seq_len
        for stage in map(int, options.stages.split(",")):
            programs = {}
            for variant in VARIANTS:
                args = [f"--model={model}", f"--seq-len={seq_len}",
                        f"--batch={options.batch}", f"--stage={stage}",
                        f"--world-size={options.ranks}", f"--recompute={variant}"]
                exe = os.path.join(work, f"{model}-s{stage}-{variant}")
                sh([ZERO_OPT, *args, "-o", exe])
                programs[variant] = (exe, report(args))
            measured = {v: [] for v in VARIANTS}
            for _ in range(options.reps):  # alternating
                for variant, (exe, _) in programs.items():
                    measured[variant].append(run(exe, options))
                    print(f"{model} stage {stage} {variant}: "
                          f"{measured[variant][-1][0]:.1f} ms", flush=True)
            base = statistics.median(t for t, _, _ in measured["none"])
            for variant, (exe, rep) in programs.items():
                times = [t for t, _, _ in measured[variant]]
                _, peaks, moved = measured[variant][-1]
                predicted = rep["peak_memory_bytes"]
                rows.append((model, seq_len, stage, variant,
                             statistics.median(times), min(times), max(times),
                             statistics.median(times) / base,
                             peaks["activation"], predicted["activation"],
                             peaks["total"], predicted["total"], moved))

    paper = []
    for model, seq_lens in (("gpt2", (1024,)), ("llama3.2-1b", (1024, 2048))):
        for seq_len in seq_lens:
            for stage in (0, 3):
                args = [f"--model={model}", f"--seq-len={seq_len}", "--batch=16",
                        f"--stage={stage}", "--world-size=8", "--precision=bf16"]
                none = report(args + ["--recompute=none"])
                blocks = report(args + ["--recompute=blocks"])
                paper.append((model, seq_len, stage,
                              none["peak_memory_bytes"]["activation"],
                              blocks["peak_memory_bytes"]["activation"],
                              none["peak_memory_bytes"]["total"],
                              blocks["peak_memory_bytes"]["total"],
                              blocks["recompute"]["recomputed_ops"]))

    with open(options.out, "w") as f:
        f.write("# What --recompute=blocks buys and costs\n\n")
        f.write(f"Machine: {machine()}.\n\n")
        f.write(f"Command: `python3 bench/recompute.py --ranks {options.ranks} "
                f"--reps {options.reps} --steps {options.steps} --batch {options.batch} "
                f"--seq-len {options.seq_len} --models {options.models} "
                f"--stages {options.stages}`\n\n")
        f.write("One optimizer step of `--batch` sequences over the ranks, float32 "
                "(gpt2-tiny's sequences are at most its 64 positions). Step time: the "
                "runtime's time per step, median over the repetitions (min-max), runs "
                "alternated. Memory: the runtime's ledger (measured) and `--report` "
                "(predicted), peak per rank. Traffic: the ledger's bytes per step. The "
                "losses are bit for bit the same (test/e2e/recompute.test).\n\n")
        f.write("| model | tokens | stage | recompute | ms/step | (min-max) | vs none | "
                "activation MB measured | predicted | total MB measured | predicted | "
                "traffic MB/step |\n")
        f.write("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
        for (model, seq_len, stage, variant, t, lo, hi, ratio, act, act_pred,
             total, total_pred, moved) in rows:
            f.write(f"| {model} | {seq_len} | {stage} | {variant} | {t:.1f} | "
                    f"{lo:.1f}-{hi:.1f} | {ratio:.2f}x | {act / 1e6:.2f} | "
                    f"{act_pred / 1e6:.2f} | {total / 1e6:.2f} | "
                    f"{total_pred / 1e6:.2f} | {moved / 1e6:.2f} |\n")
        f.write("\n## Predicted: 8 ranks, bf16, 16 sequences a step\n\n")
        f.write("`zero-opt --report` (whose figures the runtime's ledger equals) "
                "for two sequences a rank.\n\n")
        f.write("| model | tokens | stage | activation GB, none | blocks | total GB, "
                "none | blocks | ops run again |\n|---|---|---|---|---|---|---|---|\n")
        for (model, seq_len, stage, act_none, act_blocks, total_none,
             total_blocks, ops) in paper:
            f.write(f"| {model} | {seq_len} | {stage} | {act_none / 1e9:.2f} | "
                    f"{act_blocks / 1e9:.2f} | {total_none / 1e9:.2f} | "
                    f"{total_blocks / 1e9:.2f} | {ops} |\n")
    print(f"wrote {options.out}")


if __name__ == "__main__":
    main()
