#!/usr/bin/env python3
"""Checkpoints of the whole training state, resumed and resharded.

exact:   a run of 2K steps prints the same 2K losses, digit for digit, as K
         steps + a checkpoint + a resumed run of the other K (same stage and
         world size), for every program given by --config.
reshard: checkpoints written after K steps at stage S on W ranks (--sources)
         resume at every stage 0-3 on 1-4 ranks; steps K+1..2K agree with an
         unbroken run of the target program within --rtol (and bit for bit
         where the target is the source's own stage and world size).

Each line printed says what agreed; a line starting with FAIL says what did
not, and the script exits 1.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

failures = 0


def fail(message):
    global failures
    failures += 1
    print("FAIL: " + message)


def compile_program(out, name, stage, world, compile_args):
    exe = os.path.join(out, name)
    if not os.path.exists(exe):
        subprocess.run(["zero-opt", *compile_args, f"--stage={stage}",
                        f"--world-size={world}", "-o", exe], check=True)
    return exe


def run(mpirun, world, exe, args):
    cmd = mpirun.split() + [str(world), exe, "--quiet-memory", *args]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        fail(f"{' '.join(cmd)} exited {result.returncode}:\n{result.stderr}")
        return {}
    return {int(m.group(1)): m.group(2) for m in
            re.finditer(r"^step (\d+) loss (\S+)$", result.stdout, re.M)}


def exact(options, run_args):
    for config in options.config:
        name, stage, world, *compile_args = config.split()
        exe = compile_program(options.out, name, stage, world, compile_args)
        k = options.steps
        straight = run(options.mpirun, world, exe, [*run_args, f"--steps={2 * k}"])
        ckdir = os.path.join(options.out, name + ".ck")
        shutil.rmtree(ckdir, ignore_errors=True)
        first = run(options.mpirun, world, exe,
                    [*run_args, f"--steps={k}", f"--checkpoint-dir={ckdir}"])
        second = run(options.mpirun, world, exe,
                     [*run_args, f"--steps={2 * k}", f"--checkpoint-dir={ckdir}",
                      "--resume"])
        resumed = {**first, **second}
        if sorted(second) != list(range(k + 1, 2 * k + 1)):
            fail(f"{name}: the resumed run ran steps {sorted(second)}")
        elif resumed != straight:
            bad = [s for s in straight if straight[s] != resumed.get(s)]
            fail(f"{name}: step {bad[0]}: {straight[bad[0]]} unbroken, "
                 f"{resumed.get(bad[0])} resumed")
        else:
            print(f"{name} (stage {stage}, {world} ranks): {k} + resume + {k} "
                  f"steps = {2 * k} unbroken steps, bit for bit")


def reshard(options, run_args):
    k = options.steps
    targets = [(s, w) for s in range(4) for w in range(1, 5)]
    unbroken = {}
    for stage, world in targets:
        exe = compile_program(options.out, f"s{stage}w{world}", stage, world,
                              options.compile.split())
        unbroken[(stage, world)] = run(options.mpirun, world, exe,
                                       [*run_args, f"--steps={2 * k}"])
    for source in options.sources:
        stage, world = map(int, source.split(":"))
        ckdir = os.path.join(options.out, f"from-s{stage}w{world}")
        shutil.rmtree(ckdir, ignore_errors=True)
        run(options.mpirun, world, os.path.join(options.out, f"s{stage}w{world}"),
            [*run_args, f"--steps={k}", f"--checkpoint-dir={ckdir}"])
        agreed = 0
        for target in targets:
            exe = os.path.join(options.out, "s%dw%d" % target)
            losses = run(options.mpirun, target[1], exe,
                         [*run_args, f"--steps={2 * k}", f"--resume={ckdir}"])
            reference = unbroken[target]
            same = target == (stage, world)
            worst = 0.0
            for step in range(k + 1, 2 * k + 1):
                if step not in losses:
                    worst = float("inf")
                    break
                got, want = float(losses[step]), float(reference[step])
                worst = max(worst, abs(got - want) / max(abs(want), 1e-30))
                if same and losses[step] != reference[step]:
                    worst = float("inf")
            if worst > options.rtol:
                fail(f"stage {stage} on {world} -> stage {target[0]} on "
                     f"{target[1]}: relative difference {worst:.3g}")
            else:
                agreed += 1
        print(f"from stage {stage} on {world} ranks: {agreed} of "
              f"{len(targets)} targets continue the unbroken losses")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("mode", choices=["exact", "reshard"])
    parser.add_argument("--out", required=True)
    parser.add_argument("--mpirun", required=True)
    parser.add_argument("--steps", type=int, default=4, help="K")
    parser.add_argument("--config", action="append", default=[],
                        help="exact: 'NAME STAGE WORLD zero-opt flags...'")
    parser.add_argument("--sources", nargs="*", default=["3:4", "0:1"])
    parser.add_argument("--compile", default="",
                        help="reshard: zero-opt flags of every program, "
                             "in one argument")
    parser.add_argument("--rtol", type=float, default=1e-6)
    options, run_args = parser.parse_known_args()
    if run_args and run_args[0] == "--":
        run_args = run_args[1:]
    (exact if options.mode == "exact" else reshard)(options, run_args)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
