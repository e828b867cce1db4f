# lit configuration for zero-opt. Run with `ninja -C build check-zero`.
import os
import shutil

import lit.formats

config.name = "zero-opt"
config.test_format = lit.formats.ShTest(not lit_config.noExecute)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py", "CMakeLists.txt"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.zero_obj_root, "test")

bin_dir = os.path.join(config.zero_obj_root, "bin")
config.environment["PATH"] = os.pathsep.join(
    [bin_dir, config.llvm_tools_dir, config.environment.get("PATH", os.environ["PATH"])]
)
# Open MPI refuses to start as root without these; CI runs as root.
config.environment["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
config.environment["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
# Keep OpenBLAS single-threaded so several ranks on two cores do not thrash
# and results do not depend on the thread count.
config.environment["OPENBLAS_NUM_THREADS"] = "1"
config.environment["OMP_NUM_THREADS"] = "1"
# So a variable captured in one function's checks is not silently reused in the next's.
config.environment["FILECHECK_OPTS"] = "-enable-var-scope"
for var in ("HOME", "TMPDIR", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
    if var in os.environ:
        config.environment[var] = os.environ[var]

# `%mpirun N cmd`: an mpirun that works as root and with more ranks than cores.
# --bind-to none: ranks must not all be pinned to one core when oversubscribed.
config.substitutions.append(
    ("%mpirun", "mpirun --oversubscribe --bind-to none -np")
)
config.substitutions.append(("%python", config.python_executable or "python3"))
config.substitutions.append(("%src_root", config.zero_src_root))
config.substitutions.append(("%obj_root", config.zero_obj_root))

if config.zero_build_compiler:
    config.available_features.add("compiler")
if config.zero_cuda_enabled:
    config.available_features.add("cuda-build")
    # `%link_cuda_emulated prog.o -o exe`: a compiled program that also runs
    # with --device=cuda-emulated (runtime/cuda/tests/emulation/emulated_main.cpp).
    lib = os.path.join(config.zero_obj_root, "lib")
    config.substitutions.append(
        (
            "%link_cuda_emulated",
            f"{config.cxx_compiler} -Wl,--start-group"
            f" {lib}/libzrt_cuda_emulated_main.a {lib}/libzrt_cuda_emulated.a"
            f" -Wl,--end-group -L{lib} -lzrt -Wl,-rpath,{lib} -lpthread",
        )
    )
if shutil.which("nvidia-smi") and os.system("nvidia-smi -L >/dev/null 2>&1") == 0:
    config.available_features.add("gpu")
