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
with Y streamed past the caches (``regressor_streamed``: whole samples staged in L1, the lines
that hold a non-zero block written by non-temporal stores; what dynid.regressor does for a Y
larger than the last-level cache), the same two with the robot's constant placements folded in
(``dynamics/folded.py``: its forward pass and blocks; its whole kernel streamed, what
dynid.regressor runs for a batch of 4096 samples or more: for an even n without the stage, each line
transposed from the lanes in registers, ``regressor.write_lines``), the write bound (Y's non-zero bytes over
the CPU-time bandwidth of ordinary stores filling 256 MB, measured in the same run) and the
streamed kernel over it. CPU time, so that a busy machine's preemptions do not count; the load
average is printed beside every figure.

Then the floors (why the streamed kernel is where it is against its write bound): the
arithmetic of one sample counted from the kernels' source (floating-point operations, a fused
multiply-add counted once; ``arithmetic_per_sample``) over this core's peak rate (``--fma-per-cycle``
doubles per cycle: 8 on Zen 4, whose two FMA pipes are 256 bits wide and split an AVX-512
instruction in two, and on AVX2 CPUs with two FMA pipes; 16 on Intel CPUs with two AVX-512 FMA
units) at the clock measured by a chain of dependent multiply-adds (4 cycles each on Zen 4 and
on Intel since Skylake); and the memory floor, the whole cache lines that hold a non-zero block
(what the streamed kernel writes, 64 bytes each) over the store bandwidth. The bandwidth of
non-temporal whole-line stores is printed beside the ordinary stores' (the bound takes the
ordinary one; on this machine they agree).

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


def folded_pass(kernel):
    """Compiled loop over all samples of the generated kernel's forward pass and blocks
    (dynamics/folded.py: the robot's constant placements folded in)."""
    import numba

    lanes = importlib.import_module("dynid.dynamics.lanes")
    load_block, LANES, blocks = lanes.load_block, lanes.LANES, kernel.forward_and_blocks

    @numba.njit(nogil=True)
    def forward_and_blocks(q, dq, ddq, constants, gravity, ws):
        for k0 in range(0, q.shape[0], LANES):
            load_block(q, dq, ddq, k0, min(LANES, q.shape[0] - k0), ws)
            blocks(ws, constants, gravity)

    return forward_and_blocks


def arithmetic_per_sample(robot) -> int:
    """Floating-point operations of one sample of the streamed kernel, counted from the source of
    dynamics/lanes.py, sincos.py and regressor.py (a multiply-add counts once; the transposes and
    copies, which are loads, shuffles and stores, are not counted):
    - sin and cos of each joint angle (``sincos``): 35;
    - each joint's motion (``lanes._joint_motion``): 105 for a revolute joint about an axis through
      its origin (rel 18, t 6, two cross products with the parent's t 18, w 15, v 9, v x S qd and
      w x S qd 12, dv 12, dw 15), 36 more in the general loop (prismatic joints, offset axes);
    - each link's classical acceleration and ``block_formulas.link_terms`` (9 + 18) and its own block (36);
    - each (ancestor, link) pair: the axis carried down one motion transform (27) and its block
      (``block_formulas.link_block``: 36)."""
    from dynid.dynamics.lanes import kernel_arrays

    constants, parents, slots, _ = kernel_arrays(robot)
    n = robot.n
    general = int(np.sum(np.any(constants[:, 36:39] != 0.0, axis=1) | np.any(constants[:, 42:45] != 0.0, axis=1)))
    pairs = int(np.sum(slots >= 0)) - n
    return n * (35 + 105 + 27 + 36) + 36 * general + 63 * pairs


def clock_hz() -> float:
    """The core's clock now: a chain of dependent fused multiply-adds (4 cycles each on Zen 4 and on
    Intel since Skylake), by the calling thread's CPU time."""
    import numba

    @numba.njit(fastmath={"contract"})
    def chain(count, x):
        for _ in range(count):
            x = x * 1.0000001 + 1e-9
        return x

    chain(10, 1.0)
    count, best = 50_000_000, float("inf")
    for _ in range(3):
        t0 = time.thread_time()
        chain(count, 1.0)
        best = min(best, time.thread_time() - t0)
    return 4 * count / best


def nontemporal_bandwidth(megabytes: int = 256, repeat: int = 5) -> float:
    """Bytes per CPU second of this thread's non-temporal whole-line stores filling a large array
    (``tiles.stream8``, what the streamed kernel writes Y with)."""
    import numba

    tiles = importlib.import_module("dynid.dynamics.tiles")
    stream8, store_fence = tiles.stream8, tiles.store_fence

    @numba.njit
    def fill(a, line):
        for k in range(a.size // 8):
            stream8(line, 0, a, 8 * k)
        store_fence()

    buffer = np.zeros(megabytes * 2**20 // 8 + 16)
    a = buffer[(-(buffer.ctypes.data // 8)) % 8:][:megabytes * 2**20 // 8]
    line = np.ones(16)
    line = line[(-(line.ctypes.data // 8)) % 8:][:8]
    fill(a, line)
    best = float("inf")
    for _ in range(repeat):
        t0 = time.thread_time()
        fill(a, line)
        best = min(best, time.thread_time() - t0)
    return a.nbytes / best


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
    ap.add_argument("--fma-per-cycle", type=int, default=8,
                    help="peak doubles per cycle of fused multiply-adds (8: Zen 4, AVX2 with two FMA pipes)")
    args = ap.parse_args()
    machine.select_target(args.target)  # before Numba is imported
    with machine.store_neighbour(args.contend):
        run(args)


def run(args) -> None:
    import dynamics as bench_dynamics  # bench/dynamics.py: the same robots

    lanes = importlib.import_module("dynid.dynamics.lanes")
    regressor = importlib.import_module("dynid.dynamics.regressor")
    folded = importlib.import_module("dynid.dynamics.folded")
    forward, forward_and_blocks = compiled_passes()
    print(f"CPU: {machine.cpu_model()}\nSIMD flags: {machine.simd_flags()}\ncompiled for: {machine.compiled_for()}")
    if args.contend:
        print("a neighbour process streams stores into 512 MB all along (--contend)")
    bandwidth = machine.store_bandwidths(1)[1]
    print(f"store bandwidth of one thread (ordinary stores filling 256 MB, CPU time): {bandwidth / 1e9:.1f} GB/s; "
          f"load {machine.load()}")
    print(f"non-temporal whole-line stores filling 256 MB, one thread, CPU time: {nontemporal_bandwidth() / 1e9:.1f} GB/s")
    hz = clock_hz()
    print(f"clock (dependent multiply-adds, 4 cycles each): {hz / 1e9:.2f} GHz; peak {args.fma_per_cycle} doubles "
          f"per cycle: {args.fma_per_cycle * hz / 1e9:.1f} G operations/s")
    floors = []
    print("CPU us per sample of one thread: the forward pass, with the blocks, with the transpose (Y stored in "
          "place); the whole kernel with Y streamed; the same with the robot's constants folded in (dynamics/folded.py: "
          "its forward pass and blocks, the whole kernel streamed); for an even n the explicit kernel (dynamics/explicit.py: "
          "the folded statements as straight-line vector code, the lines stored inside the next block's program; what "
          "dynid.regressor runs for a streamed Y of an even n); the write bound; streamed / bound, generic, folded and "
          "explicit")
    print(f"{'robot':34} {'samples':>8} {'Y MB':>6} {'forward':>8} {'+ blocks':>9} {'+ transpose':>12} "
          f"{'streamed':>9} {'folded: f+b':>11} {'streamed':>9} {'explicit':>9} {'bound':>7} {'ratio':>6} {'folded':>6} "
          f"{'explicit':>8} {'load':>6}")
    for name in args.robots.split(","):
        robot, label = bench_dynamics.find_robot(name)
        n = robot.n
        constants, parents, slots, gravity = lanes.kernel_arrays(robot)
        stage_samples = regressor.stream_stage_samples(robot, 2**62) or 8  # the stage dynid.regressor would take
        kernel = folded.kernel_for(robot)
        folded_blocks = folded_pass(kernel) if kernel else None
        explicit = regressor.explicit_kernel(robot)
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
            if kernel:
                calls += (lambda: folded_blocks(q, dq, ddq, constants, gravity, ws),
                          lambda: kernel.regressor_serial(q, dq, ddq, constants, parents, slots, gravity, y,
                                                          stage_samples, False))  # what dynid.regressor runs
            if explicit:  # what dynid.regressor runs for an even n
                plan = regressor.explicit_plan(robot, explicit, y)
                calls += (lambda: explicit.regressor_serial(q, dq, ddq, constants, slots, gravity, y, *plan),)
            for call in calls:
                call()  # compile or load
            t = [cpu_per_sample(call, count) for call in calls] + [float("nan")] * (7 - len(calls))
            written = 8 * int(np.count_nonzero(np.any(y != 0.0, axis=0)))
            bound = written / bandwidth * 1e6
            print(f"{label.split(' (')[0]:34} {count:8d} {y.nbytes / 1e6:6.1f} {t[0]:8.3f} {t[1]:9.3f} {t[2]:12.3f} "
                  f"{t[3]:9.3f} {t[4]:11.3f} {t[5]:9.3f} {t[6]:9.3f} {bound:7.3f} {t[3] / bound:5.1f}x "
                  f"{t[5] / bound:5.1f}x {t[6] / bound:7.1f}x {machine.load().split()[0]:>6}")
        operations = arithmetic_per_sample(robot)
        arithmetic = operations / (args.fma_per_cycle * hz) * 1e6
        lines = 64 * regressor.touched_lines(slots) / bandwidth * 1e6
        floors.append((label.split(" (")[0], operations, arithmetic, lines, bound, t[3]))
        if kernel:
            folded_operations = folded.source(robot)[1] + 35 * n  # sin and cos of each joint are not folded
            arithmetic = folded_operations / (args.fma_per_cycle * hz) * 1e6
            floors.append((label.split(" (")[0] + ", folded", folded_operations, arithmetic, lines, bound, t[5]))
    print("\nFloors, us per sample of one thread: the arithmetic at the peak rate; the lines that hold a non-zero, "
          "written once; the best a kernel could do if its stores were wholly hidden behind its arithmetic (the larger "
          "of the two) against the write bound; the streamed kernel (last batch) as a share of the arithmetic peak; "
          "', folded': the kernel with the robot's constants folded in, its operations counted on the source it runs "
          "(dynamics/folded.py)")
    print(f"{'robot':34} {'operations':>10} {'arithmetic':>10} {'lines':>7} {'floor/bound':>11} {'2x bound':>8} "
          f"{'streamed':>9} {'of peak':>7}")
    for name, operations, arithmetic, lines, bound, streamed in floors:
        print(f"{name:34} {operations:10d} {arithmetic:10.3f} {lines:7.3f} {max(arithmetic, lines) / bound:10.2f}x "
              f"{2 * bound:8.3f} {streamed:9.3f} {arithmetic / streamed:6.0%}")


if __name__ == "__main__":
    main()
