"""Every config field that changes the math, at a value zero-opt does not
implement, is refused in one line naming the file, the field and the value.

  config_refusals.py --out DIR

For each family (gpt2, llama, mistral, qwen2) a small valid config is written
with one field changed; `zero-opt --model-config` must exit 1 with exactly
one error line that names the file, the field (as `'name'`) and the value as
the file spells it. Prints `refused FAMILY FIELD=VALUE` per case, and exits 1
naming the first case that compiled or whose message misses a part.
"""
import argparse
import json
import os
import subprocess
import sys

BASE = {
    "gpt2": {"model_type": "gpt2", "vocab_size": 300, "n_positions": 32,
             "n_embd": 24, "n_layer": 1, "n_head": 3, "resid_pdrop": 0.0,
             "embd_pdrop": 0.0, "attn_pdrop": 0.0},
    "llama": {"model_type": "llama", "vocab_size": 300, "hidden_size": 32,
              "intermediate_size": 88, "num_hidden_layers": 2,
              "num_attention_heads": 4, "num_key_value_heads": 2,
              "max_position_embeddings": 64},
}
BASE["mistral"] = dict(BASE["llama"], model_type="mistral")
BASE["qwen2"] = dict(BASE["llama"], model_type="qwen2")

LLAMA_SHAPED = [
    ("attention_dropout", 0.1),
    ("partial_rotary_factor", 0.5),
    ("qk_layernorm", True),
    ("qk_norm", True),
    ("use_qk_norm", True),
    ("rope_interleaved", True),
    ("hidden_act", "gelu"),
    ("rope_scaling", {"rope_type": "yarn", "factor": 4.0}, "rope_scaling.rope_type", '"yarn"'),
    ("rope_scaling", {"type": "dynamic", "factor": 2.0}, "rope_scaling.type", '"dynamic"'),
    ("rope_parameters", {"rope_type": "longrope", "rope_theta": 10000.0}, "rope_parameters.rope_type", '"longrope"'),
    ("rope_parameters", {"rope_type": "default", "rope_theta": 10000.0,
                         "partial_rotary_factor": 0.25},
     "rope_parameters.partial_rotary_factor", "0.25"),
    ("rope_scaling", {"rope_type": "linear", "factor": -2.0}, "rope_scaling.factor", "-2"),
    ("rope_scaling", {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 4.0,
                      "high_freq_factor": 1.0, "original_max_position_embeddings": 64},
     "rope_scaling.high_freq_factor", "1"),
    ("is_encoder_decoder", True),
    ("add_cross_attention", True),
    ("pruned_heads", {"0": [1]}, "pruned_heads", '{"0":[1]}'),
    ("quantization_config", {"quant_method": "bitsandbytes"}, "quantization_config",
     '{"quant_method":"bitsandbytes"}'),
]

CASES = {
    "gpt2": [
        ("scale_attn_weights", False),
        ("scale_attn_by_inverse_layer_idx", True),
        ("resid_pdrop", 0.1),
        ("embd_pdrop", 0.1),
        ("attn_pdrop", 0.1),
        ("activation_function", "relu"),
        ("is_encoder_decoder", True),
        ("add_cross_attention", True),
        ("pruned_heads", {"0": [1]}, "pruned_heads", '{"0":[1]}'),
        ("quantization_config", {"quant_method": "gptq"}, "quantization_config",
         '{"quant_method":"gptq"}'),
    ],
    "llama": LLAMA_SHAPED,
    "mistral": LLAMA_SHAPED + [
        ("attention_bias", True),
        ("mlp_bias", True),
    ],
    "qwen2": LLAMA_SHAPED + [
        ("use_mrope", True),
        ("attention_bias", True),
        ("mlp_bias", True),
    ],
}

# Fields refused only against the sequence length: --seq-len=16.
WINDOW_CASES = [
    ("mistral", {"sliding_window": 8}, "sliding_window", "8"),
    ("qwen2", {"use_sliding_window": True, "sliding_window": 8,
               "max_window_layers": 1}, "sliding_window", "8"),
    ("qwen2", {"use_sliding_window": True, "sliding_window": 8,
               "layer_types": ["full_attention", "sliding_attention"]},
     "sliding_window", "8"),
]


def spelled(value):
    return json.dumps(value, separators=(",", ":"))


def check(out, family, name, fields, field, value, extra=()):
    path = os.path.join(out, f"{family}-{name}.json")
    with open(path, "w") as f:
        json.dump(dict(BASE[family], **fields), f)
    run = subprocess.run(["zero-opt", f"--model-config={path}", "--batch=2",
                          "--seq-len=16", *extra], capture_output=True,
                         text=True)
    errors = [line for line in run.stderr.splitlines() if "error:" in line]
    label = f"{family} {field}={value}"
    if run.returncode != 1 or len(errors) != 1:
        sys.exit(f"FAIL {label}: exit {run.returncode}, stderr:\n{run.stderr}")
    missing = [part for part in (path, f"'{field}'", value)
               if part not in errors[0]]
    if missing:
        sys.exit(f"FAIL {label}: the message lacks {missing}:\n{errors[0]}")
    print(f"refused {label}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    out = parser.parse_args().out
    for family, cases in CASES.items():
        for case in cases:
            name, value = case[0], case[1]
            field = case[2] if len(case) > 2 else name
            text = case[3] if len(case) > 3 else spelled(value)
            check(out, family, field, {name: value}, field, text)
    for i, (family, fields, field, text) in enumerate(WINDOW_CASES):
        check(out, family, f"window{i}", fields, field, text)


if __name__ == "__main__":
    main()
