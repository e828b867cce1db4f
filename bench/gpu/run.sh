#!/usr/bin/env bash
# bench/gpu/run.sh - the GPU benchmark, one command on the lent GPU machine.
#
# Runs there (one NVIDIA H200, CUDA 13, PyTorch; no MLIR, no network), in
# the repository root, with .gpu-carry/ from bench/gpu/prepare.sh beside it:
#
#   1. MPI and OpenBLAS: the system's if it has them, else the carried ones
#      (deps.sh); NCCL from the CUDA toolkit or the nvidia-nccl wheel;
#   2. builds the runtime only (-DZERO_BUILD_COMPILER=OFF
#      -DZERO_ENABLE_CUDA=ON) into build-gpu/ with ninja -j$(nproc): libzrt,
#      libzrt_main and the CUDA test tools;
#   3. links the carried objects as zero-opt links them
#      (cc prog.o libzrt_main.a -L lib -lzrt -Wl,-rpath,lib);
#   4. bench/gpu/bench.py: the CUDA kernel and collective tests, the loss
#      check against the CPU reference, the timed stage-0 and stage-3 runs,
#      PyTorch eager and torch.compile (bench/gpu/pytorch_ref.py), and the
#      report: results.md, results.json, run.log and logs.tar.gz in $OUT
#      (the device tool's output folder; build-gpu/bench-out without it).
#
# The whole run keeps inside BENCH_BUDGET_S (default 560 s; the device
# allows 600 s a command): each phase gets what is left, and the report is
# rewritten after each, so a slow phase costs the later ones, not the report.
# Exit status 0 when every check passed and every timed run finished.
#
#   bash bench/gpu/run.sh                # on the GPU machine
#   bash bench/gpu/run.sh --cpu-dry-run  # here: same steps on the CPU
#
# --cpu-dry-run builds without CUDA (-j2, in /tmp), uses the carried MPI and
# OpenBLAS even where the system has its own (to test them), runs the CPU
# test tools in place of the CUDA ones, the loss check for 3 steps with
# --device=cpu, the full-size programs with --steps=0 only (a 16 x 1024
# step takes minutes on two cores) and the check program as the timed one,
# and PyTorch eager on the CPU at 1 x 64 tokens. Its numbers mean nothing;
# it tests the script.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"

MODE=gpu
for arg in "$@"; do
  case $arg in
    --cpu-dry-run) MODE=dry ;;
    -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown argument '$arg' (--cpu-dry-run, --help)" >&2; exit 2 ;;
  esac
done

CARRY=${GPU_CARRY:-$ROOT/.gpu-carry}
if [[ $MODE == gpu ]]; then
  BUILD_DIR=${BUILD_DIR:-$ROOT/build-gpu}
  JOBS=${JOBS:-$(nproc)}
  CUDA=ON
  DEPS_MODE=${BENCH_DEPS:-auto}
  DEPS_DIR=${DEPS_DIR:-/tmp/zero-gpu-deps}
  BUDGET_S=${BENCH_BUDGET_S:-560}
  TESTS=(zrt-cuda-kernel-tests zrt-cuda-collective-tests)
else
  BUILD_DIR=${BUILD_DIR:-/tmp/zero-gpu-bench-dry/build}
  JOBS=${JOBS:-2}
  CUDA=OFF
  DEPS_MODE=${BENCH_DEPS:-carried}
  DEPS_DIR=${DEPS_DIR:-/tmp/zero-gpu-bench-dry/deps}
  BUDGET_S=${BENCH_BUDGET_S:-1500}
  TESTS=(zrt-kernel-tests zrt-collective-tests)
fi
OUT_DIR=${OUT:-$BUILD_DIR/bench-out}
LOG_DIR=$BUILD_DIR/bench-logs
BIN_DIR=$BUILD_DIR/bench
DEADLINE=$(($(date +%s) + BUDGET_S))
rm -rf "$LOG_DIR" "$BIN_DIR" # no stale logs or programs from an earlier run
mkdir -p "$OUT_DIR" "$LOG_DIR" "$BIN_DIR"

left() { echo $((DEADLINE - $(date +%s))); }
# At most $1 seconds, and never past the deadline less a margin for the rest.
cap() { local l=$(($(left) - $2)); echo $((l < $1 ? (l > 1 ? l : 1) : $1)); }

main() {
  echo "run.sh: mode $MODE, $(date -u '+%F %T') UTC, $(uname -n), $(nproc) cores, budget ${BUDGET_S} s"
  [[ $MODE == gpu ]] && { nvidia-smi -L || echo "run.sh: warning: nvidia-smi -L failed"; }
  if [[ ! -f $CARRY/manifest.json ]]; then
    echo "run.sh: error: $CARRY/manifest.json not found: run bench/gpu/prepare.sh here first," \
      "and name .gpu-carry in the device call's carry"
    return 2
  fi
  local tree pybin
  tree=$(git rev-parse --short HEAD 2>/dev/null || echo "no git")
  # CMake and Ninja may be pip packages beside the image's python3 only.
  pybin=$(dirname "$(python3 -c 'import sys; print(sys.executable)')")
  command -v cmake >/dev/null && command -v ninja >/dev/null || export PATH=$PATH:$pybin

  # The environment PyTorch gets back (bench.py), before the carried libraries.
  export ZB_BASE_LD_LIBRARY_PATH=${LD_LIBRARY_PATH-}
  source "$ROOT/bench/gpu/deps.sh"
  echo "== dependencies ($DEPS_MODE)"
  local build_status=ok configure_s=0 build_s=0
  zb_setup_deps "$CARRY" "$DEPS_DIR" "$DEPS_MODE" || build_status="dependencies failed"
  if [[ $CUDA == ON ]]; then
    zb_find_nccl
    local nvcc
    nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
    ZB_CMAKE_ARGS+=("-DCMAKE_CUDA_COMPILER=$nvcc" -DCMAKE_CUDA_ARCHITECTURES=90)
  fi

  echo "== configure ($(left) s left)"
  local t0=$SECONDS
  if [[ $build_status == ok ]]; then
    timeout "$(cap 120 300)" cmake -G Ninja -S "$ROOT" -B "$BUILD_DIR" -DZERO_BUILD_COMPILER=OFF \
      -DZERO_ENABLE_CUDA=$CUDA -DCMAKE_BUILD_TYPE=Release "${ZB_CMAKE_ARGS[@]}" \
      >"$LOG_DIR/cmake.log" 2>&1 || build_status="cmake failed"
    tail -n 25 "$LOG_DIR/cmake.log"
  fi
  configure_s=$((SECONDS - t0))

  echo "== build ($(left) s left)"
  local targets=(zrt zrt_main) built_tests=() t
  if [[ $build_status == ok ]]; then
    local known
    known=$(ninja -C "$BUILD_DIR" -t targets all 2>/dev/null)
    for t in "${TESTS[@]}"; do
      if grep -q "^$t: " <<<"$known"; then
        targets+=("$t")
        built_tests+=("$t")
      else
        echo "run.sh: no target $t in this tree"
      fi
    done
    t0=$SECONDS
    timeout "$(cap 300 240)" ninja -C "$BUILD_DIR" -j"$JOBS" "${targets[@]}" \
      >"$LOG_DIR/build.log" 2>&1 || build_status="build failed"
    build_s=$((SECONDS - t0))
    grep -E 'error|warning: .*(deprecated|unused)' "$LOG_DIR/build.log" | head -n 40
    tail -n 5 "$LOG_DIR/build.log"
  fi

  if [[ $build_status == ok ]]; then
    echo "== link ($(left) s left)"
    local lib=$BUILD_DIR/lib obj name cc
    cc=$(command -v cc || command -v gcc || echo cc) # zero-opt links with `cc`
    for obj in "$CARRY"/obj/*.o; do
      name=$(basename "$obj" .o)
      echo "$cc $obj $lib/libzrt_main.a -L$lib -lzrt -Wl,-rpath,$lib -o $BIN_DIR/$name"
      "$cc" "$obj" "$lib/libzrt_main.a" -L"$lib" -lzrt -Wl,-rpath,"$lib" -o "$BIN_DIR/$name" \
        >>"$LOG_DIR/build.log" 2>&1 || build_status="linking $name failed"
    done
    grep -B2 -A8 -m5 'error' "$LOG_DIR/build.log" | tail -n 40
  fi
  echo "run.sh: build: $build_status"

  local kernel_tests="" collective_tests=""
  for t in "${built_tests[@]}"; do
    case $t in
      *kernel-tests) kernel_tests=$BUILD_DIR/bin/$t ;;
      *collective-tests) collective_tests=$BUILD_DIR/bin/$t ;;
    esac
  done
  local build_json
  build_json=$(printf '{"status": "%s", "configure_s": %d, "build_s": %d, "cuda": "%s", "jobs": %d, "targets": "%s"}' \
    "$build_status" "$configure_s" "$build_s" "$CUDA" "$JOBS" "${targets[*]}")
  python3 "$ROOT/bench/gpu/bench.py" --mode "$MODE" --carry "$CARRY" --bin-dir "$BIN_DIR" \
    --out "$OUT_DIR" --log-dir "$LOG_DIR" --deadline "$DEADLINE" \
    --kernel-tests "$kernel_tests" --collective-tests "$collective_tests" \
    --build-json "$build_json" --deps "${ZB_DEPS_SUMMARY% }" --tree "$tree"
  local rc=$?
  tar -C "$LOG_DIR" -czf "$OUT_DIR/logs.tar.gz" . 2>/dev/null
  echo "run.sh: results in $OUT_DIR (results.md, results.json, run.log, logs.tar.gz); exit $rc"
  return $rc
}

main 2>&1 | tee "$OUT_DIR/run.log"
exit "${PIPESTATUS[0]}"
