"""A stand-in for mpirun that damages what runs at world size > 1 report, to
show that zero_e2e.py notices. Usage: tamper.py MODE MPIRUN... -np W PROG...

  perturb  step 7's loss is scaled by (1 + 1e-4)
  drop     the step 20 line is missing
  crash    the run exits 1 after printing its output
  hang     the run never finishes
  flat     every step (also at world size 1) reports loss 1.5
  comm     the all_gather byte count is 4 bytes higher
"""
import subprocess
import sys
import time

mode, cmd = sys.argv[1], sys.argv[2:]
world = int(cmd[cmd.index("-np") + 1])
result = subprocess.run(cmd, capture_output=True, text=True)
lines = result.stdout.splitlines()
if world > 1 or mode == "flat":
    if mode == "perturb":
        lines = [f"step 7 loss {float(l.split()[3]) * (1 + 1e-4)!r}"
                 if l.startswith("step 7 loss ") else l for l in lines]
    elif mode == "drop":
        lines = [l for l in lines if not l.startswith("step 20 loss ")]
    elif mode == "crash":
        print("\n".join(lines))
        sys.exit(1)
    elif mode == "comm":
        def plus4(line):
            words = line.split()  # comm all_gather: N bytes in C calls
            words[2] = str(int(words[2]) + 4)
            return " ".join(words)
        lines = [plus4(l) if l.startswith("comm all_gather:") else l
                 for l in lines]
    elif mode == "hang":
        time.sleep(600)
if mode == "flat":
    lines = [f"step {l.split()[1]} loss 1.5" if l.startswith("step ") else l
             for l in lines]
print("\n".join(lines))
sys.stderr.write(result.stderr)
sys.exit(result.returncode)
