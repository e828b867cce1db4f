"""Gradient accumulation trains the same model as one big batch.

  grad_accum.py --out DIR --mpirun CMD --data TOKENS

Compiles gpt2-tiny with a global batch of 8 sequences at stage 0 on one rank
(the reference), and the same 8 sequences per optimizer step as K
micro-batches of 8/K (`--batch=8/K --grad-accum=K`) at several stages and
world sizes; the runtime feeds micro-batch k of step s the global batch
s*K + k, so every run sees the same sequences per step. In fp32 the losses
agree within 1e-5 relative; bf16 runs accumulate bf16 gradients in float32
and agree with the fp32 reference within 2e-2.
"""
import argparse
import os
import re
import shlex
import subprocess
import sys

STEP = re.compile(r"^step (\d+) loss (\S+)$")
STEPS = 10


def losses(out, mpirun, data, name, world, args):
    return train(out, mpirun, data, name, world, args)[0]


def train(out, mpirun, data, name, world, args):
    """Compiles gpt2-tiny with `args`, trains it STEPS steps on `world`
    ranks, and returns the losses and the run's output."""
    exe = os.path.join(out, name)
    subprocess.run(["zero-opt", "--model=gpt2-tiny", "--seq-len=16", "-o", exe]
                   + args, check=True)
    run = subprocess.run(shlex.split(mpirun) + [str(world), exe,
                                                f"--data={data}",
                                                f"--steps={STEPS}",
                                                "--lr=0.002"],
                         capture_output=True, text=True, timeout=300)
    if run.returncode != 0:
        sys.exit(f"FAIL {name}: exit {run.returncode}\n{run.stdout}{run.stderr}")
    found = [float(m.group(2)) for line in run.stdout.splitlines()
             if (m := STEP.match(line))]
    if len(found) != STEPS:
        sys.exit(f"FAIL {name}: {len(found)} step lines\n{run.stdout}")
    return found, run.stdout


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--mpirun", required=True)
    parser.add_argument("--data", required=True)
    options = parser.parse_args()
    os.makedirs(options.out, exist_ok=True)
    reference = losses(options.out, options.mpirun, options.data, "reference",
                       1, ["--batch=8", "--stage=0"])
    runs = [("K=2 stage 0 on 1 rank", 1, "fp32", 2, 0),
            ("K=2 stage 2 on 2 ranks", 2, "fp32", 2, 2),
            ("K=4 stage 3 on 2 ranks", 2, "fp32", 4, 3),
            ("K=2 stage 1 on 4 ranks", 4, "fp32", 2, 1),
            ("K=2 stage 3 on 2 ranks bf16", 2, "bf16", 2, 3)]
    for name, world, precision, k, stage in runs:
        args = [f"--batch={8 // k}", f"--grad-accum={k}", f"--stage={stage}",
                f"--world-size={world}", f"--precision={precision}"]
        got = losses(options.out, options.mpirun, options.data,
                     name.replace(" ", "-").replace("=", ""), world, args)
        tolerance = 1e-5 if precision == "fp32" else 2e-2
        worst = max(abs(a - b) / abs(b) for a, b in zip(got, reference))
        if worst > tolerance:
            sys.exit(f"FAIL {name}: losses {got} differ from the batch-8 "
                     f"reference {reference} by {worst:.3g} > {tolerance}")
        print(f"{name}: {STEPS} steps agree with one batch of 8 "
              f"(max relative difference {worst:.2g})")


if __name__ == "__main__":
    main()
