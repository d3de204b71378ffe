"""The generated regressor kernel as explicit vector code, with the previous block's lines of Y
stored in between: the probe of approach (d) of issue 27 that found what its speed depends on.
dynid's own explicit kernel is dynamics/explicit.py (bench/explicit_kernel.py times it against the
folded kernel over processes and placements); this probe keeps the variants that show why.

    .venv/bin/python bench/explicit_vector.py [--robot er3a] [--samples 20000] [--turns 4] [--pads 16]
                                              [--offset -1] [--shift 0] [--row 32] [--realign]

dynid's generated kernel (dynamics/folded.py) computes each joint of a block of 32 samples in a lane
loop that LLVM vectorizes, keeps every value a child needs in a workspace row, and writes the block's
lines of Y after all the loops (``regressor.write_lines``: eight lanes transposed in registers and
stored past the caches); the arithmetic and the line stores take the sum of their times
(docs/performance.md). Here the same statements (``explicit.program_of`` of ``folded.source``) are
compiled into one straight-line LLVM function on ``<8 x double>`` values, eight lanes of every
joint's program at once (a Numba intrinsic, as ``tiles.lines8`` is): a row a parent stores and a
child loads is the same register value, a row that no line of Y reads is not stored, and the
previous block's lines of the same eight lanes (a second workspace; the same line map, transpose
and non-temporal stores) are spread evenly through the program, one line of eight samples every
few dozen operations. The block's q, dq, ddq go into the lanes without slicing q (no array view:
Numba counts a view's references atomically, which waits for every pending non-temporal store).

Printed, turn by turn in one process (CPU time of one thread per sample, best of 7 calls; Y of
``--samples`` samples in memory): dynid's kernel (the folded ``regressor_serial``), the explicit
kernel with the lines interleaved, the same with the lines after each block (``write_lines``), and
the arithmetic alone of each (the lanes loaded, the forward pass and blocks, no line written); the
largest difference of Y from dynid's, over Y's largest entry (the multiply-adds that LLVM fuses
differ in the last bits). Then the interleaved kernel called with its stack frame moved by
``--pads`` amounts (a dynamic alloca in the caller). What its time depends on: whether its 64-byte
vector accesses fall on whole cache lines. Its stack frame (the spilled registers) is 16-byte
aligned unless ``--realign`` (the frame realigned to 64 bytes, as dynamics/explicit.py does), and
the workspaces are where NumPy puts them (``--offset -1``), each on a cache line (``-2``), or on a
page and ``--offset`` bytes past one (with ``--shift``; ``--row`` spaces the workspace rows further
apart): docs/performance.md. For a robot whose sample of Y is whole cache lines (10 n^2 a multiple
of 8: an even n) and 32 samples per block (``lanes.LANES``).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import machine  # noqa: E402  (bench/machine.py)

WIDTH = 8  # lanes per vector: one AVX-512 register of doubles, one cache line of Y per transposed row

def joint_loops(text: str) -> tuple[list, dict]:
    """``dynid.dynamics.explicit.joint_loops`` (bench/explicit_split.py reads it here)."""
    from dynid.dynamics import explicit

    return explicit.joint_loops(text)


def program_of(loops, lanes: int, keep) -> tuple:
    """``dynid.dynamics.explicit.program_of`` (rows of ``lanes`` numbers: ``lanes.LANES``)."""
    from dynid.dynamics import explicit

    if lanes != explicit.LANES:
        raise ValueError(f"rows of {lanes} lanes: the generated kernel's are {explicit.LANES}")
    return explicit.program_of(loops, keep)


def vector_sincos(builder, x):
    """``dynid.dynamics.explicit.vector_sincos`` (dynid's explicit kernel computes its sines and cosines
    so since it loads its lanes in the program; |x| >= ``SINCOS_LIMIT`` and NaN: the C library's)."""
    from dynid.dynamics import explicit

    return explicit.vector_sincos(builder, x)


def group_program(program, constant_names, lines: int, row: int, frame_align: int = 0, inputs=None):
    """Intrinsic ``(ws, kv, g, wsp, y, lmap, base, stride)``: the program on the lanes 8 g .. 8 g + 8
    of the workspace ws (flat float64, row r's lanes from r * row), the constants from kv (in the
    order of ``constant_names``), and spread evenly through it the ``lines`` lines of ``lmap``
    (``regressor.line_map``) from the same lanes of the workspace wsp: line l of lane t to
    y[base + t stride + lmap[l, 8]] by a non-temporal store, after an 8 x 8 transpose in registers
    (as ``tiles.lines8``). Straight-line code; a compiler barrier after each line keeps the lines
    where they are put. ``inputs`` (n, {row: what}, rows to store, cache): the lanes loaded inside the program,
    ``load_lanes`` not called: a load of joint i's q, dq or ddq row reads q[k0 + 8 g + t, i] (t = 0 .. 7)
    into a register, one of its cosine or sine row computes them there (``vector_sincos``; with ``cache``
    once per joint, the values kept for later loads, else at every load); the rows to
    store (those the line map reads) are stored too; the intrinsic takes (..., q, dq, ddq, k0) more."""
    from llvmlite import ir
    from numba import types
    from numba.extending import intrinsic

    from dynid.dynamics import explicit

    i32, i64, f64 = ir.IntType(32), ir.IntType(64), ir.DoubleType()
    vec = ir.VectorType(f64, WIDTH)
    index = {name: e for e, name in enumerate(constant_names)}
    operations = sum(op[0] not in ("load", "store", "barrier", "line") for op in program)
    after = [(line + 1) * operations // (lines + 1) for line in range(lines)]
    if any(op[0] == "line" for op in program):  # the program places its lines (bench/explicit_split.py)
        after = [math.inf] * lines

    def codegen(context, builder, sig, args):
        if frame_align:  # spill slots of <8 x double> on whole cache lines: the frame realigned
            set.add(builder.function.attributes, '"stackrealign"')
        data, kvd, prev, out, table = (context.make_array(sig.args[a])(context, builder, args[a]).data
                                       for a in (0, 1, 3, 4, 5))
        lane0 = builder.mul(context.cast(builder, args[2], sig.args[2], types.int64), ir.Constant(i64, WIDTH))
        base_v = context.cast(builder, args[6], sig.args[6], types.int64)
        stride_v = context.cast(builder, args[7], sig.args[7], types.int64)
        note = builder.module.add_metadata([ir.Constant(i32, 1)])
        barrier = ir.InlineAsm(ir.FunctionType(ir.VoidType(), []), "", "~{memory}", side_effect=True)
        values = {}

        def at(pointer, offset):
            return builder.bitcast(builder.gep(pointer, [offset]), vec.as_pointer())

        if inputs is not None:
            n_joints, what, stored, cache = inputs
            arrays = [context.make_array(sig.args[a])(context, builder, args[a]).data for a in (8, 9, 10)]
            first = builder.add(context.cast(builder, args[11], sig.args[11], types.int64), lane0)
            made = {}

            def input_row(r):
                """The lanes of input row r in a register: gathered from q, dq or ddq, or sin / cos."""
                kind, joint = what[r]
                if kind in ("c", "s"):  # both from one reduction, once per joint and group (``cache``) or per load
                    if joint not in made or not cache:
                        made[joint] = vector_sincos(builder, input_row(next(x for x, v in what.items()
                                                                            if v == ("q", joint))))
                    return made[joint][1] if kind == "c" else made[joint][0]
                source = arrays[("q", "dq", "ddq").index(kind)]
                lanes_v = ir.Constant(vec, ir.Undefined)
                for t in range(WIDTH):
                    where = builder.add(builder.mul(builder.add(first, ir.Constant(i64, t)), ir.Constant(i64, n_joints)),
                                        ir.Constant(i64, joint))
                    lanes_v = builder.insert_element(lanes_v, builder.load(builder.gep(source, [where])),
                                                     ir.Constant(i32, t))
                return lanes_v

            for r in sorted(stored):  # the input rows the line map reads, into the workspace
                builder.store(input_row(r), at(data, builder.add(ir.Constant(i64, r * row), lane0)), align=8)

        def value(code):
            return explicit.operand(builder, values, index, kvd, code)

        def write_line(line):
            offsets = [builder.load(builder.gep(table, [ir.Constant(i64, 9 * line + r)])) for r in range(9)]
            rows = [builder.load(at(prev, builder.add(offsets[r], lane0)), align=8) for r in range(8)]
            rows = explicit.transpose8(builder, rows)
            d = builder.add(base_v, offsets[8])
            for t in range(8):
                store = builder.store(rows[t], at(out, builder.add(d, builder.mul(stride_v, ir.Constant(i64, t)))),
                                      align=64)
                store.set_metadata("nontemporal", note)
            builder.call(barrier, [])

        done, line = 0, 0
        for op in program:
            while line < lines and after[line] <= done:
                write_line(line)
                line += 1
            if op[0] == "barrier":  # no load or store moves across it, no stored value is forwarded
                builder.call(barrier, [])
                continue
            if op[0] == "line":  # the next line goes here
                if line < lines:
                    write_line(line)
                    line += 1
                continue
            if op[0] == "load" and inputs is not None and op[2] in inputs[1]:
                values[op[1]] = input_row(op[2])
                continue
            if op[0] == "load":
                values[op[1]] = builder.load(at(data, builder.add(ir.Constant(i64, op[2] * row), lane0)), align=8)
                continue
            if op[0] == "store":
                builder.store(value(op[2]), at(data, builder.add(ir.Constant(i64, op[1] * row), lane0)), align=8)
                continue
            explicit.arithmetic(builder, values, op, value)
            done += 1
        while line < lines:
            write_line(line)
            line += 1
        return context.get_dummy_value()

    if inputs is None:
        @intrinsic
        def run(typingctx, ws, kv, g, wsp, y, lmap, base, stride):
            return types.void(ws, kv, g, wsp, y, lmap, base, stride), codegen
    else:
        @intrinsic
        def run(typingctx, ws, kv, g, wsp, y, lmap, base, stride, q, dq, ddq, k0):
            return types.void(ws, kv, g, wsp, y, lmap, base, stride, q, dq, ddq, k0), codegen

    return run


def kernels(robot, kernel, lmap, lmap3, row: int, program=None, frame_align: int = 0, lanes_once: bool = False,
            lanes_in_program: int = 0):
    """The compiled drivers: (explicit, interleaved or not; arithmetic alone, explicit and dynid's;
    explicit called below a stack pad); ``program``: the statements (default: the lane loops');
    ``frame_align`` 64: the frame of the function that holds the program realigned to 64 bytes;
    ``lanes_once``: each workspace's lanes loaded for its first block only (a timing of the kernel as if
    loading the lanes cost nothing; its Y is wrong after the first two blocks); ``lanes_in_program``: no
    ``load_lanes``, the program loads q, dq, ddq and computes the sines and cosines in its registers
    (``group_program``'s ``inputs``; angles below ``sincos.SINCOS_LIMIT`` only): 1 once per joint, 2 at
    every load of a cosine or sine row."""
    import numba as nb
    from llvmlite import ir
    from numba import types
    from numba.extending import intrinsic

    from dynid.dynamics import folded, lanes
    from dynid.dynamics.regressor import write_lines
    from dynid.dynamics.sincos import SINCOS_LIMIT, sincos
    from dynid.dynamics.tiles import store_fence

    LANES, JR = lanes.LANES, lanes.JR
    R_Q, R_QD, R_QDD, R_C, R_S = lanes.R_Q, lanes.R_QD, lanes.R_QDD, lanes.R_C, lanes.R_S
    constants, parents, slots, gravity = lanes.kernel_arrays(robot)
    loops, prologue = joint_loops(folded.source(robot)[0])
    names = sorted(prologue)
    kv = np.array([eval(prologue[a], {"constants": constants, "gravity": gravity}) for a in names])  # noqa: S307
    scratch = lanes.scratch_row(robot.n, slots)
    keep = set(range(scratch, scratch + 10 * lanes.slots_used(slots) + 1)) | {int(a) for a in kernel.ALIAS if a >= 0}
    program = program_of(loops, LANES, keep) if program is None else program
    inputs = None
    if lanes_in_program:
        what = {i * JR + r: (kind, i) for i in range(robot.n)
                for r, kind in ((R_Q, "q"), (R_QD, "dq"), (R_QDD, "ddq"), (R_C, "c"), (R_S, "s"))}
        inputs = (robot.n, what, {int(a) for a in kernel.ALIAS if int(a) in what}, lanes_in_program == 1)
    run = group_program(program, names, lmap.shape[0], row, frame_align, inputs)
    plain = group_program(program, names, 0, row, frame_align, inputs)
    blocks = kernel.forward_and_blocks

    @nb.njit(inline="always", fastmath={"contract"})
    def load_lanes(q, dq, ddq, k0, ws):
        """lanes.load_block for a whole block, reading q[k0 + k, i] in place (no view of q)."""
        for i in range(q.shape[1]):
            o = nb.uint64(i * JR * row)
            for k in range(nb.uint64(LANES)):
                ws[o + nb.uint64(R_Q * row) + k] = q[k0 + k, i]
                ws[o + nb.uint64(R_QD * row) + k] = dq[k0 + k, i]
                ws[o + nb.uint64(R_QDD * row) + k] = ddq[k0 + k, i]
        large = 0
        for i in range(q.shape[1]):
            o = nb.uint64(i * JR * row)
            for k in range(nb.uint64(LANES)):
                x = ws[o + nb.uint64(R_Q * row) + k]
                s, c = sincos(x)
                ws[o + nb.uint64(R_C * row) + k] = c
                ws[o + nb.uint64(R_S * row) + k] = s
                large += not (abs(x) < SINCOS_LIMIT)
        if large:
            for i in range(q.shape[1]):
                o = nb.uint64(i * JR * row)
                for k in range(nb.uint64(LANES)):
                    x = ws[o + nb.uint64(R_Q * row) + k]
                    if not (abs(x) < SINCOS_LIMIT):
                        ws[o + nb.uint64(R_C * row) + k] = math.cos(x)
                        ws[o + nb.uint64(R_S * row) + k] = math.sin(x)

    if lanes_in_program:
        @nb.njit(inline="always")
        def call(program_of_group, ws, kv, g, wsp, flat, lmap, base, stride, q, dq, ddq, k0):
            program_of_group(ws, kv, g, wsp, flat, lmap, base, stride, q, dq, ddq, k0)
    else:
        @nb.njit(inline="always")
        def call(program_of_group, ws, kv, g, wsp, flat, lmap, base, stride, q, dq, ddq, k0):
            program_of_group(ws, kv, g, wsp, flat, lmap, base, stride)

    @nb.njit(inline="always")
    def step(q, dq, ddq, ws, wsp, kv, y, flat, lmap, lmap3, k0, kp, stride, interleave, keep):
        """Block k0 into ws; the lines of block kp (in wsp; none if kp < 0) interleaved or after."""
        if not lanes_in_program and (not lanes_once or k0 < 2 * LANES):
            load_lanes(q, dq, ddq, k0, ws)
        for g in range(4):
            if kp >= 0 and interleave:  # group 3: the line that straddles two samples left out (lmap3)
                call(run, ws, kv, g, wsp, flat, lmap3 if g == 3 else lmap, kp * stride + 8 * g * stride, stride, q,
                     dq, ddq, k0)
            else:
                call(plain, ws, kv, g, wsp, flat, lmap, 0, stride, q, dq, ddq, k0)
        if kp >= 0 and not interleave:
            write_lines(wsp, lmap, LANES, y, kp, keep, False, False)
        elif kp >= 0:  # as write_lines: the straddling line's own parts of the last eight samples
            last = lmap.shape[0] - 1
            x = lmap[last, 8]
            if x + 8 > stride:
                for t in range(24, 32):
                    for r in range(stride - x):
                        flat[kp * stride + t * stride + x + r] = wsp[nb.uint64(lmap[last, r] + t)]
                for t in range(25, 32):
                    for r in range(stride - x, 8):
                        flat[kp * stride + t * stride + x + r - stride] = wsp[nb.uint64(lmap[last, r] - 1 + t)]
                for r in range(stride - x, 8):
                    flat[kp * stride + x + r - stride] = wsp[nb.uint64(lmap[last, r] - 1)]

    @nb.njit
    def explicit(q, dq, ddq, ws0, ws1, kv, y, lmap, lmap3, interleave, keep):
        """Y of the whole blocks of q, two workspaces taking turns (unrolled: no array reassigned)."""
        stride = y.shape[1] * y.shape[2]
        flat = y.reshape(-1)
        count = q.shape[0] // LANES
        b = 0
        while b + 2 <= count:
            step(q, dq, ddq, ws0, ws1, kv, y, flat, lmap, lmap3, b * LANES, (b - 1) * LANES if b > 0 else -1, stride,
                 interleave, keep)
            step(q, dq, ddq, ws1, ws0, kv, y, flat, lmap, lmap3, (b + 1) * LANES, b * LANES, stride, interleave, keep)
            b += 2
        if b < count:
            step(q, dq, ddq, ws0, ws1, kv, y, flat, lmap, lmap3, b * LANES, (b - 1) * LANES if b > 0 else -1, stride,
                 interleave, keep)
            write_lines(ws0, lmap, LANES, y, b * LANES, keep, False, False)
        elif b > 0:
            write_lines(ws1, lmap, LANES, y, (b - 1) * LANES, keep, False, False)
        store_fence()

    @nb.njit
    def arithmetic(q, dq, ddq, ws, kv, y, lmap):
        flat = y.reshape(-1)
        for b in range(q.shape[0] // LANES):
            if not lanes_in_program:
                load_lanes(q, dq, ddq, b * LANES, ws)
            for g in range(4):
                call(plain, ws, kv, g, ws, flat, lmap, 0, 0, q, dq, ddq, b * LANES)

    @nb.njit
    def arithmetic_dynid(q, dq, ddq, ws, constants, gravity):
        for b in range(q.shape[0] // LANES):
            lanes.load_block(q, dq, ddq, b * LANES, LANES, ws)
            blocks(ws, constants, gravity)

    @intrinsic
    def stack_pad(typingctx, size):
        """A dynamic alloca of ``size`` bytes: the frames of the functions called after it move
        down by as much; returns its address."""
        def codegen(context, builder, sig, args):
            return builder.ptrtoint(builder.alloca(ir.IntType(8), size=args[0]), ir.IntType(64))

        return types.intp(size), codegen

    @nb.njit
    def padded(q, dq, ddq, ws0, ws1, kv, y, lmap, lmap3, pad, keep):
        where = stack_pad(pad)
        explicit(q, dq, ddq, ws0, ws1, kv, y, lmap, lmap3, True, keep)
        return where

    return explicit, arithmetic, arithmetic_dynid, padded, kv, program


def cpu_best(fn, repeat: int) -> float:
    """Best CPU seconds of the calling thread over ``repeat`` calls."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.thread_time()
        fn()
        best = min(best, time.thread_time() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--robot", default="er3a")
    ap.add_argument("--samples", type=int, default=20000)
    ap.add_argument("--turns", type=int, default=4)
    ap.add_argument("--offset", type=int, default=-1,
                    help="the second workspace this many bytes (a multiple of 8) past a 4 KB page after the "
                         "first, which starts a page (-1: wherever NumPy puts them)")
    ap.add_argument("--shift", type=int, default=0,
                    help="Y and the first workspace (with --offset) this many bytes (a multiple of 64) further "
                         "into their pages")
    ap.add_argument("--row", type=int, default=32,
                    help="numbers from one workspace row to the next (dynid: 32, lanes.LANES; 40: eight lanes "
                         "of a row and of the next are five cache lines apart, so that the rows of eight lanes "
                         "spread over every set of the L1 cache, not a quarter of them)")
    ap.add_argument("--pads", type=int, default=16, help="stack placements tried (0: none)")
    ap.add_argument("--realign", action="store_true",
                    help="the explicit kernel's stack frame realigned to 64 bytes, so that every spilled "
                         "<8 x double> fills one cache line (by default the frame is 16-byte aligned)")
    args = ap.parse_args()
    import dynamics as bench_dynamics  # bench/dynamics.py: the same robots

    from dynid.dynamics import folded, lanes
    from dynid.dynamics.regressor import line_map

    robot, label = bench_dynamics.find_robot(args.robot)
    n, LANES = robot.n, lanes.LANES
    if (10 * n * n) % 8:
        raise SystemExit(f"error: {label}: a sample of Y is not whole cache lines (odd n = {n}); this probe "
                         "takes an even n")
    kernel = folded.kernel_for(robot)
    constants, parents, slots, gravity = lanes.kernel_arrays(robot)
    count = args.samples // LANES * LANES
    q, dq, ddq = np.random.default_rng(0).uniform(-2.0, 2.0, (3, count, n))
    y_dynid = np.zeros((count, n, 10 * n))
    y = np.zeros(y_dynid.size + 1024)  # Y at --shift + 16 bytes past a page, as NumPy puts a large array at 16
    y = y[(-(y.ctypes.data // 8)) % 512 + (args.shift + 16) // 8:][:y_dynid.size].reshape(y_dynid.shape)
    used = 10 * lanes.slots_used(slots)
    ws_dynid = lanes.new_workspace(n, slots, constants, gravity, used + 1)
    ws = np.zeros(ws_dynid.size // LANES * args.row)  # rows of --row numbers, the first LANES of each used
    ws.reshape(-1, args.row)[:, :LANES] = ws_dynid.reshape(-1, LANES)
    if args.offset == -1:
        ws0, ws1 = ws, ws.copy()
    elif args.offset == -2:  # each on a cache line, wherever NumPy puts the buffer
        ws0, ws1 = (np.zeros(ws.size + 8) for _ in range(2))
        ws0, ws1 = (w[(-(w.ctypes.data // 8)) % 8:][:ws.size] for w in (ws0, ws1))
        ws0[:], ws1[:] = ws, ws
    else:  # both in one buffer: ws0 on a page, ws1 ``offset`` bytes past a page after it
        buffer = np.zeros(2 * ws.size + 2048 + 512)
        a = (-(buffer.ctypes.data // 8)) % 512 + args.shift // 8
        b = a + (ws.size + 511) // 512 * 512 + args.offset // 8
        ws0, ws1 = buffer[a:a + ws.size], buffer[b:b + ws.size]
        ws0[:], ws1[:] = ws, ws
    zero = lanes.scratch_row(n, slots) + used
    lmap = line_map(slots, (8 - (y.ctypes.data // 8) % 8) % 8, zero, False, kernel.ALIAS)
    lmap[:, :8] = lmap[:, :8] // LANES * args.row + lmap[:, :8] % LANES
    lmap3 = lmap.copy()
    if lmap[-1, 8] + 8 > 10 * n * n:
        lmap3[-1] = lmap[0]  # a line written twice with the same numbers: the straddling one goes by parts
    keep = np.zeros(8)  # write_lines' line kept for the next block: not used (no block follows a call)
    explicit, arithmetic, arithmetic_dynid, padded, kv, program = kernels(robot, kernel, lmap, lmap3, args.row,
                                                                       frame_align=64 if args.realign else 0)
    calls = {
        "dynid": lambda: kernel.regressor_serial(q, dq, ddq, constants, parents, slots, gravity, y_dynid, 8, False),
        "explicit, interleaved": lambda: explicit(q, dq, ddq, ws0, ws1, kv, y, lmap, lmap3, True, keep),
        "explicit, lines after": lambda: explicit(q, dq, ddq, ws0, ws1, kv, y, lmap, lmap3, False, keep),
        "arithmetic: dynid": lambda: arithmetic_dynid(q, dq, ddq, ws_dynid, constants, gravity),
        "explicit": lambda: arithmetic(q, dq, ddq, ws0, kv, y, lmap),
    }
    print(f"CPU: {machine.cpu_model()}\nSIMD flags: {machine.simd_flags()}\n{label}: {count} samples, Y "
          f"{y.nbytes / 1e6:.1f} MB in memory; the explicit program: {len(program)} statements per eight lanes "
          f"({sum(op[0] == 'load' for op in program)} loads, {sum(op[0] == 'store' for op in program)} stores), "
          f"{lmap.shape[0]} lines per sample; addresses mod 4096: Y {y.ctypes.data % 4096}, workspaces "
          f"{ws0.ctypes.data % 4096} and {ws1.ctypes.data % 4096}; load {machine.load()}")
    t0 = time.time()
    for what in ("explicit, interleaved", "explicit, lines after"):
        calls["dynid"]()
        y[:] = 0.0
        calls[what]()
        print(f"{what}: largest |Y - Y of dynid| / largest |Y|: "
              f"{np.abs(y - y_dynid).max() / np.abs(y_dynid).max():.1e}, equal bit for bit: {np.array_equal(y, y_dynid)}")
    for call in calls.values():
        call()
    print(f"(compiled in {time.time() - t0:.0f} s) CPU us per sample of one thread, best of 7 calls:")
    print("  ".join(f"{name:>22}" for name in calls) + "    load")
    for _ in range(args.turns):
        print("  ".join(f"{cpu_best(call, 7) / count * 1e6:22.3f}" for call in calls.values())
              + f"    {machine.load().split()[0]}", flush=True)
    if args.pads:
        print("explicit, interleaved, with its stack frame moved: the pad's address mod 4096, CPU us per sample")
        times = []
        for pad in range(0, 4096, 4096 // args.pads):
            where = padded(q, dq, ddq, ws0, ws1, kv, y, lmap, lmap3, pad, keep) % 4096
            times.append(cpu_best(lambda: padded(q, dq, ddq, ws0, ws1, kv, y, lmap, lmap3, pad, keep), 5) / count * 1e6)
            print(f"  pad {pad:5d} at {where:5d} ({where % 64:2d} into a line): {times[-1]:.3f}", flush=True)
        times = np.array(times)
        print(f"over {times.size} placements of the frame: fastest {times.min():.3f}, median {np.median(times):.3f}, "
              f"slowest {times.max():.3f}; {np.sum(times > 1.1 * times.min())} more than 10 % over the fastest")
    print(f"load {machine.load()}")


if __name__ == "__main__":
    main()
