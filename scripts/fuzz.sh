#!/usr/bin/env bash
# Fuzzes the readers of untrusted input with libFuzzer (clang's, from
# Debian's packages), each built with AddressSanitizer and UBSan into
# build-fuzz/:
#   json         runtime/driver/json.cpp (safetensors headers, checkpoint indexes)
#   safetensors  runtime/driver/safetensors.cpp (--init-from)
#   tokens       runtime/driver/tokens.cpp (--data)
#   weight_index runtime/driver/weight_files.cpp (--init-from a sharded checkpoint)
#   hf_config    lib/Frontend/TransformerConfig.cpp (--model-config, presets)
#   train_state_index runtime/driver/train_state_index.cpp (--resume)
#   mlir         zero-opt's .mlir input: the dialects' parsers and verifiers
#                (dialects/), then the stage-3 pipeline on 2 ranks (passes/)
#
#   scripts/fuzz.sh [--seconds N] [--replay] [TARGET...]
#
# Each target first replays its corpus (fuzz/corpus/TARGET: committed seeds
# and regression inputs of crashes found and fixed), then, unless --replay,
# fuzzes for N seconds (default 30; CI runs 30, scripts/fuzz.sh --seconds
# 3600 is a longer run), with the dictionary fuzz/TARGET.dict where there is
# one. New inputs go to build-fuzz/corpus/TARGET, a crash to
# build-fuzz/crashes/ with the fuzzer's report; the script then fails.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=30
replay_only=0
targets=()
while (($#)); do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --replay) replay_only=1; shift ;;
    *) targets+=("$1"); shift ;;
  esac
done
((${#targets[@]})) || targets=(json safetensors tokens weight_index hf_config train_state_index
                                  mlir)

CXX=${FUZZ_CXX:-clang++}
BUILD_DIR=${BUILD_DIR:-build} # the main build (for generated headers)
OUT=build-fuzz
mkdir -p "$OUT/crashes"
FLAGS=(-std=gnu++17 -g -O1 -fsanitize=fuzzer,address,undefined
       -fno-sanitize-recover=undefined -Iinclude -Iruntime -I.)
MPI_COMPILE=$(mpicxx --showme:compile)
MPI_LINK=$(mpicxx --showme:link)

# The mlir target compiles the dialects, passes and pipelines (about 40 files): each
# into its own object under build-fuzz/mlir-obj/, through a small ninja file,
# so that a rerun compiles only what changed (ninja reads the compiler's
# header dependencies), in parallel, and through ccache where there is one.
build_mlir() {
  local inc
  for inc in dialects/nn/NNOps.h.inc dialects/zero/ZeroOps.h.inc \
             dialects/zrt/ZrtOps.h.inc passes/Transforms/Passes.h.inc \
             passes/Analysis/Passes.h.inc; do
    [[ -f $BUILD_DIR/$inc ]] ||
      { echo "fuzz.sh: build zero-opt first (scripts/build.sh)" >&2; exit 1; }
  done
  local launcher objects=() source object generated
  launcher=$(command -v ccache || true)
  # Absolute, so that BUILD_DIR=build and BUILD_DIR=$PWD/build (lit's) give
  # the same commands and ninja rebuilds nothing.
  generated=$(cd "$BUILD_DIR" && pwd)
  {
    echo "builddir = $OUT"
    # The generated headers of the main build; -gline-tables-only is enough
    # for the reports' stacks and much cheaper to compile than -g; LLVM's
    # headers must not poison memory that Debian's libMLIR hands out
    # (fuzz/uninstrumented_llvm.h).
    echo "flags = -std=gnu++17 -gline-tables-only -O1" \
         "-include fuzz/uninstrumented_llvm.h" \
         "-fsanitize=fuzzer-no-link,address,undefined" \
         "-fno-sanitize-recover=undefined -I. -Iinclude -I$generated" \
         "-isystem /usr/lib/llvm-22/include -D__STDC_CONSTANT_MACROS" \
         "-D__STDC_FORMAT_MACROS -D__STDC_LIMIT_MACROS"
    echo "rule cxx"
    echo "  command = $launcher $CXX -MD -MF \$out.d \$flags -c \$in -o \$out"
    echo "  depfile = \$out.d"
    echo "  deps = gcc"
    echo "  description = CXX \$in"
    echo "rule link"
    echo "  command = $CXX -fsanitize=fuzzer,address,undefined \$in -o \$out" \
         "-L/usr/lib/llvm-22/lib -lMLIR -lLLVM -Wl,-rpath,/usr/lib/llvm-22/lib"
    echo "  description = LINK \$out"
    for source in fuzz/mlir_fuzzer.cpp dialects/*/*.cpp passes/*/*.cpp \
                  passes/Conversion/*/*.cpp lib/Pipelines/*.cpp; do
      object=$OUT/mlir-obj/${source%.cpp}.o
      objects+=("$object")
      echo "build $object: cxx $source"
    done
    echo "build $OUT/mlir: link ${objects[*]}"
  } >"$OUT/mlir.ninja.tmp"
  mv "$OUT/mlir.ninja.tmp" "$OUT/mlir.ninja"
  ninja -f "$OUT/mlir.ninja" "$OUT/mlir"
}

build() {
  local target=$1
  case "$target" in
    json) sources=(runtime/driver/json.cpp) ;;
    safetensors|tokens)
      sources=(runtime/driver/json.cpp runtime/driver/safetensors.cpp
               runtime/driver/tokens.cpp runtime/driver/files.cpp
               runtime/core/check.cpp) ;;
    weight_index)
      sources=(runtime/driver/json.cpp runtime/driver/safetensors.cpp
               runtime/driver/tokens.cpp runtime/driver/files.cpp
               runtime/core/check.cpp runtime/driver/weight_files.cpp) ;;
    train_state_index)
      sources=(runtime/driver/json.cpp runtime/driver/train_state_index.cpp) ;;
    hf_config)
      # The presets the reader embeds are generated by the main build.
      [[ -f $BUILD_DIR/lib/Frontend/PresetConfigs.inc ]] ||
        { echo "fuzz.sh: build zero-opt first (scripts/build.sh)" >&2; exit 1; }
      "$CXX" "${FLAGS[@]}" -isystem /usr/lib/llvm-22/include -I"$BUILD_DIR/lib/Frontend" \
        fuzz/hf_config_fuzzer.cpp lib/Frontend/TransformerConfig.cpp \
        -o "$OUT/hf_config" -L/usr/lib/llvm-22/lib -lLLVM \
        -Wl,-rpath,/usr/lib/llvm-22/lib
      return ;;
    mlir) build_mlir; return ;;
    *) echo "fuzz.sh: unknown target '$target'" >&2; exit 2 ;;
  esac
  # shellcheck disable=SC2086
  "$CXX" "${FLAGS[@]}" $MPI_COMPILE "fuzz/${target}_fuzzer.cpp" "${sources[@]}" \
    -o "$OUT/$target" $MPI_LINK
}

status=0
for target in "${targets[@]}"; do
  echo "fuzz.sh: building $target"
  build "$target"
  mkdir -p "$OUT/corpus/$target"
  # Warnings of the config reader about unknown fields are expected noise.
  run=("$OUT/$target" -artifact_prefix="$OUT/crashes/$target-" -timeout=10
       -rss_limit_mb=2048)
  [[ -f fuzz/$target.dict ]] && run+=(-dict="fuzz/$target.dict")
  echo "fuzz.sh: $target: replaying fuzz/corpus/$target"
  if ! "${run[@]}" -runs=0 "fuzz/corpus/$target" 2>"$OUT/$target.replay.log"; then
    echo "fuzz.sh: $target: FAILED on the committed corpus:"; tail -30 "$OUT/$target.replay.log"
    status=1; continue
  fi
  ((replay_only)) && continue
  echo "fuzz.sh: $target: fuzzing for $seconds s"
  if ! "${run[@]}" -max_total_time="$seconds" -max_len=65536 \
       "$OUT/corpus/$target" "fuzz/corpus/$target" 2>"$OUT/$target.log"; then
    echo "fuzz.sh: $target: FAILED (input in $OUT/crashes/):"; tail -40 "$OUT/$target.log"
    status=1; continue
  fi
  grep -E "^Done|^#[0-9]+.*DONE" "$OUT/$target.log" | tail -1 | sed "s/^/fuzz.sh: $target: /"
done
exit $status
