"""Where the regressor kernel's time goes: its passes timed one after another, on one thread.

    .venv/bin/python bench/regressor_passes.py [--robots er3a,iiwa14,solo12] [--target native|avx2]
                                               [--contend] [--samples 2048,20000]

dynid's regressor (dynamics/regressor.py) computes a block of 32 samples in three passes over its
workspace: load q, dq, ddq and the forward recursion (``lanes.load_block``, ``forward_block``);
every (ancestor, link) block of Y in lanes (``regressor.link_blocks``); the transpose of those
lanes into Y's layout (``tiles.lanes_to_samples``). For Y in cache (2048 samples, blocks of Y
reused by the next repetition) and in memory (20 000 samples) this prints the calling thread's
CPU time per sample of: the first pass alone, the first two, and all three with the non-zero
blocks stored in place; the differences are each pass's share. Beside them: the whole kernel
with Y streamed past the caches in whole samples (``regressor_streamed``, what dynid.regressor
does for a chain's Y larger than the last-level cache), the write bound (Y's non-zero bytes over
the CPU-time bandwidth of ordinary stores filling 256 MB, measured in the same run) and the
streamed kernel over it. CPU time, so that a busy machine's preemptions do not count; the load
average is printed beside every figure.

``--contend`` emulates a slower memory system: a second process streams stores into 512 MB for
the whole run (``machine.store_neighbour``), so the store bandwidth and the in-memory figures are
those of a core whose memory is busy with a neighbour's writes. ``--target avx2`` compiles for
an AVX2 CPU without AVX-512 (the Intel proxy). Random states with seed 0.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import machine  # noqa: E402  (bench/machine.py)


def compiled_passes():
    """Compiled loops over all samples running the first pass, or the first two."""
    import numba

    lanes = importlib.import_module("dynid.dynamics.lanes")
    regressor = importlib.import_module("dynid.dynamics.regressor")
    load_block, forward_block, link_blocks = lanes.load_block, lanes.forward_block, regressor.link_blocks
    scratch_row, LANES = lanes.scratch_row, lanes.LANES

    @numba.njit(nogil=True)
    def forward(q, dq, ddq, constants, parents, slots, ws):
        for k0 in range(0, q.shape[0], LANES):
            load_block(q, dq, ddq, k0, min(LANES, q.shape[0] - k0), ws)
            forward_block(ws, constants, parents)

    @numba.njit(nogil=True)
    def forward_and_blocks(q, dq, ddq, constants, parents, slots, ws):
        n = parents.shape[0]
        scratch = scratch_row(n, slots)
        for k0 in range(0, q.shape[0], LANES):
            load_block(q, dq, ddq, k0, min(LANES, q.shape[0] - k0), ws)
            forward_block(ws, constants, parents)
            for j in range(n):
                link_blocks(ws, constants, parents, slots, j, scratch)

    return forward, forward_and_blocks


def cpu_per_sample(fn, count: int, repeat: int = 15) -> float:
    """Best CPU microseconds per sample of the calling thread over ``repeat`` calls."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.thread_time()
        fn()
        best = min(best, time.thread_time() - t0)
    return best / count * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--robots", default="er3a,iiwa14,solo12")
    ap.add_argument("--target", choices=sorted(machine.TARGETS), default="native")
    ap.add_argument("--samples", default="2048,20000", help="batch sizes (comma-separated)")
    ap.add_argument("--contend", action="store_true", help="a second process streams stores during the run")
    args = ap.parse_args()
    machine.select_target(args.target)  # before Numba is imported
    with machine.store_neighbour(args.contend):
        run(args)


def run(args) -> None:
    import dynamics as bench_dynamics  # bench/dynamics.py: the same robots

    lanes = importlib.import_module("dynid.dynamics.lanes")
    regressor = importlib.import_module("dynid.dynamics.regressor")
    forward, forward_and_blocks = compiled_passes()
    print(f"CPU: {machine.cpu_model()}\nSIMD flags: {machine.simd_flags()}\ncompiled for: {machine.compiled_for()}")
    if args.contend:
        print("a neighbour process streams stores into 512 MB all along (--contend)")
    bandwidth = machine.store_bandwidths(1)[1]
    print(f"store bandwidth of one thread (ordinary stores filling 256 MB, CPU time): {bandwidth / 1e9:.1f} GB/s; "
          f"load {machine.load()}")
    print("CPU us per sample of one thread: the forward pass, with the blocks, with the transpose (Y stored in "
          "place); the whole kernel with Y streamed; the write bound; streamed / bound")
    print(f"{'robot':34} {'samples':>8} {'Y MB':>6} {'forward':>8} {'+ blocks':>9} {'+ transpose':>12} "
          f"{'streamed':>9} {'bound':>7} {'ratio':>6} {'load':>6}")
    for name in args.robots.split(","):
        robot, label = bench_dynamics.find_robot(name)
        n = robot.n
        constants, parents, slots, gravity = lanes.kernel_arrays(robot)
        stage_samples = regressor.stream_stage_samples(robot, 2**62) or 8  # the stage dynid.regressor would take
        for count in (int(c) for c in args.samples.split(",")):
            q, dq, ddq = np.random.default_rng(0).uniform(-2.0, 2.0, (3, count, n))
            y = np.zeros((count, n, 10 * n))
            ws = lanes.new_workspace(n, slots, constants, gravity, 10 * lanes.slots_used(slots))
            runs = regressor.block_runs(slots)
            stage = np.zeros(stage_samples * 10 * n * n + 8)
            calls = (lambda: forward(q, dq, ddq, constants, parents, slots, ws),
                     lambda: forward_and_blocks(q, dq, ddq, constants, parents, slots, ws),
                     lambda: regressor.regressor_range(q, dq, ddq, constants, parents, slots, runs, ws, y, 0, count,
                                                      np.zeros(0)),
                     lambda: regressor.regressor_range(q, dq, ddq, constants, parents, slots, runs, ws, y, 0, count,
                                                      stage))
            for call in calls:
                call()  # compile or load
            t = [cpu_per_sample(call, count) for call in calls]
            written = 8 * int(np.count_nonzero(np.any(y != 0.0, axis=0)))
            bound = written / bandwidth * 1e6
            print(f"{label.split(' (')[0]:34} {count:8d} {y.nbytes / 1e6:6.1f} {t[0]:8.3f} {t[1]:9.3f} {t[2]:12.3f} "
                  f"{t[3]:9.3f} {bound:7.3f} {t[3] / bound:5.1f}x {machine.load().split()[0]:>6}")


if __name__ == "__main__":
    main()
