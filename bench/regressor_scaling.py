"""How dynid's regressor scales with the size of Y, the threads and the memory, beside plain stores.

    .venv/bin/python bench/regressor_scaling.py [--robot er3a] [--target native|avx2] [--contend]

For Y of four sizes (in L2, in L3, beyond L3, far beyond it) prints the best time per sample of
``dynid.regressor(..., out=Y)`` (Y reused, so no page faults) on one thread, with all threads
allowed (the count the library chose: dynamics/threads.py) and with the parallel kernel forced
onto all threads; the bytes of Y's non-zero entries written per second; and dynid's time over
the write bound (those bytes over the store bandwidth of ordinary compiled stores measured in
the same run, 1 / all threads). CPU model, SIMD flags, compile target and load are printed
beside the figures (bench/machine.py).

``--contend`` simulates a slower memory system: a second process streams stores into 512 MB for
the whole run, so the one-thread figures (and the one-thread store bandwidth they are compared
with) are those of a core whose memory is busy with a neighbour's writes, as on a smaller or
busier machine. ``--target avx2`` compiles for an AVX2 CPU without AVX-512 (the Intel proxy).
Random states with seed 0.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import machine  # noqa: E402  (bench/machine.py)

SIZES = (256, 2048, 20_000, 200_000)  # samples: Y of er3a 0.7, 5.9, 58, 576 MB


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--robot", default="er3a")
    parser.add_argument("--target", choices=sorted(machine.TARGETS), default="native")
    parser.add_argument("--contend", action="store_true", help="a second process streams stores during the run")
    args = parser.parse_args()
    with machine.store_neighbour(args.contend):
        run(args)


def run(args) -> None:
    machine.select_target(args.target)  # before Numba is imported
    import numba

    import dynid

    threads = importlib.import_module("dynid.dynamics.threads")
    regressor = importlib.import_module("dynid.dynamics.regressor")
    lanes = importlib.import_module("dynid.dynamics.lanes")
    cores = numba.config.NUMBA_NUM_THREADS
    robot = dynid.load_robot(args.robot)
    n, arrays = robot.n, lanes.kernel_arrays(robot)
    print(f"CPU: {machine.cpu_model()}\nSIMD flags: {machine.simd_flags()}\ncompiled for: {machine.compiled_for()}")
    print(f"{args.robot}: n = {n}; {'a neighbour process streams stores all along; ' if args.contend else ''}"
          f"load average {machine.load()}")
    bandwidth = {t: machine.store_bandwidth(t) for t in (1, cores)}
    print(f"store bandwidth (ordinary stores filling 256 MB): {bandwidth[1] / 1e9:.1f} GB/s one thread, "
          f"{bandwidth[cores] / 1e9:.1f} GB/s {cores} threads")
    rng = np.random.default_rng(0)
    print(f"{'Y':>18} {'us/sample: 1 thread':>20} {f'{cores} thr allowed (used)':>22} {f'{cores} thr forced':>15} "
          f"{'GB/s of Y':>10} {'dynid / write bound':>20} {'load':>6}")
    for count in SIZES:
        q, dq, ddq = (rng.uniform(-2.0, 2.0, (count, n)) for _ in range(3))
        y = np.zeros((count, n, 10 * n))
        dynid.regressor(robot, q, dq, ddq, out=y)
        written = 8 * int(np.count_nonzero(np.any(y != 0.0, axis=0)))
        reps = max(1, 400_000 // count)
        per_sample = {}
        for how, allowed in ((1, 1), ("all", cores), ("forced", cores), (1, 1), ("all", cores), ("forced", cores)):
            numba.set_num_threads(allowed)
            if how == "forced":
                def call():
                    threads.with_threads(cores, regressor._regressor_parallel, q, dq, ddq, *arrays, y, cores,
                                         regressor.stream_stage_samples(robot, y.nbytes))
            else:
                def call():
                    dynid.regressor(robot, q, dq, ddq, out=y)
            call()

            def repeated():
                for _ in range(reps):
                    call()

            t = machine.best_of(repeated, 5) / reps / count
            per_sample[how] = min(per_sample.get(how, t), t)
        numba.set_num_threads(cores)
        kind = regressor.kernel_call(robot, q, dq, ddq, y, regressor.stream_stage_samples(robot, y.nbytes),
                                     False)[0]  # as dynid.regressor(out=y) chooses
        state = threads.scaling(kind, cores)
        used = state.fastest() if len(state.probes) == 2 and count >= threads.ALL_THREADS_MIN_SAMPLES else 1
        best = min(per_sample[1], per_sample["all"])
        bound = (written / bandwidth[1], written / bandwidth[cores])
        print(f"{y.nbytes / 1e6:9.1f} MB {count:6d} {1e6 * per_sample[1]:20.3f} "
              f"{1e6 * per_sample['all']:17.3f} ({used}) {1e6 * per_sample['forced']:15.3f} "
              f"{written / best / 1e9:10.1f} {per_sample[1] / bound[0]:9.1f}x / {per_sample['all'] / bound[1]:.1f}x "
              f"{machine.load().split()[0]:>6}")
    print(f"(Y's non-zero entries: {written} bytes per sample; write bound = those bytes / store bandwidth; "
          f"load average at end {machine.load()})")


if __name__ == "__main__":
    main()
