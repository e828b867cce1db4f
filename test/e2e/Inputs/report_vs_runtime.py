"""The compiler's --report equals what the runtime measures.

  report_vs_runtime.py --out DIR --mpirun CMD [--data TOKENS] --compile=ARGS \
      [--combos S:N,...] [--steps K]

For each ZeRO stage S and world size N, asks `zero-opt ARGS --stage=S
--world-size=N --report=json` for the predicted peak bytes per memory
category, the planned arenas, and bytes and calls per collective per step,
runs the compiled program for K steps under `CMD N`, and requires the
runtime's ledger to equal the prediction exactly (traffic: K times the
per-step prediction), and each arena the runtime reserved, and the range its
temporaries used, to equal the plan.
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys

PEAK = re.compile(r"^memory peak (\w+): (\d+) bytes$")
ARENA = re.compile(r"^memory arena (\w+): (\d+) bytes reserved, (\d+) used$")
COMM = re.compile(r"^comm (\w+): (\d+) bytes in (\d+) calls$")
GROUP = re.compile(r"^comm group (\w+): (\d+) bytes in (\d+) calls$")
HOST_TOTAL = re.compile(r"^memory peak host total: (\d+) bytes")
OFFLOAD = re.compile(r"^offload (\w+): (\d+) bytes in (\d+) calls$")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--mpirun", required=True)
    parser.add_argument("--data", help="token file (language models)")
    parser.add_argument("--compile", required=True,
                        help="zero-opt flags of the model, in one string")
    parser.add_argument("--combos", default="0:2,1:2,2:2,3:2,0:4,1:4,2:4,3:4")
    parser.add_argument("--steps", type=int, default=2)
    options = parser.parse_args()
    os.makedirs(options.out, exist_ok=True)
    model = shlex.split(options.compile)
    failures = 0
    for text in options.combos.split(","):
        stage, world = (int(x) for x in text.split(":"))
        flags = model + [f"--stage={stage}", f"--world-size={world}"]
        report = json.loads(subprocess.run(
            ["zero-opt", "--report=json"] + flags, check=True,
            capture_output=True, text=True).stdout)
        exe = os.path.join(options.out, f"prog-s{stage}-w{world}")
        subprocess.run(["zero-opt", "-o", exe] + flags, check=True)
        run = subprocess.run(
            shlex.split(options.mpirun) + [str(world), exe,
                                           f"--steps={options.steps}"] +
            ([f"--data={options.data}"] if options.data else []),
            capture_output=True, text=True, timeout=600)
        if run.returncode != 0:
            sys.exit(f"FAIL stage {stage} world size {world}: exit "
                     f"{run.returncode}\n{run.stdout}{run.stderr}")
        measured, comm, arenas, groups, offload = {}, {}, {}, {}, {}
        for line in run.stdout.splitlines():
            if m := PEAK.match(line):
                measured[m.group(1)] = int(m.group(2))
            if m := ARENA.match(line):
                arenas[m.group(1)] = (int(m.group(2)), int(m.group(3)))
            if m := COMM.match(line):
                comm[m.group(1)] = (int(m.group(2)), int(m.group(3)))
            if m := GROUP.match(line):
                groups[m.group(1)] = (int(m.group(2)), int(m.group(3)))
            if m := HOST_TOTAL.match(line):
                measured["host_total"] = int(m.group(1))
            if m := OFFLOAD.match(line):
                offload[m.group(1)] = (int(m.group(2)), int(m.group(3)))
        predicted = report["peak_memory_bytes"]
        # The runtime prints host memory only when a program uses it.
        wrong = [f"memory {k}: predicted {v}, measured {measured.get(k)}"
                 for k, v in predicted.items() if measured.get(k, 0) != v]
        # --offload=optimizer's copies, per step like the collectives.
        copies = report["offload_copies_per_step"]
        for direction in ("to_host", "to_device"):
            want = (copies[direction + "_bytes"] * options.steps,
                    copies[direction + "_calls"] * options.steps)
            if offload.get(direction, (0, 0)) != want:
                wrong.append(f"offload {direction}: predicted {want} (bytes, "
                             f"calls), measured {offload.get(direction)}")
        for kind, per_step in report["traffic_bytes_per_step"].items():
            calls = report["collective_calls_per_step"][kind]
            want = (per_step * options.steps, calls * options.steps)
            if comm.get(kind) != want:
                wrong.append(f"comm {kind}: predicted {want} (bytes, calls), "
                             f"measured {comm.get(kind)}")
        # Hybrid sharding: the same traffic by the group it ran over.
        for group, per_step in (report.get("traffic_per_group") or {}).items():
            want = (per_step["bytes"] * options.steps,
                    per_step["calls"] * options.steps)
            if groups.get(group) != want:
                wrong.append(f"comm group {group}: predicted {want} (bytes, "
                             f"calls), measured {groups.get(group)}")
        if bool(groups) != bool(report.get("traffic_per_group")):
            wrong.append(f"comm by group: predicted "
                         f"{report.get('traffic_per_group')}, measured {groups}")
        # The plan binds: the runtime reserves each planned arena (the one
        # shared by all categories, or one per category, and the host
        # categories' own), and the program's temporaries fill it to the
        # last byte.
        planned_arenas = {category: planned["temporaries"] for category,
                          planned in report["planned_arena_bytes"].items()
                          if planned["temporaries"]}
        if report["shared_arena_binds"]:
            planned_arenas = {category: bytes for category, bytes
                              in planned_arenas.items()
                              if category.startswith("host_")}
            planned_arenas["shared"] = report["planned_shared_arena_bytes"]
        if set(arenas) != set(planned_arenas):
            wrong.append(f"arenas reserved {sorted(arenas)}, planned "
                         f"{sorted(planned_arenas)}")
        for name, want in planned_arenas.items():
            got = arenas.get(name, (0, 0))
            if got != (want, want):
                wrong.append(f"arena {name}: planned {want}, reserved and "
                             f"used {got}")
        if wrong:
            failures += 1
            print(f"FAIL stage {stage} world size {world}: " + "; ".join(wrong))
            continue
        states = sum(predicted[k] for k in ("param", "grad", "optimizer"))
        total = sum(report["traffic_bytes_per_step"].values())
        reserved = sum(bytes for name, bytes in planned_arenas.items()
                       if not name.startswith("host_"))
        host = (f", host {predicted['host_total']} bytes"
                if predicted.get("host_total") else "")
        print(f"stage {stage} world size {world}: measured = predicted: peak "
              f"{predicted['total']} bytes (model states {states}){host}, "
              f"{total} bytes moved per step, arenas {reserved} bytes")
    if failures:
        sys.exit(1)


if __name__ == "__main__":
    main()
