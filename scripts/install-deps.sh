#!/usr/bin/env bash
# Installs every package that building, testing and running zero-opt needs
# (Debian 12). Idempotent: installs only what is missing, so a second run is
# a no-op that touches no network.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build ccache python3
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools  # LLVM/MLIR 22, FileCheck, lit
  libopenmpi-dev openmpi-bin                               # MPI collectives, mpirun
  libopenblas-dev                                          # CPU GEMM
  clang                                                    # libFuzzer (scripts/fuzz.sh)
  clang-format                                             # scripts/check-format.sh
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all packages present"
fi

# Reference code for the tests only (PyTorch parity): never a dependency of
# the compiler or the runtime. PyPI's torch wheel is large; pip's cache keeps
# it for the next run. tokenizers, tqdm and pyarrow are scripts/prepare_data.py's
# (Hugging Face tokenizers, its progress bar, .parquet inputs).
if ! python3 -c "import torch, transformers, safetensors, numpy, tokenizers, tqdm, pyarrow" 2>/dev/null; then
  echo "install-deps: installing torch, transformers, safetensors, numpy, tokenizers, tqdm, pyarrow from PyPI"
  python3 -m pip install --quiet --disable-pip-version-check \
    torch transformers safetensors numpy tokenizers tqdm pyarrow
else
  echo "install-deps: python test packages present"
fi
