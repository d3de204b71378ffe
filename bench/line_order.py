"""The floor of the explicit kernel's line stores: only the non-temporal stores of the lines it writes,
at the same addresses, in different orders, against contiguous stores of the same bytes (issue 27).

    .venv/bin/python bench/line_order.py [--robot solo12] [--samples 20000] [--processes 4]
                                         [--placements 4] [--calls 5] [--rounds 2] [--work W:S:L,...]

dynid's explicit kernel (dynamics/explicit.py) writes, for each line of its line map
(``regressor._explicit_line_map``: the whole cache lines of a sample that hold a non-zero number, in
address order), that line of eight consecutive samples (8 x 8 transpose, eight non-temporal stores a
sample's stride apart), spread through the next block's arithmetic: four groups of eight samples per
block of 32. Here nothing is computed: each line is one non-temporal store (``tiles.stream8``) of 64
bytes from a small buffer that stays in L1, to the address the kernel stores it to, in an order taken
from a table of one block (32 samples); blocks follow each other in address order, as in the kernel.
The orders:

- ``kernel``: the kernel's order: groups of 8 samples; in each, line by line, the line of the 8 samples;
- ``sample``: address order: sample by sample, its lines in address order;
- ``line32``: line by line, the line of all 32 samples of the block;
- ``row8``: groups of 8 samples; in each, Y's row by row (a row of Y, 10 n numbers, holds about
  a twelfth of a sample for n = 12), the row's lines of the 8 samples sample by sample;
- ``pair``: address order, but two samples at a time, alternating lines between them (two streams);
- ``random``: a random permutation of the block's lines (seeded);
- ``contiguous``: as many lines per sample, but one after the other in a buffer of their size (the
  bytes of ``sample`` without the gaps);
- ``all lines``: every line of Y, zeros included, in address order (Y's whole footprint: dense
  non-temporal store bandwidth, the time per sample of the 80 n^2 bytes).

Each in ``--processes`` fresh processes one after the other, ``--placements`` placements of Y each
(a new offset mod 4096, a multiple of 64 bytes, Y 16 bytes into a line as NumPy puts it), the orders
taking turns in ``--rounds`` rounds (their order rotated per placement and reversed every other
round), CPU time of one thread, the best of ``--calls`` calls; printed per sample and as GB/s of the
bytes stored, beside ordinary stores filling 256 MB (``machine.store_bandwidths``: the bandwidth of
bench/dynamics.py's write bound) measured in the same process. Then the mean, median and spread
over all placements, and the lines' time over their bytes at that bandwidth.

``--work W:S[:L],...`` instead: what overlaps the pending line stores. The kernel's order, with after
each line slot W rounds of eight independent multiply-adds in registers and S ordinary stores into 4 KB
of L1, and with L = 1 the explicit kernel's former lane load (``load_lanes``, before b165e72) at each
block's start (2: one joint at a time spread over the slots; 3: from the first block's q, in L1; 4 and 5: its copy of q, dq, ddq alone,
its sines and cosines alone; 6: one lane row per slot); the lines alone, the work alone and both,
taking turns, in ``--processes`` processes (``worker``). docs/performance.md has the figures.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import os
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import machine  # noqa: E402  (bench/machine.py)

BLOCK = 32  # samples per block (lanes.LANES)

ORDERS = ("kernel", "sample", "line32", "row8", "pair", "random", "contiguous", "all lines")


def line_positions(robot_name: str, head: int) -> tuple:
    """(robot label, n, positions in a sample of the lines the explicit kernel writes, for a Y whose
    samples start ``head`` numbers before a cache line)."""
    import dynamics as bench_dynamics  # bench/dynamics.py: the same robots

    from dynid.dynamics import folded

    regressor = importlib.import_module("dynid.dynamics.regressor")
    robot, label = bench_dynamics.find_robot(robot_name)
    if (10 * robot.n ** 2) % 8:
        raise SystemExit(f"error: {label}: odd n = {robot.n}; the explicit kernel takes an even n")
    lmap = regressor._explicit_line_map(robot, head, folded.kernel_for(robot).ALIAS)
    return label, robot.n, lmap[:, 8].copy()


def block_table(order: str, x: np.ndarray, n: int, seed: int) -> np.ndarray:
    """Offsets (numbers, from the block's first sample's start) of the lines of one block in ``order``."""
    stride, width = 10 * n * n, 10 * n
    lines = [(s, int(v)) for s in range(BLOCK) for v in x]  # address order
    if order == "kernel":
        lines = [(8 * g + t, int(v)) for g in range(BLOCK // 8) for v in x for t in range(8)]
    elif order == "line32":
        lines = [(s, int(v)) for v in x for s in range(BLOCK)]
    elif order == "row8":
        rows = (np.minimum(x, stride - 1) // width)
        lines = [(8 * g + t, int(v)) for g in range(BLOCK // 8) for i in range(n) for t in range(8)
                 for v in x[rows == i]]
    elif order == "pair":
        lines = [(s + u, int(v)) for s in range(0, BLOCK, 2) for v in x for u in range(2)]
    elif order == "random":
        lines = [lines[i] for i in np.random.default_rng(seed).permutation(len(lines))]
    elif order == "contiguous":
        lines = [(0, 8 * e) for e in range(BLOCK * x.size)]
        return np.array([v for _, v in lines], dtype=np.int64)
    elif order == "all lines":
        return 8 * np.arange(BLOCK * stride // 8, dtype=np.int64) + int(x[0]) % 8
    elif order != "sample":
        raise ValueError(order)
    assert len(lines) == BLOCK * x.size and len(set(lines)) == len(lines)
    return np.array([s * stride + v for s, v in lines], dtype=np.int64)


def kernel():
    """Compiled: every block's lines of ``table`` (offsets from the block's start, numbers) stored
    past the caches from ``src`` (64 numbers on whole lines), blocks ``step`` numbers apart."""
    import numba as nb

    from dynid.dynamics.tiles import store_fence, stream8

    @nb.njit(nogil=True)
    def store(src, flat, base, table, blocks, step):
        for b in range(blocks):
            d = base + b * step
            for e in range(table.size):
                stream8(src, (e & 7) * 8, flat, d + table[e])
        store_fence()

    return store


@functools.cache
def worker(lines: int, work: int, stores: int, lanes: int):
    """Compiled for these constants (no branch on them at run time): ``kernel``'s stores (when
    ``lines``) in a table's order, and after every eight of them (one line slot of the explicit kernel:
    a line of eight samples) ``work`` rounds of eight independent multiply-adds in registers and
    ``stores`` ordinary 8-byte stores into ``scratch`` (4 KB, in L1): the arithmetic between the
    kernel's line slots, with and without stores of its own; with ``lanes`` 1, at each block's start the
    explicit kernel's former ``load_lanes`` of the block (q, dq, ddq into a workspace's lane rows, sine and
    cosine), as the kernel does before the block's program; with ``lanes`` 2 the same work one joint at
    a time, the joints spread evenly over the block's line slots (``joint_lanes``); ``lanes`` 3 as 1 but
    the first block's q, dq, ddq every time (read from L1, not from memory); 4 and 5 its parts: the copy
    of q, dq, ddq alone, the sines and cosines alone; 6 as 2 but finer: one row of the block's lanes
    (q, dq or ddq of a joint, or its sines and cosines) after each line slot, from the block's start."""
    import numba as nb

    from dynid.dynamics.tiles import store_fence, stream8

    joint_lanes, joint_parts, joint_row, load_lanes = _joint_lanes()

    @nb.njit(nogil=True)
    def run(src, flat, base, table, blocks, step, scratch, q, dq, ddq, buf):
        a0, a1, a2, a3, a4, a5, a6, a7 = src[0], src[1], src[2], src[3], src[4], src[5], src[6], src[7]
        m, c = src[9] * 0.1, src[10] * 0.01
        n = q.shape[1]
        for b in range(blocks):
            d = base + b * step
            if lanes == 1:
                load_lanes(q, dq, ddq, b * BLOCK, buf)
            if lanes == 3:  # the first block's q, dq, ddq each time: read from L1, not from memory
                load_lanes(q, dq, ddq, 0, buf)
            if lanes == 4 or lanes == 5:  # its parts: 4 the copy of q, dq, ddq, 5 the sines and cosines
                for i in range(n):
                    joint_parts(q, dq, ddq, b * BLOCK, i, buf, lanes == 4, lanes == 5)
            joint = 0
            for e in range(table.size):
                if lines:
                    stream8(src, (e & 7) * 8, flat, d + table[e])
                if e & 7 == 7:
                    for _ in range(work):
                        a0, a1, a2, a3 = a0 * m + c, a1 * m + c, a2 * m + c, a3 * m + c
                        a4, a5, a6, a7 = a4 * m + c, a5 * m + c, a6 * m + c, a7 * m + c
                    for w in range(stores):
                        scratch[(e * stores + w) & 511] = a0 + w
                    if lanes == 2:
                        while joint < n and joint * table.size <= n * e:
                            joint_lanes(q, dq, ddq, b * BLOCK, joint, buf)
                            joint += 1
                    if lanes == 6:  # one row of 32 lanes per slot: q, dq, ddq, then sine and cosine
                        if joint < 4 * n:
                            joint_row(q, dq, ddq, b * BLOCK, joint % n, joint // n, buf)
                            joint += 1
            if lanes == 2:
                while joint < n:
                    joint_lanes(q, dq, ddq, b * BLOCK, joint, buf)
                    joint += 1
            while lanes == 6 and joint < 4 * n:
                joint_row(q, dq, ddq, b * BLOCK, joint % n, joint // n, buf)
                joint += 1
        store_fence()
        return a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7

    return run


def _joint_lanes():
    """Compiled: (``joint_lanes``: ``load_lanes`` of one joint ``i``, a whole block; ``joint_parts``:
    its copy of q, dq, ddq and its sines and cosines, each when asked; ``joint_row``: one of those four)."""
    import math

    import numba as nb

    from dynid.dynamics.lanes import JR, LANES, R_C, R_Q, R_QD, R_QDD, R_S
    from dynid.dynamics.sincos import SINCOS_LIMIT, sincos

    @nb.njit(inline="always")
    def joint_parts(q, dq, ddq, k0, i, buf, copy, trig):
        o = nb.uint64(i * JR * LANES)
        if copy:
            for k in range(nb.uint64(LANES)):
                buf[o + nb.uint64(R_Q * LANES) + k] = q[k0 + k, i]
                buf[o + nb.uint64(R_QD * LANES) + k] = dq[k0 + k, i]
                buf[o + nb.uint64(R_QDD * LANES) + k] = ddq[k0 + k, i]
        if trig:
            large = 0
            for k in range(nb.uint64(LANES)):
                x = buf[o + nb.uint64(R_Q * LANES) + k]
                s, c = sincos(x)
                buf[o + nb.uint64(R_C * LANES) + k] = c
                buf[o + nb.uint64(R_S * LANES) + k] = s
                large += not (abs(x) < SINCOS_LIMIT)
            if large:
                for k in range(nb.uint64(LANES)):
                    x = buf[o + nb.uint64(R_Q * LANES) + k]
                    if not (abs(x) < SINCOS_LIMIT):
                        buf[o + nb.uint64(R_C * LANES) + k] = math.cos(x)
                        buf[o + nb.uint64(R_S * LANES) + k] = math.sin(x)

    @nb.njit(inline="always")
    def joint_lanes(q, dq, ddq, k0, i, buf):
        joint_parts(q, dq, ddq, k0, i, buf, True, True)

    @nb.njit(inline="always", fastmath={"contract"})
    def load_lanes(q, dq, ddq, k0, buf):
        """The lane load the explicit kernel did before its program read its lanes itself (b165e72): every
        joint's q, dq, ddq copied into its lane rows, then every joint's sines and cosines."""
        n = q.shape[1]
        for i in range(n):
            joint_parts(q, dq, ddq, k0, i, buf, True, False)
        for i in range(n):
            joint_parts(q, dq, ddq, k0, i, buf, False, True)

    @nb.njit(inline="always")
    def joint_row(q, dq, ddq, k0, i, part, buf):
        o = nb.uint64(i * JR * LANES)
        if part == 0:
            for k in range(nb.uint64(LANES)):
                buf[o + nb.uint64(R_Q * LANES) + k] = q[k0 + k, i]
        elif part == 1:
            for k in range(nb.uint64(LANES)):
                buf[o + nb.uint64(R_QD * LANES) + k] = dq[k0 + k, i]
        elif part == 2:
            for k in range(nb.uint64(LANES)):
                buf[o + nb.uint64(R_QDD * LANES) + k] = ddq[k0 + k, i]
        else:
            joint_parts(q, dq, ddq, k0, i, buf, False, True)

    return joint_lanes, joint_parts, joint_row, load_lanes


def measure_work(args) -> None:
    """One process: for each (work, stores) of ``--work``, the kernel's lines alone, the work alone and
    both interleaved, taking turns; JSON lines out."""
    label, n, x = line_positions(args.robot, 6)
    stride, blocks = 10 * n * n, args.samples // BLOCK
    buffer = np.zeros(blocks * BLOCK * stride + 1024)
    at = (-(buffer.ctypes.data // 8)) % 8 + 2  # 16 bytes into a line: head 6, as NumPy puts Y
    src_raw = np.arange(1, 81, dtype=np.float64)
    src = src_raw[(-(src_raw.ctypes.data // 8)) % 8:][:64]
    scratch = np.zeros(512)
    table = block_table("kernel", x, n, 0)
    samples = blocks * BLOCK
    q, dq, ddq = np.random.default_rng(0).uniform(-2.0, 2.0, (3, samples, n))
    from dynid.dynamics.lanes import JR

    raw = np.zeros(JR * n * BLOCK + 8)
    buf = raw[(-(raw.ctypes.data // 8)) % 8:][:JR * n * BLOCK]  # the lane rows of a workspace, on a line
    for spec in args.work.split(","):
        work, stores, lanes = (int(v) for v in (spec + ":0").split(":")[:3])
        calls = {"lines": worker(1, 0, 0, 0), "work": worker(0, work, stores, lanes),
                 "both": worker(1, work, stores, lanes)}
        times = dict.fromkeys(calls, np.inf)
        for run in calls.values():
            run(src, buffer, at, table, blocks, BLOCK * stride, scratch, q, dq, ddq, buf)
        for turn in range(args.rounds):
            for what in list(calls)[::-1] if turn % 2 else calls:
                for _ in range(args.calls):
                    t0 = time.thread_time()
                    calls[what](src, buffer, at, table, blocks, BLOCK * stride, scratch, q, dq, ddq, buf)
                    times[what] = min(times[what], time.thread_time() - t0)
        print(json.dumps({"work": work, "stores": stores, "lanes": lanes, "label": label,
                          "us": {k: v / samples * 1e6 for k, v in times.items()}, "load": machine.load().split()[0],
                          "time": time.strftime("%H:%M:%S", time.gmtime())}), flush=True)


def report_work(args) -> None:
    print(f"CPU: {machine.cpu_model()}\n{time.strftime('%H:%M', time.gmtime())} UTC, load {machine.load()}; "
          f"{args.robot}, {args.samples} samples, the kernel's line order, Y 16 bytes into a line; after each line "
          "slot (8 lines) W rounds of 8 independent multiply-adds and S ordinary stores to L1, L: the block's "
          "lanes loaded at its start (the kernel's former load_lanes); CPU us per sample, "
          f"best of {args.calls} calls x {args.rounds} rounds, {args.processes} processes")
    print(f"  {'W':>4} {'S':>4} {'L':>2} {'lines':>7} {'work':>7} {'both':>7} {'sum':>7} {'hidden':>7}  (hidden: the share of "
          "the shorter one that the interleaving hid)")
    for process in range(args.processes):
        command = [sys.executable, __file__, "--measure-work"] + [
            f"--{k}={v}" for k, v in vars(args).items() if k in ("robot", "samples", "calls", "rounds", "work")]
        result = subprocess.run(command, capture_output=True, text=True, env=os.environ)
        if result.returncode:
            raise SystemExit(f"error: process {process} failed:\n{result.stderr}")
        records = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
        print(f"process {process} ({records[0]['time']}-{records[-1]['time']} UTC, load {records[0]['load']}-"
              f"{records[-1]['load']})")
        for r in records:
            u = r["us"]
            hidden = (u["lines"] + u["work"] - u["both"]) / max(min(u["lines"], u["work"]), 1e-12)
            print(f"  {r['work']:4d} {r['stores']:4d} {r['lanes']:2d} {u['lines']:7.3f} {u['work']:7.3f} {u['both']:7.3f} "
                  f"{u['lines'] + u['work']:7.3f} {hidden:7.0%}")


def measure(args) -> None:
    """One process: its placements, each order timed in turns; JSON lines out."""
    rng = np.random.default_rng(args.seed)
    src_raw = np.arange(80, dtype=np.float64)
    src = src_raw[(-(src_raw.ctypes.data // 8)) % 8:][:64]
    store = kernel()
    ordinary = machine.store_bandwidths(1)  # (wall, CPU) bytes/s of ordinary stores filling 256 MB
    label, n, _ = line_positions(args.robot, 6)
    stride, blocks = 10 * n * n, args.samples // BLOCK
    buffer = np.zeros(blocks * BLOCK * stride + 1024)  # Y, placed anew in it for each placement
    compact = np.zeros(blocks * BLOCK * stride + 1024)  # the contiguous lines (fewer than Y's)
    for p in range(args.placements):
        shift = 8 * int(rng.integers(64))  # numbers: a multiple of a line, mod 4096 bytes
        at = (-(buffer.ctypes.data // 8)) % 8 + 2 + shift  # Y 16 bytes into a line, as NumPy puts it
        head = (8 - (buffer.ctypes.data // 8 + at) % 8) % 8
        label, n, x = line_positions(args.robot, head)
        c_at = (-(compact.ctypes.data // 8)) % 8 + shift
        tables = {o: block_table(o, x, n, args.seed) for o in ORDERS}
        bytes_of = {o: 64 * tables[o].size for o in ORDERS}

        def run(o):
            t = tables[o]
            if o == "contiguous":
                store(src, compact, c_at, t, blocks, 8 * t.size)
            else:
                store(src, buffer, at, t, blocks, BLOCK * stride)

        for o in ORDERS:
            run(o)  # compile, touch
        times = dict.fromkeys(ORDERS, np.inf)
        names = list(ORDERS)
        for turn in range(args.rounds):
            order = names[p % len(names):] + names[:p % len(names)]
            for o in order[::-1] if turn % 2 else order:
                best = np.inf
                for _ in range(args.calls):
                    t0 = time.thread_time()
                    run(o)
                    best = min(best, time.thread_time() - t0)
                times[o] = min(times[o], best)
        samples = blocks * BLOCK
        print(json.dumps({"placement": p, "label": label, "lines": int(x.size), "y at": (buffer.ctypes.data + 8 * at) % 4096,
                          "us": {o: times[o] / samples * 1e6 for o in ORDERS},
                          "GB/s": {o: bytes_of[o] * blocks / times[o] / 1e9 for o in ORDERS},
                          "ordinary GB/s": ordinary[1] / 1e9, "load": machine.load().split()[0],
                          "time": time.strftime("%H:%M:%S", time.gmtime())}), flush=True)


def report(args) -> None:
    print(f"CPU: {machine.cpu_model()}\nSIMD flags: {machine.simd_flags()}\n{time.strftime('%H:%M', time.gmtime())} "
          f"UTC, load {machine.load()}; {args.robot}, {args.samples} samples, {args.processes} processes x "
          f"{args.placements} placements, {args.rounds} rounds of the best of {args.calls} calls; CPU us per sample "
          "(GB/s of the bytes stored)")
    us, rate, ordinary = defaultdict(list), defaultdict(list), []
    for process in range(args.processes):
        command = [sys.executable, __file__, "--measure", "--seed", str(args.seed + process)] + [
            f"--{k}={v}" for k, v in vars(args).items() if k in ("robot", "samples", "placements", "calls", "rounds")]
        started = time.time()
        result = subprocess.run(command, capture_output=True, text=True, env=os.environ)
        if result.returncode:
            raise SystemExit(f"error: process {process} failed:\n{result.stderr}")
        records = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
        if process == 0:
            print(f"{records[0]['label']}: {records[0]['lines']} lines per sample written by the kernel")
            print("  " + " ".join(f"{o:>15}" for o in ORDERS) + "  ordinary   Y mod 4096")
        print(f"process {process} ({time.time() - started:.0f} s, {records[0]['time']}-{records[-1]['time']} UTC, "
              f"load {records[0]['load']}-{records[-1]['load']})")
        for r in records:
            ordinary.append(r["ordinary GB/s"])
            for o in ORDERS:
                us[o].append(r["us"][o])
                rate[o].append(r["GB/s"][o])
            print("  " + " ".join(f"{r['us'][o]:6.3f} ({r['GB/s'][o]:5.1f})" for o in ORDERS)
                  + f"  {r['ordinary GB/s']:5.1f}   {r['y at']}")
    bandwidth = statistics.median(ordinary)
    print(f"over {len(us['kernel'])} placements (load now {machine.load()}): mean, median, best, worst us per "
          f"sample; median GB/s; time over the lines' bytes at the ordinary-store bandwidth {bandwidth:.1f} GB/s "
          "(median of the processes')")
    for o in ORDERS:
        v = us[o]
        stored = statistics.median(rate[o]) * 1e9 * statistics.median(v) * 1e-6  # bytes per sample
        print(f"  {o:>12}: {statistics.mean(v):.3f} {statistics.median(v):.3f} {min(v):.3f} {max(v):.3f}  "
              f"{statistics.median(rate[o]):5.1f} GB/s  {statistics.median(v) / (stored / (bandwidth * 1e9) * 1e6):.2f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--robot", default="solo12")
    ap.add_argument("--samples", type=int, default=20000)
    ap.add_argument("--processes", type=int, default=4)
    ap.add_argument("--placements", type=int, default=4)
    ap.add_argument("--calls", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--work", default="",
                    help="instead of the orders: 'W:S[:L],...', the kernel's lines interleaved with W rounds of 8 "
                         "multiply-adds and S ordinary stores to L1 after each line slot (L 1: and the block's lanes "
                         "loaded at its start), against each alone")
    ap.add_argument("--measure", action="store_true", help="(internal) one process's measurements as JSON")
    ap.add_argument("--measure-work", action="store_true", help="(internal) as --measure, for --work")
    args = ap.parse_args()
    if args.measure_work:
        measure_work(args)
    elif args.work:
        report_work(args)
    else:
        (measure if args.measure else report)(args)


if __name__ == "__main__":
    main()
