"""Speed of dynid's regressor and inverse dynamics beside Pinocchio called from C++.

    .venv/bin/python bench/dynamics.py [--samples 20000] [--repeat 7] [--robots er3a,iiwa14,solo12]

For each robot (6-DoF er3a; 7-DoF KUKA iiwa14 from shared/real, else the builtin kr500-rail;
12-DoF solo12 from example-robot-data, a branched tree of four legs on a fixed base) and the
same random states (seeded), prints in one run:

- Pinocchio 4 `computeJointTorqueRegressor` and `rnea` in a C++ loop (bench/cpp/, built here
  with -O3 -march=native into a cache directory; one thread): the baseline of every ratio;
- `dynid.regressor(..., out=Y)` and `dynid.inverse_dynamics` on one thread and on all cores;
- the write bound: bytes of Y the regressor writes per sample over the machine's measured
  store bandwidth (one thread / all cores), the floor no regressor that fills Y can beat;
- agreement: max |Y_dynid - Y_pinocchio| and max |tau_dynid - tau_pinocchio| on these states.

Times are the best of --repeat passes over all samples (wall clock; the machine is shared, so
the load average is printed before and after).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import pinocchio_cpp  # noqa: E402  (bench/pinocchio_cpp.py)


def find_robot(name: str):
    """(robot, label): builtin names as they are; iiwa14 and solo12 from their URDFs."""
    import dynid

    if name == "iiwa14":
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
        from shared_data import shared_path

        urdf = shared_path("real", "kuka_iiwa14", "urdf", "iiwa14.urdf")
        if urdf is not None:
            return dynid.load_robot(str(urdf)), "iiwa14 (shared/real URDF)"
        return dynid.load_robot("kr500-rail"), "kr500-rail (iiwa14 URDF not found)"
    if name == "solo12":
        urdf = pinocchio_cpp.prefix() / "share" / "example-robot-data" / "robots" / "solo_description" / "robots" / "solo12.urdf"
        return dynid.load_robot(str(urdf)), "solo12 (example-robot-data, fixed base)"
    return dynid.load_robot(name), name


def best_of(fn, repeat: int) -> float:
    return best_of_both(fn, repeat)[0]


def best_of_both(fn, repeat: int) -> tuple[float, float]:
    """(best wall seconds, best CPU seconds of this process) over ``repeat`` calls."""
    wall, cpu = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return min(wall), min(cpu)


def store_bandwidth(threads: int, megabytes: int = 256, repeat: int = 5) -> float:
    """Bytes per second that ordinary stores reach when filling a large array (what the
    regressor's writes of Y are; no cache holds it)."""
    import numba

    @numba.njit(parallel=True)
    def fill_parallel(a, value):
        for k in numba.prange(a.size):
            a[k] = value

    a = np.empty(megabytes * 2**20 // 8)
    numba.set_num_threads(threads)
    fill_parallel(a, 1.0)
    return a.nbytes / best_of(lambda: fill_parallel(a, 1.0), repeat)


def main() -> None:
    import numba

    import dynid

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--robots", default="er3a,iiwa14,solo12")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    cores = numba.config.NUMBA_NUM_THREADS
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, numpy {np.__version__}, numba {numba.__version__}")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    binary, how = pinocchio_cpp.build()
    print(f"Pinocchio C++ baseline: {how}" if binary else f"NOTE: {how}")
    bandwidth = {1: store_bandwidth(1), cores: store_bandwidth(cores)}
    print(f"store bandwidth (filling 256 MB): {bandwidth[1] / 1e9:.1f} GB/s one thread, "
          f"{bandwidth[cores] / 1e9:.1f} GB/s {cores} threads")
    rows = []
    for name in args.robots.split(","):
        robot, label = find_robot(name)
        n, count = robot.n, args.samples
        rng = np.random.default_rng(args.seed)
        q, dq, ddq = rng.uniform(-2.0, 2.0, (3, count, n))
        y = np.zeros((count, n, 10 * n))
        dynid.regressor(robot, q[:600], dq[:600], ddq[:600])  # load the compiled kernels
        dynid.inverse_dynamics(robot, q[:600], dq[:600], ddq[:600])
        timing = {}
        for threads in (1, cores):
            numba.set_num_threads(threads)
            for key, fn in (("reg", lambda: dynid.regressor(robot, q, dq, ddq, out=y)),
                            ("id", lambda: dynid.inverse_dynamics(robot, q, dq, ddq))):
                timing[key, threads] = [t / count for t in best_of_both(fn, args.repeat)]
        numba.set_num_threads(cores)
        written = 8 * int(np.count_nonzero(np.any(y != 0.0, axis=0)))  # bytes of Y's non-zero pattern per sample
        tau = dynid.inverse_dynamics(robot, q, dq, ddq)
        pin = pinocchio_cpp.run(binary, robot, q, dq, ddq, repeats=args.repeat) if binary else None
        print(f"\n{label}: n = {n}, {count} random states (seed {args.seed}), "
              f"its Y has {written} bytes of non-zero entries per sample")
        print(f"{'us/sample':31} {'Pinocchio C++':>15} {'dynid 1 thread':>15} {'ratio':>11} "
              f"{f'dynid {cores} threads':>16} {'write bound':>12}")
        print(f"{'':31} {'wall / CPU':>15} {'wall / CPU':>15} {'wall / CPU':>11} {'wall':>16} {'1 / all':>12}")
        for key, what, pin_key in (("reg", "regressor", "regressor_ns"), ("id", "inverse dynamics (RNEA)", "rnea_ns")):
            base = (pin[pin_key][0] * 1e-3, pin[pin_key][2] * 1e-3) if pin else (float("nan"), float("nan"))
            one, many = [t * 1e6 for t in timing[key, 1]], timing[key, cores][0] * 1e6
            bound = (f"{written / bandwidth[1] * 1e6:.3f}/{written / bandwidth[cores] * 1e6:.3f}" if key == "reg" else "")
            print(f"{what:31} {base[0]:>7.3f} / {base[1]:.3f} {one[0]:>7.3f} / {one[1]:.3f} "
                  f"{base[0] / one[0]:>4.1f}x/{base[1] / one[1]:.1f}x {many:>16.3f} {bound:>12}")
            rows.append((label, n, key, base, one, many))
        if pin:
            checked = pin["Y"].shape[0]
            y_err = float(np.abs(pin["Y"] - y[:checked]).max())
            tau_err = float(np.abs(pin["tau"] - tau).max())
            print(f"agreement with Pinocchio C++: max |Y diff| = {y_err:.1e} ({checked} samples), "
                  f"max |tau diff| = {tau_err:.1e} N m (all samples; max |tau| {np.abs(tau).max():.3g})")
    print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("ratio = Pinocchio C++ time / dynid one-thread time (both one thread, same states; wall clock and "
          "CPU time of the best pass); write bound = bytes of Y's non-zero entries / store bandwidth")


if __name__ == "__main__":
    main()
