"""How dynid's regressor scales from one thread to two with the size of Y, beside plain stores.

    .venv/bin/python bench/regressor_scaling.py [--robot er3a]

For Y of three sizes (in L2/L3 cache, partly in L3, far beyond it) prints the best time per
sample of ``dynid.regressor(..., out=Y)`` (Y reused, so no page faults) on one and two Numba
threads, the scaling, and the bytes of Y written per second; then the rate of plain compiled
stores into a 576 MB array and of ``ndarray.fill`` on one and two threads: the memory's own
ceiling for a code that fills Y. Random states with seed 0.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numba as nb
import numpy as np

import dynid

sys.path.insert(0, str(Path(__file__).parent))
from machine import best_of  # noqa: E402  (bench/machine.py: best wall time of repeated calls)


@nb.njit(parallel=True, cache=True)
def _store(a, v):
    for i in nb.prange(a.size):
        a[i] = v * i


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robot", default="er3a")
    args = parser.parse_args()
    robot = dynid.load_robot(args.robot)
    n = robot.n
    rng = np.random.default_rng(0)
    print(f"{args.robot}: n = {n}, load average {os.getloadavg()[0]:.2f}")
    for count in (2048, 20_000, 200_000):
        q, dq, ddq = (rng.uniform(-1.0, 1.0, (count, n)) for _ in range(3))
        y = np.empty((count, n, 10 * n))
        reps = max(1, 400_000 // count)
        per_sample = {}
        for threads in (1, 2, 1, 2):
            nb.set_num_threads(threads)
            dynid.regressor(robot, q, dq, ddq, out=y)

            def run():
                for _ in range(reps):
                    dynid.regressor(robot, q, dq, ddq, out=y)

            t = best_of(run, 5) / reps / count
            per_sample[threads] = min(per_sample.get(threads, t), t)
        written = y.nbytes / count
        print(f"Y {y.nbytes / 1e6:7.1f} MB ({count:7d} samples): 1 thread {1e6 * per_sample[1]:.3f} us, "
              f"2 threads {1e6 * per_sample[2]:.3f} us/sample, scaling {per_sample[1] / per_sample[2]:.2f}x, "
              f"Y written at {written / per_sample[2] / 1e9:.1f} GB/s with 2 threads")
    a = np.zeros(72_000_000)
    for threads in (1, 2):
        nb.set_num_threads(threads)
        _store(a, 1.0)
        print(f"plain compiled stores into 576 MB, {threads} thread(s): {a.nbytes / best_of(lambda: _store(a, 2.0), 5) / 1e9:.1f} GB/s")
    print(f"ndarray.fill of 576 MB: {a.nbytes / best_of(lambda: a.fill(3.0), 5) / 1e9:.1f} GB/s")
    print(f"load average at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
