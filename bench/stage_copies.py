"""Can a block's line stores hide behind the next block's arithmetic? Approach (c') of issue 27, tried.

    .venv/bin/python bench/stage_copies.py [--robots er3a,solo12] [--samples 20000] [--turns 4] [--asm]

The streamed kernel (dynamics/folded.py, ``regressor.write_lines``) takes the sum of its arithmetic
and its non-temporal line stores (docs/performance.md). This tries to overlap them: after a block's
lane loops, its lines are transposed by ordinary stores into a stage that is an exact image of
Y[k0 : k0 + 32] (the same place in a cache line as Y, so it stays in L2); during the next block's
joint loops that image is copied to Y by non-temporal stores issued inside the lane loops' bodies:
a statement ``y[d + C + k] = stage[s + C + k]`` per four lines (the 32 lanes k of a loop are 4 whole
lines), the statements spread over the joint loops in proportion to their statements, so that each
vector iteration stores a few lines between its arithmetic. The copy is a scalar load and a scalar
store carrying LLVM's ``!nontemporal`` that the loop vectorizer widens to 64-byte ``vmovntpd``:
LoopVectorize vectorizes a non-temporal store only when the target takes a vector of it at the
scalar's alignment (x86: aligned only), so the store claims 64 bytes (true of every vector
iteration, as 32 lanes are whole vectors) and its base goes through ``llvm.ptrmask``; with more
than 100 pointers in a loop LLVM stops merging its run-time overlap checks, so the
``-memory-check-merge-threshold`` option is raised (else "too many memory checks": no vectors).
``--asm`` prints how many non-temporal 64-byte stores the copying kernel holds (compiled without
the cache).

A chunk of four lines starts at the first line of the block's image that holds a non-zero and
is not covered yet (so the lines copied are 1.2-1.4x those that hold a non-zero). Y is 64-byte
aligned here (the kernel's image and lines need no head or tail). Each variant runs in its own
process, the variants taking turns in the same minutes: ``current`` (the folded kernel as
dynid.regressor runs it), ``stage`` (the arithmetic and the transposes into the stage, no copy:
the floor of (c')), ``burst`` (the stage, then its lines copied after the block, by
``tiles.stream8``), ``spread`` ((c')). Best CPU microseconds per sample of the calling thread over
``--repeat`` calls, Y (N, n, 10 n) in memory, random states with seed 0; the load average beside
each; and whether Y equals the current kernel's (largest difference).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

VARIANTS = ("current", "stage", "burst", "spread")
SOURCE_DIR = Path(tempfile.gettempdir()) / "dynid-stage-copies"


def intrinsics():
    """(ntcopy, lines8_cached): the widened non-temporal copy and ``tiles.lines8`` with ordinary stores."""
    import llvmlite.binding as llvm
    from llvmlite import ir
    from numba import types
    from numba.extending import intrinsic

    from dynid.dynamics.tiles import _lines8_codegen

    llvm.set_option("", "-memory-check-merge-threshold=100000")
    i64 = ir.IntType(64)

    def line_base(builder, data, index):
        pointer = builder.gep(data, [index])
        mask = builder.module.globals.get("llvm.ptrmask.p0.i64") or ir.Function(
            builder.module, ir.FunctionType(pointer.type, [pointer.type, i64]), "llvm.ptrmask.p0.i64")
        return builder.call(mask, [pointer, ir.Constant(i64, -64)])

    @intrinsic
    def ntcopy(typingctx, src, s, dst, d, offset, k):
        """dst[d + offset + k] = src[s + offset + k] by a non-temporal store (src + s, dst + d
        64-byte aligned, offset a multiple of 8)."""

        def codegen(context, builder, sig, args):
            source = line_base(builder, context.make_array(sig.args[0])(context, builder, args[0]).data, args[1])
            target = line_base(builder, context.make_array(sig.args[2])(context, builder, args[2]).data, args[3])
            index = builder.add(args[4], args[5])
            x = builder.load(builder.gep(source, [index]), align=8)
            store = builder.store(x, builder.gep(target, [index]), align=64)
            store.set_metadata("nontemporal", builder.module.add_metadata([ir.Constant(ir.IntType(32), 1)]))
            return context.get_dummy_value()

        return types.void(src, s, dst, d, offset, k), codegen

    @intrinsic
    def lines8_cached(typingctx, ws, o0, o1, o2, o3, o4, o5, o6, o7, y, d, stride):
        return types.void(ws, o0, o1, o2, o3, o4, o5, o6, o7, y, d, stride), _lines8_codegen(False, False)

    return ntcopy, lines8_cached


def chunks_of(lmap, stride, lanes):
    """First lines (from the block's first) of the four-line chunks that cover every line of a
    block's image holding a non-zero."""
    hot = sorted(int(x) // 8 for x in lmap[:, 8])
    total = lanes * stride // 8
    chunks, covered = [], -1
    for line in sorted({t * stride // 8 + h for t in range(lanes) for h in hot}):
        if line > covered:
            chunks.append(min(line, total - 4))
            covered = chunks[-1] + 3
    return chunks, lanes * len(hot)


def copying_source(text: str, n: int, chunks: list) -> str:
    """The generated module's source with ``forward_and_blocks_copy``: its joint loops with the
    copies of ``chunks`` spread over them."""
    loops = list(re.finditer(r"def joint_(\d+)\(ws, constants, gravity\):\n((?:    .*\n)+)", text))
    assert len(loops) == n, "folded.source's joint functions not found: this probe reads their text"
    sizes = np.cumsum([m.group(2).count("\n        ") for m in loops])
    ends = np.round(sizes / sizes[-1] * len(chunks)).astype(int)
    out, first = [text, "\nfrom stage_copies_intrinsics import ntcopy\n"], 0
    for j, match in enumerate(loops):
        mine, first = chunks[first:ends[j]], ends[j]
        lines = match.group(2).rstrip("\n").split("\n")
        loop = next(i for i, line in enumerate(lines) if line.startswith("    for k in range"))
        body = lines[loop + 1:]
        every = max(1.0, len(body) / max(1, len(mine)))
        copies = [f"        ntcopy(stage, s, y, d, nb.uint64({8 * c}), k)" for c in mine]
        merged = []
        for i, line in enumerate(body):
            merged.append(line)
            while copies and len(mine) - len(copies) + 1 <= (i + 1) / every + 1e-9:
                merged.append(copies.pop(0))
        merged += copies
        out += ["", "@nb.njit(cache=True, fastmath=FMA)", f"def joint_{j}_copy(ws, constants, gravity, stage, s, y, d):",
                *lines[:loop + 1], *merged, ""]
    out += ["", "@nb.njit(cache=True)", "def forward_and_blocks_copy(ws, constants, gravity, stage, s, y, d):",
            *[f"    joint_{j}_copy(ws, constants, gravity, stage, s, y, d)" for j in range(n)], ""]
    return "\n".join(out)


def aligned(size: int) -> np.ndarray:
    buffer = np.zeros(size + 8)
    start = (-(buffer.ctypes.data // 8)) % 8
    return buffer[start:start + size]


def one(name: str, variant: str, count: int, repeat: int, asm: bool) -> None:
    if asm:  # inspect_asm needs the code compiled in this process
        os.environ["NUMBA_DISABLE_CACHE"] = "1"
    import numba

    import dynamics as bench_dynamics  # bench/dynamics.py: the same robots
    from dynid.dynamics import folded, lanes

    regressor = importlib.import_module("dynid.dynamics.regressor")
    tiles = importlib.import_module("dynid.dynamics.tiles")
    robot, _ = bench_dynamics.find_robot(name)
    n, LANES = robot.n, lanes.LANES
    constants, parents, slots, gravity = lanes.kernel_arrays(robot)
    stride = 10 * n * n
    if stride % 8:
        raise SystemExit(f"{name}: a sample of Y is not whole lines (odd n); this probe takes an even n")
    kernel = folded.kernel_for(robot)
    q, dq, ddq = np.random.default_rng(0).uniform(-2.0, 2.0, (3, count - count % LANES, n))
    count = q.shape[0]
    flat = aligned(count * stride)
    y = flat.reshape(count, n, 10 * n)
    stage_samples = regressor.stream_stage_samples(robot, 2**62) or 8

    def current():
        kernel.regressor_serial(q, dq, ddq, constants, parents, slots, gravity, y, stage_samples, False)

    call, note = current, ""
    if variant != "current":
        used = 10 * lanes.slots_used(slots)
        lmap = regressor.line_map(slots, 0, lanes.scratch_row(n, slots) + used, False, kernel.ALIAS)
        chunks, hot = chunks_of(lmap, stride, LANES)
        note = f"{4 * len(chunks)} lines copied per block for {hot} that hold a non-zero"
        SOURCE_DIR.mkdir(exist_ok=True)
        ntcopy, lines8_cached = intrinsics()
        sys.modules["stage_copies_intrinsics"] = type(sys)("stage_copies_intrinsics")
        sys.modules["stage_copies_intrinsics"].ntcopy = ntcopy
        text = copying_source(folded.source(robot)[0], n, chunks if variant == "spread" else [])
        module_name = f"stage_copies_{name}_{variant}_{hashlib.sha256(text.encode()).hexdigest()[:16]}"
        path = SOURCE_DIR / f"{module_name}.py"
        if not path.exists():
            path.write_text(text)
        sys.path.insert(0, str(SOURCE_DIR))
        copying = importlib.import_module(module_name).forward_and_blocks_copy
        load_block, stream8, store_fence = lanes.load_block, tiles.stream8, tiles.store_fence
        chunk_array = np.array(chunks, dtype=np.int64)
        burst = variant == "burst"

        @numba.njit(nogil=True)
        def to_stage(ws, lmap, stage, stride):
            for k in range(0, LANES, 8):
                for line in range(lmap.shape[0]):
                    lines8_cached(ws, numba.uint64(lmap[line, 0] + k), numba.uint64(lmap[line, 1] + k),
                                  numba.uint64(lmap[line, 2] + k), numba.uint64(lmap[line, 3] + k),
                                  numba.uint64(lmap[line, 4] + k), numba.uint64(lmap[line, 5] + k),
                                  numba.uint64(lmap[line, 6] + k), numba.uint64(lmap[line, 7] + k), stage,
                                  k * stride + lmap[line, 8], stride)

        @numba.njit(nogil=True)
        def copy_lines(stage, y, d, chunks):
            for c in chunks:
                for r in range(4):
                    stream8(stage, 8 * (c + r), y, d + 8 * (c + r))

        @numba.njit(nogil=True)
        def run(q, dq, ddq, constants, gravity, ws, y, stride, stage, spare, lmap, chunks, copies):
            for k0 in range(0, q.shape[0], LANES):
                load_block(q, dq, ddq, k0, LANES, ws)
                if k0 == 0:  # no previous block: its copies go to a spare image
                    copying(ws, constants, gravity, stage, numba.uint64(0), spare, numba.uint64(0))
                else:
                    copying(ws, constants, gravity, stage, numba.uint64(0), y, numba.uint64((k0 - LANES) * stride))
                to_stage(ws, lmap, stage, stride)
                if burst:
                    copy_lines(stage, y, k0 * stride, chunks)
            if copies:
                copy_lines(stage, y, (q.shape[0] - LANES) * stride, chunks)
            store_fence()

        ws = lanes.new_workspace(n, slots, constants, gravity, used + 1)
        stage, spare = aligned(LANES * stride), aligned(LANES * stride)

        def call():
            run(q, dq, ddq, constants, gravity, ws, flat, stride, stage, spare, lmap, chunk_array, variant == "spread")

        call()
        if asm:
            import collections
            code = copying.inspect_asm(copying.signatures[0])
            found = re.findall(r"(vmovntp[sd]\s+%[xyz]mm|movntsd|movnti)", code)
            stores = collections.Counter(re.sub(r"\s+", " ", store) for store in found)
            print(f"{name}: non-temporal stores in forward_and_blocks_copy: {dict(stores)}", file=sys.stderr)
    call()
    if variant in ("burst", "spread"):
        mine = y.copy()
        y[:] = 0.0
        current()
        note += f"; Y equals the current kernel's: {np.array_equal(mine, y)} (largest difference " \
                f"{np.max(np.abs(mine - y)):.1e} of {np.max(np.abs(y)):.1e})"
    best = float("inf")
    for _ in range(repeat):
        t0 = time.thread_time()
        call()
        best = min(best, time.thread_time() - t0)
    print(f"{name:8} {variant:8} {best / count * 1e6:8.3f} {os.getloadavg()[0]:6.2f}  {note}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--robots", default="er3a,solo12")
    ap.add_argument("--samples", type=int, default=20000)
    ap.add_argument("--turns", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--asm", action="store_true", help="count the copying kernel's non-temporal stores")
    ap.add_argument("--one", nargs=2, metavar=("ROBOT", "VARIANT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        one(*args.one, args.samples, args.repeat, args.asm)
        return
    import machine  # bench/machine.py

    print(f"CPU: {machine.cpu_model()}; load {machine.load()}")
    print(f"{'robot':8} {'variant':8} {'CPU us/sample':>8} {'load':>6}")
    for _ in range(args.turns):
        for name in args.robots.split(","):
            for variant in args.variants.split(","):
                command = [sys.executable, __file__, "--one", name, variant, "--samples", str(args.samples),
                           "--repeat", str(args.repeat)] + (["--asm"] if args.asm else [])
                subprocess.run(command, check=True)


if __name__ == "__main__":
    main()
