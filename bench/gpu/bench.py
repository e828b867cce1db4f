#!/usr/bin/env python3
"""The GPU benchmark's checks and timed runs, after run.sh built libzrt.

  python3 bench/gpu/bench.py --mode gpu|dry --carry .gpu-carry \
      --bin-dir build-gpu/bench --out OUT --deadline EPOCH_SECONDS ...

run.sh calls this; it is not meant to be run by hand. Phases, in order of
how much their answer matters when time runs short:

  1. the CUDA kernel and collective test tools (exit status, "N passed, N
     failed");
  2. the loss check: the carried gpt2-check-s3 program for 20 steps with
     --device=cuda against the losses prepare.sh got from the same object on
     the CPU, relative tolerance 2e-2 per step (bf16: parameters and
     activations carry 8 bits of mantissa, and the two backends reduce in
     different orders, so differences of a few 1e-3 after 20 steps are
     expected). It catches a wrong composition (a kernel fed the wrong
     buffer, a missing collective), which is off by far more; it is blind
     to some wrong kernels: on the emulator, tensor-core attention with the
     mma B fragment misread moved a small GPT-2's losses by only 9e-4 over
     8 steps (attention adds little at initialisation). Item 1 is the sharp
     check of each kernel's numbers. Then the same check compiled with
     --offload=optimizer (gpt2-check-s3-offload): the host AdamW on the
     host-task thread with the uploads on the copy stream, against the same
     reference, and against ZRT_HOST_TASKS=inline bit for bit;
  3. gpt2-s0 and gpt2-s3 (16 x 1024 tokens) for 30 steps each with
     --device=cuda; each step line is timestamped as it arrives (the runtime
     flushes it, and must have synchronised to print the loss), and the step
     time is the mean over the steps after the 5 warm-up ones. Their losses
     must agree with each other too (stages 0 and 3 are the same arithmetic
     at world size 1);
  4. bench/gpu/pytorch_ref.py: PyTorch eager and torch.compile on the same
     model, batches and optimizer;
  5. ablations, with whatever time is left (optional: a phase that finds no
     time is no failure): stage 3 without the fused GEMM epilogues
     (gpt2-s3-unfused) and with the SIMT attention (ZRT_CUDA_ATTENTION=simt),
     reported as stage 3's tokens/s over theirs.

Every phase gets at most what is left before --deadline (run.sh's budget,
inside the device's 10-minute limit), and results.json / results.md are
rewritten after each one, so a run cut short still reports what it did.

MFU counts model FLOPs as nanoGPT and PaLM do: per token 6 N + 12 L T d,
with N the parameters less the position embeddings (the tied token
embedding counts once: it is the output layer's matrix product), L = 12
layers, d = 768, T the sequence length (attention counted unmasked); over
the H200's dense bf16 peak of 989 TFLOP/s (datasheet, as H100 SXM).
"""
import argparse
import datetime
import json
import math
import os
import platform
import re
import shlex
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PEAK_FLOPS = 989e12
GPT2_PARAMS = 124_439_808
GPT2_POSITION_PARAMS = 1024 * 768
GPT2_LAYERS, GPT2_WIDTH = 12, 768
LOSS_RTOL = 2e-2
RESERVE_S = 15  # kept back from every phase for the report and the log tarball
# Stage 3 with one optimisation off, timed after everything else if time is
# left: the fused cuBLASLt epilogues (a program compiled with
# --fuse-epilogues=false) and the tensor-core attention (SIMT kernels).
ABLATIONS = [
    {"key": "zero_s3_unfused", "program": "gpt2-s3-unfused",
     "title": "zero-opt stage 3, --fuse-epilogues=false",
     "what": "bias/GELU fused into the cuBLASLt GEMM (nn-fuse-epilogues)"},
    {"key": "zero_s3_simt", "program": "gpt2-s3", "env": {"ZRT_CUDA_ATTENTION": "simt"},
     "title": "zero-opt stage 3, ZRT_CUDA_ATTENTION=simt",
     "what": "bf16 attention on the tensor cores (vs the SIMT kernels)"},
]

PROGRAM_RE = re.compile(r"^program: ZeRO stage (\d+), world size (\d+), language model, "
                        r"global batch (\d+) x (\d+) tokens")
STEP_RE = re.compile(r"^step (\d+) loss (\S+)$")
DEVICE_RE = re.compile(r"^device: (.*)$")
TIME_RE = re.compile(r"^time per step: ([\d.]+) ms")
MEMORY_RE = re.compile(r"^memory peak total: (\d+) bytes")
SUMMARY_RE = re.compile(r"(\d+) passed, (\d+) failed")


def flops_per_token(seq_len):
    return 6 * (GPT2_PARAMS - GPT2_POSITION_PARAMS) + 12 * GPT2_LAYERS * seq_len * GPT2_WIDTH


def run_logged(cmd, timeout, log_path, env=None, label=""):
    """Runs cmd with stdout and stderr merged, timestamping each line as it
    arrives; the lines also go to our stdout (run.log). Kills the process
    group after `timeout` seconds."""
    lines = []
    started = time.monotonic()
    with open(log_path, "w") as log:
        log.write("$ " + " ".join(shlex.quote(c) for c in cmd) + "\n")
        print(f"[{label}] $ " + " ".join(shlex.quote(c) for c in cmd), flush=True)
        try:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    env=env, start_new_session=True)
        except OSError as e:
            return {"rc": None, "timed_out": False, "lines": [], "seconds": 0.0,
                    "error": str(e)}

        def reader():
            for raw in proc.stdout:
                now = time.monotonic()
                text = raw.decode(errors="replace").rstrip("\r\n")
                lines.append((now, text))
                log.write(text + "\n")
                log.flush()
                print(f"[{label}] {text}", flush=True)

        thread = threading.Thread(target=reader, daemon=True)
        thread.start()
        timed_out = False
        try:
            rc = proc.wait(timeout=max(timeout, 1))
        except subprocess.TimeoutExpired:
            timed_out = True
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            rc = proc.wait()
        thread.join(10)
        if timed_out:
            log.write(f"*** killed after {timeout:.0f} s\n")
            print(f"[{label}] *** killed after {timeout:.0f} s", flush=True)
    return {"rc": rc, "timed_out": timed_out, "lines": lines,
            "seconds": time.monotonic() - started, "error": None}


def tail(lines, n=15):
    return [text for _, text in lines[-n:]]


def finite(x):
    return isinstance(x, float) and math.isfinite(x)


class Bench:
    def __init__(self, args):
        self.args = args
        self.dry = args.mode == "dry"
        self.carry = os.path.abspath(args.carry)
        with open(os.path.join(self.carry, "manifest.json")) as f:
            self.manifest = json.load(f)
        self.logs = args.log_dir
        os.makedirs(self.logs, exist_ok=True)
        os.makedirs(args.out, exist_ok=True)
        self.help_cache = {}
        build = json.loads(args.build_json) if args.build_json else {}
        if build and build.get("status") != "ok":
            build["title"] = "build"
            build["tail"] = self.build_errors()
        self.r = {
            "mode": args.mode,
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "prepared": {k: self.manifest.get(k) for k in
                         ("created", "git_commit", "git_dirty_files", "zero_opt_commands",
                          "deps", "lr", "clip_grad_norm")},
            "tree": args.tree,
            "machine": {},
            "build": build,
            "checks": {},
            "speed": {},
            "phases": [],
        }

    # --- bookkeeping -------------------------------------------------------

    def remaining(self):
        return self.args.deadline - time.time()

    def allowance(self, cap):
        return min(cap, self.remaining() - RESERVE_S)

    def phase(self, name, cap, fn, optional=False):
        """Runs one phase within its allowance; an exception is recorded,
        not raised, so that later phases still run. An optional phase (the
        ablations) that finds no time left is no failure."""
        budget = self.allowance(cap)
        started = time.time()
        entry = {"name": name, "budget_s": round(budget, 1)}
        print(f"\n=== {name} (budget {budget:.0f} s, {self.remaining():.0f} s left)", flush=True)
        if budget < 5:
            entry["status"] = "skipped: out of time (optional)" if optional else \
                "skipped: out of time"
            print(f"=== {name}: skipped, out of time", flush=True)
        else:
            try:
                fn(budget)
                entry["status"] = "done"
            except Exception as e:  # reported, and the run goes on
                entry["status"] = f"error: {type(e).__name__}: {e}"
                print(f"=== {name}: {entry['status']}", flush=True)
        entry["seconds"] = round(time.time() - started, 1)
        self.r["phases"].append(entry)
        self.save()

    def save(self):
        self.r["ok"] = self.ok()
        self.ratios()
        for name, text in (("results.json", json.dumps(self.r, indent=1)),
                           ("results.md", self.markdown())):
            path = os.path.join(self.args.out, name)
            with open(path + ".tmp", "w") as f:
                f.write(text)
            os.replace(path + ".tmp", path)

    def ok(self):
        """Whether everything that was meant to run passed."""
        bad = [c for c in self.r["checks"].values() if c.get("status") not in ("PASS", "SKIPPED")]
        bad += [s for s in self.r["speed"].values() if s.get("status") not in ("ok", "SKIPPED")]
        bad += [p for p in self.r["phases"]
                if p.get("status") not in ("done", "skipped: out of time (optional)")]
        build_ok = self.r["build"].get("status") == "ok"
        return build_ok and not bad

    # --- helpers -------------------------------------------------------------

    def build_errors(self):
        """The first error lines and the end of cmake's or ninja's log."""
        for name in ("build.log", "cmake.log"):
            path = os.path.join(self.logs, name)
            if not os.path.exists(path) or os.path.getsize(path) == 0:
                continue
            with open(path, errors="replace") as f:
                lines = [l.rstrip("\n") for l in f]
            errors = [l for l in lines if re.search(r"error|Error|FAILED", l)][:20]
            return [f"({name})"] + errors + ["..."] + lines[-15:]
        return []

    def exe(self, name):
        return os.path.join(self.args.bin_dir, name)

    def device_flags(self, exe):
        """--device=cuda (dry: cpu) when the program knows the flag."""
        if exe not in self.help_cache:
            try:
                out = subprocess.run([exe, "--help"], capture_output=True, text=True,
                                     timeout=60).stdout
            except Exception as e:
                out = f"(--help failed: {e})"
            self.help_cache[exe] = "--device" in out
        if self.help_cache[exe]:
            return ["--device=cpu" if self.dry else "--device=cuda"], None
        if self.dry:
            return [], "the runtime has no --device flag yet: ran on the CPU without it"
        return None, "the program has no --device flag: libzrt was built without the CUDA backend"

    def run_program(self, key, exe, steps, budget, warmup, env=None):
        """One zero-opt program (with `env` added to the environment);
        returns what its output says."""
        res = {"program": os.path.basename(exe), "steps": steps, "warmup": warmup}
        if not os.path.exists(exe):
            res.update(status="FAIL", error=f"{exe} was not built or linked")
            return res
        flags, note = self.device_flags(exe)
        if flags is None:
            res.update(status="FAIL", error=note)
            return res
        if note:
            res["note"] = note
        cmd = [exe, "--data=" + os.path.join(self.carry, self.manifest["data"]),
               f"--steps={steps}", f"--lr={self.manifest['lr']}",
               f"--clip-grad-norm={self.manifest['clip_grad_norm']}"] + flags
        run = run_logged(cmd, budget, os.path.join(self.logs, key + ".log"),
                         env=dict(os.environ, **env) if env else None, label=key)
        if env:
            res["env"] = env
        res.update(rc=run["rc"], timed_out=run["timed_out"], seconds=round(run["seconds"], 1))
        if run["error"]:
            res.update(status="FAIL", error=run["error"])
            return res
        stamps, losses = [], []
        for t, text in run["lines"]:
            if m := STEP_RE.match(text):
                stamps.append(t)
                losses.append(float(m.group(2)))
            elif m := PROGRAM_RE.match(text):
                res.update(stage=int(m.group(1)), world_size=int(m.group(2)),
                           batch=int(m.group(3)), seq_len=int(m.group(4)))
            elif m := DEVICE_RE.match(text):
                res["device"] = m.group(1)
            elif m := TIME_RE.match(text):
                res["program_step_ms"] = float(m.group(1))
            elif m := MEMORY_RE.match(text):
                res["peak_memory_bytes"] = int(m.group(1))
        res["losses"] = losses
        timed = len(stamps) - warmup
        if timed >= 1 and warmup >= 1:
            res["step_ms"] = (stamps[-1] - stamps[warmup - 1]) * 1e3 / timed
            res["timed_steps"] = timed
        problems = []
        if run["timed_out"]:
            problems.append(f"killed after {budget:.0f} s at step {len(losses)}")
        elif run["rc"] != 0:
            problems.append(f"exit status {run['rc']}")
        if len(losses) < steps and not run["timed_out"]:
            problems.append(f"{len(losses)} of {steps} steps")
        if any(not finite(l) for l in losses):
            problems.append("non-finite loss")
        if not self.dry and "device" in res and not res["device"].startswith("cuda"):
            problems.append(f"ran on '{res['device']}', not cuda")
        if problems:
            res.update(status="FAIL", error="; ".join(problems), tail=tail(run["lines"]),
                       timed_out_only=run["timed_out"] and len(problems) == 1)
        else:
            res["status"] = "ok"
        return res

    # --- phases ----------------------------------------------------------------

    def machine(self, budget):
        m = self.r["machine"]
        m["host"] = platform.node()
        m["cores"] = os.cpu_count()
        try:
            for line in open("/proc/cpuinfo"):
                if line.startswith("model name"):
                    m["cpu"] = line.split(":", 1)[1].strip()
                    break
        except OSError:
            pass

        def out(cmd):
            try:
                return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.strip()
            except Exception:
                return ""
        q = out(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                 "--format=csv,noheader"])
        if q:
            parts = [p.strip() for p in q.splitlines()[0].split(",")]
            m.update(gpu=parts[0], driver=parts[1] if len(parts) > 1 else None,
                     gpu_memory=parts[2] if len(parts) > 2 else None,
                     gpus=len(q.splitlines()))
        if cv := re.search(r"CUDA Version:\s*([\d.]+)", out(["nvidia-smi"])):
            m["cuda_driver_api"] = cv.group(1)
        nvcc = out(["nvcc", "--version"]) or out(["/usr/local/cuda/bin/nvcc", "--version"])
        if v := re.search(r"release ([\d.]+), (V[\d.]+)", nvcc):
            m["nvcc"] = f"{v.group(1)} ({v.group(2)})"
        m["deps"] = self.args.deps

    def test_tool(self, key, title, path, budget):
        res = {"title": title, "tool": os.path.basename(path) if path else None}
        self.r["checks"][key] = res
        if not path:
            if self.dry:
                res.update(status="SKIPPED", details="CPU dry run: the CUDA tool is not built here")
            else:
                res.update(status="FAIL", details="the tool was not built (no such CMake target)")
            return
        if not os.path.exists(path):
            res.update(status="FAIL", details=f"{path} does not exist (build failed?)")
            return
        run = run_logged([path], budget, os.path.join(self.logs, key + ".log"), label=key)
        res.update(rc=run["rc"], seconds=round(run["seconds"], 1), tail=tail(run["lines"], 12))
        summary = None
        for _, text in run["lines"]:
            if m := SUMMARY_RE.search(text):
                summary = (int(m.group(1)), int(m.group(2)))
        if summary:
            res.update(passed=summary[0], failed=summary[1])
        if run["timed_out"]:
            res.update(status="FAIL", details=f"killed after {budget:.0f} s")
        elif run["rc"] == 0:
            res.update(status="PASS", details=(f"{summary[0]} passed, {summary[1]} failed"
                                               if summary else "exit status 0"))
        else:
            res.update(status="FAIL", details=(f"exit status {run['rc']}" +
                                               (f"; {summary[0]} passed, {summary[1]} failed"
                                                if summary else "")))
        if self.dry:
            res["details"] += " (CPU stand-in for the CUDA tool)"

    def loss_check(self, budget):
        check = self.manifest["check"]
        with open(os.path.join(self.carry, check["reference"])) as f:
            ref = json.load(f)
        steps = min(3, len(ref["losses"])) if self.dry else check["steps"]
        run = self.run_program("loss_check", self.exe("gpt2-check-s3"), steps, budget, warmup=1)
        res = {"title": f"losses vs the CPU reference ({check['batch']} x {check['seq_len']} "
                        f"tokens, stage 3, {steps} steps, rel. tol. {LOSS_RTOL})",
               "run": {k: v for k, v in run.items() if k != "losses"},
               "reference_device": ref.get("device"), "tolerance": LOSS_RTOL}
        self.r["checks"]["loss_check"] = res
        got, want = run.get("losses", []), ref["losses"][:steps]
        rows = []
        for i, (g, w) in enumerate(zip(got, want)):
            rel = abs(g - w) / max(abs(w), 1e-12) if finite(g) else float("inf")
            rows.append({"step": i + 1, "cpu": w, "device": g, "rel": rel})
        res["rows"] = rows
        worst = max(rows, key=lambda r: r["rel"]) if rows else None
        if worst:
            res["max_rel"] = worst["rel"]
            res["max_rel_step"] = worst["step"]
        if run["status"] != "ok":
            res.update(status="FAIL", details=run.get("error", "run failed"))
        elif len(rows) < steps:
            res.update(status="FAIL", details=f"only {len(rows)} of {steps} losses to compare")
        elif worst["rel"] > LOSS_RTOL:
            res.update(status="FAIL", details=f"step {worst['step']}: device {worst['device']:.6g} vs "
                                              f"CPU {worst['cpu']:.6g}, rel. {worst['rel']:.2e}")
        else:
            res.update(status="PASS", details=f"max rel. diff {worst['rel']:.2e} (step {worst['step']})")

    def offload_check(self, budget):
        """--offload=optimizer on the device: the host AdamW on the host-task
        thread, the copies down on the compute stream, the uploads on the
        copy stream. Against the loss check's CPU reference (offload trains
        bit for bit as without it on the CPU), and the host thread against
        ZRT_HOST_TASKS=inline bit for bit (the same kernels in the same
        order: only the copies' timing differs)."""
        check = self.manifest["check"]
        res = {"title": "--offload=optimizer on the device: vs the CPU reference "
                        f"(rel. tol. {LOSS_RTOL}), host thread vs inline bit for bit"}
        self.r["checks"]["offload_check"] = res
        if "offload_object" not in check:
            res.update(status="SKIPPED", details="prepared without the offload program")
            return
        with open(os.path.join(self.carry, check["reference"])) as f:
            ref = json.load(f)
        steps = min(3, len(ref["losses"])) if self.dry else check["steps"]
        exe = self.exe("gpt2-check-s3-offload")
        thread = self.run_program("offload_thread", exe, steps, budget / 2, warmup=1)
        inline = self.run_program("offload_inline", exe, steps, self.allowance(budget / 2),
                                  warmup=1, env={"ZRT_HOST_TASKS": "inline"})
        res["runs"] = {k: {x: v for x, v in run.items() if x != "losses"}
                       for k, run in (("thread", thread), ("inline", inline))}
        for key, run in (("thread", thread), ("inline", inline)):
            if run["status"] != "ok":
                res.update(status="FAIL", details=f"{key}: {run.get('error', 'run failed')}")
                return
        got, want = thread["losses"], ref["losses"][:steps]
        rels = [abs(g - w) / max(abs(w), 1e-12) for g, w in zip(got, want)]
        worst = max(range(len(rels)), key=lambda i: rels[i])
        res.update(max_rel=rels[worst], max_rel_step=worst + 1,
                   step_ms={k: run.get("step_ms") for k, run in (("thread", thread),
                                                                 ("inline", inline))})
        if len(got) < steps:
            res.update(status="FAIL", details=f"only {len(got)} of {steps} losses")
        elif rels[worst] > LOSS_RTOL:
            res.update(status="FAIL", details=f"step {worst + 1}: device {got[worst]:.6g} vs "
                                              f"CPU {want[worst]:.6g}, rel. {rels[worst]:.2e}")
        elif thread["losses"] != inline["losses"]:
            first = next(i for i, (a, b) in enumerate(zip(thread["losses"], inline["losses"]))
                         if a != b)
            res.update(status="FAIL", details=f"host thread and inline differ from step "
                                              f"{first + 1}: {thread['losses'][first]!r} vs "
                                              f"{inline['losses'][first]!r}")
        else:
            ms = res["step_ms"]
            timing = (f"; step {ms['thread']:.1f} ms (thread) vs {ms['inline']:.1f} ms (inline)"
                      if ms["thread"] and ms["inline"] else "")
            res.update(status="PASS", details=f"max rel. diff {rels[worst]:.2e} (step "
                                              f"{worst + 1}); thread == inline bit for bit{timing}")

    def speed(self, key, title, program, budget, env=None, optional=False):
        """The timed run of a carried speed program (gpt2-s0, gpt2-s3, ...).
        An optional run (an ablation) that its budget cut short is skipped
        for lack of time, not failed: the run had nothing wrong but time."""
        spec = self.manifest["speed"]
        if self.dry:
            # A 16 x 1024 GPT-2 step takes minutes on this CPU: the full-size
            # program only starts (--steps=0: init and ledger), and the small
            # check program stands in for the timed run.
            smoke = self.run_program(key + "_smoke", self.exe(program), 0, budget / 2,
                                     warmup=0, env=env)
            res = self.run_program(key, self.exe("gpt2-check-s3"), 3, self.allowance(budget / 2),
                                   warmup=1, env=env)
            res["note"] = (f"CPU dry run: timed gpt2-check-s3 for 3 steps; {program} "
                           f"--steps=0: {smoke['status']}"
                           + (f" ({smoke.get('error')})" if smoke["status"] != "ok" else ""))
            if smoke["status"] != "ok":
                res["status"] = "FAIL"
        else:
            res = self.run_program(key, self.exe(program), self.args.speed_steps,
                                   budget, warmup=self.args.warmup, env=env)
        if optional and res.get("status") == "FAIL" and res.get("timed_out_only"):
            res.update(status="SKIPPED", error="out of time (optional): " + res["error"])
        res["title"] = title
        batch = res.get("batch", spec["batch"])
        seq = res.get("seq_len", spec["seq_len"])
        res["tokens_per_step"] = batch * seq
        if "step_ms" in res:
            res["tokens_per_second"] = batch * seq / (res["step_ms"] / 1e3)
            res["mfu"] = batch * seq * flops_per_token(seq) / (res["step_ms"] / 1e3) / PEAK_FLOPS
        self.r["speed"][key] = res

    def stage_consistency(self, budget):
        a = self.r["speed"].get("zero_s0", {}).get("losses", [])
        b = self.r["speed"].get("zero_s3", {}).get("losses", [])
        res = {"title": f"stage 0 vs stage 3 losses on the device (rel. tol. {LOSS_RTOL})"}
        self.r["checks"]["stage_consistency"] = res
        if self.dry:
            res.update(status="SKIPPED", details="CPU dry run: both timed runs are the check program")
            return
        n = min(len(a), len(b))
        if n == 0:
            res.update(status="FAIL", details="no losses from one of the runs")
            return
        rels = [abs(x - y) / max(abs(x), 1e-12) if finite(x) and finite(y) else float("inf")
                for x, y in zip(a, b)]
        worst = max(range(n), key=lambda i: rels[i])
        res.update(steps=n, max_rel=rels[worst], max_rel_step=worst + 1)
        if rels[worst] > LOSS_RTOL:
            res.update(status="FAIL", details=f"step {worst + 1}: {a[worst]:.6g} vs {b[worst]:.6g}")
        else:
            res.update(status="PASS", details=f"{n} steps, max rel. diff {rels[worst]:.2e}")

    def pytorch(self, budget):
        spec = self.manifest["speed"]
        out = os.path.join(self.logs, "pytorch.json")
        if os.path.exists(out):
            os.remove(out)
        if self.dry:
            variants = "eager,compile" if os.environ.get("ZB_DRY_COMPILE") == "1" else "eager"
            sizes = ["--device", "cpu", "--batch", "1", "--seq-len", "64", "--steps", "2",
                     "--warmup", "1"]
        else:
            variants = "eager,compile"
            sizes = ["--device", "cuda", "--batch", str(spec["batch"]), "--seq-len",
                     str(spec["seq_len"]), "--steps", str(self.args.torch_steps), "--warmup",
                     str(self.args.warmup)]
        cmd = [sys.executable, os.path.join(HERE, "pytorch_ref.py"),
               "--data", os.path.join(self.carry, self.manifest["data"]),
               "--lr", str(self.manifest["lr"]),
               "--clip-grad-norm", str(self.manifest["clip_grad_norm"]),
               "--variants", variants, "--json", out] + sizes
        # PyTorch gets the environment run.sh started with, not the carried
        # MPI / OpenBLAS library paths.
        env = dict(os.environ)
        base = os.environ.get("ZB_BASE_LD_LIBRARY_PATH")
        if base is not None:
            if base:
                env["LD_LIBRARY_PATH"] = base
            else:
                env.pop("LD_LIBRARY_PATH", None)
        run = run_logged(cmd, budget, os.path.join(self.logs, "pytorch.log"), env=env,
                         label="pytorch")
        data = {}
        if os.path.exists(out):
            with open(out) as f:
                data = json.load(f)
        self.r["machine"].update({k: data.get(k) for k in ("torch", "transformers")})
        if data.get("cuda"):
            self.r["machine"]["torch_cuda"] = data["cuda"]
        for variant in variants.split(","):
            v = data.get("variants", {}).get(variant)
            res = {"title": "PyTorch " + ("eager" if variant == "eager" else "torch.compile")}
            if v and v.get("status") == "ok":
                res.update(v)
                res.pop("status")
                res["status"] = "ok"
                seq = data["seq_len"]
                res["tokens_per_step"] = data["batch"] * seq
                res["mfu"] = (data["batch"] * seq * flops_per_token(seq)
                              / (v["step_ms"] / 1e3) / PEAK_FLOPS)
                res["timed_steps"] = data["steps"]
                res["warmup"] = data["warmup"]
                if variant == "compile" and "first_step_seconds" in v:
                    res["note"] = (f"first step {v['first_step_seconds']:.0f} s "
                                   f"(compilation), not timed")
            else:
                why = ("killed after %.0f s" % budget if run["timed_out"]
                       else f"exit status {run['rc']}" if run["rc"] else "no result")
                res.update(status="FAIL", error=why, tail=tail(run["lines"]))
            self.r["speed"]["torch_" + variant] = res
        if self.dry and "compile" not in variants:
            self.r["speed"]["torch_compile"] = {
                "title": "PyTorch torch.compile", "status": "SKIPPED",
                "error": "CPU dry run (ZB_DRY_COMPILE=1 to try it)"}

    # --- report ----------------------------------------------------------------

    def ratios(self):
        s, out = self.r["speed"], {}
        for z in ("zero_s0", "zero_s3"):
            for t in ("torch_eager", "torch_compile"):
                zt = s.get(z, {}).get("tokens_per_second")
                tt = s.get(t, {}).get("tokens_per_second")
                if zt and tt:
                    out[f"{z}/{t}"] = zt / tt
        # Ablations: what each optimisation is worth at stage 3.
        base = s.get("zero_s3", {}).get("tokens_per_second")
        for a in ABLATIONS:
            at = s.get(a["key"], {}).get("tokens_per_second")
            if base and at:
                out[f"zero_s3/{a['key']}"] = base / at
        self.r["ratios"] = out
        return out

    def markdown(self):
        r, m = self.r, self.r["machine"]
        spec = self.manifest["speed"]
        L = []
        title = "GPU benchmark: zero-opt vs PyTorch, GPT-2 (124M)"
        if self.dry:
            title += " — CPU DRY RUN (no GPU: numbers are not a benchmark)"
        L += [f"# {title}", ""]
        L.append(f"Run {r['date']}; objects and CPU reference prepared {r['prepared']['created']} "
                 f"at commit {str(r['prepared']['git_commit'])[:12]}"
                 f" ({r['prepared']['git_dirty_files']} files modified)"
                 + (f"; tree here: {r['tree']}" if r.get("tree") else "") + ".")
        prepared = str(r["prepared"]["git_commit"] or "")
        if r.get("tree") and r["tree"] != "no git" and not prepared.startswith(r["tree"]):
            L.append("")
            L.append("**Note:** the objects and the CPU reference were prepared at another commit "
                     "than the tree built here: rerun prepare.sh if the ABI or the CPU kernels "
                     "changed in between.")
        L.append("")
        L += ["## Machine", ""]
        gpu = m.get("gpu") or "no GPU"
        L.append(f"- GPU: {gpu}" + (f" ({m.get('gpu_memory')}), driver {m.get('driver')}, "
                                    f"CUDA {m.get('cuda_driver_api')}" if m.get("gpu") else ""))
        L.append(f"- nvcc: {m.get('nvcc', 'not found')}")
        L.append(f"- CPU: {m.get('cpu', '?')}, {m.get('cores')} cores")
        if m.get("torch"):
            L.append(f"- PyTorch {m['torch']} (CUDA {m.get('torch_cuda')}), transformers "
                     f"{m.get('transformers')}")
        L.append(f"- libzrt built with: {m.get('deps', '?')}")
        b = r["build"]
        if b:
            L.append(f"- build: {b.get('status')} (configure {b.get('configure_s', '?')} s, "
                     f"build {b.get('build_s', '?')} s, CUDA backend {b.get('cuda', '?')})")
        L.append("")

        L += ["## Checks", "", "| check | result | details |", "|---|---|---|"]
        if b and b.get("status") != "ok":
            L.append(f"| build | FAIL | {b.get('status')}: see below and run.log |")
        for c in r["checks"].values():
            L.append(f"| {c.get('title')} | {c.get('status')} | {c.get('details', '')} |")
        L.append("")

        L += ["## Throughput", ""]
        B, T = spec["batch"], spec["seq_len"]
        L.append(f"GPT-2 124M, bf16 mixed precision, AdamW, global-norm clipping 1.0, one GPU, "
                 f"{B} x {T} = {B * T} tokens per step. zero-opt: {self.args.speed_steps} steps, "
                 f"the mean of those after {self.args.warmup} warm-up steps (wall clock between "
                 f"step lines). PyTorch: {self.args.warmup} warm-up steps, then "
                 f"{self.args.torch_steps} steps between CUDA events. MFU = tokens/s x "
                 f"(6 N + 12 L T d) / 989 TFLOP/s, N = {GPT2_PARAMS - GPT2_POSITION_PARAMS:,} "
                 f"(parameters less position embeddings), L = 12, d = 768: "
                 f"{flops_per_token(T) / 1e6:.1f} MFLOP per token.")
        if self.dry:
            L.append("CPU dry run: the timed runs are small stand-ins (tokens/step column), "
                     "on two shared cores; only the script's logic is being tested.")
        L.append("")
        L += ["| run | status | tokens/step | step (ms) | tokens/s | MFU | peak memory (GiB) "
              "| first → last loss |", "|---|---|---|---|---|---|---|---|"]
        for key in ("zero_s0", "zero_s3", "torch_eager", "torch_compile",
                    *(a["key"] for a in ABLATIONS)):
            s = r["speed"].get(key)
            if not s:
                continue
            ms = f"{s['step_ms']:.2f}" if "step_ms" in s else "—"
            tps = f"{s['tokens_per_second']:,.0f}" if "tokens_per_second" in s else "—"
            mfu = ("n/a (CPU)" if self.dry else f"{100 * s['mfu']:.1f}%") if "mfu" in s else "—"
            mem = (f"{s['peak_memory_bytes'] / 2**30:.1f}" if "peak_memory_bytes" in s else "—")
            losses = s.get("losses") or []
            ll = f"{losses[0]:.4f} → {losses[-1]:.4f}" if losses else "—"
            status = s.get("status")
            if status != "ok":
                status = f"{status}: {s.get('error', '')}"
            L.append(f"| {s.get('title', key)} | {status} | {s.get('tokens_per_step', '—')} | {ms} "
                     f"| {tps} | {mfu} | {mem} | {ll} |")
            if s.get("parameters") not in (None, GPT2_PARAMS):
                s.setdefault("note", f"{s['parameters']:,} parameters, not {GPT2_PARAMS:,}")
        L.append("")
        notes = [f"{s.get('title')}: {s['note']}" for s in r["speed"].values() if s.get("note")]
        for n in notes:
            L.append(f"- {n}")
        if notes:
            L.append("")
        ratios = self.ratios()
        if ratios:
            L += ["Throughput ratios (zero-opt tokens/s ÷ PyTorch tokens/s; above 1: zero-opt is "
                  "faster):", "", "| | vs PyTorch eager | vs torch.compile |", "|---|---|---|"]
            for z, name in (("zero_s0", "zero-opt stage 0"), ("zero_s3", "zero-opt stage 3")):
                e = ratios.get(f"{z}/torch_eager")
                c = ratios.get(f"{z}/torch_compile")
                L.append(f"| {name} | {f'{e:.3f}' if e else '—'} | {f'{c:.3f}' if c else '—'} |")
            L.append("")
            ablated = [(a, ratios.get(f"zero_s3/{a['key']}")) for a in ABLATIONS]
            if any(x for _, x in ablated):
                L += ["Ablations (zero-opt stage 3 tokens/s ÷ the same program without one "
                      "optimisation; above 1: the optimisation helps):", ""]
                for a, x in ablated:
                    if x:
                        L.append(f"- {a['what']}: {x:.3f}")
                L.append("")

        lc = r["checks"].get("loss_check")
        if lc and lc.get("rows"):
            L += ["## Loss check", "",
                  f"{lc['title']}: the same object file, initial weights and batches on "
                  f"{lc['reference_device']} (prepare.sh) and here.", "",
                  "| step | CPU | device | rel. diff |", "|---|---|---|---|"]
            for row in lc["rows"]:
                L.append(f"| {row['step']} | {row['cpu']:.6f} | {row['device']:.6f} | "
                         f"{row['rel']:.2e} |")
            L.append("")
        failed = [b] if b.get("tail") else []
        failed += [c for c in r["checks"].values() if c.get("status") == "FAIL" and c.get("tail")]
        failed += [s for s in r["speed"].values() if s.get("status") == "FAIL" and s.get("tail")]
        if failed:
            L += ["## Output of what failed", ""]
            for c in failed:
                L += [f"{c.get('title')}:", "", "```"] + c["tail"] + ["```", ""]
        L += ["## Phases", "", "| phase | status | seconds |", "|---|---|---|"]
        for p in r["phases"]:
            L.append(f"| {p['name']} | {p['status']} | {p.get('seconds', '')} |")
        L.append("")
        L.append(f"Overall: {'PASS' if r.get('ok') else 'FAIL'}.")
        return "\n".join(L) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=["gpu", "dry"], required=True)
    parser.add_argument("--carry", required=True)
    parser.add_argument("--bin-dir", required=True, help="the linked programs")
    parser.add_argument("--out", required=True)
    parser.add_argument("--log-dir", required=True)
    parser.add_argument("--deadline", type=float, required=True, help="epoch seconds")
    parser.add_argument("--kernel-tests", default="")
    parser.add_argument("--collective-tests", default="")
    parser.add_argument("--build-json", default="")
    parser.add_argument("--deps", default="")
    parser.add_argument("--tree", default="")
    parser.add_argument("--speed-steps", type=int, default=30)
    parser.add_argument("--torch-steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    args = parser.parse_args()

    bench = Bench(args)
    built = bench.r["build"].get("status") == "ok"
    bench.phase("machine", 60, bench.machine)
    if built:
        bench.phase("kernel tests", 120, lambda t: bench.test_tool(
            "kernel_tests", "CUDA kernels vs CPU kernels", args.kernel_tests, t))
        bench.phase("collective tests", 60, lambda t: bench.test_tool(
            "collective_tests", "CUDA collectives", args.collective_tests, t))
        bench.phase("loss check", 120, bench.loss_check)
        bench.phase("offload check", 90, bench.offload_check)
        for stage in (0, 3):
            bench.phase(f"zero-opt stage {stage}", 150, lambda t, stage=stage: bench.speed(
                f"zero_s{stage}", f"zero-opt ZeRO stage {stage}", f"gpt2-s{stage}", t))
        bench.phase("stage 0 vs 3", 10, bench.stage_consistency)
    # PyTorch's numbers are worth having even when libzrt did not build.
    bench.phase("pytorch", 330, bench.pytorch)
    if built:
        # Last, with what time is left: stage 3 without each optimisation.
        for a in ABLATIONS:
            bench.phase(f"ablation: {a['key']}", 60, lambda t, a=a: bench.speed(
                a["key"], a["title"], a["program"], t, env=a.get("env"), optional=True),
                optional=True)
    bench.save()
    print("\n" + bench.markdown(), flush=True)
    sys.exit(0 if bench.r["ok"] else 1)


if __name__ == "__main__":
    main()
