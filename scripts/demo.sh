#!/usr/bin/env bash
# The main job on a fresh machine: install, build, compile the built-in MLP
# at ZeRO stage 3 for 2 ranks, and train it under mpirun. The loss falls.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OPENBLAS_NUM_THREADS=1

mkdir -p build/demo
set -x
build/bin/zero-opt --model=mlp --stage=3 --world-size=2 -o build/demo/mlp
mpirun --oversubscribe --bind-to none -np 2 build/demo/mlp --steps=60 --lr=0.01
