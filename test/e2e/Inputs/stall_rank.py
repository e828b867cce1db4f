"""Stops one rank of a running job (SIGSTOP) and times how the job ends.

  stall_rank.py --mpirun CMD --ranks N --rank R --after SECONDS -- PROGRAM ARGS...

Starts `CMD N PROGRAM ARGS...`, lets it run for SECONDS, stops rank R (found
by OMPI_COMM_WORLD_RANK in its environment), and waits for the job to end.
Prints the job's exit status, the seconds from the stop to the end, and the
job's output. A job still running 120 s after the stop is killed and
reported as hung.
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
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--after", type=float, required=True)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    options = parser.parse_args()
    command = options.command[1:] if options.command[:1] == ["--"] else options.command
    job = subprocess.Popen(shlex.split(options.mpirun) + [str(options.ranks)] + command,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(options.after)
    pid = find_rank(command[0], options.rank)
    if pid is None or job.poll() is not None:
        job.kill()
        sys.exit(f"FAIL: rank {options.rank} of {command[0]} is not running\n"
                 + job.communicate()[0])
    os.kill(pid, signal.SIGSTOP)
    stopped = time.monotonic()
    try:
        output, _ = job.communicate(timeout=120)
        elapsed = time.monotonic() - stopped
        print(f"job exited with status {job.returncode} {elapsed:.1f} s after "
              f"rank {options.rank} was stopped")
    except subprocess.TimeoutExpired:
        os.kill(pid, signal.SIGKILL)
        job.kill()
        output, _ = job.communicate()
        print(f"FAIL: the job hung 120 s after rank {options.rank} was stopped")
    print(output)


if __name__ == "__main__":
    main()
