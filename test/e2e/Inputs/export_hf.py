#!/usr/bin/env python3
"""--export-hf against transformers: the exported model is the trained one.

  export_hf.py --out DIR --mpirun CMD (--family F | --preset NAME)

With --family F (pytorch_parity.py's FAMILIES), transformers makes a small
model and saves it; zero-opt compiles it from its config.json (stage 3 on 2
ranks), starts from its weights, trains 3 steps and exports with
--export-hf. With --preset NAME, zero-opt's built-in model is compiled and
trained from its own initialisation. Either way, transformers'
AutoModelForCausalLM.from_pretrained loads the export, and its loss on the
batch of step 4 must equal, within 1e-4 relative, the loss that zero-opt
prints at step 4 of a 4-step run (the forward pass of step 4 sees the
weights after 3 updates).
"""
import argparse
import os
import shlex
import subprocess
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pytorch_parity as parity  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", required=True)
    parser.add_argument("--mpirun", required=True)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--family", choices=sorted(parity.FAMILIES))
    group.add_argument("--preset")
    options = parser.parse_args()
    import transformers

    name = options.family or options.preset
    out = os.path.join(options.out, name)
    os.makedirs(out, exist_ok=True)
    data = os.path.join(out, "tokens.bin")
    tokens = parity.write_tokens(data)
    model_flags, run_flags = [], []
    if options.family:
        source = os.path.join(out, "source")
        parity.make_model(options.family).save_pretrained(
            source, safe_serialization=True)
        model_flags = [f"--model-config={source}/config.json"]
        run_flags = [f"--init-from={source}"]
    else:
        model_flags = [f"--model={options.preset}"]
    exe = os.path.join(out, "prog")
    subprocess.run(["zero-opt", *model_flags, f"--batch={parity.BATCH}",
                    f"--seq-len={parity.SEQ}", "--stage=3", "--world-size=2",
                    "-o", exe], check=True)

    def train(steps, *extra):
        cmd = shlex.split(options.mpirun) + [
            "2", exe, f"--data={data}", f"--steps={steps}",
            f"--lr={parity.HYPER['lr']}", "--quiet-memory", *run_flags, *extra]
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if run.returncode != 0:
            sys.exit(f"FAIL {name}: exit {run.returncode}\n{run.stdout}"
                     f"{run.stderr}")
        return run.stdout

    export = os.path.join(out, "export")
    print(*[line for line in train(3, f"--export-hf={export}").splitlines()
            if line.startswith("exported:")])
    losses = [float(m.group(2)) for line in train(4).splitlines()
              if (m := parity.STEP.match(line))]
    model = transformers.AutoModelForCausalLM.from_pretrained(
        export, torch_dtype=torch.float32).eval()
    x, y = parity.batch(tokens, 3)
    with torch.no_grad():
        logits = model(input_ids=x).logits
        loss = torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), y.reshape(-1)).item()
    relative = abs(loss - losses[3]) / abs(losses[3])
    verdict = "agrees" if relative <= 1e-4 else "FAIL: differs"
    print(f"{name}: {type(model).__name__} from the export, loss on step 4's "
          f"batch {loss:.6f}, zero-opt {losses[3]:.6f}: {verdict} "
          f"(relative {relative:.1e})")
    sys.exit(0 if relative <= 1e-4 else 1)


if __name__ == "__main__":
    main()
