"""The generated regressor kernel as explicit vector code, the previous block's lines of Y stored in
between its arithmetic: a streamed Y (issue 27).

The generated kernel (``folded.py``) computes each joint of a block of ``LANES`` samples in a lane
loop that LLVM vectorizes and writes the block's lines of Y after all its loops
(``regressor.write_lines``), so its time is the sum of the arithmetic and of the line stores
(docs/performance.md). Here the same statements (the lane loops' bodies of ``folded.source``) are
compiled into one straight-line LLVM function on ``<8 x double>`` values, eight lanes of every
joint at once (``group_program``, a Numba intrinsic as ``tiles.lines8`` is): a row that a parent
stores and a child loads becomes one register value, a row that no line of Y reads is not stored,
and the previous block's lines of the same eight lanes (the same line map, 8 x 8 transpose and
non-temporal stores as ``tiles.lines8``) are spread evenly through the program, so the line
stores overlap the arithmetic. Two workspaces in one buffer take turns (the block computed, the
block whose lines go out); no call, no branch but the one per line slot, and no array view in the
program (Numba counts a view's references atomically, which waits for every pending
non-temporal store).

What makes it fast in every process (found with ``bench/explicit_vector.py``): **every 64-byte
vector access on whole cache lines**. The program keeps more values than the 32 vector registers
hold and spills them to its stack frame; Numba's frames are 16-byte aligned, so most spilled
``<8 x double>`` straddle two lines, and so does every row of a workspace that NumPy places 16 or 32
bytes into a line. With the line stores pending, such split accesses made the kernel 0.096 to
0.206 us per sample on er3a depending on where the frame fell (the same placement gave the same
time in a process, another in the next). Here the function that holds the program realigns its
frame to 64 bytes (``"stackrealign"``: the spill slots of vectors get their natural alignment), and
the workspaces start on a cache line: 0.095-0.099 for every frame placement.

The block's q, dq and ddq are read inside the program (eight loads at constant offsets per lane row
into a register; a stretch's short last block from a padded copy, ``short_block``) and the sines and
cosines computed there (``vector_sincos``: ``sincos.sincos`` on eight lanes, the C library's for
|q| >= ``SINCOS_LIMIT``); of these rows only those that Y's lines read are stored. Filling the
workspace's lane rows before the program instead (as the kernel did before: a burst of stores while the
previous block's lines are pending; bench/line_order.py's ``block_lanes`` does it so) did not hide behind the line stores as the arithmetic does
(bench/line_order.py): loading them in the program made the kernel 0.129-0.142 -> 0.113-0.122 us per
sample on solo12, 0.146-0.159 -> 0.127-0.137 on iiwa14, taking turns (docs/performance.md, "The lanes in
the program").

For an even n a sample of Y is whole lines (``regressor.line_map``) and lane group g holds the
samples 8 g .. 8 g + 8. For an odd n (10 n^2 = 2 mod 8) four consecutive samples start at four
places in a line, so the lanes are taken in phase order as the folded kernel's are
(``lanes.load_block(..., phases=True)``: lane 8 g + u holds sample g + 4 u, ``group_program``): the
eight samples of a group start at one place, and the group's slots write the lines of that place's
map (``regressor.explicit_phase_plan``: a map per lane group and place, each line stored for the
eight samples 4 samples apart). The line that a group-3 sample shares with the next (lane u + 1, of
the next block for u = 7) goes by ordinary stores after the block (``straddling_phases``), the
last block's lines by ``regressor.write_lines_phases``, the samples of a stretch that make no whole
block by ordinary stores (``write_part_phases``). Y streamed
(``stage_samples`` > 0, a Y larger than the last-level cache) and ``every`` False;
``regressor.regressor`` takes the folded kernel otherwise. Y equals the folded kernel's to rounding (LLVM fuses other multiplies and
adds than in the lane loops: a value a child reads from a register has more uses than one loaded
from a row): tests/test_regressor_folded.py. The generated module is written and cached as
``folded``'s are (``kernel_files``).
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
from pathlib import Path

import llvmlite.binding as llvm
import numba as nb
import numpy as np

from dynid.dynamics import folded, kernel_files
from dynid.dynamics.lanes import (JR, LANES, R_C, R_Q, R_QD, R_QDD, R_S, kernel_arrays, new_workspace, scratch_row,
                                  slots_used)
from dynid.dynamics.sincos import SINCOS_LIMIT, sincos

WIDTH = 8  # lanes per vector: one AVX-512 register of doubles, one cache line of Y per transposed row
GROUPS = LANES // WIDTH

_LOAD = re.compile(r"(x\d+) = ws\[nb\.uint64\((\d+)\) \+ k\]$")
_STORE = re.compile(r"ws\[nb\.uint64\((\d+)\) \+ k\] = (\S+)$")
_UNARY = re.compile(r"(x\d+) = -(\S+)$")
_BINARY = re.compile(r"(x\d+) = (\S+) ([*+-]) (\S+)$")


def joint_loops(text: str) -> tuple[list, dict]:
    """(the body lines of each joint's lane loop, {constant name: its expression}) of a generated
    module's source (``folded.source``)."""
    loops, prologue = [], {}
    for block in re.split(r"\ndef joint_\d+\(ws, constants, gravity\):\n", text)[1:]:
        body = block.split("\n\n")[0].split("\n")
        start = body.index("    for k in range(lanes(ws)):")
        for line in body[:start]:
            name, expression = line.strip().split(" = ")
            prologue[name] = expression
        loops.append([line.strip() for line in body[start + 1:] if line.startswith("        ")])
    return loops, prologue


def program_of(loops, keep) -> tuple:
    """The lane loops as one program of tuples over names unique in it: ("load", name, row),
    ("neg", name, a), ("*" | "+" | "-", name, a, b), ("store", row, a). A row stored and loaded
    again (a parent's value read by a child) becomes that value; a store is kept only for a row in
    ``keep`` (the rows the line map reads)."""
    program, stored = [], {}
    for j, lines in enumerate(loops):
        local = {}
        for line in lines:
            if m := _LOAD.match(line):
                row = int(m[2]) // LANES
                local[m[1]] = stored.get(row, f"j{j}_{m[1]}")
                if row not in stored:
                    program.append(("load", local[m[1]], row))
            elif m := _STORE.match(line):
                row = int(m[1]) // LANES
                stored[row] = local.get(m[2], m[2])
                if row in keep:
                    program.append(("store", row, stored[row]))
            elif m := _BINARY.match(line):
                local[m[1]] = f"j{j}_{m[1]}"
                program.append((m[3], local[m[1]], local.get(m[2], m[2]), local.get(m[4], m[4])))
            elif m := _UNARY.match(line):
                local[m[1]] = f"j{j}_{m[1]}"
                program.append(("neg", local[m[1]], local.get(m[2], m[2])))
            else:
                raise ValueError(f"a statement of the generated kernel this translation does not know: {line!r}")
    return tuple(program)


def _mask(values):
    """A shuffle mask of ``WIDTH`` lanes."""
    from llvmlite import ir

    return ir.Constant(ir.VectorType(ir.IntType(32), WIDTH), values)


def transpose8(builder, rows):
    """Eight ``<8 x double>`` values transposed in registers by three butterfly stages (as
    ``tiles.lines8``): value t of the result holds lane t of each of ``rows``."""
    rows = list(rows)
    for step in (1, 2, 4):
        for i in range(8):
            if not i & step:
                x, z = rows[i], rows[i + step]
                rows[i] = builder.shuffle_vector(x, z, _mask([t if not t & step else 8 + t - step for t in range(8)]))
                rows[i + step] = builder.shuffle_vector(x, z, _mask([t + step if not t & step else 8 + t
                                                                     for t in range(8)]))
    return rows


def operand(builder, values, index, kv_data, code):
    """The ``<8 x double>`` of operand ``code`` of the program: its value (``values``), else a constant
    of kv (``index``: its place there, kv_data its pointer) broadcast to every lane, else the number."""
    from llvmlite import ir

    if code not in values:
        vec = ir.VectorType(ir.DoubleType(), WIDTH)
        if code in index:
            x = builder.load(builder.gep(kv_data, [ir.Constant(ir.IntType(64), index[code])]))
            x = builder.insert_element(ir.Constant(vec, ir.Undefined), x, ir.Constant(ir.IntType(32), 0))
            values[code] = builder.shuffle_vector(x, ir.Constant(vec, ir.Undefined), _mask([0] * WIDTH))
        else:
            values[code] = ir.Constant(vec, [float(code)] * WIDTH)
    return values[code]


def arithmetic(builder, values, op, value) -> None:
    """Statement ``op`` of the program ("neg", or "*", "+", "-" of two operands; ``value`` gives an
    operand's vector) emitted into ``values``, multiplies and adds free to fuse (``contract``)."""
    if op[0] == "neg":
        values[op[1]] = builder.fneg(value(op[2]), flags=("contract",))
    else:
        operation = {"*": builder.fmul, "+": builder.fadd, "-": builder.fsub}[op[0]]
        values[op[1]] = operation(value(op[2]), value(op[3]), flags=("contract",))


def vector_sincos(builder, x):
    """(sin x, cos x) of an ``<8 x double>`` in registers, lane by lane as ``sincos.sincos`` computes
    them (the reduction by pi/2, the two series, the quadrant's selects); a lane with |x| >=
    ``SINCOS_LIMIT`` or not a number (never a joint angle in practice, but accepted) takes the C
    library's sin and cos (``llvm.sin``/``llvm.cos``, as Numba's ``math.sin``) in a branch that is
    not taken otherwise."""
    from llvmlite import ir

    from dynid.dynamics import sincos as sc

    vec = ir.VectorType(ir.DoubleType(), WIDTH)
    module = builder.module

    def intrinsic_of(name):
        return module.globals.get(name) or ir.Function(module, ir.FunctionType(vec, [vec]), name)

    floor = intrinsic_of("llvm.floor.v8f64")

    def k(v):
        return ir.Constant(vec, [float(v)] * WIDTH)

    def mul(a, b):
        return builder.fmul(a, b, flags=("contract",))

    def add(a, b):
        return builder.fadd(a, b, flags=("contract",))

    def sub(a, b):
        return builder.fsub(a, b, flags=("contract",))

    n = builder.call(floor, [add(mul(x, k(sc.TWO_OVER_PI)), k(0.5))])
    r = sub(sub(sub(x, mul(n, k(sc.PIO2_1))), mul(n, k(sc.PIO2_2))), mul(n, k(sc.PIO2_3)))
    z = mul(r, r)

    def horner(coefficients):
        acc = k(coefficients[-1])
        for c in reversed(coefficients[:-1]):
            acc = add(k(c), mul(z, acc))
        return acc

    s = add(r, mul(mul(r, z), horner([sc.S1, sc.S2, sc.S3, sc.S4, sc.S5, sc.S6, sc.S7, sc.S8])))
    c = add(k(1.0), mul(z, horner([sc.C1, sc.C2, sc.C3, sc.C4, sc.C5, sc.C6, sc.C7, sc.C8, sc.C9])))
    quadrant = sub(n, mul(k(4.0), builder.call(floor, [mul(n, k(0.25))])))
    odd = builder.or_(builder.fcmp_ordered("==", quadrant, k(1.0)), builder.fcmp_ordered("==", quadrant, k(3.0)))
    sin_x, cos_x = builder.select(odd, c, s), builder.select(odd, s, c)
    sin_x = builder.select(builder.fcmp_ordered(">=", quadrant, k(2.0)), builder.fneg(sin_x), sin_x)
    flip = builder.or_(builder.fcmp_ordered("==", quadrant, k(1.0)), builder.fcmp_ordered("==", quadrant, k(2.0)))
    cos_x = builder.select(flip, builder.fneg(cos_x), cos_x)
    large = builder.fcmp_unordered(">=", builder.call(intrinsic_of("llvm.fabs.v8f64"), [x]), k(SINCOS_LIMIT))
    start = builder.basic_block
    with builder.if_then(builder.icmp_unsigned("!=", builder.bitcast(large, ir.IntType(WIDTH)),
                                               ir.Constant(ir.IntType(WIDTH), 0)), likely=False):
        library = (builder.select(large, builder.call(intrinsic_of("llvm.sin.v8f64"), [x]), sin_x),
                   builder.select(large, builder.call(intrinsic_of("llvm.cos.v8f64"), [x]), cos_x))
        taken = builder.basic_block
    result = []
    for fast, slow in zip((sin_x, cos_x), library):
        phi = builder.phi(vec)
        phi.add_incoming(fast, start)
        phi.add_incoming(slow, taken)
        result.append(phi)
    return tuple(result)


def group_program(program, constant_names, slots: int, n: int, phases: bool, stored):
    """Intrinsic ``run(buf, cur, prev, kv, g, y, lmap, orders, which, base, stride, q, dq, ddq, pad, k0, short)``:
    the program on the lanes 8 g .. 8 g + 8 of the block of samples k0 .. k0 + LANES, in the
    workspace at buf[cur:] (flat float64, row r's lanes from cur + r LANES), its constants from kv (in
    the order of ``constant_names``); and, spread evenly through it, ``slots`` line slots: slot s
    writes line orders[which, s] of ``lmap`` (``regressor.line_map``; none when negative) from the
    same lanes of the workspace at buf[prev:]: lane t's line to y[base + t stride + lmap[l, 8]] by a
    non-temporal store, after an 8 x 8 transpose in registers (as ``tiles.lines8``). buf, cur, prev
    and y + base + lmap[l, 8] on whole cache lines. The function that holds it realigns its stack
    frame to 64 bytes (module docstring).

    The block's lanes are loaded in the program's registers: a load of joint i's q, dq or ddq row
    reads q[k0 + 8 g + t, i] (t = 0 .. 7; with ``phases``, lanes in phase order, q[k0 + g + 4 t, i];
    q, dq, ddq C-contiguous: eight loads at constant offsets from one pointer), or with ``short`` (a
    block of fewer samples) pad[0, 8 g + t, i] (pad[1]: dq, pad[2]: ddq; the caller puts the block's
    samples there and zeros after them), and its cosine and sine rows are computed there once per joint (``vector_sincos``; computed at every
    load of them instead, the program was slower: docs/performance.md); of these rows only those in
    ``stored`` (the ones the line map reads) are stored to the workspace, at the program's start."""
    from llvmlite import ir
    from numba import types
    from numba.extending import intrinsic

    i32, i64 = ir.IntType(32), ir.IntType(64)
    vec = ir.VectorType(ir.DoubleType(), WIDTH)
    index = {name: e for e, name in enumerate(constant_names)}
    operations = sum(op[0] not in ("load", "store") for op in program)
    after = [(s + 1) * operations // (slots + 1) for s in range(slots)]
    kinds = {R_Q: "q", R_QD: "dq", R_QDD: "ddq", R_C: "c", R_S: "s"}
    inputs = {i * JR + r: (kind, i) for i in range(n) for r, kind in kinds.items()}

    @intrinsic
    def run(typingctx, buf, cur, prev, kv, g, y, lmap, orders, which, base, stride, q, dq, ddq, pad, k0, short):
        if any(a.layout != "C" for a in (q, dq, ddq, pad)):
            return None  # rows of n numbers one after another: the loads' offsets are constants
        signature = types.void(buf, cur, prev, kv, g, y, lmap, orders, which, base, stride, q, dq, ddq, pad, k0,
                               short)

        def codegen(context, builder, sig, args):
            set.add(builder.function.attributes, '"stackrealign"')  # spilled vectors on whole lines
            data, kvd, out, table, order = (context.make_array(sig.args[a])(context, builder, args[a]).data
                                            for a in (0, 3, 5, 6, 7))
            sources = [context.make_array(sig.args[a])(context, builder, args[a]).data for a in (11, 12, 13, 14)]

            def integer(a):
                return context.cast(builder, args[a], sig.args[a], types.int64)

            group = integer(4)
            lane0 = builder.mul(group, ir.Constant(i64, WIDTH))
            here, there = builder.add(integer(1), lane0), builder.add(integer(2), lane0)
            base_v, stride_v = integer(9), integer(10)
            order0 = builder.mul(integer(8), ir.Constant(i64, slots))
            first = group if phases else lane0  # lane 0's sample in the block
            padded = builder.icmp_signed("!=", integer(16), ir.Constant(i64, 0))
            row_bytes = ir.Constant(i64, 8 * n)
            starts = []  # lane 0's row of q, dq, ddq (of pad[0], pad[1], pad[2] for a short block)
            for a in range(3):
                in_q = builder.gep(builder.bitcast(sources[a], ir.IntType(8).as_pointer()),
                                   [builder.mul(builder.add(integer(15), first), row_bytes)])
                in_pad = builder.gep(builder.bitcast(sources[3], ir.IntType(8).as_pointer()),
                                     [builder.mul(builder.add(ir.Constant(i64, a * LANES), first), row_bytes)])
                starts.append(builder.select(padded, in_pad, in_q))
            note = builder.module.add_metadata([ir.Constant(i32, 1)])
            barrier = ir.InlineAsm(ir.FunctionType(ir.VoidType(), []), "", "~{memory}", side_effect=True)
            values, made = {}, {}

            def at(pointer, offset):
                return builder.bitcast(builder.gep(pointer, [offset]), vec.as_pointer())

            def value(code):
                return operand(builder, values, index, kvd, code)

            def input_row(r):
                """The lanes of input row r in a register: read from q, dq or ddq, or sin / cos of q."""
                kind, joint = inputs[r]
                if kind in ("c", "s"):
                    if joint not in made:
                        made[joint] = vector_sincos(builder, input_row(joint * JR + R_Q))
                    return made[joint][1 if kind == "c" else 0]
                start = starts[("q", "dq", "ddq").index(kind)]
                lanes_v = ir.Constant(vec, ir.Undefined)
                for t in range(WIDTH):
                    where = ir.Constant(i64, 8 * (t * (4 if phases else 1) * n + joint))
                    x = builder.load(builder.bitcast(builder.gep(start, [where]), ir.DoubleType().as_pointer()))
                    lanes_v = builder.insert_element(lanes_v, x, ir.Constant(i32, t))
                return lanes_v

            def write_slot(s):
                line = builder.load(builder.gep(order, [builder.add(order0, ir.Constant(i64, s))]))
                with builder.if_then(builder.icmp_signed(">=", line, ir.Constant(i64, 0)), likely=True):
                    first_entry = builder.mul(line, ir.Constant(i64, 9))
                    offsets = [builder.load(builder.gep(table, [builder.add(first_entry, ir.Constant(i64, r))]))
                               for r in range(9)]
                    rows = [builder.load(at(data, builder.add(offsets[r], there)), align=8)  # + 1 lane: the
                            for r in range(8)]                                                # next sample's
                    rows = transpose8(builder, rows)
                    d = builder.add(base_v, offsets[8])
                    for t in range(8):
                        where = builder.add(d, builder.mul(stride_v, ir.Constant(i64, t)))
                        builder.store(rows[t], at(out, where), align=64).set_metadata("nontemporal", note)
                builder.call(barrier, [])

            for r in sorted(stored):  # the input rows the line map reads, into the workspace
                builder.store(input_row(r), at(data, builder.add(ir.Constant(i64, r * LANES), here)), align=64)
            done, slot = 0, 0
            for op in program:
                while slot < slots and after[slot] <= done:
                    write_slot(slot)
                    slot += 1
                if op[0] == "load" and op[2] in inputs:
                    values[op[1]] = input_row(op[2])
                    continue
                if op[0] == "load":
                    values[op[1]] = builder.load(at(data, builder.add(ir.Constant(i64, op[2] * LANES), here)),
                                                 align=64)
                    continue
                if op[0] == "store":
                    builder.store(value(op[2]), at(data, builder.add(ir.Constant(i64, op[1] * LANES), here)),
                                  align=64)
                    continue
                arithmetic(builder, values, op, value)
                done += 1
            while slot < slots:
                write_slot(slot)
                slot += 1
            return context.get_dummy_value()

        return signature, codegen

    return run


@nb.njit(cache=True, inline="always")
def short_block(q, dq, ddq, k0, stop, pad):
    """0 when the block from sample k0 is whole (LANES samples before ``stop``), else its sample count
    m, its samples' q, dq, ddq copied into pad[0, :m], pad[1, :m], pad[2, :m] (zeros after them: the
    last block of a stretch, once) for ``group_program`` to read there."""
    m = stop - k0
    if m >= LANES:
        return 0
    for k in range(m):
        for i in range(q.shape[1]):
            pad[0, k, i], pad[1, k, i], pad[2, k, i] = q[k0 + k, i], dq[k0 + k, i], ddq[k0 + k, i]
    return m


@nb.njit(cache=True, inline="always")
def straddling_parts(buf, prev, lmap, flat, kp, stride):
    """The numbers of the line that the block's last sample shares with the next block's first (the
    last line of ``lmap`` when it straddles two samples), by ordinary stores: samples 24 .. 31 their
    own part, samples 25 .. 31 and the block's first its head (what precedes its first whole line);
    the group-3 slots leave that line out (``slot_orders``)."""
    last = lmap.shape[0] - 1
    if last < 0 or lmap[last, 8] + 8 <= stride:  # no line map (read nothing), or no straddling line
        return
    x = lmap[last, 8]
    d = kp * stride
    for t in range(LANES - WIDTH, LANES):
        for r in range(stride - x):
            flat[d + t * stride + x + r] = buf[nb.uint64(prev + lmap[last, r] + t)]
    for t in range(LANES - WIDTH + 1, LANES):
        for r in range(stride - x, 8):
            flat[d + t * stride + x + r - stride] = buf[nb.uint64(prev + lmap[last, r] - 1 + t)]
    for r in range(stride - x, 8):
        flat[d + x + r - stride] = buf[nb.uint64(prev + lmap[last, r] - 1)]


@nb.njit(cache=True, inline="always")
def straddling_phases(buf, prev, table, counts, c, flat, kp, stride):
    """``straddling_parts`` for an odd n (lanes in phase order, ``group_program``): the numbers of the line
    that each sample kp + 3 + 4 u of group 3 (lanes 24 + u) shares with the next, kp + 4 + 4 u, by
    ordinary stores (for u = 7, the next block's first sample: its own part only), and the head of
    sample kp (lane 0). ``c``: group 3's map in ``table`` (``regressor.explicit_phase_plan``)."""
    last = counts[c] - 1
    if last < 0 or table[c, last, 8] + 8 <= stride:
        return
    x = table[c, last, 8]
    for u in range(WIDTH):
        d = (kp + 3 + 4 * u) * stride + x
        for r in range(8 if u < WIDTH - 1 else stride - x):  # lane 24 + u's, then lane u + 1's (offset - 23)
            flat[d + r] = buf[nb.uint64(prev + table[c, last, r] + 24 + u)]
    for r in range(stride - x, 8):
        flat[kp * stride + x + r - stride] = buf[nb.uint64(prev + table[c, last, r] + 23)]


@nb.njit(cache=True)
def write_part_phases(ws, lmaps, counts, m, y, k0):
    """The samples k0 .. k0 + m (m < LANES, lanes in phase order: ``group_program``) of a stretch's
    last block to y by ordinary stores (lines of ``phase_line_maps``' lmaps of each lane group): each
    sample's numbers in its lines and the next sample's in the line it shares with it (below m), and
    sample k0's numbers before its first whole line."""
    stride = y.shape[1] * y.shape[2]
    flat, base, last = y.reshape(-1), k0 * stride, counts[3] - 1
    if last >= 0 and lmaps[3, last, 8] + 8 > stride:
        x = lmaps[3, last, 8]
        for r in range(stride - x, 8):
            flat[base + x + r - stride] = ws[nb.uint64(lmaps[3, last, r] + 23)]
    for t in range(m):
        p, u = t % 4, t // 4
        for line in range(counts[p]):
            x = lmaps[p, line, 8]
            for r in range(8 if x + 8 <= stride or t + 1 < m else stride - x):
                flat[base + t * stride + x + r] = ws[nb.uint64(lmaps[p, line, r] + 8 * p + u)]


def slot_orders(lmap: np.ndarray, stride: int, slots: int) -> np.ndarray:
    """(3, slots) int64: the line of ``lmap`` each line slot writes (-1: none): row 0 for lanes
    0 .. 24 (every line, spread evenly over the slots), row 1 for lanes 24 .. 32 (the line that
    straddles into the next block left out: ``straddling_parts``), row 2 none (a block with no
    previous one)."""
    lines = lmap.shape[0]
    if lines > slots:
        raise ValueError(f"{lines} lines per sample, {slots} slots")
    orders = np.full((3, slots), -1, dtype=np.int64)
    places = (np.arange(lines) * slots) // max(lines, 1)  # distinct, spread over the slots
    orders[0, places] = np.arange(lines)
    orders[1] = orders[0]
    if lines and lmap[-1, 8] + 8 > stride:
        orders[1, places[-1]] = -1
    return orders


def source(robot, slots_count: int) -> str | None:
    """Python source of the explicit kernel's module for the robot's structure with ``slots_count``
    line slots per group (the most lines of a sample's line map over Y's eight places in a line),
    or None (no folded kernel). An odd n's module takes its lanes in phase order (``_PHASE_DRIVERS``)."""
    n = robot.n
    module = folded.kernel_for(robot)
    if module is None:
        return None
    phases = (10 * n * n) % 8 != 0
    constants, parents, slots, gravity = kernel_arrays(robot)
    loops, prologue = joint_loops(folded.source(robot)[0])
    names = sorted(prologue)
    scratch = scratch_row(n, slots)
    used = 10 * slots_used(slots)
    keep = set(range(scratch, scratch + used + 1)) | {int(a) for a in module.ALIAS if a >= 0}
    program = program_of(loops, keep)
    stored = {int(a) for a in module.ALIAS if 0 <= a < n * JR and a % JR in (R_Q, R_QD, R_QDD, R_C, R_S)}
    values = "\n".join(f"    kv[{e}] = {prologue[name]}" for e, name in enumerate(names))
    return "\n".join([*kernel_files.header(_sources_digest(), "explicit " + folded.structure(robot)[:50]),
                      "import numba as nb", "import numpy as np",
                      "from dynid.dynamics.explicit import (group_program, short_block, straddling_parts,",
                      "                                     straddling_phases, workspaces, write_part_phases, GROUPS)",
                      "from dynid.dynamics.lanes import CHUNK, LANES",
                      "from dynid.dynamics.regressor import write_lines, write_lines_phases",
                      "from dynid.dynamics.tiles import store_fence", "",
                      f"PROGRAM = {program!r}", f"NAMES = {tuple(names)!r}", f"SLOTS = {slots_count}",
                      f"PHASES = {phases}",
                      f"ALIAS = np.array({[int(a) for a in module.ALIAS]}, dtype=np.int64)",
                      f"RUN = group_program(PROGRAM, NAMES, SLOTS, {n}, PHASES, {sorted(stored)!r})", "", "",
                      "@nb.njit(cache=True)", "def constant_values(constants, gravity):",
                      f"    kv = np.empty({len(names)})", values, "    return kv",
                      _PHASE_DRIVERS if phases else _DRIVERS])


_DRIVERS = '''

@nb.njit(cache=True, nogil=True)
def range_of(q, dq, ddq, constants, slots, gravity, y, start, stop, lmap, orders):
    """Y[start:stop] in this thread (dynid.dynamics.explicit): blocks with the previous block's lines
    inside their program, then the last block's lines (a short block's too) by regressor.write_lines."""
    if not matches(y, start, lmap):
        raise ValueError("the line map is not the one of this Y's place in a cache line")
    kv = constant_values(constants, gravity)
    buf, size = workspaces(q.shape[1], slots, constants, gravity)
    spare = np.zeros(16)
    keep = spare[(-(spare.ctypes.data // 8)) % 8:][:8]
    flat = y.reshape(-1)
    stride = y.shape[1] * y.shape[2]
    blocks = (stop - start + LANES - 1) // LANES
    pad = np.zeros((3, LANES, q.shape[1]))  # a short block's q, dq, ddq and zeros after them
    cur, prev = 0, size
    for b in range(blocks):  # one call of the program (it compiles for seconds), a short last block too
        k0 = start + b * LANES
        m = short_block(q, dq, ddq, k0, stop, pad)
        kp = k0 - LANES
        for g in range(GROUPS):  # the block's lanes read in the program (no lane past sample stop - 1)
            RUN(buf, cur, prev, kv, g, flat, lmap, orders, 2 if b == 0 else (1 if g == GROUPS - 1 else 0),
                kp * stride + 8 * g * stride, stride, q, dq, ddq, pad, k0, m)
        if b > 0:
            straddling_parts(buf, prev, lmap, flat, kp, stride)
        cur, prev = prev, cur
    if blocks > 0:
        last = start + (blocks - 1) * LANES
        write_lines(buf[prev:prev + size], lmap, stop - last, y, last, keep, False, False)
    store_fence()


@nb.njit(cache=True, nogil=True)
def regressor_serial(q, dq, ddq, constants, slots, gravity, y, lmap, orders):
    """Y of the whole batch on this thread (``range_of``; start an int64: one compiled range_of
    serves this and regressor_parallel)."""
    range_of(q, dq, ddq, constants, slots, gravity, y, np.int64(0), q.shape[0], lmap, orders)


@nb.njit(cache=True, parallel=True)
def regressor_parallel(q, dq, ddq, constants, slots, gravity, y, lmap, orders, threads):
    """Y of the batch in ``threads`` stretches (``range_of`` each; the line map checked here: an
    exception raised in a parallel loop would not reach the caller)."""
    count = q.shape[0]
    parts = max(1, min(threads, count // CHUNK))
    if not matches(y, 0, lmap):
        raise ValueError("the line map is not the one of this Y's place in a cache line")
    for t in nb.prange(parts):
        range_of(q, dq, ddq, constants, slots, gravity, y, t * count // parts, (t + 1) * count // parts, lmap,
                 orders)


@nb.njit(cache=True)
def matches(y, start, lmap):
    """Whether ``lmap`` is the line map of Y's place in a cache line (every sample starts at one place)."""
    return lmap.shape[0] == 0 or (y.ctypes.data // 8 + lmap[0, 8]) % 8 == 0
'''


_PHASE_DRIVERS = '''

@nb.njit(cache=True, nogil=True)
def range_of(q, dq, ddq, constants, slots, gravity, y, start, stop, table, counts, orders):
    """Y[start:stop] in this thread for an odd n (dynid.dynamics.explicit): whole blocks, their lanes in
    phase order, with the previous block's lines inside their program (lane group g: the map of its
    samples' place in a line, table[4 g + (start + g) % 4], regressor.explicit_phase_plan), then the
    last block's lines by regressor.write_lines_phases, or by ordinary stores for a short block."""
    if not matches(y, start, table, counts):
        raise ValueError("the line map is not the one of this Y's place in a cache line")
    stride = y.shape[1] * y.shape[2]
    kv = constant_values(constants, gravity)
    buf, size = workspaces(q.shape[1], slots, constants, gravity)
    spare = np.zeros(16)
    keep = spare[(-(spare.ctypes.data // 8)) % 8:][:8]
    flat = y.reshape(-1)
    lmaps = np.empty((GROUPS, table.shape[1], 9), dtype=np.int64)
    groups = np.empty(GROUPS, dtype=np.int64)
    for g in range(GROUPS):
        lmaps[g] = table[4 * g + (start + g) % 4]
        groups[g] = counts[4 * g + (start + g) % 4]
    none = orders.shape[0] - 1
    blocks = (stop - start + LANES - 1) // LANES
    pad = np.zeros((3, LANES, q.shape[1]))  # a short block's q, dq, ddq and zeros after them
    cur, prev = 0, size
    for b in range(blocks):  # one call of the program (it compiles for seconds), a short last block too
        k0 = start + b * LANES
        m = short_block(q, dq, ddq, k0, stop, pad)
        kp = k0 - LANES
        for g in range(GROUPS):  # the block's lanes read in the program, in phase order
            RUN(buf, cur, prev, kv, g, flat, table, orders, none if b == 0 else 4 * g + (start + g) % 4,
                (kp + g) * stride, 4 * stride, q, dq, ddq, pad, k0, m)
        if b > 0:
            straddling_phases(buf, prev, table, counts, 12 + (start + 3) % 4, flat, kp, stride)
        cur, prev = prev, cur
    if blocks > 0:
        last = start + (blocks - 1) * LANES
        if stop - last == LANES:
            write_lines_phases(buf[prev:prev + size], lmaps, groups, y, last, keep, False, False)
        else:
            write_part_phases(buf[prev:prev + size], lmaps, groups, stop - last, y, last)
    store_fence()


@nb.njit(cache=True, nogil=True)
def regressor_serial(q, dq, ddq, constants, slots, gravity, y, table, counts, orders):
    """Y of the whole batch on this thread (``range_of``; start an int64: one compiled range_of
    serves this and regressor_parallel)."""
    range_of(q, dq, ddq, constants, slots, gravity, y, np.int64(0), q.shape[0], table, counts, orders)


@nb.njit(cache=True, parallel=True)
def regressor_parallel(q, dq, ddq, constants, slots, gravity, y, table, counts, orders, threads):
    """Y of the batch in ``threads`` stretches (``range_of`` each; the line maps checked here: an
    exception raised in a parallel loop would not reach the caller)."""
    count = q.shape[0]
    parts = max(1, min(threads, count // CHUNK))
    for t in range(parts):
        if not matches(y, t * count // parts, table, counts):
            raise ValueError("the line map is not the one of this Y's place in a cache line")
    for t in nb.prange(parts):
        range_of(q, dq, ddq, constants, slots, gravity, y, t * count // parts, (t + 1) * count // parts, table,
                 counts, orders)


@nb.njit(cache=True)
def matches(y, start, table, counts):
    """Whether the maps that a stretch from sample ``start`` takes from ``table`` (lane group g: map
    4 g + (start + g) % 4) are those of its samples' places in a cache line."""
    stride = y.shape[1] * y.shape[2]
    for g in range(GROUPS):
        c = 4 * g + (start + g) % 4
        if counts[c] > 0 and (y.ctypes.data // 8 + (start + g) * stride + table[c, 0, 8]) % 8 != 0:
            return False
    return True
'''


@nb.njit(cache=True)
def workspaces(n, slots, constants, gravity):
    """(buffer, size): two workspaces of ``lanes.new_workspace`` (with a zero row after the blocks'
    rows) in one buffer, at buf[0:] and buf[size:], both on whole cache lines."""
    ws = new_workspace(n, slots, constants, gravity, 10 * slots_used(slots) + 2)
    size = (ws.size + 7) // 8 * 8
    raw = np.zeros(2 * size + 8)
    buf = raw[(-(raw.ctypes.data // 8)) % 8:][:2 * size]
    buf[:ws.size] = ws
    buf[size:size + ws.size] = ws
    return buf, size


@functools.cache
def _sources_digest() -> str:
    """Digest of the sources a generated module calls: a change makes a new module (folded's rule)."""
    digest = hashlib.sha256(folded._sources_digest().encode())
    digest.update(Path(__file__).read_bytes())
    return digest.hexdigest()[:16]


def enabled() -> bool:
    """The explicit kernel is used when Numba compiles for a CPU with AVX2 and FMA or AVX-512
    (``wide_vectors``), unless ``DYNID_EXPLICIT_KERNELS=0`` (and when folded kernels are)."""
    return os.environ.get("DYNID_EXPLICIT_KERNELS", "1") != "0" and folded.enabled() and wide_vectors()


@functools.cache
def wide_vectors() -> bool:
    """Whether Numba compiles for AVX2 with FMA or for AVX-512 (NUMBA_CPU_FEATURES when set, else the
    host's). Before the program loaded its own lanes, AVX2's 16 registers of four doubles made it slower
    than the folded kernel there (er3a 0.150 against 0.143 us per sample, 2026-11-27 01:48 UTC); with
    them loaded in the program it is faster on AVX2 too (all kernels compiled for haswell on the AMD EPYC
    family 25 model 17, one thread, CPU us per sample, best of 10 turns taking turns with the folded
    kernel, 05:38 UTC, load 0.9-1.5: er3a 0.126 against 0.151, iiwa14 0.189 against 0.205, solo12 0.169
    against 0.189). Older x86-64 targets (SSE only) keep the folded kernel."""
    features = nb.config.CPU_FEATURES
    if features:
        flags = features.split(",")
        return "+avx512f" in flags or ("+avx2" in flags and "+fma" in flags)
    if nb.config.CPU_NAME not in (None, "host"):
        return False  # a named CPU without its features: not known to have AVX2
    host = llvm.get_host_cpu_features()
    return bool(host.get("avx512f", False) or (host.get("avx2", False) and host.get("fma", False)))


_modules: dict = {}


def kernel_for(robot, slots_count: int):
    """The generated explicit module of the robot's structure (``source``), or None (no folded kernel);
    cached on the robot and per source."""
    cached = robot.__dict__.get("_explicit_kernel", False)
    if cached is not False:
        return cached
    text = source(robot, slots_count)
    module = None
    if text is not None:
        key = hashlib.sha256(text.encode()).hexdigest()[:20]
        if key not in _modules:
            _modules[key] = kernel_files.load(text, key, _sources_digest())
        module = _modules[key]
    robot.__dict__["_explicit_kernel"] = module
    return module

