"""Injures a running job and times how it ends.

  injure_job.py --mpirun CMD --ranks N --after SECONDS
      (--rank R [--signal STOP|KILL|TERM|INT] | --truncate FILE) -- PROGRAM ARGS...

Starts `CMD N PROGRAM ARGS...`, lets it run for SECONDS, then either sends
rank R (found by OMPI_COMM_WORLD_RANK in its environment) a signal (STOP by
default: a rank that stalls without dying) or truncates FILE to its first
1024 bytes (a token file cut short under a running job), and waits for the
job to end. Prints the job's exit status, the seconds from the fault to the
end, and the job's output. A job still running 120 s after the fault is
killed and reported as hung.
"""
import argparse
import os
import shlex
import signal
import subprocess
import sys
import time


def find_rank(program, rank):
    """The pid of the process running `program` as MPI rank `rank`."""
    want = f"OMPI_COMM_WORLD_RANK={rank}".encode()
    name = os.path.basename(program).encode()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read().split(b"\0")
            with open(f"/proc/{pid}/environ", "rb") as f:
                environ = f.read().split(b"\0")
        except OSError:
            continue
        if cmdline and os.path.basename(cmdline[0]) == name and want in environ:
            return int(pid)
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mpirun", required=True)
    parser.add_argument("--ranks", type=int, required=True)
    parser.add_argument("--rank", type=int)
    parser.add_argument("--signal", choices=["STOP", "KILL", "TERM", "INT"], default="STOP")
    parser.add_argument("--truncate")
    parser.add_argument("--after", type=float, required=True)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    options = parser.parse_args()
    command = options.command[1:] if options.command[:1] == ["--"] else options.command
    job = subprocess.Popen(shlex.split(options.mpirun) + [str(options.ranks)] + command,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(options.after)
    if options.truncate:
        fault = f"{options.truncate} was truncated"
        pid = None
        if job.poll() is None:
            os.truncate(options.truncate, 1024)
    else:
        fault = f"rank {options.rank} was sent SIG{options.signal}"
        pid = find_rank(command[0], options.rank)
        if pid is not None:
            os.kill(pid, getattr(signal, "SIG" + options.signal))
    if job.poll() is not None or (pid is None and not options.truncate):
        job.kill()
        sys.exit(f"FAIL: the job was not running when {fault}\n"
                 + job.communicate()[0])
    hit = time.monotonic()
    try:
        output, _ = job.communicate(timeout=120)
        elapsed = time.monotonic() - hit
        print(f"job exited with status {job.returncode} {elapsed:.1f} s after "
              f"{fault}")
    except subprocess.TimeoutExpired:
        if pid is not None:
            os.kill(pid, signal.SIGKILL)
        job.kill()
        output, _ = job.communicate()
        print(f"FAIL: the job hung 120 s after {fault}")
    print(output)


if __name__ == "__main__":
    main()
