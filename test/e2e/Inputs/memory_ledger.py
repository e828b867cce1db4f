"""The ZeRO memory ledger of GPT-2 (124M), measured by the runtime's allocator.

  memory_ledger.py --out DIR --mpirun CMD --data TOKENS [--combos S:N,...]

Compiles `--model=gpt2 --precision=bf16` (bf16 parameters and gradients,
float32 master weights and AdamW moments: 2 + 2 + 12 bytes a parameter) for
each ZeRO stage S and world size N, runs one training step under `CMD N`,
and compares the allocator's peak bytes per rank of each model-state category
with the ZeRO paper's formulas, computed here from the parameter shapes.
Sharded tensors are padded per tensor to N * ceil(n / N) elements, so "Psi/N"
below is sum_i ceil(n_i / N):

  stage 0:  param 2 Psi    grad 2 Psi           optimizer 12 Psi     = 16 Psi
  stage 1:  param 2 Psi    grad 2 Psi + u1      optimizer 12 Psi/N   = 4 Psi + 12 Psi/N
  stage 2:  param 2 Psi    grad 2 Psi/N + u2    optimizer 12 Psi/N   = 2 Psi + 14 Psi/N
  stage 3:  param 2 Psi/N  grad 2 Psi/N + u2    optimizer 12 Psi/N   = 16 Psi/N

The named extras are the transient unit each schedule holds on top:
  u1 = the first gradient shard, allocated by the first reduce-scatter at
       the end of the step while every whole gradient is still alive (ZeRO-1
       keeps whole gradients until the optimizer step);
  u2 = the largest whole gradient (the tied token embedding, 2 * 50257 * 768
       bytes), alive from its last contribution to its reduce-scatter.
At stage 3 the gathered parameters are counted as comm, not as model state:
the largest gathered unit is the token embedding.

Prints the table (bytes per rank) and exits 1 on any difference.
"""
import argparse
import os
import re
import shlex
import subprocess
import sys

PEAK = re.compile(r"^memory peak (\w+): (\d+) bytes$")
V, POS, C, L = 50257, 1024, 768, 12


def gpt2_params():
    """Element counts of GPT-2 (124M)'s parameters, in argument order."""
    sizes = [V * C, POS * C]
    for _ in range(L):
        sizes += [C, C, 3 * C * C, 3 * C, C * C, C, C, C, 4 * C * C, 4 * C,
                  4 * C * C, C]
    return sizes + [C, C]


def expected(stage, world, sizes):
    psi = sum(sizes)
    shards = sum(-(-n // world) for n in sizes)
    first_shard = -(-sizes[0] // world)
    largest = max(sizes)
    param = 2 * (shards if stage == 3 else psi)
    optimizer = 12 * (shards if stage >= 1 else psi)
    grad = {0: 2 * psi, 1: 2 * psi + 2 * first_shard}.get(
        stage, 2 * shards + 2 * largest)
    formula = {0: "16 Psi", 1: "4 Psi + 12 Psi/N + u1",
               2: "2 Psi + 14 Psi/N + u2", 3: "16 Psi/N + u2"}[stage]
    return {"param": param, "grad": grad, "optimizer": optimizer}, formula


def measure(options, stage, world):
    exe = os.path.join(options.out, f"gpt2-s{stage}-w{world}")
    subprocess.run(["zero-opt", "--model=gpt2", "--precision=bf16",
                    f"--batch={world}", "--seq-len=8", f"--stage={stage}",
                    f"--world-size={world}", "-o", exe], check=True)
    cmd = shlex.split(options.mpirun) + [str(world), exe, "--steps=1",
                                         f"--data={options.data}"]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        sys.exit(f"FAIL stage {stage} world size {world}: exit "
                 f"{run.returncode}\n{run.stdout}{run.stderr}")
    return {m.group(1): int(m.group(2)) for line in run.stdout.splitlines()
            if (m := PEAK.match(line))}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--mpirun", required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--combos", default="0:1,1:1,2:1,3:1,0:2,1:2,2:2,3:2,"
                                            "0:4,1:4,2:4,3:4")
    options = parser.parse_args()
    os.makedirs(options.out, exist_ok=True)
    sizes = gpt2_params()
    print(f"gpt2 bf16: Psi = {sum(sizes)} parameters; bytes per rank")
    print(f"{'stage':>5} {'N':>2} {'param':>12} {'grad':>12} "
          f"{'optimizer':>13} {'states':>13} {'comm':>11}  formula")
    failures = []
    for text in options.combos.split(","):
        stage, world = (int(x) for x in text.split(":"))
        want, formula = expected(stage, world, sizes)
        got = measure(options, stage, world)
        states = sum(got.get(k, 0) for k in want)
        print(f"{stage:>5} {world:>2} {got.get('param', 0):>12} "
              f"{got.get('grad', 0):>12} {got.get('optimizer', 0):>13} "
              f"{states:>13} {got.get('comm', 0):>11}  {formula} = "
              f"{sum(want.values())}")
        for key, value in want.items():
            if got.get(key) != value:
                failures.append(f"stage {stage} world size {world}: {key} "
                                f"{got.get(key)} bytes, formula {value}")
    if failures:
        sys.exit("FAIL " + "\nFAIL ".join(failures))
    print("all model-state peaks equal the ZeRO formulas")


if __name__ == "__main__":
    main()
