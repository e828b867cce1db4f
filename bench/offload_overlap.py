#!/usr/bin/env python3
"""What zero-overlap-offload buys: --offload=optimizer with the host tasks
on their thread (the default) against each run where it is queued
(ZRT_HOST_TASKS=inline, the update on the step's critical path), the same
executable, in alternating runs.

  python3 bench/offload_overlap.py [--ranks 1] [--reps 3] [--steps 6]
                                   [--precision bf16] [--stage 0] [--predict]
                                   [--out bench/results/offload-overlap.md]

GPT-2 124M (n_embd 768, 12 layers, vocab 50257), 2 x 128 tokens a rank a
step. The overlap needs a core the step's thread does not use: one rank
on this machine's two cores has one; two ranks on two cores have none (the
host thread then takes the kernels' core, and the gain should vanish). The
time per step is the runtime's (--log-json), the median of each run's steps
after the first; the losses of the two modes must agree bit for bit. Run
from the repository root after scripts/build.sh.

--predict also asks the time model: the program's --calibrate on these
ranks, then zero-opt --report with that calibration (the host tasks on
their own clock, costing the compute thread (1 - comm_overlap) of their
time) and with comm_overlap set to 0 (every task on the compute core: the
inline runs), each beside its measured step.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from overlap import ROOT, machine, mpi_env, sh, token_file  # noqa: E402

ZERO_OPT = os.path.join(ROOT, "build/bin/zero-opt")
GPT2 = dict(model_type="gpt2", architectures=["GPT2LMHeadModel"],
            vocab_size=50257, n_positions=1024, n_embd=768, n_layer=12,
            n_head=12, activation_function="gelu_new",
            layer_norm_epsilon=1e-5, tie_word_embeddings=True,
            resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
MODES = ("inline", "thread")


def run(exe, mode, ranks, steps, data, work):
    log = os.path.join(work, f"{mode}.jsonl")
    env = dict(mpi_env(), ZRT_HOST_TASKS=mode)
    sh(["mpirun", "--oversubscribe", "--bind-to", "none", "-np", str(ranks),
        "-x", "ZRT_HOST_TASKS", exe, f"--data={data}", f"--steps={steps}",
        f"--log-json={log}"], env=env, timeout=3600)
    lines = [json.loads(line) for line in open(log)]
    return [l["ms_per_step"] for l in lines[1:]], lines[-1]["loss"]


def predicted_step(compile_flags, calibration):
    """The report's predicted step (seconds) and its host-task line."""
    out = sh([ZERO_OPT, *compile_flags, f"--calibration={calibration}",
              "--report"]).stdout
    line = next(l for l in out.splitlines() if l.startswith("  step "))
    value, unit = line.split()[1:3]
    return float(value) * {"s": 1, "ms": 1e-3, "us": 1e-6}[unit.rstrip(":")], line.strip()


def predictions(exe, compile_flags, ranks, data, work, median):
    """--calibrate needs two ranks: one rank's program is calibrated by its
    two-rank twin (the same model and batch a rank), whose comm_overlap,
    measured with no core to spare, is replaced by 1 where a core is spare
    (fewer ranks than cores)."""
    calibration = os.path.join(work, "machine.json")
    calibrated, calibrated_ranks = exe, ranks
    if ranks == 1:
        calibrated, calibrated_ranks = os.path.join(work, "twin"), 2
        twin = [f for f in compile_flags
                if not f.startswith(("--world-size=", "--batch="))]
        sh([ZERO_OPT, *twin, "--world-size=2", "--batch=4", "-o", calibrated])
    sh(["mpirun", "--oversubscribe", "--bind-to", "none", "-np",
        str(calibrated_ranks), calibrated, f"--data={data}",
        f"--calibrate={calibration}"], env=mpi_env(), timeout=3600)
    model = json.load(open(calibration))
    spare = ranks < (os.cpu_count() or 1)
    overlap = 1 if spare else model.get("comm_overlap", 1)
    thread, inline = (os.path.join(work, f"machine-{m}.json") for m in MODES[::-1])
    json.dump(dict(model, comm_overlap=overlap), open(thread, "w"))
    json.dump(dict(model, comm_overlap=0), open(inline, "w"))
    lines = ["", f"Predicted against measured: `--calibrate` on {calibrated_ranks} ranks "
             f"(GEMM {model['gemm_flops'] / 1e9:.1f} GFLOP/s, memory "
             f"{model['memory_bandwidth'] / 1e9:.1f} GB/s, comm_overlap measured "
             f"{model.get('comm_overlap', 1):g}); the host tasks at comm_overlap "
             f"{overlap:g} ({'a core to spare' if spare else 'as measured'}), inline at 0.", "",
             "| host tasks | predicted step (ms) | measured (ms) | measured / predicted | report |",
             "|---|---|---|---|---|"]
    for mode, path in (("thread", thread), ("inline", inline)):
        seconds, line = predicted_step(compile_flags, path)
        lines.append(f"| {mode} | {seconds * 1e3:.1f} | {median[mode]:.1f} | "
                     f"{median[mode] / (seconds * 1e3):.2f} | `{line}` |")
    return lines + [""]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ranks", type=int, default=1)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--precision", default="bf16")
    parser.add_argument("--stage", type=int, default=0)
    parser.add_argument("--predict", action="store_true")
    parser.add_argument("--out", default=os.path.join(
        ROOT, "bench/results/offload-overlap.md"))
    options = parser.parse_args()
    work = tempfile.mkdtemp(prefix="zero-offload-")
    config = os.path.join(work, "gpt2.json")
    with open(config, "w") as f:
        json.dump(GPT2, f)
    data = token_file(work)
    exe = os.path.join(work, "prog")
    compile_flags = [f"--model-config={config}", f"--batch={2 * options.ranks}",
                     "--seq-len=128", f"--precision={options.precision}",
                     f"--stage={options.stage}", f"--world-size={options.ranks}",
                     "--offload=optimizer"]
    sh([ZERO_OPT, *compile_flags, "-o", exe])
    steps = {mode: [] for mode in MODES}
    losses = {mode: set() for mode in MODES}
    for rep in range(options.reps):
        for mode in MODES:
            print(f"rep {rep + 1}/{options.reps}: {mode}", file=sys.stderr,
                  flush=True)
            ms, loss = run(exe, mode, options.ranks, options.steps, data, work)
            steps[mode] += ms
            losses[mode].add(loss)
    median = {mode: statistics.median(steps[mode]) for mode in MODES}
    same = losses["inline"] == losses["thread"] and len(losses["inline"]) == 1
    command = (f"python3 bench/offload_overlap.py --ranks {options.ranks} "
               f"--reps {options.reps} --steps {options.steps} --precision "
               f"{options.precision} --stage {options.stage}")
    lines = [f"### {options.ranks} rank(s), {options.precision}, stage "
             f"{options.stage}", "",
             f"Machine: {machine()}", "", f"Command: `{command}`", "",
             "| host tasks | step (ms), median [min, max] | vs inline |",
             "|---|---|---|"]
    for mode in MODES:
        lines.append(f"| {mode} | {median[mode]:.1f} [{min(steps[mode]):.1f}, "
                     f"{max(steps[mode]):.1f}] | "
                     f"{median[mode] / median['inline']:.2f} |")
    lines += ["", f"Last step's loss: {sorted(losses['thread'])} (thread), "
              f"{sorted(losses['inline'])} (inline): "
              f"{'bit-identical' if same else 'DIFFERENT'}.", ""]
    if options.predict:
        lines += predictions(exe, compile_flags, options.ranks, data, work, median)
    text = "\n".join(lines)
    print(text)
    with open(options.out, "a") as f:
        f.write(text + "\n")
    if not same:
        sys.exit("FAIL: the two modes trained differently")


if __name__ == "__main__":
    main()
