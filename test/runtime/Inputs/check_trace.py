#!/usr/bin/env python3
"""Checks a --trace file: the Chrome trace-event JSON object form with one
process per rank, threads "compute" (kernels, waits, steps) and "comm"
(collectives), complete events with non-negative ts/dur, the data each
step fills. Prints one summary
line per property for FileCheck; exits 1 with a message on the first
violation."""
import argparse
import json
import re
import sys

# The kind, the size, and the tensor or bucket the compiler labelled it with.
COLLECTIVE = re.compile(r"^(all_gather|reduce_scatter|all_reduce) [0-9.]+ (B|kB|MB) "
                        r"(loss|gradient norm|[A-Za-z0-9_.]+|bucket of [0-9]+: .+)$")


def fail(message):
    print(f"trace error: {message}")
    sys.exit(1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("trace")
    parser.add_argument("--ranks", type=int, required=True)
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--host-tasks", action="store_true",
                        help="--offload=optimizer: thread 2, 'host tasks', holds the host "
                             "updates and uploads, and the main thread's waits for them "
                             "are host_wait events on compute")
    args = parser.parse_args()

    with open(args.trace) as f:
        try:
            trace = json.load(f)
        except json.JSONDecodeError as e:
            fail(f"not valid JSON: {e}")
    if not isinstance(trace, dict) or not isinstance(trace.get("traceEvents"), list):
        fail("expected an object with a traceEvents list")
    if trace.get("displayTimeUnit") not in ("ms", "ns"):
        fail("displayTimeUnit missing")
    events = trace["traceEvents"]

    pids = {e.get("pid") for e in events}
    if pids != set(range(args.ranks)):
        fail(f"pids {sorted(pids)}, expected 0..{args.ranks - 1}")
    print(f"pids: {' '.join(str(p) for p in sorted(pids))}")

    meta = [e for e in events if e.get("ph") == "M"]
    for pid in range(args.ranks):
        names = {(e["name"], e.get("tid")): e["args"]["name"] for e in meta if e["pid"] == pid}
        if names.get(("process_name", 0)) != f"rank {pid}":
            fail(f"pid {pid} is not named 'rank {pid}'")
        if names.get(("thread_name", 0)) != "compute" or names.get(("thread_name", 1)) != "comm":
            fail(f"pid {pid}: threads are not named compute (tid 0) and comm (tid 1)")
    print("names: rank N, threads compute and comm")

    complete = [e for e in events if e.get("ph") == "X"]
    if len(complete) + len(meta) != len(events):
        fail("events other than X and M")
    for e in complete:
        for key in ("ts", "dur"):
            if not isinstance(e.get(key), (int, float)) or e[key] < 0:
                fail(f"event {e.get('name')!r} has {key} {e.get(key)!r}")
    print("ts and dur: non-negative numbers")

    sequences = []
    data_share = []
    for pid in range(args.ranks):
        mine = [e for e in complete if e["pid"] == pid]
        by_cat = {}
        for e in mine:
            by_cat.setdefault(e.get("cat"), []).append(e)
        kernels = by_cat.get("kernel", [])
        collectives = by_cat.get("collective", [])
        if not kernels or any(e["tid"] != 0 for e in kernels):
            fail(f"pid {pid}: kernel events missing or not on compute")
        if "matmul" not in {e["name"] for e in kernels}:
            fail(f"pid {pid}: no matmul kernel")
        if not collectives or any(e["tid"] != 1 for e in collectives):
            fail(f"pid {pid}: collective events missing or not on comm")
        for e in collectives:
            if not COLLECTIVE.match(e["name"]):
                fail(f"pid {pid}: collective named {e['name']!r}")
        if any(e["tid"] != 0 or e["name"] != "wait" for e in by_cat.get("wait", [])):
            fail(f"pid {pid}: wait events must be 'wait' on compute")
        steps = [e["name"] for e in by_cat.get("step", []) if e["tid"] == 0]
        if steps != [f"step {k}" for k in range(1, args.steps + 1)]:
            fail(f"pid {pid}: steps {steps}")
        # Filling a micro-batch's data: on compute, inside a step, as many
        # in every step.
        step_events = [e for e in by_cat.get("step", []) if e["tid"] == 0]
        data = by_cat.get("data", [])
        if not data or any(e["tid"] != 0 or e["name"] != "data" for e in data):
            fail(f"pid {pid}: data events missing or not 'data' on compute")
        per_step = [sum(1 for d in data if s["ts"] <= d["ts"] and
                        d["ts"] + d["dur"] <= s["ts"] + s["dur"] + 0.002)
                    for s in step_events]
        if len(set(per_step)) != 1 or sum(per_step) != len(data):
            fail(f"pid {pid}: data events per step {per_step} of {len(data)}")
        data_share.append(sum(d["dur"] for d in data) /
                          max(sum(s["dur"] for s in step_events), 1e-9))
        # Collectives on one thread run one after another.
        ordered = sorted(collectives, key=lambda e: e["ts"])
        for a, b in zip(ordered, ordered[1:]):
            if a["ts"] + a["dur"] > b["ts"] + 0.002:
                fail(f"pid {pid}: collectives overlap on the comm thread")
        sequences.append([e["name"] for e in ordered])
    if any(s != sequences[0] for s in sequences):
        fail("ranks ran different collectives")
    print(f"kernels on compute, {len(sequences[0])} collectives per rank on comm, "
          f"the same on every rank")
    print(f"steps: 1 to {args.steps} on compute")
    print(f"data: each step's micro-batches filled on compute, "
          f"{100 * max(data_share):.3f}% of the step time at most")
    if args.host_tasks:
        check_host_tasks(events, complete, args.ranks)


def check_host_tasks(events, complete, ranks):
    for pid in range(ranks):
        names = {e.get("tid"): e["args"]["name"] for e in events
                 if e.get("ph") == "M" and e["pid"] == pid and e["name"] == "thread_name"}
        if names.get(2) != "host tasks":
            fail(f"pid {pid}: no thread 2 named 'host tasks'")
        mine = [e for e in complete if e["pid"] == pid]
        tasks = [e for e in mine if e["tid"] == 2]
        if {e.get("cat") for e in tasks} - {"host task", "host_wait"}:
            fail(f"pid {pid}: thread 2 holds events other than host tasks")
        kinds = {e["name"] for e in tasks if e.get("cat") == "host task"}
        if not {"host_adamw", "copy_to_device"} <= kinds:
            fail(f"pid {pid}: host tasks {sorted(kinds)}, expected host_adamw and copy_to_device")
        if any(e["tid"] != 0 for e in mine if e.get("cat") == "host_wait" and e["tid"] != 2):
            fail(f"pid {pid}: host_wait events off the compute thread")
        # One thread runs the tasks in order: its events do not overlap.
        ordered = sorted(tasks, key=lambda e: e["ts"])
        for a, b in zip(ordered, ordered[1:]):
            if a["ts"] + a["dur"] > b["ts"] + 0.002:
                fail(f"pid {pid}: host tasks overlap on their thread")
    print(f"host tasks on thread 2: {', '.join(sorted(kinds))}")


if __name__ == "__main__":
    main()
