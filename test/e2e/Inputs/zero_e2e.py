"""End-to-end checks of zero-opt programs: compile, run under mpirun, compare.

Ground truth: every ZeRO stage at every world size trains the same model as
one rank at stage 0 with the whole batch, so the per-step fp32 losses agree up
to float summation order (relative 1e-5 is generous; observed ~1e-7).

  zero_e2e.py agree --out DIR --mpirun CMD [--combos S:W,...]
                    [--steps N] [--lr F] -- COMPILE-ARGS...
      Compiles COMPILE-ARGS (e.g. `--model=mlp --mlp-width=50`, or a .mlir
      file) at stage 0 world size 1 (the reference) and at every combination
      S:W (default: stages 0-3 x world sizes 1-4), runs each under
      `CMD W ./prog --steps=N --lr=F`, and checks every run's losses equal the
      reference's within 1e-5 relative at every step and that the loss falls
      (last step below the first). One line per combination, then a summary;
      exit 1 naming stage, world size, step and values on any mismatch,
      missing step line, crashed or hung run.

  zero_e2e.py identical --out DIR --mpirun CMD [--combos S:W,...]
                        [--steps N] [--lr F] [--run-args ARGS]
                        -- COMPILE-ARGS...
      As agree, for --deterministic programs: every combination must print
      the reference's step lines character for character (losses as the
      runtime prints them, %.9g, and so their float32 bits) and --save the
      same weights byte for byte.

  zero_e2e.py unchanged --out DIR --mpirun CMD --with FLAGS
                        [--combos S:W,...] [--steps N] [--lr F]
                        [--run-args ARGS] -- COMPILE-ARGS...
      Compiles every combination with and without FLAGS (for example
      `--recompute=blocks`), runs both, and checks that they print the same
      step lines character for character and --save the same weights byte
      for byte: FLAGS must not change a bit of the training.

  zero_e2e.py close --out DIR --mpirun CMD --with FLAGS
                    [--combos S:W,...] [--steps N] [--lr F]
                    [--run-args ARGS] -- COMPILE-ARGS...
      As unchanged, for FLAGS that change the order of the sums (for
      example `--shard-group-size=2`): the losses with FLAGS equal those
      without within --tolerance (default 1e-5) relative at every step,
      and fall.

  zero_e2e.py ledger --out DIR --mpirun CMD [--combos S:W,...] [--steps N]
                     [--mlp-hidden-layers=L] [--mlp-width=H]
                     [--mlp-features=F] [--mlp-classes=C] [--batch=B]
      Compiles the built-in MLP of that shape, runs it, and checks the
      `comm <kind>: <bytes> bytes in <calls> calls` lines against the ZeRO
      formulas computed here from the MLP's shape (see expected_comm).

`zero-opt` is taken from PATH (lit puts build/bin first). CMD is lit's
`%mpirun` without the rank count, e.g. "mpirun --oversubscribe -np".
"""
import argparse
import os
import re
import shlex
import signal
import subprocess
import sys

STEP = re.compile(r"^step (\d+) loss (\S+)$")
HEADER = re.compile(r"^program: ZeRO stage (\d+), world size (\d+),")
COMM = re.compile(r"^comm (\w+): (\d+) bytes in (\d+) calls$")
COMM_TOTAL = re.compile(r"^comm total: (\d+) bytes$")
RUN_TIMEOUT_S = int(os.environ.get("ZERO_E2E_RUN_TIMEOUT_S", "60"))
TOLERANCE = 1e-5

failures = []


def fail(message):
    print(f"FAIL {message}", flush=True)
    failures.append(message)


def parse_combos(text):
    combos = []
    for item in text.split(","):
        stage, world = item.split(":")
        combos.append((int(stage), int(world)))
    return combos


ALL_COMBOS = [(s, w) for s in range(4) for w in range(1, 5)]


def compile_program(out_dir, stage, world, compile_args):
    exe = os.path.join(out_dir, f"prog-s{stage}-w{world}")
    cmd = ["zero-opt", *compile_args, f"--stage={stage}",
           f"--world-size={world}", "-o", exe]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0 or not os.path.exists(exe):
        fail(f"stage {stage} world size {world}: compile failed "
             f"(exit {result.returncode}): {shlex.join(cmd)}\n{result.stderr}")
        return None
    return exe


def run_program(mpirun, stage, world, exe, args):
    cmd = [*shlex.split(mpirun), str(world), exe, *args]
    # Own session, so that a hung run's whole tree (mpirun and its ranks)
    # can be killed, not just mpirun.
    process = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        fail(f"stage {stage} world size {world}: run hung for over "
             f"{RUN_TIMEOUT_S} s: {shlex.join(cmd)}")
        return None
    result = subprocess.CompletedProcess(cmd, process.returncode, stdout,
                                         stderr)
    if result.returncode != 0:
        fail(f"stage {stage} world size {world}: run crashed (exit "
             f"{result.returncode}): {shlex.join(cmd)}\n"
             f"{result.stdout[-2000:]}{result.stderr[-2000:]}")
        return None
    lines = result.stdout.splitlines()
    header = next((HEADER.match(l) for l in lines if HEADER.match(l)), None)
    if not header or (int(header.group(1)), int(header.group(2))) != (stage, world):
        fail(f"stage {stage} world size {world}: the program does not report "
             f"being compiled for stage {stage} world size {world}: "
             f"{header.group(0) if header else 'no program: line'}")
        return None
    return lines


def read_losses(stage, world, lines, steps):
    losses = []
    for line in lines:
        match = STEP.match(line.strip())
        if not match:
            continue
        if int(match.group(1)) != len(losses) + 1:
            fail(f"stage {stage} world size {world}: step {match.group(1)} "
                 f"out of order after {len(losses)} steps")
            return None
        losses.append(float(match.group(2)))
    if len(losses) != steps:
        fail(f"stage {stage} world size {world}: {len(losses)} step lines, "
             f"expected {steps}")
        return None
    return losses


def check_falls(stage, world, losses):
    if not losses[-1] < losses[0]:
        fail(f"stage {stage} world size {world}: loss did not fall: step 1 "
             f"{losses[0]!r}, step {len(losses)} {losses[-1]!r}")
        return False
    return True


def compile_and_run_reference(options, compile_args, combos, run_args):
    """Compiles the reference (stage 0, world size 1) and every combination
    (cheap), then runs the reference with run_args(0, 1): the programs by
    combination, the reference's output lines and its losses. Exits when the
    reference does not compile or train."""
    reference_exe = compile_program(options.out, 0, 1, compile_args)
    exes = {c: reference_exe if c == (0, 1) else
            compile_program(options.out, *c, compile_args) for c in combos}
    if reference_exe is None:
        sys.exit("error: the reference (stage 0, world size 1) did not compile")
    lines = run_program(options.mpirun, 0, 1, reference_exe, run_args(0, 1))
    reference = lines and read_losses(0, 1, lines, options.steps)
    if not reference:
        sys.exit("error: the reference (stage 0, world size 1) did not train")
    check_falls(0, 1, reference)
    return exes, lines, reference


def agree(options, compile_args):
    combos = parse_combos(options.combos) if options.combos else ALL_COMBOS
    run_args = [f"--steps={options.steps}", f"--lr={options.lr}",
                "--quiet-memory"]
    exes, lines, reference = compile_and_run_reference(
        options, compile_args, combos, lambda stage, world: run_args)
    print(f"reference stage 0 world size 1: {len(reference)} steps, loss "
          f"{reference[0]:.6f} -> {reference[-1]:.6f}", flush=True)

    agreed = 0
    for stage, world in combos:
        exe = exes[(stage, world)]
        if exe is None:
            continue
        lines = run_program(options.mpirun, stage, world, exe, run_args)
        losses = lines and read_losses(stage, world, lines, options.steps)
        if not losses:
            continue
        ok = True
        worst = 0.0
        for step, (got, want) in enumerate(zip(losses, reference), start=1):
            rel = abs(got - want) / max(abs(want), 1e-30)
            worst = max(worst, rel)
            if not rel <= TOLERANCE and ok:  # also NaN
                fail(f"stage {stage} world size {world}: step {step} loss "
                     f"{got!r} differs from the stage 0 world size 1 loss "
                     f"{want!r} by {rel:.3g} relative (> {TOLERANCE:g})")
                ok = False
        ok = check_falls(stage, world, losses) and ok
        if ok:
            agreed += 1
            print(f"stage {stage} world size {world}: {len(losses)} steps "
                  f"agree, max relative difference {worst:.1e}, loss "
                  f"{losses[0]:.6f} -> {losses[-1]:.6f}", flush=True)
    print(f"summary: {agreed} of {len(combos)} combinations agree with stage "
          f"0 at world size 1 over {options.steps} steps")
    if failures:
        sys.exit(f"error: {len(failures)} failure(s); first: {failures[0]}")


def saved_weights(out_dir, stage, world):
    return os.path.join(out_dir, f"weights-s{stage}-w{world}.safetensors")


def step_lines(lines):
    return [l.strip() for l in lines if STEP.match(l.strip())]


def bitwise_same(stage, world, got_lines, got_weights, want_lines,
                 want_weights, against):
    """Whether a run printed want_lines and saved want_weights exactly;
    fails naming the first difference and `against` (what it should equal)."""
    differing = [(a, b) for a, b in zip(got_lines, want_lines) if a != b]
    if differing or len(got_lines) != len(want_lines):
        first = differing[0] if differing else (len(got_lines), len(want_lines))
        fail(f"stage {stage} world size {world}: {len(differing)} step "
             f"line(s) differ from {against}; first: '{first[0]}' against "
             f"'{first[1]}'")
        return False
    if got_weights != want_weights:
        diff = next((i for i, (a, b) in
                     enumerate(zip(got_weights, want_weights)) if a != b),
                    min(len(got_weights), len(want_weights)))
        fail(f"stage {stage} world size {world}: the saved weights differ "
             f"from {against}'s ({len(got_weights)} and {len(want_weights)} "
             f"bytes; first difference at byte {diff})")
        return False
    return True


def identical_run_args(options, out_dir, stage, world):
    return [f"--steps={options.steps}", f"--lr={options.lr}",
            "--quiet-memory", f"--save={saved_weights(out_dir, stage, world)}",
            *shlex.split(options.run_args)]


def read_file(path):
    with open(path, "rb") as f:
        return f.read()


def identical(options, compile_args):
    combos = parse_combos(options.combos) if options.combos else ALL_COMBOS
    def run_args(stage, world):
        return identical_run_args(options, options.out, stage, world)
    exes, lines, reference = compile_and_run_reference(
        options, compile_args, combos, run_args)
    reference_lines = step_lines(lines)
    reference_weights = read_file(saved_weights(options.out, 0, 1))
    print(f"reference stage 0 world size 1: {len(reference)} steps, loss "
          f"{reference_lines[0].split()[-1]} -> "
          f"{reference_lines[-1].split()[-1]}, {len(reference_weights)} "
          f"bytes of weights", flush=True)

    same = 0
    for stage, world in combos:
        exe = exes[(stage, world)]
        if exe is None:
            continue
        lines = run_program(options.mpirun, stage, world, exe,
                            run_args(stage, world))
        if not (lines and read_losses(stage, world, lines, options.steps)):
            continue
        got = step_lines(lines)
        weights = read_file(saved_weights(options.out, stage, world))
        if not bitwise_same(stage, world, got, weights, reference_lines,
                            reference_weights, "stage 0 world size 1"):
            continue
        same += 1
        print(f"stage {stage} world size {world}: {len(got)} step lines and "
              f"{len(weights)} bytes of weights identical", flush=True)
    print(f"summary: {same} of {len(combos)} combinations are bitwise "
          f"identical to stage 0 at world size 1 over {options.steps} steps")
    if failures:
        sys.exit(f"error: {len(failures)} failure(s); first: {failures[0]}")


def unchanged(options, compile_args):
    """Each combination compiled with and without options.with_flags trains
    bit for bit alike (same step lines, same saved weights)."""
    combos = parse_combos(options.combos) if options.combos else ALL_COMBOS
    extra = shlex.split(options.with_flags)
    same = 0
    for stage, world in combos:
        results = []
        for name, args in (("without", compile_args),
                           ("with", [*compile_args, *extra])):
            out_dir = os.path.join(options.out, name)
            os.makedirs(out_dir, exist_ok=True)
            exe = compile_program(out_dir, stage, world, args)
            lines = exe and run_program(
                options.mpirun, stage, world, exe,
                identical_run_args(options, out_dir, stage, world))
            if not (lines and read_losses(stage, world, lines, options.steps)):
                break
            results.append((step_lines(lines),
                            read_file(saved_weights(out_dir, stage, world))))
        if len(results) != 2:
            continue
        (base_lines, base_weights), (got_lines, got_weights) = results
        if not bitwise_same(stage, world, got_lines, got_weights, base_lines,
                            base_weights, f"the run without {options.with_flags}"):
            continue
        same += 1
        print(f"stage {stage} world size {world}: {len(got_lines)} step lines "
              f"and {len(got_weights)} bytes of weights identical with "
              f"{options.with_flags}, loss {base_lines[0].split()[-1]} -> "
              f"{base_lines[-1].split()[-1]}", flush=True)
    print(f"summary: {same} of {len(combos)} combinations train bitwise "
          f"alike with and without {options.with_flags} over "
          f"{options.steps} steps")
    if failures:
        sys.exit(f"error: {len(failures)} failure(s); first: {failures[0]}")


def close(options, compile_args):
    """Each combination compiled with and without options.with_flags trains
    to the same losses within TOLERANCE."""
    combos = parse_combos(options.combos) if options.combos else ALL_COMBOS
    extra = shlex.split(options.with_flags)
    agreed = 0
    for stage, world in combos:
        runs = []
        for name, args in (("without", compile_args),
                           ("with", [*compile_args, *extra])):
            out_dir = os.path.join(options.out, name)
            os.makedirs(out_dir, exist_ok=True)
            exe = compile_program(out_dir, stage, world, args)
            lines = exe and run_program(
                options.mpirun, stage, world, exe,
                identical_run_args(options, out_dir, stage, world))
            losses = lines and read_losses(stage, world, lines, options.steps)
            if not losses:
                break
            runs.append(losses)
        if len(runs) != 2:
            continue
        want, got = runs
        worst = max(abs(a - b) / max(abs(b), 1e-30) for a, b in zip(got, want))
        if not worst <= options.tolerance:  # also NaN
            fail(f"stage {stage} world size {world}: the losses with "
                 f"{options.with_flags} differ from those without by "
                 f"{worst:.3g} relative (> {options.tolerance:g}): {got} "
                 f"against {want}")
            continue
        if not check_falls(stage, world, got):
            continue
        agreed += 1
        print(f"stage {stage} world size {world}: {len(got)} steps agree "
              f"with {options.with_flags}, max relative difference "
              f"{worst:.1e}, loss {got[0]:.6f} -> {got[-1]:.6f}", flush=True)
    print(f"summary: {agreed} of {len(combos)} combinations train alike "
          f"with and without {options.with_flags} over {options.steps} steps")
    if failures:
        sys.exit(f"error: {len(failures)} failure(s); first: {failures[0]}")


def padded(n, world):
    """Elements a collective moves for an n-element tensor sharded W ways:
    W shards of ceil(n/W) (the last one zero-padded)."""
    return -(-n // world) * world


def mlp_params(layers, width, features, classes):
    """(weight numel, bias numel) of each layer of the built-in MLP."""
    dims = [features] + [width] * layers + [classes]
    return [(dims[i] * dims[i + 1], dims[i + 1]) for i in range(len(dims) - 1)]


def expected_comm(stage, world, params, steps):
    """Per-rank bytes and calls of each collective over `steps` steps.

    The runtime counts (runtime/abi/collectives.cpp) per rank, by formula
    (also at world size 1): all_gather and reduce_scatter move the padded
    tensor, W * ceil(n/W) floats; all_reduce moves 2n floats. Every stage
    all-reduces the 1-float loss once per step; stages 1-3 also all-reduce
    the 1-float sum of squared gradient shards (global-norm clipping).

      stage 0: one all_reduce per gradient              -> 2 Psi (+ loss)
      stage 1/2: one reduce_scatter per gradient and one all_gather of each
                 updated parameter shard                -> 2 Psi (padded)
      stage 3: reduce_scatter per gradient, all_gather of every parameter
               before its forward use, and again before the backward use of
               each weight whose product with the incoming gradient is
               needed: the input gradient of a matmul (dX = dY W^T). That is
               every weight but the first layer's (no gradient flows to the
               data), and no bias (its gradient is sum_rows(dY), and
               bias_add's input gradient is dY itself) -> 3 Psi minus the
               first weight and the biases. `zero-opt --model=mlp --stage=3
               --world-size=2 --mlir-print-ir-after=zero-insert-collectives`
               shows exactly these collectives.
    """
    bytes_per = {"all_gather": 0, "reduce_scatter": 0, "all_reduce": 0}
    calls_per = dict(bytes_per)
    tensors = [n for layer in params for n in layer]

    def add(kind, floats):
        bytes_per[kind] += 4 * floats
        calls_per[kind] += 1

    add("all_reduce", 2 * 1)  # the loss
    if stage >= 1:
        add("all_reduce", 2 * 1)  # the squared norm of the gradient shards
    if stage == 0:
        for n in tensors:
            add("all_reduce", 2 * n)
    else:
        for n in tensors:
            add("reduce_scatter", padded(n, world))
            add("all_gather", padded(n, world))
        if stage == 3:
            for weight, _bias in params[1:]:
                add("all_gather", padded(weight, world))
    return ({k: v * steps for k, v in bytes_per.items()},
            {k: v * steps for k, v in calls_per.items()})


def ledger(options):
    combos = parse_combos(options.combos) if options.combos else ALL_COMBOS
    shape = dict(layers=options.mlp_hidden_layers, width=options.mlp_width,
                 features=options.mlp_features, classes=options.mlp_classes)
    params = mlp_params(**shape)
    psi = sum(w + b for w, b in params)
    print(f"MLP {shape}: Psi = {psi} parameters")
    compile_args = ["--model=mlp", f"--mlp-hidden-layers={shape['layers']}",
                    f"--mlp-width={shape['width']}",
                    f"--mlp-features={shape['features']}",
                    f"--mlp-classes={shape['classes']}",
                    f"--batch={options.batch}"]
    exes = {c: compile_program(options.out, *c, compile_args) for c in combos}
    matched = 0
    for stage, world in combos:
        exe = exes[(stage, world)]
        if exe is None:
            continue
        lines = run_program(options.mpirun, stage, world, exe,
                            [f"--steps={options.steps}"])
        if lines is None:
            continue
        want_bytes, want_calls = expected_comm(stage, world, params,
                                               options.steps)
        got = {}
        total = None
        for line in lines:
            if m := COMM.match(line):
                got[m.group(1)] = (int(m.group(2)), int(m.group(3)))
            elif m := COMM_TOTAL.match(line):
                total = int(m.group(1))
        ok = True
        for kind in want_bytes:
            want = (want_bytes[kind], want_calls[kind])
            if got.get(kind) != want:
                fail(f"stage {stage} world size {world}: comm {kind} is "
                     f"{got.get(kind, 'missing')} (bytes, calls), the ZeRO "
                     f"formula gives {want}")
                ok = False
        if set(got) != set(want_bytes):
            fail(f"stage {stage} world size {world}: comm kinds "
                 f"{sorted(got)}, expected {sorted(want_bytes)}")
            ok = False
        want_total = sum(want_bytes.values())
        if total != want_total:
            fail(f"stage {stage} world size {world}: comm total {total}, "
                 f"expected {want_total}")
            ok = False
        if ok:
            matched += 1
            per_step = want_total / options.steps
            kinds = ", ".join(f"{k} {want_bytes[k]} bytes in {want_calls[k]} "
                              f"calls" for k in want_bytes)
            print(f"stage {stage} world size {world}: comm matches: {kinds}; "
                  f"total {want_total} bytes = {per_step / (4 * psi):.4f} x "
                  f"4 Psi bytes per step", flush=True)
    print(f"summary: {matched} of {len(combos)} ledgers match the ZeRO "
          f"formulas")
    if failures:
        sys.exit(f"error: {len(failures)} failure(s); first: {failures[0]}")


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode",
                        choices=["agree", "identical", "unchanged", "close",
                                 "ledger"])
    parser.add_argument("--out", required=True, help="scratch directory")
    parser.add_argument("--mpirun", required=True)
    parser.add_argument("--combos", help="S:W,S:W,... (default: all 16)")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--lr", default="0.01")
    parser.add_argument("--run-args", default="",
                        help="more arguments of every run (identical), "
                             "e.g. \"--data=FILE\"")
    parser.add_argument("--with", dest="with_flags", default="",
                        help="unchanged, close: the zero-opt flags that "
                             "must not change the training "
                             "(\"--recompute=blocks\")")
    parser.add_argument("--tolerance", type=float, default=TOLERANCE,
                        help="close: the relative difference allowed")
    parser.add_argument("--mlp-hidden-layers", type=int, default=2)
    parser.add_argument("--mlp-width", type=int, default=50)
    parser.add_argument("--mlp-features", type=int, default=20)
    parser.add_argument("--mlp-classes", type=int, default=10)
    parser.add_argument("--batch", type=int, default=24)
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)
    options = parser.parse_args(argv[:split])
    compile_args = argv[split + 1:]
    os.makedirs(options.out, exist_ok=True)
    if options.mode in ("agree", "identical", "unchanged", "close"):
        if not compile_args:
            parser.error(f"{options.mode} needs the zero-opt arguments of "
                         "the model")
        if options.mode in ("unchanged", "close") and not options.with_flags:
            parser.error(f"{options.mode} needs --with=FLAGS")
        {"agree": agree, "identical": identical, "unchanged": unchanged,
         "close": close}[options.mode](options, compile_args)
    else:
        if compile_args:
            parser.error(f"ledger takes no compile arguments: {compile_args}")
        ledger(options)


if __name__ == "__main__":
    main()
