#!/usr/bin/env bash
# Runs the runtime's kernel checks under AddressSanitizer and
# UndefinedBehaviorSanitizer: the CPU kernels (zrt-kernel-tests) and the CUDA
# kernels on the host emulator (zrt-cuda-kernels-emulated,
# zrt-cuda-attention-emulated), whose test buffers end exactly where their
# allocations end, so a kernel indexing one element past a tensor stops
# the run with a report. Builds only the runtime (no MLIR) into
# build-sanitize/. The emulated checks need the CUDA toolkit (nvcc) to
# configure the CUDA backend; without it they are skipped, said so.
# scripts/test.sh runs this after check-zero.
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${SANITIZE_BUILD_DIR:-build-sanitize}
if [[ ! -f "$DIR/build.ninja" ]]; then
  mkdir -p "$DIR"
  cmake -G Ninja -S . -B "$DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DZERO_BUILD_COMPILER=OFF -DZERO_SANITIZE=ON >"$DIR/configure.log" 2>&1 ||
    { cat "$DIR/configure.log"; exit 1; }
fi
tools=(zrt-kernel-tests)
if ninja -C "$DIR" -t query zrt-cuda-kernels-emulated >/dev/null 2>&1; then
  tools+=(zrt-cuda-kernels-emulated zrt-cuda-attention-emulated)
else
  echo "sanitize: CUDA backend not configured: the emulated CUDA kernels are skipped"
fi
ninja -C "$DIR" "${tools[@]}"
# Errors stop the run (UBSan: -fno-sanitize-recover); ASan's warning that
# it does not fully support swapcontext (the emulator's fibers) is expected.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
failed=0
for tool in "${tools[@]}"; do
  log="$DIR/$tool.log"
  if "$DIR/bin/$tool" >"$log" 2>&1; then
    echo "sanitize: $tool: $(tail -1 "$log")"
  else
    echo "sanitize: $tool FAILED (log: $log):"
    grep -m1 -A30 -E 'ERROR: AddressSanitizer|runtime error|FAIL' "$log" || tail -30 "$log"
    failed=1
  fi
done
exit "$failed"
