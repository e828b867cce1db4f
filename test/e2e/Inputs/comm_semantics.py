"""Local accumulation and fp32 reduction: what they move and what they train.

  comm_semantics.py accumulate --out DIR --mpirun CMD --data TOKENS \
      --stage S --world N --grad-accum K
  comm_semantics.py reduce-dtype --out DIR --mpirun CMD --data TOKENS \
      --stage S --world N

`accumulate` compiles gpt2-tiny (fp32) with --accumulate=sharded and
--accumulate=local and trains both for grad_accum.py's STEPS steps: the runtime's ledger must
show local moving exactly 1/K of sharded's gradient bytes (the loss's
all-reduce, 8 bytes per micro-batch, is not a gradient), and the losses
must agree within fp32 rounding (the two sum the same K x N gradients in
another order).

`reduce-dtype` compiles gpt2-tiny in bf16 with --reduce-dtype=bf16 and
fp32: the gradients' reduce-scatter (or all-reduce at stage 0) must move
exactly twice the bytes (4-byte elements, which --report=json names), and
both runs' losses are printed next to the same model trained in fp32.
"""
import argparse
import json
import os
import re
import subprocess
import sys

from grad_accum import STEPS, train

COMM = re.compile(r"^comm (\w+): (\d+) bytes in (\d+) calls$")
LOSS_BYTES = 8  # The loss's all-reduce: 2 x 1 float32 element.


def run(out, mpirun, data, world, name, flags):
    """Losses and {kind: bytes} of the ledger, and the report's JSON."""
    model = ["--batch=4", f"--world-size={world}"] + flags
    report = json.loads(subprocess.run(
        ["zero-opt", "--model=gpt2-tiny", "--seq-len=16", "--report=json"]
        + model, check=True, capture_output=True, text=True).stdout)
    losses, stdout = train(out, mpirun, data, name, world, model)
    comm = {m.group(1): int(m.group(2)) for line in stdout.splitlines()
            if (m := COMM.match(line))}
    return losses, comm, report


def gradient_bytes(stage, comm, micro_batches):
    """Bytes of the gradients' reductions in the ledger."""
    if stage == 0:
        return comm["all_reduce"] - LOSS_BYTES * micro_batches * STEPS
    return comm["reduce_scatter"]


def worst_relative(ours, theirs):
    return max(abs(a - b) / abs(b) for a, b in zip(ours, theirs))


def accumulate(options):
    k, stage = options.grad_accum, options.stage
    common = [f"--stage={stage}", f"--grad-accum={k}"]
    label = f"stage {stage} on {options.world} ranks, K={k}"
    sharded, sharded_comm, _ = run(options.out, options.mpirun, options.data,
                                   options.world, f"sharded-s{stage}",
                                   common + ["--accumulate=sharded"])
    local, local_comm, report = run(options.out, options.mpirun, options.data,
                                    options.world, f"local-s{stage}",
                                    common + ["--accumulate=local"])
    if report["gradient_reductions_per_step"] != 1:
        sys.exit(f"FAIL {label}: the report says local reduces "
                 f"{report['gradient_reductions_per_step']} times a step")
    moved = gradient_bytes(stage, sharded_comm, k)
    moved_local = gradient_bytes(stage, local_comm, k)
    if moved != k * moved_local:
        sys.exit(f"FAIL {label}: local moved {moved_local} gradient bytes, "
                 f"sharded {moved}: not 1/{k}")
    worst = worst_relative(local, sharded)
    if worst > 1e-5:
        sys.exit(f"FAIL {label}: losses {local} differ from sharded "
                 f"{sharded} by {worst:.3g}")
    print(f"{label}: local moves {moved_local} gradient bytes, 1/{k} of "
          f"sharded's {moved}; losses agree (max relative difference "
          f"{worst:.2g})")


def reduce_dtype(options):
    stage = options.stage
    common = [f"--stage={stage}"]
    label = f"stage {stage} on {options.world} ranks bf16"
    fp32, _, _ = run(options.out, options.mpirun, options.data, options.world,
                     "fp32", common + ["--precision=fp32"])
    narrow, narrow_comm, _ = run(options.out, options.mpirun, options.data,
                                 options.world, "bf16-reduce-bf16",
                                 common + ["--precision=bf16"])
    wide, wide_comm, report = run(options.out, options.mpirun, options.data,
                                  options.world, "bf16-reduce-fp32",
                                  common + ["--precision=bf16",
                                            "--reduce-dtype=fp32"])
    kind = "all_reduce" if stage == 0 else "reduce_scatter"
    moved, moved_wide = (gradient_bytes(stage, c, 1)
                         for c in (narrow_comm, wide_comm))
    if moved_wide != 2 * moved:
        sys.exit(f"FAIL {label}: fp32 reduction moved {moved_wide} gradient "
                 f"bytes, bf16 {moved}: not twice")
    if report["collective_element_bytes"][kind] != "4":
        sys.exit(f"FAIL {label}: the report says {kind} moves "
                 f"{report['collective_element_bytes'][kind]}-byte elements")
    mean = lambda a, b: sum(abs(x - y) for x, y in zip(a, b)) / len(a)
    print(f"{label}: --reduce-dtype=fp32 moves {moved_wide} gradient bytes "
          f"(4-byte elements), twice bf16's {moved}")
    print(f"{label}: mean |loss - fp32 run| over {STEPS} steps: bf16 "
          f"reduction {mean(narrow, fp32):.3g}, fp32 reduction "
          f"{mean(wide, fp32):.3g}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("what", choices=["accumulate", "reduce-dtype"])
    parser.add_argument("--out", required=True)
    parser.add_argument("--mpirun", required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--stage", type=int, required=True)
    parser.add_argument("--world", type=int, required=True)
    parser.add_argument("--grad-accum", type=int, default=3)
    options = parser.parse_args()
    os.makedirs(options.out, exist_ok=True)
    accumulate(options) if options.what == "accumulate" else \
        reduce_dtype(options)


if __name__ == "__main__":
    main()
