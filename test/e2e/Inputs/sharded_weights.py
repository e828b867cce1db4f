"""--init-from reads transformers' sharded checkpoints, in bf16 and fp16.

  sharded_weights.py --out DIR --mpirun CMD

A small Llama-shaped model (Qwen2, whose q/k/v biases must load too) is
rounded to bf16 (and, separately, fp16) so that each dtype holds its values
exactly, then saved three ways: one float32 model.safetensors, and
save_pretrained(max_shard_size=...) in that dtype, which writes several
model-0000k-of-0000n.safetensors files and model.safetensors.index.json.
The program (fp32, ZeRO-3 on 2 ranks) starts from each; the sharded loads,
through the directory and through the index file, must print the same
first-step losses as the float32 single file, digit for digit.
"""
import argparse
import glob
import os
import shlex
import subprocess
import sys

import torch
import transformers

from pytorch_parity import STEP, write_tokens


def make_model(dtype):
    torch.manual_seed(4321)
    config = transformers.Qwen2Config(
        vocab_size=777, hidden_size=96, intermediate_size=200,
        num_hidden_layers=2, num_attention_heads=6, num_key_value_heads=2,
        max_position_embeddings=64, tie_word_embeddings=False,
        rope_parameters={"rope_type": "default", "rope_theta": 1000000.0})
    model = transformers.Qwen2ForCausalLM(config)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("_proj.bias"):
                p.normal_(0.0, 0.5)
            p.copy_(p.to(dtype).to(torch.float32))
    return model


def losses(exe, weights, data, mpirun):
    cmd = shlex.split(mpirun) + ["2", exe, f"--data={data}",
                                 f"--init-from={weights}", "--steps=2"]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if run.returncode != 0:
        sys.exit(f"FAIL --init-from={weights}: exit {run.returncode}\n"
                 f"{run.stdout}{run.stderr}")
    return [m.group(2) for line in run.stdout.splitlines()
            if (m := STEP.match(line))]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--mpirun", required=True)
    options = parser.parse_args()
    out = options.out
    data = os.path.join(out, "tokens.bin")
    write_tokens(data)

    exe = None
    for name, dtype in [("bf16", torch.bfloat16), ("fp16", torch.float16)]:
        model = make_model(dtype)
        single = os.path.join(out, f"{name}-single")
        sharded = os.path.join(out, f"{name}-sharded")
        model.save_pretrained(single)
        model.to(dtype).save_pretrained(sharded, max_shard_size="200KB")
        files = sorted(glob.glob(os.path.join(sharded, "model-*.safetensors")))
        if exe is None:
            exe = os.path.join(out, "program")
            subprocess.run(["zero-opt", f"--model-config={single}/config.json",
                            "--batch=4", "--seq-len=16", "--stage=3",
                            "--world-size=2", "-o", exe], check=True)
        reference = losses(exe, os.path.join(single, "model.safetensors"),
                           data, options.mpirun)
        index = os.path.join(sharded, "model.safetensors.index.json")
        for weights in (sharded, index):
            got = losses(exe, weights, data, options.mpirun)
            if got != reference:
                sys.exit(f"FAIL {name} {weights}: losses {got} vs the float32 "
                         f"file's {reference}")
        print(f"{name}: {len(files)} shard files, loaded through the "
              f"directory and the index: losses {' '.join(reference)} equal "
              f"the float32 file's")


if __name__ == "__main__":
    main()
