#!/usr/bin/env python3
"""PyTorch's time for the training step zero-opt's GPT-2 programs run.

  python3 bench/gpu/pytorch_ref.py --data .gpu-carry/data/shakespeare_train.bin \
      --batch 16 --seq-len 1024 --variants eager,compile --json torch.json

The same model (GPT-2 124M: transformers' GPT2LMHeadModel built from its
default config, dropout off because zero-opt's GPT-2 has none, SDPA
attention), the same batches (rows of the token file chosen by the runtime's
formula, row b of step s starting at ((s*B + b)*T) mod (N - T - 1)), the same
optimizer (AdamW at --lr, the manifest's, betas 0.9/0.999, eps 1e-8, weight
decay 0.01 on every parameter, global-norm clipping at 1.0) and the same
precision in PyTorch's standard recipe: float32 parameters and AdamW state,
the forward and backward under torch.autocast(bfloat16), fused AdamW. zero-opt stores
bf16 parameters beside float32 masters; both compute the matrix products in
bf16 and update in float32.

Each variant (eager, then torch.compile of the model and loss) runs
--warmup steps (the first compiles) and then --steps timed steps between two
CUDA events with no host synchronisation in between; the losses are read
after. Results go to --json after every variant, so a variant that runs out
of time leaves the ones before it. --device cpu (timed with perf_counter)
exists for bench/gpu/run.sh --cpu-dry-run.
"""
import argparse
import json
import os
import struct
import sys
import time

MAGIC, VERSION, HEADER_INTS = 20240520, 1, 256


def read_tokens(path):
    """A token file in llm.c's format, as the runtime reads it."""
    with open(path, "rb") as f:
        data = f.read()
    magic, version, count = struct.unpack_from("<3i", data)
    if magic != MAGIC or version != VERSION:
        sys.exit(f"pytorch_ref.py: {path} is not a version {VERSION} token file")
    return struct.unpack_from("<%dH" % count, data, 4 * HEADER_INTS)


def batch_rows(tokens, step, batch, seq):
    """Inputs and targets of one global batch (runtime/README.md's rows)."""
    span = len(tokens) - seq - 1
    xs, ys = [], []
    for b in range(batch):
        start = ((step * batch + b) * seq) % span
        xs.append(tokens[start:start + seq])
        ys.append(tokens[start + 1:start + seq + 1])
    return xs, ys


def save(path, result):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f, indent=1)
    os.replace(tmp, path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--seq-len", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=20, help="timed steps")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--variants", default="eager,compile")
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--lr", type=float, default=3e-5)
    parser.add_argument("--clip-grad-norm", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--json", required=True, help="results file")
    args = parser.parse_args()

    started = time.perf_counter()
    import torch
    import torch.nn.functional as F
    import transformers
    from transformers import GPT2Config, GPT2LMHeadModel

    device = torch.device(args.device)
    cuda = device.type == "cuda"
    result = {
        "torch": torch.__version__, "transformers": transformers.__version__,
        "cuda": torch.version.cuda, "device": args.device,
        "gpu": torch.cuda.get_device_name(0) if cuda else None,
        "batch": args.batch, "seq_len": args.seq_len, "steps": args.steps,
        "warmup": args.warmup, "import_seconds": time.perf_counter() - started,
        "variants": {},
    }
    save(args.json, result)
    if cuda:
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True

    tokens = read_tokens(args.data)
    total = args.warmup + args.steps
    # Every step's batch on the host up front (pinned), copied in the step as
    # the runtime copies its batch.
    batches = []
    for s in range(total):
        xs, ys = batch_rows(tokens, s, args.batch, args.seq_len)
        x = torch.tensor(xs, dtype=torch.long)
        y = torch.tensor(ys, dtype=torch.long)
        if cuda:
            x, y = x.pin_memory(), y.pin_memory()
        batches.append((x, y))

    config = GPT2Config(n_positions=1024, n_embd=768, n_layer=12, n_head=12,
                        vocab_size=50257, resid_pdrop=0.0, embd_pdrop=0.0,
                        attn_pdrop=0.0, use_cache=False)
    try:
        config._attn_implementation = "sdpa"  # flash / memory-efficient kernels
    except Exception:  # transformers' own default then, reported below
        pass

    class LossModel(torch.nn.Module):
        """GPT-2 and its mean cross-entropy against the next tokens."""

        def __init__(self, gpt):
            super().__init__()
            self.gpt = gpt

        def forward(self, x, y):
            logits = self.gpt(input_ids=x).logits
            return F.cross_entropy(logits.float().view(-1, logits.size(-1)), y.view(-1))

    for variant in [v for v in args.variants.split(",") if v]:
        entry = {"status": "started"}
        result["variants"][variant] = entry
        save(args.json, result)
        torch.manual_seed(args.seed)
        gpt = GPT2LMHeadModel(config).to(device)
        entry["parameters"] = sum(p.numel() for p in gpt.parameters())
        entry["attn_implementation"] = getattr(gpt.config, "_attn_implementation", None)
        model = LossModel(gpt)
        forward = torch.compile(model) if variant == "compile" else model
        opt = torch.optim.AdamW(gpt.parameters(), lr=args.lr, betas=(0.9, 0.999),
                                eps=1e-8, weight_decay=0.01, fused=cuda)

        def step(s):
            x, y = batches[s]
            x = x.to(device, non_blocking=True)
            y = y.to(device, non_blocking=True)
            with torch.autocast(device.type, dtype=torch.bfloat16):
                loss = forward(x, y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(gpt.parameters(), args.clip_grad_norm)
            opt.step()
            opt.zero_grad(set_to_none=True)
            return loss.detach()

        losses = []
        t0 = time.perf_counter()
        for s in range(args.warmup):
            losses.append(step(s))
            if s == 0:
                float(losses[0])  # waits: the first step includes compilation
                entry["first_step_seconds"] = time.perf_counter() - t0
        if cuda:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            begin.record()
        t1 = time.perf_counter()
        for s in range(args.warmup, total):
            losses.append(step(s))
        if cuda:
            end.record()
            torch.cuda.synchronize()
            ms = begin.elapsed_time(end) / args.steps
            entry["peak_memory_bytes"] = torch.cuda.max_memory_allocated()
        else:
            ms = (time.perf_counter() - t1) * 1e3 / args.steps
        entry.update({
            "status": "ok", "step_ms": ms,
            "tokens_per_second": args.batch * args.seq_len / (ms / 1e3),
            "warmup_seconds": t1 - t0,
            "losses": [float(l) for l in losses],
        })
        print(f"pytorch {variant}: {ms:.2f} ms per step, "
              f"{entry['tokens_per_second']:.0f} tokens/s, loss {entry['losses'][0]:.4f} -> "
              f"{entry['losses'][-1]:.4f}", flush=True)
        save(args.json, result)
        del forward, model, gpt, opt, losses
        if cuda:
            torch.cuda.empty_cache()
    result["seconds"] = time.perf_counter() - started
    save(args.json, result)


if __name__ == "__main__":
    main()
