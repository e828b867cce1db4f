#!/usr/bin/env python3
"""Checks --log-json's learning rates against the schedule's formula.

lr_schedule.py LOG SCHEDULE LR WARMUP MIN_LR STEPS: LOG is --log-json's
file; prints one line per step, FAIL on a rate more than 1e-6 relative from
the formula (warm-up lr*(s+1)/W, then constant, cosine or linear from lr to
MIN_LR at the last step).
"""
import json
import math
import sys

log, schedule, lr, warmup, min_lr, steps = sys.argv[1:]
lr, warmup, min_lr, steps = float(lr), int(warmup), float(min_lr), int(steps)
for line in open(log):
    entry = json.loads(line)
    s = entry["step"] - 1
    if s < warmup:
        want = lr * (s + 1) / warmup
    elif schedule == "constant":
        want = lr
    else:
        p = min(1.0, (s - warmup) / max(1, steps - 1 - warmup))
        want = (min_lr + 0.5 * (lr - min_lr) * (1 + math.cos(math.pi * p))
                if schedule == "cosine" else lr - (lr - min_lr) * p)
    ok = abs(entry["lr"] - want) <= 1e-6 * max(want, 1e-12)
    fields = all(k in entry for k in ("loss", "grad_norm", "ms_per_step", "peak_memory_bytes"))
    print(("" if ok and fields else "FAIL ") +
          f"step {s + 1}: lr {entry['lr']:.6g} (formula {want:.6g})")
