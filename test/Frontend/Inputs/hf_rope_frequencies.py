"""zero-opt's rotary frequencies against transformers' own, bit for bit.

  hf_rope_frequencies.py --out DIR

For each case a config.json is written (by transformers 5's save, or by hand
in transformers 4's spelling), compiled by `zero-opt --model-config --stage=0
--emit=mlir`, and the frequency table the lowering hands to zrt_rope (the
global @__zrt_rope_inv_freq_0) is compared with the inv_freq buffer of
transformers' LlamaRotaryEmbedding (or Mistral's, Qwen2's) built from the same
file. Prints one line per case with the number of frequencies and how many
differ by any bit; exits 1 on a difference.
"""
import argparse
import json
import os
import re
import subprocess
import sys

import numpy as np
import torch
import transformers

GLOBAL = re.compile(r"@__zrt_rope_inv_freq_0\(dense<\[([^\]]*)\]>")

SHAPE = dict(vocab_size=300, hidden_size=64, intermediate_size=96,
             num_hidden_layers=1, num_attention_heads=4, num_key_value_heads=2)
# head_dim 128 as Llama 3.1 8B; wavelengths span both llama3 thresholds.
WIDE = dict(SHAPE, hidden_size=512, num_attention_heads=4,
            max_position_embeddings=131072)

LLAMA3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
          "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}


def cases():
    """(name, family, write) where write(path) saves a config.json."""
    def saved(family, **kwargs):
        cls = {"llama": transformers.LlamaConfig,
               "mistral": transformers.MistralConfig,
               "qwen2": transformers.Qwen2Config}[family]
        def write(path):
            cls(**kwargs).save_pretrained(path)
        return write

    def by_hand(fields):
        def write(path):
            with open(os.path.join(path, "config.json"), "w") as f:
                json.dump(fields, f)
        return write

    yield ("llama theta 500000, transformers 5 rope_parameters", "llama",
           saved("llama", **SHAPE, rope_parameters={
               "rope_type": "default", "rope_theta": 500000.0}))
    yield ("llama theta 500000, transformers 4 rope_theta", "llama",
           by_hand(dict(SHAPE, model_type="llama", rope_theta=500000.0)))
    yield ("llama linear factor 4, transformers 4 rope_scaling", "llama",
           by_hand(dict(SHAPE, model_type="llama", rope_theta=10000.0,
                        rope_scaling={"type": "linear", "factor": 4.0})))
    yield ("llama3 scaling head_dim 128, transformers 5", "llama",
           saved("llama", **WIDE, rope_parameters=dict(
               LLAMA3, rope_theta=500000.0)))
    yield ("llama3 scaling head_dim 128, transformers 4 rope_scaling", "llama",
           by_hand(dict(WIDE, model_type="llama", rope_theta=500000.0,
                        rope_scaling=LLAMA3)))
    yield ("llama3 scaling factor 32 original 64 head_dim 16", "llama",
           saved("llama", **SHAPE, rope_parameters={
               "rope_type": "llama3", "rope_theta": 500000.0, "factor": 32.0,
               "low_freq_factor": 1.0, "high_freq_factor": 4.0,
               "original_max_position_embeddings": 64}))
    yield ("mistral theta 1000000", "mistral",
           saved("mistral", **SHAPE, rope_parameters={
               "rope_type": "default", "rope_theta": 1000000.0}))
    yield ("qwen2 theta 1000000", "qwen2",
           saved("qwen2", **SHAPE, rope_parameters={
               "rope_type": "default", "rope_theta": 1000000.0}))


def hf_inv_freq(family, path):
    config = transformers.AutoConfig.from_pretrained(path)
    module = {"llama": transformers.models.llama.modeling_llama,
              "mistral": transformers.models.mistral.modeling_mistral,
              "qwen2": transformers.models.qwen2.modeling_qwen2}[family]
    rotary = {"llama": "LlamaRotaryEmbedding", "mistral":
              "MistralRotaryEmbedding", "qwen2": "Qwen2RotaryEmbedding"}[family]
    return getattr(module, rotary)(config).inv_freq.to(torch.float32).numpy()


def zero_inv_freq(path):
    out = os.path.join(path, "program.mlir")
    subprocess.run(["zero-opt", f"--model-config={path}/config.json",
                    "--batch=2", "--seq-len=16", "--stage=0", "--emit=mlir",
                    "-o", out], check=True)
    with open(out) as f:
        match = GLOBAL.search(f.read())
    if not match:
        sys.exit(f"FAIL {path}: no @__zrt_rope_inv_freq_0 in {out}")
    return np.array([float(v) for v in match.group(1).split(",")],
                    dtype=np.float32)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    options = parser.parse_args()
    failed = False
    for i, (name, family, write) in enumerate(cases()):
        path = os.path.join(options.out, f"case{i}")
        os.makedirs(path, exist_ok=True)
        write(path)
        theirs = hf_inv_freq(family, path)
        ours = zero_inv_freq(path)
        if ours.shape != theirs.shape:
            print(f"FAIL {name}: {ours.shape[0]} frequencies vs "
                  f"transformers' {theirs.shape[0]}")
            failed = True
            continue
        differ = int(np.sum(ours.view(np.int32) != theirs.view(np.int32)))
        print(f"{name}: {ours.shape[0]} frequencies, {differ} differ from "
              f"transformers'")
        if differ:
            worst = int(np.max(np.abs(ours.view(np.int32).astype(np.int64) -
                                      theirs.view(np.int32))))
            print(f"FAIL {name}: up to {worst} ulp\n  ours   {ours}\n"
                  f"  theirs {theirs}")
            failed = True
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
