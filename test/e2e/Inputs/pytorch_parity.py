"""zero-opt against PyTorch: the same model, weights and batches, 20 steps.

  pytorch_parity.py --family F --out DIR --mpirun CMD \
      [--combos S:W:P[:R],...] [--steps N] [--zero-override FLAG=VALUE ...]

Creates a small model of family F with Hugging Face transformers from a fixed
seed (FAMILIES: GPT-2; Llama with grouped-query heads and rotary embeddings;
Llama saved by transformers 5 with rope_theta 500000; Llama with llama3 rope
scaling and a tied head; Mistral; Qwen2 with q/k/v biases; the last four in
shapes that divide evenly nowhere), saves its config.json and
model.safetensors, and a token file
cut from the shipped text. PyTorch then trains the model for N steps with
torch.optim.AdamW in float32 (with HYPER's hyperparameters, none of them the
default, so that a flag the runtime misreads shows) on the batches the
zero-opt runtime reads (the
offset rule of runtime/driver/batches.cpp), and each combination S:W:P[:R]
(ZeRO stage, world size, precision fp32|bf16, and --reduce-dtype, bf16
unless given) is compiled from the same
config.json by `zero-opt --model-config`, started from the same weights
(`--init-from`) and run under `CMD W`. Every step's loss must agree with
PyTorch's within 1e-4 relative in fp32 and 2e-2 in bf16 (against PyTorch in
float32: the bf16 run rounds parameters, activations and gradients).

Prints one line per combination with the largest relative difference seen,
and exits 1 naming the combination and step on any mismatch.
"""
import argparse
import json
import math
import os
import re
import shlex
import struct
import subprocess
import sys

import torch

VOCAB, SEQ, BATCH = 256, 32, 6
# AdamW's hyperparameters, by the zero-opt runtime's flag names; none is the
# default of either side.
HYPER = {"lr": 1.2e-3, "adam-beta1": 0.8, "adam-beta2": 0.98, "adam-eps": 1e-5,
         "weight-decay": 0.2}
TOLERANCE = {"fp32": 1e-4, "bf16": 2e-2}
STEP = re.compile(r"^step (\d+) loss (\S+)$")
SRC_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


# Shapes that divide evenly nowhere: 6 heads of 16 on 2 kv heads, an MLP of
# 200, a vocabulary of 777 (the byte tokens use its first 256 rows).
UNEVEN = dict(vocab_size=777, hidden_size=96, intermediate_size=200,
              num_hidden_layers=2, num_attention_heads=6,
              num_key_value_heads=2, max_position_embeddings=64,
              rms_norm_eps=1e-5, attention_dropout=0.0)

FAMILIES = {
    "gpt2": lambda t: t.GPT2LMHeadModel(t.GPT2Config(
        vocab_size=VOCAB, n_positions=64, n_embd=64, n_layer=2, n_head=4,
        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)),
    "llama": lambda t: t.LlamaForCausalLM(t.LlamaConfig(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=176,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        max_position_embeddings=64, rms_norm_eps=1e-5, rope_theta=10000.0,
        tie_word_embeddings=False, attention_dropout=0.0)),
    # transformers 5 saves the base inside rope_parameters.
    "llama-theta": lambda t: t.LlamaForCausalLM(t.LlamaConfig(
        **UNEVEN, tie_word_embeddings=False,
        rope_parameters={"rope_type": "default", "rope_theta": 500000.0})),
    # Llama 3's scaling with a short original context, so that the 32
    # positions turn the high, medium and low frequencies differently.
    "llama3-tied": lambda t: t.LlamaForCausalLM(t.LlamaConfig(
        **UNEVEN, tie_word_embeddings=True,
        rope_parameters={"rope_type": "llama3", "rope_theta": 500000.0,
                         "factor": 8.0, "low_freq_factor": 1.0,
                         "high_freq_factor": 4.0,
                         "original_max_position_embeddings": 16})),
    # A window as long as the sequence: honoured, it masks nothing more.
    "mistral": lambda t: t.MistralForCausalLM(t.MistralConfig(
        **UNEVEN, head_dim=16, sliding_window=SEQ, tie_word_embeddings=False,
        rope_parameters={"rope_type": "default", "rope_theta": 1000000.0})),
    "qwen2": lambda t: t.Qwen2ForCausalLM(t.Qwen2Config(
        **UNEVEN, tie_word_embeddings=False, use_sliding_window=False,
        rope_parameters={"rope_type": "default", "rope_theta": 1000000.0})),
}


def make_model(family):
    import transformers

    torch.manual_seed(1234)
    model = FAMILIES[family](transformers)
    # transformers starts biases at zero, where a bias that zero-opt loaded
    # into the wrong place or not at all would go unseen on the first step.
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("_proj.bias"):
                p.normal_(0.0, 0.5)
    return model.float().train()


def write_tokens(path):
    """The shipped text as byte-level tokens (llm.c's token file format)."""
    with open(os.path.join(SRC_ROOT, "data", "shakespeare.txt"), "rb") as f:
        tokens = list(f.read())
    with open(path, "wb") as f:
        header = struct.pack("<3i", 20240520, 1, len(tokens))
        f.write(header + b"\0" * (1024 - len(header)))
        f.write(struct.pack("<%dH" % len(tokens), *tokens))
    return torch.tensor(tokens, dtype=torch.long)


def batch(tokens, step):
    """Rows of global step `step` (0-based), as runtime/driver/batches.cpp."""
    span = len(tokens) - SEQ - 1
    starts = [((step * BATCH + row) * SEQ) % span for row in range(BATCH)]
    x = torch.stack([tokens[s:s + SEQ] for s in starts])
    y = torch.stack([tokens[s + 1:s + SEQ + 1] for s in starts])
    return x, y


def torch_losses(model, tokens, steps):
    opt = torch.optim.AdamW(
        model.parameters(), lr=HYPER["lr"],
        betas=(HYPER["adam-beta1"], HYPER["adam-beta2"]),
        eps=HYPER["adam-eps"], weight_decay=HYPER["weight-decay"])
    losses, norms = [], []
    for step in range(steps):
        x, y = batch(tokens, step)
        logits = model(input_ids=x).logits
        loss = torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        norms.append(math.sqrt(sum(float(p.grad.double().pow(2).sum())
                                   for p in model.parameters()
                                   if p.grad is not None)))
        opt.step()
        losses.append(loss.item())
    return losses, norms


def zero_losses(out, combo, mpirun, steps, data, weights, config, hyper):
    stage, world, precision, reduce_dtype = combo
    exe = os.path.join(out, f"prog-s{stage}-w{world}-{precision}-{reduce_dtype}")
    subprocess.run(
        ["zero-opt", f"--model-config={config}", f"--batch={BATCH}",
         f"--seq-len={SEQ}", f"--precision={precision}", f"--stage={stage}",
         f"--world-size={world}", f"--reduce-dtype={reduce_dtype}", "-o",
         exe], check=True)
    cmd = shlex.split(mpirun) + [str(world), exe, f"--data={data}",
                                 f"--init-from={weights}", f"--steps={steps}",
                                 f"--log-json={exe}.jsonl"]
    cmd += [f"--{flag}={value}" for flag, value in hyper.items()]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if run.returncode != 0:
        sys.exit(f"FAIL stage {stage} world size {world} {precision}: exit "
                 f"{run.returncode}\n{run.stdout}{run.stderr}")
    losses = [float(m.group(2)) for line in run.stdout.splitlines()
              if (m := STEP.match(line))]
    if len(losses) != steps:
        sys.exit(f"FAIL stage {stage} world size {world} {precision}: "
                 f"{len(losses)} step lines, expected {steps}\n{run.stdout}")
    with open(f"{exe}.jsonl") as log:
        norms = [json.loads(line)["grad_norm"] for line in log]
    return losses, norms


def worst_difference(label, what, ours, theirs, tolerance):
    """The largest relative difference per step; exits on one over
    `tolerance`, naming the step."""
    worst = 0.0
    for step, (mine, reference) in enumerate(zip(ours, theirs), 1):
        rel = abs(mine - reference) / abs(reference)
        worst = max(worst, rel)
        if rel > tolerance:
            sys.exit(f"FAIL {label}: step {step} {what} {mine} vs pytorch "
                     f"{reference} ({rel:.3g} relative > {tolerance})")
    return worst


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--family", choices=sorted(FAMILIES), required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--mpirun", required=True)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--zero-override", action="append", default=[],
                        metavar="FLAG=VALUE",
                        help="a hyperparameter of the zero-opt runs other "
                             "than PyTorch's (tests that the comparison "
                             "can fail set one)")
    parser.add_argument("--combos",
                        default="0:1:fp32,3:2:fp32,3:3:fp32,0:1:bf16,3:2:bf16,3:3:bf16")
    options = parser.parse_args()
    os.makedirs(options.out, exist_ok=True)
    zero_hyper = dict(HYPER)
    for override in options.zero_override:
        flag, _, value = override.partition("=")
        if flag not in HYPER:
            parser.error(f"--zero-override: unknown hyperparameter '{flag}'")
        zero_hyper[flag] = float(value)
    torch.set_num_threads(1)

    model = make_model(options.family)
    model.save_pretrained(options.out, safe_serialization=True)
    config = os.path.join(options.out, "config.json")
    weights = os.path.join(options.out, "model.safetensors")
    data = os.path.join(options.out, "tokens.bin")
    tokens = write_tokens(data)
    reference, reference_norms = torch_losses(model, tokens, options.steps)
    print(f"{options.family}: pytorch losses {reference[0]:.6f} -> "
          f"{reference[-1]:.6f} over {options.steps} steps")

    for text in options.combos.split(","):
        # stage:world:precision[:reduce-dtype]; gradients are reduced in
        # bf16 in bf16 training unless the fourth field says fp32.
        stage, world, precision, *reduce_dtype = text.split(":")
        reduce_dtype = reduce_dtype[0] if reduce_dtype else "bf16"
        combo = (int(stage), int(world), precision, reduce_dtype)
        losses, norms = zero_losses(options.out, combo, options.mpirun,
                                    options.steps, data, weights, config,
                                    zero_hyper)
        label = f"stage {stage} world size {world} {precision}"
        if reduce_dtype != "bf16":
            label += f" reduce {reduce_dtype}"
        tolerance = TOLERANCE[precision]
        worst = worst_difference(label, "loss", losses, reference, tolerance)
        # The gradient norm the runtime reports (--log-json, from the
        # program's clipping) against torch's global norm before the step.
        worst_norm = worst_difference(label, "gradient norm", norms,
                                      reference_norms, tolerance)
        print(f"{label}: {options.steps} "
              f"steps agree with pytorch (max relative difference "
              f"{worst:.2g} <= {TOLERANCE[precision]}; gradient norms "
              f"{worst_norm:.2g} <= {TOLERANCE[precision]})")


if __name__ == "__main__":
    main()
