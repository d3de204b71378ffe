"""Lane rows to sample rows: a block of the workspace transposed in registers, 4 x 4 at a time.

The lane kernels (``lanes.py``) compute each number of Y for 16 samples at once, as a row of
lanes; Y stores a sample's numbers next to each other. Copying one number at a time costs a
load and a store each and, written as a loop, LLVM turns the strided loads into gathers
(slow, most of all on AMD). Here a tile of 4 rows x 4 lanes is loaded as four vectors,
transposed with four unpack and four lane-crossing shuffles (the textbook 4 x 4 transpose of
SIMD code, e.g. Intel's optimization manual, "matrix transposition"), and stored as four
vectors of 4 consecutive numbers of 4 samples: a quarter of the instructions, on any x86 with
AVX (and on other targets, where LLVM lowers the same vector operations).

The tiles are LLVM IR written with llvmlite (``numba.extending.intrinsic``): four vector
loads, the shuffles, four vector stores, no aliasing questions left to the compiler.

For a Y that does not fit the caches, ``stream_samples`` copies whole samples from a small
stage to Y by non-temporal stores of whole cache lines (``stream8``, LLVM's ``!nontemporal``:
vmovntpd on x86, no read of the line before it is written), only the lines that hold a non-zero
block, then ``store_fence`` orders them (dynamics/regressor.py, "Writing a Y larger than the
last-level cache"). ``lines8`` goes without the stage where a sample of Y is whole lines: eight
rows of eight lanes transposed in registers (three butterfly stages, 24 shuffles) into eight whole
lines of eight samples, each stored past the caches; ``lines8_keep`` keeps the last of them in a
buffer, for a line whose next sample is not computed yet.
"""

from __future__ import annotations

import llvmlite.binding as llvm
import numba as nb
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from dynid.dynamics.lanes import LANES

_I32, _I64, _F64 = ir.IntType(32), ir.IntType(64), ir.DoubleType()


def _mask(*lanes):
    return ir.Constant(ir.VectorType(_I32, len(lanes)), [ir.Constant(_I32, x) for x in lanes])


def _vector_at(builder, data, index, width):
    return builder.bitcast(builder.gep(data, [index]), ir.VectorType(_F64, width).as_pointer())


def _tile(rows):
    """Intrinsic (ws, o, y, d, stride): rows x 4 numbers from ws, row r lane t at
    o + r LANES + t, to y[d + t stride + r] (ws and y 1-D float64, o unsigned, d and stride
    int64)."""

    @intrinsic
    def tile(typingctx, ws, o, y, d, stride):
        signature = types.void(ws, o, y, d, stride)

        def codegen(context, builder, sig, args):
            ws_v, o_v, y_v, d_v, stride_v = args
            src = context.make_array(sig.args[0])(context, builder, ws_v).data
            dst = context.make_array(sig.args[2])(context, builder, y_v).data
            r = [builder.load(_vector_at(builder, src, builder.add(o_v, ir.Constant(_I64, a * LANES)), 4), align=8)
                 for a in range(rows)]
            if rows == 4:
                t0 = builder.shuffle_vector(r[0], r[1], _mask(0, 4, 2, 6))
                t1 = builder.shuffle_vector(r[0], r[1], _mask(1, 5, 3, 7))
                t2 = builder.shuffle_vector(r[2], r[3], _mask(0, 4, 2, 6))
                t3 = builder.shuffle_vector(r[2], r[3], _mask(1, 5, 3, 7))
                out = [builder.shuffle_vector(t0, t2, _mask(0, 1, 4, 5)), builder.shuffle_vector(t1, t3, _mask(0, 1, 4, 5)),
                       builder.shuffle_vector(t0, t2, _mask(2, 3, 6, 7)), builder.shuffle_vector(t1, t3, _mask(2, 3, 6, 7))]
            else:  # two rows: sample t's pair is (r0[t], r1[t])
                out = [builder.shuffle_vector(r[0], r[1], _mask(t, 4 + t)) for t in range(4)]
            for t in range(4):
                index = builder.add(d_v, builder.mul(stride_v, ir.Constant(_I64, t)))
                builder.store(out[t], _vector_at(builder, dst, index, rows), align=8)
            return context.get_dummy_value()

        return signature, codegen

    return tile


tile4 = _tile(4)
tile2 = _tile(2)


@nb.njit(cache=True, inline="always")
def lanes_to_samples(ws, o, rows, m, y, d, stride):
    """y[d + k stride + r] = lane k of workspace row r after offset o (``lanes.at``), for the
    rows 0 .. rows (an even count) and the lanes 0 .. m; ws and y flat float64 arrays."""
    k = 0
    while k + 4 <= m:
        r = 0
        while r + 4 <= rows:
            tile4(ws, o + nb.uint64(r * LANES + k), y, d + k * stride + r, stride)
            r += 4
        if r < rows:
            tile2(ws, o + nb.uint64(r * LANES + k), y, d + k * stride + r, stride)
        k += 4
    for k in range(k, m):  # the last samples of a short block, one number at a time
        for r in range(rows):
            y[d + k * stride + r] = ws[o + nb.uint64(r * LANES + k)]


_X86 = llvm.get_process_triple().startswith(("x86_64", "i386", "i686"))


@intrinsic
def stream8(typingctx, src, so, dst, d):
    """dst[d : d + 8] = src[so : so + 8] by one non-temporal store (past the caches, no read of
    the line it fills: LLVM's !nontemporal, vmovntpd on x86); src + so and dst + d must be
    64-byte aligned."""
    signature = types.void(src, so, dst, d)

    def codegen(context, builder, sig, args):
        src_v, so_v, dst_v, d_v = args
        s = context.make_array(sig.args[0])(context, builder, src_v).data
        y = context.make_array(sig.args[2])(context, builder, dst_v).data
        x = builder.load(_vector_at(builder, s, so_v, 8), align=64)
        store = builder.store(x, _vector_at(builder, y, d_v, 8), align=64)
        store.set_metadata("nontemporal", builder.module.add_metadata([ir.Constant(_I32, 1)]))
        return context.get_dummy_value()

    return signature, codegen


@intrinsic
def store_fence(typingctx):
    """Order the non-temporal stores before every later store (sfence on x86, whose NT stores are
    weakly ordered; a full fence elsewhere), so other threads see Y whole after the kernel."""
    signature = types.void()

    def codegen(context, builder, sig, args):
        if _X86:
            fn = ir.Function(builder.module, ir.FunctionType(ir.VoidType(), []), "llvm.x86.sse.sfence") \
                if "llvm.x86.sse.sfence" not in builder.module.globals else builder.module.globals["llvm.x86.sse.sfence"]
            builder.call(fn, [])
        else:
            builder.fence("seq_cst")
        return context.get_dummy_value()

    return signature, codegen


@nb.njit(cache=True, inline="always")
def stage_shift(stage, y, d):
    """Where in the flat ``stage`` (8 numbers longer than its samples) to put samples bound for
    flat y[d:], so that both have the same place in a cache line: then ``stream_samples`` loads
    and stores whole aligned lines."""
    return (y.ctypes.data // 8 + d - stage.ctypes.data // 8) % 8


@nb.njit(cache=True)
def stream_samples(stage, shift, total, y, d, lines, count):
    """y[d : d + total] = stage[shift : shift + total] (flat float64 arrays; shift from
    ``stage_shift``) on the lines of y that hold a non-zero: the whole cache lines that start
    at the offsets p + lines[:count] from d, p = 0, P, 2 P, ... (P = lines[count], a whole
    number of lines; ``regressor.hot_lines``), written in order by non-temporal stores; the
    numbers before the first and after the last whole line by ordinary stores. The other whole
    lines are left alone (they hold only zeros, which y holds already). Call ``store_fence``
    after the last."""
    head = min(total, (8 - (y.ctypes.data // 8 + d) % 8) % 8)  # y's numbers are 8-byte aligned (float64)
    for r in range(head):
        y[d + r] = stage[shift + r]
    end = head + (total - head) // 8 * 8  # the whole lines are stage[shift + head : shift + end]
    period = lines[count]
    p = 0
    while p + period + head + 8 <= end:  # every line of this period inside the whole lines
        for x in lines[:count]:
            stream8(stage, shift + p + x, y, d + p + x)
        p += period
    while p < end:
        for x in lines[:count]:
            if p + x + 8 <= end:
                stream8(stage, shift + p + x, y, d + p + x)
        p += period
    for r in range(end, total):
        y[d + r] = stage[shift + r]


def _lines8_codegen(keep_last, nontemporal=True):
    """Code of ``lines8`` (``keep_last`` False) or ``lines8_keep`` (True); ``nontemporal`` False:
    ordinary stores (bench/stage_copies.py)."""

    def codegen(context, builder, sig, args):
        src = context.make_array(sig.args[0])(context, builder, args[0]).data
        dst = context.make_array(sig.args[9])(context, builder, args[9]).data
        d_v, stride_v = args[10], args[11]
        rows = [builder.load(_vector_at(builder, src, args[1 + r], 8), align=8) for r in range(8)]
        for s in (1, 2, 4):
            for i in range(8):
                if i & s:
                    continue
                x, z = rows[i], rows[i + s]
                low = [t if not t & s else 8 + t - s for t in range(8)]
                high = [t + s if not t & s else 8 + t for t in range(8)]
                rows[i] = builder.shuffle_vector(x, z, _mask(*low))
                rows[i + s] = builder.shuffle_vector(x, z, _mask(*high))
        note = builder.module.add_metadata([ir.Constant(_I32, 1)])
        for t in range(7 if keep_last else 8):
            index = builder.add(d_v, builder.mul(stride_v, ir.Constant(_I64, t)))
            store = builder.store(rows[t], _vector_at(builder, dst, index, 8), align=64)
            if nontemporal:
                store.set_metadata("nontemporal", note)
        if keep_last:  # line 7 into keep[ko : ko + 8] by an ordinary store (it stays in L1)
            kept = context.make_array(sig.args[12])(context, builder, args[12]).data
            builder.store(rows[7], _vector_at(builder, kept, args[13], 8), align=8)
        return context.get_dummy_value()

    return codegen


@intrinsic
def lines8(typingctx, ws, o0, o1, o2, o3, o4, o5, o6, o7, y, d, stride):
    """Eight whole cache lines of y from eight workspace rows: row r's lanes o_r .. o_r + 8 of ws
    (flat float64) transposed in registers (three butterfly stages of shuffles), so that line t,
    y[d + t stride : d + t stride + 8], gets lane t of each row, stored by a non-temporal store
    (y + d and stride 8-number aligned: whole lines)."""
    return types.void(ws, o0, o1, o2, o3, o4, o5, o6, o7, y, d, stride), _lines8_codegen(False)


@intrinsic
def lines8_keep(typingctx, ws, o0, o1, o2, o3, o4, o5, o6, o7, y, d, stride, keep, ko):
    """``lines8`` but for its last line, lane 7 of the rows: stored to keep[ko : ko + 8] by an
    ordinary store instead of to y, for a line whose numbers of the next sample are not in the lanes
    yet (the line a block's last sample shares with the next block: ``regressor.write_lines``)."""
    return (types.void(ws, o0, o1, o2, o3, o4, o5, o6, o7, y, d, stride, keep, ko), _lines8_codegen(True))
