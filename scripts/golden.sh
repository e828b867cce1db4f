#!/usr/bin/env bash
# Writes what zero-opt produces for a fixed set of configurations into OUT_DIR:
# the LLVM-dialect output of --emit=mlir, the --report=json predictions, the
# planner's ranking and the diagnostics of refused flags (stderr and exit
# status). A refactoring that must not change behaviour runs it before and
# after and compares:
#
#   scripts/golden.sh /tmp/before        # on the old build
#   scripts/golden.sh /tmp/after         # on the new build
#   diff -r /tmp/before /tmp/after
#
# ZERO_OPT picks the binary (default build/bin/zero-opt); ZERO_OPT_FLAGS are
# added to every command (--stop-at-zrt compares the zrt programs, when a
# change of the ABI version alone renumbers the LLVM dialect's constants). Every model family,
# stages 0-3, world sizes 1-4, buckets, prefetch, keep-gathered,
# accumulation, bf16, offload, recompute, hybrid sharding and deterministic
# sums appear at least once, each with a non-default value.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: scripts/golden.sh OUT_DIR}
ZERO_OPT=${ZERO_OPT:-build/bin/zero-opt}
mkdir -p "$OUT"
# A fixed path: it appears in diagnostics, which must compare equal.
CONFIGS=${TMPDIR:-/tmp}/zero-golden-configs
mkdir -p "$CONFIGS"

# Small members of the families without a tiny preset.
python3 - "$CONFIGS" <<'EOF'
import json, sys
out = sys.argv[1]
def tiny(preset, **over):
    config = json.load(open(f"lib/Frontend/presets/{preset}.json"))
    config.update(hidden_size=64, intermediate_size=160, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2,
                  vocab_size=96, max_position_embeddings=64)
    config.update(over)
    return config
json.dump(tiny("mistral-7b-v0.1", sliding_window=8),
          open(f"{out}/mistral.json", "w"))
json.dump(tiny("qwen2.5-0.5b"), open(f"{out}/qwen2.json", "w"))
json.dump(tiny("llama3.2-1b"), open(f"{out}/llama3.json", "w"))
EOF

n=0
# emit NAME FLAGS...: the LLVM dialect, or the diagnostics when it refuses.
emit() {
  local name=$1; shift
  "$ZERO_OPT" "$@" ${ZERO_OPT_FLAGS:-} --emit=mlir >"$OUT/$name.mlir" 2>"$OUT/$name.err"
  echo "exit $?" >>"$OUT/$name.err"
  n=$((n + 1))
}
# run NAME FLAGS...: stdout, stderr and status of any other invocation.
run() {
  local name=$1; shift
  "$ZERO_OPT" "$@" ${ZERO_OPT_FLAGS:-} >"$OUT/$name.out" 2>"$OUT/$name.err"
  echo "exit $?" >>"$OUT/$name.err"
  n=$((n + 1))
}

emit mlp-s0-w1 --model=mlp --stage=0
emit mlp-s1-w2 --model=mlp --stage=1 --world-size=2
emit mlp-s2-w3 --model=mlp --stage=2 --world-size=3 --batch=12
emit mlp-s3-w4-accum4-bucket --model=mlp --stage=3 --world-size=4 --grad-accum=4 --bucket-bytes=4096
emit gpt2-s0-w1 --model=gpt2-tiny --stage=0
emit gpt2-s1-w2 --model=gpt2-tiny --stage=1 --world-size=2
emit gpt2-s2-w2-bucket --model=gpt2-tiny --stage=2 --world-size=2 --bucket-bytes=65536
emit gpt2-s3-w4-bucket-prefetch2 --model=gpt2-tiny --stage=3 --world-size=4 --bucket-bytes=65536 --prefetch=2
emit gpt2-s3-w2-keep-all --model=gpt2-tiny --stage=3 --world-size=2 --keep-gathered=all
emit gpt2-s3-w2-keep-h1 --model=gpt2-tiny --stage=3 --world-size=2 --keep-gathered=h.1
emit gpt2-s3-w2-accum2-local --model=gpt2-tiny --stage=3 --world-size=2 --grad-accum=2 --accumulate=local
emit gpt2-s2-w2-accum3-sharded --model=gpt2-tiny --stage=2 --world-size=2 --grad-accum=3 --accumulate=sharded
emit gpt2-s1-w2-accum2-auto --model=gpt2-tiny --stage=1 --world-size=2 --grad-accum=2
emit gpt2-s3-w2-bf16 --model=gpt2-tiny --stage=3 --world-size=2 --precision=bf16
emit gpt2-s1-w2-offload --model=gpt2-tiny --stage=1 --world-size=2 --offload=optimizer
emit gpt2-s3-w2-offload-bf16 --model=gpt2-tiny --stage=3 --world-size=2 --offload=optimizer --precision=bf16
emit gpt2-s3-w2-recompute-blocks --model=gpt2-tiny --stage=3 --world-size=2 --recompute=blocks
emit gpt2-s2-w2-recompute-h0 --model=gpt2-tiny --stage=2 --world-size=2 --recompute=h.0
emit gpt2-s3-w4-hybrid2 --model=gpt2-tiny --stage=3 --world-size=4 --shard-group-size=2
emit gpt2-s1-w4-hybrid2-bucket --model=gpt2-tiny --stage=1 --world-size=4 --shard-group-size=2 --bucket-bytes=65536
emit gpt2-s1-w2-deterministic --model=gpt2-tiny --stage=1 --world-size=2 --deterministic
emit gpt2-s3-w3-deterministic --model=gpt2-tiny --stage=3 --world-size=3 --batch=6 --deterministic
emit gpt2-s3-w2-nofuse --model=gpt2-tiny --stage=3 --world-size=2 --fuse-epilogues=false
emit gpt2-s3-w2-prefetch0 --model=gpt2-tiny --stage=3 --world-size=2 --prefetch=0
emit gpt2-s2-w2-blocking --model=gpt2-tiny --stage=2 --world-size=2 --prefetch=-1
emit gpt2-s3-w2-seq16-batch4 --model=gpt2-tiny --stage=3 --world-size=2 --seq-len=16 --batch=4
emit gpt2config-s1-w2 --model-config=test/Frontend/Inputs/gpt2-config.json --stage=1 --world-size=2 --seq-len=32
emit llama-s0-w1 --model=llama-tiny --stage=0
emit llama-s3-w2-bf16-bucket --model=llama-tiny --stage=3 --world-size=2 --precision=bf16 --bucket-bytes=65536
emit llama-s2-w4-hybrid2-recompute --model=llama-tiny --stage=2 --world-size=4 --shard-group-size=2 --recompute=model.layers.0
emit llama-s3-w3-everything --model=llama-tiny --stage=3 --world-size=3 --batch=6 --grad-accum=2 --precision=bf16 --recompute=blocks --keep-gathered=model.layers.0 --bucket-bytes=65536 --prefetch=2
emit llamaconfig-s3-w4-blocking --model-config=test/Frontend/Inputs/llama-config.json --stage=3 --world-size=4 --prefetch=-1
emit llama3-s1-w2 --model-config="$CONFIGS/llama3.json" --stage=1 --world-size=2
emit mistral-s3-w2 --model-config="$CONFIGS/mistral.json" --stage=3 --world-size=2 --seq-len=8
emit qwen2-s2-w2-bf16 --model-config="$CONFIGS/qwen2.json" --stage=2 --world-size=2 --precision=bf16
emit qwen2-s3-w4-offload-accum --model-config="$CONFIGS/qwen2.json" --stage=3 --world-size=4 --offload=optimizer --grad-accum=2

run report-gpt2-s3-w4 --model=gpt2-tiny --stage=3 --world-size=4 --report=json
run report-gpt2-s2-w2-accum --model=gpt2-tiny --stage=2 --world-size=2 --grad-accum=3 --report=json
run report-llama-s3-w2-bf16 --model=llama-tiny --stage=3 --world-size=2 --precision=bf16 --recompute=blocks --report=json
run report-qwen2-s1-w4-offload --model-config="$CONFIGS/qwen2.json" --stage=1 --world-size=4 --offload=optimizer --report
run report-gpt2-s3-w4-hybrid --model=gpt2-tiny --stage=3 --world-size=4 --shard-group-size=2 --report=json
run plan-gpt2 --model=gpt2-tiny --world-size=4 --plan --memory-limit=2MB
run plan-llama-accum --model=llama-tiny --world-size=2 --grad-accum=2 --plan --memory-limit=8MB
emit auto-gpt2 --model=gpt2-tiny --world-size=2 --stage=auto --memory-limit=4MB
emit limit-refused --model=gpt2-tiny --stage=0 --world-size=2 --memory-limit=100000

# Refusals: each names its problem.
emit bad-stage --model=gpt2-tiny --stage=5 --world-size=2
emit bad-keep-stage2 --model=gpt2-tiny --stage=2 --world-size=2 --keep-gathered=all
emit bad-keep-unit --model=gpt2-tiny --stage=3 --world-size=2 --keep-gathered=h.9
emit bad-hybrid --model=gpt2-tiny --stage=3 --world-size=4 --shard-group-size=3
emit bad-deterministic-bf16 --model=gpt2-tiny --stage=1 --world-size=2 --deterministic --precision=bf16
emit bad-recompute-unit --model=gpt2-tiny --stage=3 --world-size=2 --recompute=x.1
emit bad-batch --model=gpt2-tiny --stage=1 --world-size=3 --batch=8
emit bad-accumulate --model=gpt2-tiny --stage=1 --world-size=2 --accumulate=sharded
emit bad-offload --model=gpt2-tiny --stage=1 --world-size=2 --offload=params
emit bad-precision --model=gpt2-tiny --stage=1 --world-size=2 --precision=fp8
emit bad-world --model=gpt2-tiny --stage=3

echo "$n outputs in $OUT"
