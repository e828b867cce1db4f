#!/usr/bin/env python3
"""Peer benchmark: zero-opt against PyTorch DDP and FSDP2 on this machine,
with the machine's roofline measured in the same run.

  python3 bench/peer.py [--ranks 2] [--reps 3] [--out bench/results/peer.md]

For each model (GPT-2 124M at a global batch of 4 x 128 tokens, gpt2-tiny at
16 x 64) and each precision (fp32, bf16), it trains the same Hugging Face
GPT2Config

  - with zero-opt at ZeRO stage 0 and stage 3 (compiled with
    --model-config), once with blocking collectives (--prefetch=-1) and once
    with overlapped ones (--prefetch=1), under mpirun;
  - with PyTorch DDP and with FSDP2 (fully_shard on every block, then the
    root), gloo, bf16 by torch.autocast (DDP) or MixedPrecisionPolicy with
    bf16 parameters and reductions (FSDP2), torch.optim.AdamW(fused=True).

Every rank runs one thread (OPENBLAS_NUM_THREADS=1, torch.set_num_threads(1)),
ranks are unbound processes on the machine's cores. The runs alternate
(every configuration once per repetition) so that drift in the machine's
speed spreads over all of them; each run's first steps are warm-up and not
counted; a configuration's time is the median over every counted step of
every repetition, and its spread the smallest and largest of those steps.

The roofline: cblas_sgemm (OpenBLAS, one thread) timed at each GEMM shape
the step runs, and a STREAM-like triad, both with one copy per rank running
at once. For bf16 each shape's time is the faster of that and PyTorch's
bf16 torch.matmul (oneDNN, one thread, also one copy per rank at once):
the machine's bf16 GEMM rate, about twice sgemm's on CPUs with AVX512-BF16.
A configuration's lower bound is its GEMMs at those times (attention's
counted causally, half of the square) plus AdamW's bytes (28 an element of
the rank's optimizer shard) at the triad's bandwidth; it leaves out every
other kernel and all communication, so no real step can reach it.
"""
import argparse
import datetime
import json
import os
import platform
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
ZERO_OPT = os.path.join(ROOT, "build", "bin", "zero-opt")

# name: (GPT2Config fields, global batch, sequence length, steps, warm-up)
MODELS = {
    "gpt2-tiny": (dict(vocab_size=256, n_positions=64, n_embd=64, n_layer=2,
                       n_head=4, bos_token_id=0, eos_token_id=0), 16, 64, 40,
                  10),
    "gpt2": (dict(vocab_size=50257, n_positions=1024, n_embd=768, n_layer=12,
                  n_head=12), 4, 128, 6, 2),
}
# zero-opt trains without dropout and refuses a config that asks for it.
NO_DROPOUT = dict(resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
ADAMW_BYTES_PER_ELEMENT = 28  # read p, g, m, v; write p, m, v (4 bytes each)


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def machine():
    cpu = "unknown CPU"
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    commit = sh(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"]).stdout.strip()
    import torch
    return (f"{cpu}, {os.cpu_count()} cores, {mem:.0f} GiB, "
            f"{platform.system()} {platform.release()}; zero-opt commit "
            f"{commit}; torch {torch.__version__}")


# ---------------------------------------------------------------- roofline

def gemm_shapes(config, tokens, batch_per_rank, seq):
    """(transA, transB, m, n, k, count) of every GEMM in one training step of
    one rank, as zero-opt's GPT-2 runs them: activations row-major
    [tokens, features], y = x W, dx = dy W^T, dW = x^T dy, the tied head
    logits = x E^T. Attention's per-head GEMMs are listed at the full square
    with count halved (the causal half)."""
    d, layers, vocab = config["n_embd"], config["n_layer"], config["vocab_size"]
    heads = config["n_head"]
    hd = d // heads
    shapes = []
    for k, n in ((d, 3 * d), (d, d), (d, 4 * d), (4 * d, d)):
        shapes += [(0, 0, tokens, n, k, layers), (0, 1, tokens, k, n, layers),
                   (1, 0, k, n, tokens, layers)]
    shapes += [(0, 1, tokens, vocab, d, 1), (0, 0, tokens, d, vocab, 1),
               (1, 0, vocab, d, tokens, 1)]
    per_head = batch_per_rank * heads * layers / 2
    shapes += [(0, 1, seq, seq, hd, per_head), (0, 0, seq, hd, seq, per_head),
               (0, 1, seq, seq, hd, per_head), (1, 0, seq, hd, seq, per_head),
               (0, 0, seq, hd, seq, per_head), (1, 0, seq, hd, seq, per_head)]
    return shapes


def concurrently(ranks, cmd, stdin=""):
    """Runs `ranks` copies of cmd at once; returns their outputs."""
    procs = [subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True, env=dict(os.environ,
                                                  OPENBLAS_NUM_THREADS="1"))
             for _ in range(ranks)]
    outs = [p.communicate(stdin)[0] for p in procs]
    if any(p.returncode for p in procs):
        sys.exit(f"FAIL: {' '.join(cmd)}")
    return outs


def roofline(exe, ranks, shapes):
    """Seconds of each distinct GEMM shape (mean over the concurrent
    copies) and the triad bandwidth per rank in GB/s."""
    distinct = sorted({s[:5] for s in shapes})
    text = "".join(f"{ta} {tb} {m} {n} {k}\n" for ta, tb, m, n, k in distinct)
    outs = concurrently(ranks, [exe, "gemm"], text)
    seconds = {}
    for i, shape in enumerate(distinct):
        seconds[shape] = statistics.mean(
            float(out.splitlines()[i].split()[0]) for out in outs)
    triad = statistics.mean(float(o) for o in
                            concurrently(ranks, [exe, "triad", str(1 << 25)]))
    return seconds, triad


def bf16_gemm_seconds(ranks, shapes, sgemm_seconds):
    """Each distinct shape's time in bf16: the faster of sgemm's and
    PyTorch's bf16 matmul (one copy per rank at once)."""
    distinct = sorted({s[:5] for s in shapes})
    text = "".join(f"{ta} {tb} {m} {n} {k}\n" for ta, tb, m, n, k in distinct)
    outs = concurrently(ranks, [sys.executable, os.path.abspath(__file__),
                                "--torch-gemm"], text)
    return {shape: min(sgemm_seconds[shape], statistics.mean(
        float(out.splitlines()[i]) for out in outs))
        for i, shape in enumerate(distinct)}


def torch_gemm():
    """The --torch-gemm worker: for each "transA transB m n k" line on
    stdin, the best time of bf16 torch.matmul at one thread, as roofline.c
    times sgemm (one untimed call first)."""
    import time
    import torch
    torch.set_num_threads(1)
    for line in sys.stdin:
        ta, tb, m, n, k = map(int, line.split())
        a = torch.randn(k, m) if ta else torch.randn(m, k)
        b = torch.randn(n, k) if tb else torch.randn(k, n)
        a, b = a.bfloat16(), b.bfloat16()
        a, b = (a.t() if ta else a), (b.t() if tb else b)
        flop = 2.0 * m * n * k
        reps = min(200, max(3, int(6e10 / flop)))
        best = float("inf")
        for r in range(reps + 1):
            t0 = time.perf_counter()
            torch.matmul(a, b)
            t = time.perf_counter() - t0
            if r > 0:
                best = min(best, t)
        print(f"{best:.9f}", flush=True)


def parameter_count(config):
    d, layers = config["n_embd"], config["n_layer"]
    per_block = 12 * d * d + 13 * d
    return (config["vocab_size"] + config["n_positions"]) * d + \
        layers * per_block + 2 * d


# ---------------------------------------------------------------- zero-opt

def zero_run(work, model, precision, stage, prefetch, ranks):
    config, batch, seq, steps, warmup = MODELS[model]
    exe = os.path.join(work, f"{model}-{precision}-s{stage}-p{prefetch}")
    if not os.path.exists(exe):
        sh([ZERO_OPT, f"--model-config={work}/{model}.json", f"--batch={batch}",
            f"--seq-len={seq}", f"--precision={precision}", f"--stage={stage}",
            f"--world-size={ranks}", f"--prefetch={prefetch}", "-o", exe])
    log = exe + ".jsonl"
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OPENBLAS_NUM_THREADS="1")
    sh(["mpirun", "--oversubscribe", "--bind-to", "none", "-np", str(ranks),
        exe, f"--data={work}/tokens.bin", f"--steps={steps}",
        f"--log-json={log}"], env=env, timeout=1800)
    ms = [json.loads(line)["ms_per_step"] for line in open(log)]
    return ms[warmup:]


# ------------------------------------------------------------------ PyTorch

def torch_run(work, system, model, precision, ranks):
    out = os.path.join(work, f"torch-{system}-{model}-{precision}.json")
    # gloo's rendezvous port is picked free here and bound by the worker a
    # moment later, so another process can take it in between: try again
    # on a fresh port before giving up.
    for attempt in range(3):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        run = subprocess.run(
            [sys.executable, os.path.abspath(__file__), "--torch-worker",
             json.dumps(dict(system=system, model=model, precision=precision,
                             ranks=ranks, port=port, out=out))],
            capture_output=True, text=True, timeout=3600,
            env=dict(os.environ, OMP_NUM_THREADS="1"))
        if run.returncode == 0:
            break
        print(f"PyTorch {system} {model} {precision}: exit {run.returncode} "
              f"(attempt {attempt + 1}):\n{run.stderr[-2000:]}",
              file=sys.stderr, flush=True)
    else:
        sys.exit(f"FAIL: PyTorch {system} {model} {precision} failed 3 times")
    ms = json.load(open(out))
    return ms[MODELS[model][4]:]


def torch_rank(rank, spec):
    import torch
    import torch.distributed as dist
    import transformers

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{spec['port']}",
                            rank=rank, world_size=spec["ranks"])
    config, batch, seq, steps, _ = MODELS[spec["model"]]
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(transformers.GPT2Config(
        **config, **NO_DROPOUT)).train()
    bf16 = spec["precision"] == "bf16"
    if spec["system"] == "ddp":
        from torch.nn.parallel import DistributedDataParallel
        model = DistributedDataParallel(model)
    else:
        from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
        policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16,
                                      reduce_dtype=torch.bfloat16) if bf16 \
            else MixedPrecisionPolicy()
        for block in model.transformer.h:
            fully_shard(block, mp_policy=policy)
        fully_shard(model, mp_policy=policy)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
    rows = batch // spec["ranks"]
    generator = torch.Generator().manual_seed(rank)
    ms = []
    for _ in range(steps):
        x = torch.randint(0, config["vocab_size"], (rows, seq + 1),
                          generator=generator)
        start = datetime.datetime.now()
        with torch.autocast("cpu", dtype=torch.bfloat16,
                            enabled=bf16 and spec["system"] == "ddp"):
            logits = model(input_ids=x[:, :-1]).logits
        loss = torch.nn.functional.cross_entropy(
            logits.float().reshape(-1, logits.shape[-1]), x[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        ms.append((datetime.datetime.now() - start).total_seconds() * 1e3)
    if rank == 0:
        json.dump(ms, open(spec["out"], "w"))
    dist.destroy_process_group()


def torch_worker(spec):
    import torch.multiprocessing as mp
    mp.spawn(torch_rank, args=(spec,), nprocs=spec["ranks"])


# ------------------------------------------------------------------- report

def summary(values):
    return statistics.median(values), min(values), max(values)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--models", default="gpt2-tiny,gpt2")
    parser.add_argument("--precisions", default="fp32,bf16")
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "results",
                                                      "peer.md"))
    parser.add_argument("--torch-worker", help=argparse.SUPPRESS)
    parser.add_argument("--torch-gemm", action="store_true",
                        help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.torch_worker:
        return torch_worker(json.loads(options.torch_worker))
    if options.torch_gemm:
        return torch_gemm()

    import transformers
    work = tempfile.mkdtemp(prefix="zero-peer-")
    sh([sys.executable, os.path.join(ROOT, "scripts", "prepare_data.py"),
        os.path.join(ROOT, "data", "shakespeare.txt"), "-o", f"{work}/shk"])
    os.rename(f"{work}/shk_train.bin", f"{work}/tokens.bin")
    models = options.models.split(",")
    precisions = options.precisions.split(",")
    for model in models:
        transformers.GPT2Config(**MODELS[model][0], **NO_DROPOUT).to_json_file(
            f"{work}/{model}.json")
    roof_exe = os.path.join(work, "roofline")
    sh(["cc", "-O2", "-o", roof_exe, os.path.join(ROOT, "bench", "roofline.c"),
        "-lopenblas"])

    # (system label, stage, runner)
    systems = [("zero-opt s0 blocking", 0, lambda m, p: zero_run(work, m, p, 0, -1, options.ranks)),
               ("zero-opt s0 prefetch", 0, lambda m, p: zero_run(work, m, p, 0, 1, options.ranks)),
               ("PyTorch DDP", 0, lambda m, p: torch_run(work, "ddp", m, p, options.ranks)),
               ("zero-opt s3 blocking", 3, lambda m, p: zero_run(work, m, p, 3, -1, options.ranks)),
               ("zero-opt s3 prefetch", 3, lambda m, p: zero_run(work, m, p, 3, 1, options.ranks)),
               ("PyTorch FSDP2", 3, lambda m, p: torch_run(work, "fsdp2", m, p, options.ranks))]
    steps = {}
    for rep in range(options.reps):
        for model in models:
            for precision in precisions:
                for label, _, runner in systems:
                    print(f"rep {rep + 1}/{options.reps}: {model} {precision} "
                          f"{label}", file=sys.stderr, flush=True)
                    steps.setdefault((model, precision, label), []).extend(
                        runner(model, precision))

    lines = [f"# Peer benchmark ({datetime.date.today()})", "",
             f"Machine: {machine()}", "",
             f"Command: `python3 bench/peer.py --ranks {options.ranks} "
             f"--reps {options.reps}`", "",
             f"{options.ranks} ranks, one thread each; {options.reps} "
             "alternating repetitions; step times in ms on rank 0, median "
             "[min, max] over the counted steps of all repetitions (warm-up "
             "steps excluded). Lower bound: the step's GEMMs at the measured "
             "one-thread sgemm time of each shape plus AdamW's bytes at the "
             "measured triad bandwidth (both with every rank's core busy); "
             "in bf16 each GEMM shape at the faster of sgemm and PyTorch's "
             "bf16 matmul (oneDNN, one thread, AMX or AVX512-BF16 where the "
             "CPU has them). zero-opt's bf16 GEMMs run on AMX tiles, else "
             "on AVX512-BF16 dot products (runtime/cpu/amx_gemm.cpp), else "
             "widened to float32 for cblas_sgemm.", ""]
    for model in models:
        config, batch, seq, count, warmup = MODELS[model]
        tokens = batch * seq // options.ranks
        shapes = gemm_shapes(config, tokens, batch // options.ranks, seq)
        seconds, bandwidth = roofline(roof_exe, options.ranks, shapes)
        flop = sum(2 * s[2] * s[3] * s[4] * s[5] for s in shapes)
        params = parameter_count(config)
        lines += [f"## {model}, global batch {batch} x {seq}", "",
                  f"{params / 1e6:.1f}M parameters; {count} steps a run, "
                  f"{warmup} of them warm-up. Roofline per rank: "
                  f"{flop / 1e9:.1f} GFLOP of GEMMs, triad "
                  f"{bandwidth:.1f} GB/s;"]
        bound = {}
        for precision in precisions:
            shape_s = seconds if precision == "fp32" else \
                bf16_gemm_seconds(options.ranks, shapes, seconds)
            gemm_s = sum(shape_s[s[:5]] * s[5] for s in shapes)
            for stage in (0, 3):
                bound[(precision, stage)] = gemm_s + \
                    ADAMW_BYTES_PER_ELEMENT * params / \
                    (1 if stage == 0 else options.ranks) / (bandwidth * 1e9)
            lines[-1] += (f" {precision} GEMMs in {gemm_s * 1e3:.1f} ms "
                          f"({flop / gemm_s / 1e9:.1f} GFLOP/s), lower bound "
                          f"{bound[(precision, 0)] * 1e3:.1f} ms at stage 0 "
                          f"and {bound[(precision, 3)] * 1e3:.1f} ms at "
                          f"stage 3;")
        lines[-1] = lines[-1][:-1] + "."
        lines += ["",
                  "| precision | system | step (ms) | vs PyTorch | lower bound / step |",
                  "|---|---|---|---|---|"]
        for precision in precisions:
            for label, stage, _ in systems:
                median, low, high = summary(steps[(model, precision, label)])
                peer = "PyTorch DDP" if stage == 0 else "PyTorch FSDP2"
                ratio = median / summary(steps[(model, precision, peer)])[0]
                lines.append(f"| {precision} | {label} | {median:.1f} "
                             f"[{low:.1f}, {high:.1f}] | {ratio:.2f} | "
                             f"{bound[(precision, stage)] * 1e3 / median:.2f} |")
        lines.append("")
    text = "\n".join(lines)
    print(text)
    with open(options.out, "w") as f:
        f.write(text)
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
