#!/usr/bin/env python3
"""A paper study: the planner's choice for Llama 3.1 8B and 70B on 64 and
512 H100-class GPUs, with its predicted tokens/s, next to published figures.

  python3 bench/scale.py [--out bench/results/scale.md]

No GPU is used: zero-opt compiles each configuration for the world size and
predicts its peak memory (exact, as the runtime's ledger counts it) and its
step time (the time model below, a first-order model: a roofline per kernel
and a ring per collective, with a second, slower level of links between
nodes). The machine is torchtitan's published one (Grand Teton): 8 H100 a
node on NVLink, 400 Gb/s RDMA a GPU between nodes.

  compute       700 TFLOP/s  bf16 GEMMs (71% of the 989 dense peak)
  memory        2400 GB/s    HBM2e of torchtitan's H100s
  NVLink        350 GB/s     a ring's bus bandwidth in a node, 5 us a step
  between nodes 40 GB/s      of 400 Gb/s a GPU, 15 us a step
  host memory   60 GB/s      a GPU's eighth of two sockets' DDR5, for the
                             offloaded AdamW (--offload=optimizer)
  host link     50 GB/s      PCIe Gen5 x16, the offload's copies
  memory limit  80 GiB       a rank, what the planner must fit under

The planner searches the stage, the shard group size (flat, or groups of
2 ... 256 ranks), the units kept gathered, the recomputed units and the
optimizer's offload to the host; the
prefetch distance (1) and the bucket size (25 MiB) are fixed to keep the
search short. Each model's global batch is torchtitan's local batch x N
sequences of 8192 tokens (8B: 2 a GPU; 70B: 1 a GPU). Run from the
repository root after scripts/build.sh.
"""
import argparse
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ZERO_OPT = os.path.join(ROOT, "build/bin/zero-opt")
ROW = re.compile(r"^\s+(\d+)\s+([0-9.]+ (?:s|ms|us))\s+(\d+)\s+(\d+)\s+(--.*)$")
SEARCHED = re.compile(r"^searched (\d+) configurations.*?(\d+) fit", re.M)
CHOSEN = re.compile(r"^chosen: (.*) \(predicted peak (\d+) bytes a rank, step (.*)\)$")
STEP = re.compile(r"^  step (\S+ (?:s|ms|us)): kernels (\S+ (?:s|ms|us)), waits "
                  r"blocking them (\S+ (?:s|ms|us))")
TOTAL = re.compile(r"^  total\s+(\d+)$")

TIME_MODEL = ["--compute-rate=700000", "--memory-bandwidth=2400",
              "--link-bandwidth=350", "--link-latency=5",
              "--ranks-per-node=8", "--inter-node-bandwidth=40",
              "--inter-node-latency=15", "--host-memory-bandwidth=60",
              "--host-link-bandwidth=50"]
LIMIT = "80GiB"
FIXED = ["--prefetch=1", "--bucket-bytes=26214400"]
SEQ = 8192
MODELS = [
    ("Llama 3.1 8B", ["--model=llama3.1-8b"], 2),
    ("Llama 3.1 70B",
     [f"--model-config={os.path.join(ROOT, 'bench/configs/llama3.1-70b.json')}"],
     1),
]
WORLDS = [64, 512]

# Published figures for the same models on H100s (torchtitan's
# docs/performance.md, Grand Teton; bf16, no torch.compile, no Float8). None
# is for exactly these world sizes: they are the nearest published.
PUBLISHED = {
    "Llama 3.1 8B": "torchtitan FSDP (1D), 8 H100, local batch 2 x 8192, "
                    "selective activation checkpointing: 5,762 tokens/s a "
                    "GPU (82.4 GiB); at 8 and 128 GPUs 33-39% MFU",
    "Llama 3.1 70B": "torchtitan runs 70B with FSDP + tensor parallel (2D) "
                     "on 256 H100s; its 1D figure is for 64 A100s (Llama 3 "
                     "70B, local batch 1, full checkpointing: 331 tokens/s "
                     "a GPU, 51.7% MFU)",
}


def seconds(text):
    value, unit = text.split()
    return float(value) * {"s": 1, "ms": 1e-3, "us": 1e-6}[unit]


def short(flags):
    """Flags with unit lists as ranges: model.layers.0,...,model.layers.15
    -> model.layers.0-15."""
    def ranges(match):
        units = match.group(2).split(",")
        parts = [re.fullmatch(r"(.*\.)(\d+)", u) for u in units]
        if not all(parts) or len({p.group(1) for p in parts}) != 1:
            return match.group(0)
        numbers = [int(p.group(2)) for p in parts]
        if numbers != list(range(numbers[0], numbers[0] + len(numbers))):
            return match.group(0)
        return f"{match.group(1)}{parts[0].group(1)}{numbers[0]}-{numbers[-1]}"
    return re.sub(r"(--(?:recompute|keep-gathered)=)(\S+)", ranges, flags)


def zero_opt(args):
    return subprocess.run([ZERO_OPT, *args], check=True, capture_output=True,
                          text=True).stdout


def plan(model_args, world, local_batch):
    args = [*model_args, f"--batch={local_batch * world}", f"--seq-len={SEQ}",
            "--precision=bf16", f"--world-size={world}",
            f"--memory-limit={LIMIT}", *TIME_MODEL, *FIXED]
    started = time.time()
    out = zero_opt([*args, "--plan"])
    elapsed = time.time() - started
    searched = SEARCHED.search(out)
    rows = [ROW.match(l) for l in out.splitlines()]
    rows = [r for r in rows if r]
    chosen = next(CHOSEN.match(l) for l in out.splitlines() if CHOSEN.match(l))
    return args, out, rows, chosen, searched, elapsed


def flat_fsdp(args):
    """The FSDP-like configuration (flat stage 3, every block recomputed) of
    the same flags, for comparison."""
    out = zero_opt([*args, "--stage=3", "--recompute=blocks", "--report"])
    step = next(STEP.match(l) for l in out.splitlines() if STEP.match(l))
    total = next(int(TOTAL.match(l).group(1)) for l in out.splitlines()
                 if TOTAL.match(l))
    return seconds(step.group(1)), total


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=os.path.join(ROOT, "bench/results/scale.md"))
    options = parser.parse_args()
    lines = ["# Paper study: the planner on 64 and 512 H100s", "",
             "`python3 bench/scale.py` (no GPU: compile and predict). "
             "Generated; see the script's docstring for the model of the "
             "machine.", "",
             "Time model: " + " ".join(TIME_MODEL) + f"; --memory-limit={LIMIT}; "
             "fixed: " + " ".join(FIXED) + "; bf16, sequences of 8192 "
             "tokens.", ""]
    lines += ["| model | GPUs | global batch | searched (fit) | chosen | peak a GPU | "
              "step | tokens/s a GPU | flat stage 3 + recompute: step, peak | "
              "runner-up |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for name, model_args, local in MODELS:
        for world in WORLDS:
            args, out, rows, chosen, searched, elapsed = plan(model_args, world,
                                                             local)
            step = seconds(chosen.group(3))
            tokens = local * SEQ / step
            flat_step, flat_peak = flat_fsdp(args)
            runner = rows[1] if len(rows) > 1 else None
            lines.append(
                f"| {name} | {world} | {local * world} x {SEQ} | "
                f"{searched.group(1)} ({searched.group(2)}) | "
                f"`{short(chosen.group(1))}` | {int(chosen.group(2)) / 2**30:.1f} GiB | "
                f"{step:.2f} s | {tokens:,.0f} | {flat_step:.2f} s, "
                f"{flat_peak / 2**30:.1f} GiB | "
                + (f"`{short(runner.group(5))}` {runner.group(2)}" if runner
                   else "-")
                + " |")
            print(lines[-1], f"({elapsed:.0f} s)", flush=True)
    lines += ["", "Published figures, for reference:", ""]
    lines += [f"- **{name}**: {text}." for name, text in PUBLISHED.items()]
    # The hand-written reading of the table, if the file has one, stays.
    kept = ""
    if os.path.exists(options.out):
        text = open(options.out).read()
        if "\n## What it shows" in text:
            kept = text[text.index("\n## What it shows"):]
    with open(options.out, "w") as f:
        f.write("\n".join(lines) + "\n" + kept)


if __name__ == "__main__":
    sys.exit(main())
