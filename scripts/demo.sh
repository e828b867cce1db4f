#!/usr/bin/env bash
# The main job on a fresh machine: install, build, turn the shipped text into
# byte-level tokens, compile gpt2-tiny at ZeRO stage 3 for 2 ranks, and train
# it under mpirun with a cosine learning-rate schedule, a checkpoint of the
# whole training state every 250 steps, and the trained model exported for
# Hugging Face transformers (build/demo/gpt2-tiny-hf), from which it then
# samples a continuation of a prompt.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OPENBLAS_NUM_THREADS=1

mkdir -p build/demo
set -x
python3 scripts/prepare_data.py data/shakespeare.txt -o build/demo/shakespeare
build/bin/zero-opt --model=gpt2-tiny --batch=16 --seq-len=64 --stage=3 --world-size=2 \
  -o build/demo/gpt2-tiny
rm -rf build/demo/checkpoints
mpirun --oversubscribe --bind-to none -np 2 build/demo/gpt2-tiny \
  --data=build/demo/shakespeare_train.bin --steps=500 --lr=0.003 --clip-grad-norm=1.0 \
  --lr-schedule=cosine --warmup-steps=50 --min-lr=0.0003 --log-every=100 \
  --val-data=build/demo/shakespeare_val.bin --eval-every=100 --eval-steps=6 \
  --checkpoint-dir=build/demo/checkpoints --checkpoint-every=250 --keep=2 \
  --save=build/demo/gpt2-tiny.safetensors --export-hf=build/demo/gpt2-tiny-hf
python3 scripts/sample.py build/demo/gpt2-tiny-hf --prompt='MENENIUS:' --max-new-tokens=200 --temperature=0.8 --seed=1
