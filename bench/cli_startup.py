"""Start-up time of the command line: `dynid --help`, `dynid robots` and every command's
`--help`, each in a fresh interpreter (what a user waits for), wall and CPU time.

    .venv/bin/python bench/cli_startup.py [--repeat 7]

Runs `python -m dynid.cli.main ARGS` with this checkout's `src/` first on the path (the same
import as the `dynid` console script). Prints the median and best of the runs and the load
average, since wall time on a shared machine depends on it; CPU time (user + system of the
child) is the steadier figure. The module-set fact behind it is tests/test_cli_startup.py.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
COMMANDS = (["--help"], ["robots"], ["robot", "show", "er3a"], ["identify", "--help"], ["simulate", "--help"],
            ["excite", "--help"], ["multibody", "--help"], ["friction", "--help"], ["demo", "--help"],
            ["report", "--help"], ["export", "--help"], ["base-params", "--help"])


def run_once(args: list[str], env: dict) -> tuple[float, float]:
    """(wall, CPU) seconds of one `dynid ARGS` in a fresh interpreter."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "dynid.cli.main", *args], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=str(SRC))
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")
    print(f"{'command':<28} {'wall median':>12} {'wall best':>10} {'CPU median':>11}")
    for cmd in COMMANDS:
        run_once(cmd, env)  # warm the file cache and __pycache__
        runs = [run_once(cmd, env) for _ in range(args.repeat)]
        walls, cpus = [w for w, _ in runs], [c for _, c in runs]
        print(f"{'dynid ' + ' '.join(cmd):<28} {statistics.median(walls):>10.3f} s {min(walls):>8.3f} s "
              f"{statistics.median(cpus):>9.3f} s")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
