"""Joint-torque regressor Y(q, dq, ddq) with tau = Y theta (rigid body), batched and compiled.

For link j the Newton-Euler wrench about its origin is linear in its parameters theta_j
(thesis eq. 3.14 order [m, mx, my, mz, Ixx, Ixy, Ixz, Iyy, Iyz, Izz]):

    f_j = m a + dw x h + w x (w x h)
    n_j = I dw + w x (I w) + h x a            (a: classical acceleration of the origin,
                                               gravity included as base acceleration -g)

Joint i (an ancestor of j, or j itself) carries tau_i = S_i^(j) . (n_j, f_j), with
S_i^(j) = (u, s) its motion subspace expressed in frame j. Collecting the terms of each
parameter (s . (dw x h) = h . (s x dw), u . (h x a) = h . (a x u), u . (w x I w) = (u x w) . I w)
gives the block Y[i, 10 j : 10 j + 10]:

    Y_m = s . a                                                                       (R1)
    Y_h = s x dw + w x (w x s) + a x u = M s + a x u                                  (R2)
    Y_I = L(dw)^T u + L(w)^T (u x w) = G u,   L(w) I6 = I w                            (R3)

with M = -[dw]x + w w^T - |w|^2 1 (3 x 3) and G (6 x 3) of link j alone: built once per link
from dw and the six products w_a w_b (``link_terms``: 15 numbers), they leave 36 multiply-adds
per (ancestor, link) pair instead of 57 for the cross products.

Only ancestors couple, so the rest of Y is zero and is not written. The kernels run over blocks
of samples in SIMD lanes (``lanes.py``): after the forward recursion, for each link j the pair
(j, j) uses the constant axis S_j of frame j; each ancestor i's axis is carried down one
motion transform per pair, S_i^(j) = X_{j<-p(j)} S_i^(p(j)) (u = R^T u_p, s = R^T (s_p - t x u_p)),
and the ten numbers of each block go to lane rows of the workspace, ordered as Y's rows hold
them. Then each run of non-zero blocks of a row of Y (``block_runs``: one per joint of a chain)
is transposed to the samples 4 x 4 in registers (``tiles.py``) and stored with vector stores.
The identification's path (``regressor_rows_serial``) copies the lane rows it needs to its own
lane buffer instead, never forming Y. Parallel over blocks of samples; no Python loop over samples.

Writing a Y larger than the last-level cache costs more than computing it, and how much more
depends on the machine's memory (issue 27: an Intel VM with 9 GB/s of store bandwidth kept a
third of the lead this AMD one shows). Stores to part of a cache line make the core read the
line first and write it back later, and the non-zero blocks of a sample are scattered over its
rows. So for such a Y (``stream_stage_samples``) the runs are transposed into a small stage of
whole samples, zeros included, that stays in L1, and the lines of each stage that hold a non-zero
block (``hot_lines``; er3a: 30 of a sample's 45, solo12: 39 of 180) are copied to Y in address
order by non-temporal stores of whole lines (``regressor_streamed``): memory sees each such line
written once and no read; the other lines hold only zeros and are left alone, as in-place stores
leave them. Both give the same numbers bit for bit.

A batch of ``FOLDED_MIN_SAMPLES`` or more runs a kernel written for the robot's structure with its
constant placements folded in (``folded.py``: the same formulas, ``block_formulas.py`` and
``lanes.joint_motion``, without their multiplies by 0 and +-1). It writes a Y larger than the
last-level cache without the stage. When a sample of Y is a whole number of cache lines (10 n^2 a
multiple of 8: an even n), each line that holds a non-zero block is transposed in registers
straight from eight lanes of the workspace, 8 rows x 8 samples (``write_lines``, ``line_map``,
``tiles.lines8``), and stored past the caches. That saves the stage's stores and loads and half
the shuffles: er3a 0.163 -> 0.131 CPU us per sample, solo12 0.223 -> 0.184, the same numbers bit
for bit (AMD EPYC Zen 4, one thread, 2026-11-26, load 4). Unless Y starts a line, a sample's last
line holds the next sample's first numbers; the line that a block's last sample shares with the
next block waits in a buffer of one line until that block is computed, then goes whole past the
caches (``tiles.lines8_keep``; a range's first and last blocks store their parts of it by ordinary
stores, which read the line from memory first). For an odd n, 10 n^2 = 2 mod 8: consecutive
samples start at four places in a line and every fourth at the same one, so a whole block takes
its lanes in that order (``lanes.load_block`` with ``phases``: lanes 8 p .. 8 p + 8 hold the
samples p, p + 4, ..., p + 28) and each of the four groups of eight is written the same way, with
its own line map (``write_lines_phases``, ``phase_line_maps``); the last samples of a stretch that
make no whole block keep the stage (``store_block``); the line that a block shares with the next
waits in the buffer the same way. iiwa14: 0.240 and 0.230 -> 0.194 and 0.178
CPU us per sample, bit for bit (``bench/regressor_passes.py --robots iiwa14``, old and new taking
turns, 2026-11-26, load 6; docs/performance.md).
"""

from __future__ import annotations

import functools
from pathlib import Path

import numba as nb
import numpy as np

from dynid.dynamics import explicit, folded, mimic, recycled, threads
from dynid.dynamics.arrays import joint_arrays
from dynid.dynamics.block_formulas import carry_axis, link_block, link_terms
from dynid.dynamics.lanes import (
    CHUNK, FMA, JR, LANES, OWN_ROW, R_A, R_DV, R_DW, R_K, R_REL, R_T, R_V, R_W, ZERO_ROW, at, cross3, forward_block,
    kernel_arrays, lane, lane3, lanes, load_block, new_workspace, pair_row, put3, scratch_row, slots_used,
)
from dynid.dynamics.tiles import (lanes_to_samples, lines8, lines8_keep, stage_shift, store_fence, stream8,
                                  stream_samples)


@nb.njit(cache=True, inline="always")
def _put_terms(ws, o, k, t):
    """The 15 ``link_terms`` t into lane k of the rows R_K .. R_K + 15 after offset o (written
    out: a loop over a tuple would index it at run time)."""
    put3(ws, o, R_K, k, t[0], t[1], t[2])
    put3(ws, o, R_K + 3, k, t[3], t[4], t[5])
    put3(ws, o, R_K + 6, k, t[6], t[7], t[8])
    put3(ws, o, R_K + 9, k, t[9], t[10], t[11])
    put3(ws, o, R_K + 12, k, t[12], t[13], t[14])


@nb.njit(cache=True, inline="always")
def _get_terms(ws, o, k):
    """The 15 ``link_terms`` of lane k stored by ``_put_terms``."""
    return (lane(ws, o, R_K, k), lane(ws, o, R_K + 1, k), lane(ws, o, R_K + 2, k), lane(ws, o, R_K + 3, k),
            lane(ws, o, R_K + 4, k), lane(ws, o, R_K + 5, k), lane(ws, o, R_K + 6, k), lane(ws, o, R_K + 7, k),
            lane(ws, o, R_K + 8, k), lane(ws, o, R_K + 9, k), lane(ws, o, R_K + 10, k), lane(ws, o, R_K + 11, k),
            lane(ws, o, R_K + 12, k), lane(ws, o, R_K + 13, k), lane(ws, o, R_K + 14, k))


@nb.njit(cache=True, inline="always")
def _put10(ws, o, k, b):
    """The ten numbers b into lane k of the ten rows from offset o."""
    ws[o + k] = b[0]
    ws[o + nb.uint64(LANES) + k] = b[1]
    ws[o + nb.uint64(2 * LANES) + k] = b[2]
    ws[o + nb.uint64(3 * LANES) + k] = b[3]
    ws[o + nb.uint64(4 * LANES) + k] = b[4]
    ws[o + nb.uint64(5 * LANES) + k] = b[5]
    ws[o + nb.uint64(6 * LANES) + k] = b[6]
    ws[o + nb.uint64(7 * LANES) + k] = b[7]
    ws[o + nb.uint64(8 * LANES) + k] = b[8]
    ws[o + nb.uint64(9 * LANES) + k] = b[9]


@nb.njit(cache=True, fastmath=FMA)
def link_blocks(ws, constants, parents, slots, j, scratch):
    """The blocks Y[i, 10 j : 10 j + 10] of link j for every lane of a block after
    ``forward_block``, for every joint i = j, p(j), p(p(j)), ..., each into ten workspace rows
    from row scratch + 10 slots[i, j] (so a joint's blocks follow each other in the order of
    its links: ``pair_slots``). The axis of each ancestor i is carried into frame j,
    S_i^(j) = X_{j<-p} S_i^(p): u = R^T u_p, s = R^T (s_p - t x u_p), kept in the pair rows for
    j's children; j's own axis is constant in its frame. Stores link j's classical acceleration
    a = dv + w x v (rows R_A) and ``link_terms`` (rows R_K) first, for the ancestors' blocks."""
    n = parents.shape[0]
    oj, out = at(j * JR), at(scratch + 10 * slots[j, j])
    su0, su1, su2 = constants[j, 39], constants[j, 40], constants[j, 41]
    sv0, sv1, sv2 = constants[j, 42], constants[j, 43], constants[j, 44]
    for k in range(lanes(ws)):
        w0, w1, w2 = lane3(ws, oj, R_W, k)
        v0, v1, v2 = lane3(ws, oj, R_V, k)
        e0, e1, e2 = lane3(ws, oj, R_DW, k)
        c0, c1, c2 = cross3(w0, w1, w2, v0, v1, v2)
        a0, a1, a2 = lane3(ws, oj, R_DV, k)
        a0, a1, a2 = a0 + c0, a1 + c1, a2 + c2
        put3(ws, oj, R_A, k, a0, a1, a2)
        terms = link_terms(w0, w1, w2, e0, e1, e2)
        _put_terms(ws, oj, k, terms)
        _put10(ws, out, k, link_block(su0, su1, su2, sv0, sv1, sv2, a0, a1, a2, e0, e1, e2, terms))
    p = parents[j]
    i = p
    while i >= 0:
        out = at(scratch + 10 * slots[i, j])
        src, dst = at(pair_row(n, slots[i, p])), at(pair_row(n, slots[i, j]))
        for k in range(lanes(ws)):
            rel = lane3(ws, oj, R_REL, k) + lane3(ws, oj, R_REL + 3, k) + lane3(ws, oj, R_REL + 6, k)
            u, s = carry_axis(rel, lane3(ws, oj, R_T, k), lane3(ws, src, 0, k), lane3(ws, src, 3, k))
            put3(ws, dst, 0, k, u[0], u[1], u[2])
            put3(ws, dst, 3, k, s[0], s[1], s[2])
        for k in range(lanes(ws)):
            u0, u1, u2 = lane3(ws, dst, 0, k)
            s0, s1, s2 = lane3(ws, dst, 3, k)
            e0, e1, e2 = lane3(ws, oj, R_DW, k)
            a0, a1, a2 = lane3(ws, oj, R_A, k)
            _put10(ws, out, k, link_block(u0, u1, u2, s0, s1, s2, a0, a1, a2, e0, e1, e2, _get_terms(ws, oj, k)))
        i = parents[i]


@nb.njit(cache=True)
def block_runs(slots):
    """(R, 3): joint i, first link j and count of each run of links j, j + 1, ... whose blocks
    Y[i, 10 j : 10 j + 10] are non-zero: one contiguous stretch of Y's row i and of the block
    rows of ``link_blocks`` (a chain has one run per joint; a tree numbered depth first too)."""
    n = slots.shape[0]
    runs = np.empty((n * n, 3), dtype=np.int64)
    count = 0
    for i in range(n):
        for j in range(n):
            if slots[i, j] < 0:
                continue
            if count > 0 and runs[count - 1, 0] == i and runs[count - 1, 1] + runs[count - 1, 2] == j:
                runs[count - 1, 2] += 1
            else:
                runs[count, 0], runs[count, 1], runs[count, 2] = i, j, 1
                count += 1
    return runs[:count]


@nb.njit(cache=True)
def regressor_pairs(ws, constants, parents, slots, runs, m, y, k0, blocks=True):
    """The ancestor blocks Y[i, 10 j : 10 j + 10] of the lanes 0 .. m of a block after
    ``forward_block``, written to y[k0 : k0 + m] (N, n, 10 n): every link's blocks in lanes
    (``link_blocks``; ``blocks`` False: in the workspace already), then each run of non-zero blocks
    of a row of Y (``block_runs``) transposed to the samples, 4 numbers of 4 samples at a time
    (``tiles.lanes_to_samples``)."""
    n = slots.shape[0]
    scratch = scratch_row(n, slots)
    if blocks:
        for j in range(n):
            link_blocks(ws, constants, parents, slots, j, scratch)
    flat, stride = y.reshape(-1), n * 10 * n
    for r in range(runs.shape[0]):
        i, j0, count = runs[r, 0], runs[r, 1], runs[r, 2]
        lanes_to_samples(ws, at(scratch + 10 * slots[i, j0]), 10 * count, m, flat, k0 * stride + i * 10 * n + 10 * j0,
                         stride)


@nb.njit(cache=True)
def regressor_rows(ws, constants, parents, slots, m, row_of, xt, k0):
    """The same blocks as ``regressor_pairs``, transposed and selected for a Gram matrix:
    Y[k0 + k, i, c] goes to xt[i, row_of[i, c], k0 + k] (row_of: (n, 10 n), a row past the
    ones in use for the columns not wanted), so each joint's rows are contiguous lanes."""
    n = parents.shape[0]
    scratch = scratch_row(n, slots)
    for j in range(n):
        link_blocks(ws, constants, parents, slots, j, scratch)
        i = j
        while i >= 0:
            o = at(scratch + 10 * slots[i, j])
            for c in range(10):
                row, src = xt[i, row_of[i, 10 * j + c]], o + nb.uint64(c * LANES)
                for k in range(m):
                    row[k0 + k] = ws[src + nb.uint64(k)]
            i = parents[i]


@nb.njit(cache=True)
def hot_lines(lines, stage, shift, runs, n, every=False):
    """The whole cache lines that hold a number of a non-zero block (every line when ``every``:
    a Y in recycled memory, whose zeros must be written too), for samples that start at
    stage[shift] (placed as in Y: ``stage_shift``). The pattern repeats every P samples (P = 1, 2
    or 4: P stride numbers are whole lines, stride = 10 n^2), so ``lines`` gets the offsets x from
    stage[shift] of the lines stage[shift + x : shift + x + 8] that start in the first P
    samples' stretch [h, h + P stride), h the numbers before its first whole line, in increasing
    order, then lines[count] = P stride. Returns count."""
    stride = 10 * n * n
    period = stride
    while period % 8:
        period += stride
    head = (8 - (stage.ctypes.data // 8 + shift) % 8) % 8
    hot = np.full(period // 8, every, dtype=np.bool_)
    for s in range(2 * period // stride):  # a line that starts in the period may end in the next
        for r in range(runs.shape[0]):
            i, j0, count = runs[r, 0], runs[r, 1], runs[r, 2]
            start = s * stride + i * 10 * n + 10 * j0
            for e in range(max(start, head), start + 10 * count):
                if (e - head) // 8 < hot.size:
                    hot[(e - head) // 8] = True
    count = 0
    for line in range(hot.size):
        if hot[line]:
            lines[count] = head + 8 * line
            count += 1
    lines[count] = period
    return count


@nb.njit(cache=True)
def regressor_streamed(ws, constants, parents, slots, runs, m, y, k0, stage, shift, lines, line_count, every,
                       blocks=True):
    """The same Y as ``regressor_pairs``, written past the caches: the blocks in lanes (``blocks``
    as there), then, S samples at a time, the runs transposed into ``stage`` (flat, zero-filled,
    S whole samples and 8 numbers: small enough for L1) and the lines of those samples that hold a
    non-zero block (``lines[:line_count]``, from ``hot_lines``) copied to y[k0 : k0 + m] in
    order by non-temporal stores of whole cache lines (``tiles.stream_samples``). ``shift``: where
    the stage's samples started last time (-1: nowhere yet); returns where they start now (the
    same within a range, as 4 samples are a whole number of lines; on a change the stage is
    cleared, as its zeros must stay where Y's zeros go, and its lines found again) and
    ``line_count``. ``every``: all lines of the samples (``hot_lines``)."""
    n = slots.shape[0]
    scratch = scratch_row(n, slots)
    if blocks:
        for j in range(n):
            link_blocks(ws, constants, parents, slots, j, scratch)
    flat, stride = y.reshape(-1), n * 10 * n
    samples = (stage.size - 8) // stride
    for s0 in range(0, m, samples):
        ms = min(samples, m - s0)
        d = (k0 + s0) * stride
        place = stage_shift(stage, flat, d)
        if place != shift:
            if shift >= 0:
                stage[:] = 0.0
            line_count = hot_lines(lines, stage, place, runs, n, every)
        shift = place
        for r in range(runs.shape[0]):
            i, j0, count = runs[r, 0], runs[r, 1], runs[r, 2]
            lanes_to_samples(ws, at(scratch + 10 * slots[i, j0]) + nb.uint64(s0), 10 * count, ms, stage,
                             shift + i * 10 * n + 10 * j0, stride)
        stream_samples(stage, shift, ms * stride, flat, d, lines, line_count)
    return shift, line_count


@nb.njit(cache=True, nogil=True)
def regressor_range(q, dq, ddq, constants, parents, slots, runs, ws, y, start, stop, stage, every=False):
    """Y[start:stop] of (N, n) q, dq, ddq into y (N, n, 10 n), block by block, in this thread:
    the non-zero blocks stored in place when ``stage`` is empty, else whole samples streamed
    through ``stage``, a zero-filled flat array of S n 10 n + 8 numbers (``regressor_streamed``;
    ``every``: all their lines, zeros included, so y's old contents do not matter). One
    ``store_fence`` at the end orders every non-temporal store of the range."""
    shift = -1
    lines, line_count = np.zeros(5 * q.shape[1] ** 2 + 1, dtype=np.int64), 0  # ``hot_lines``
    for k0 in range(start, stop, LANES):
        m = min(LANES, stop - k0)
        load_block(q, dq, ddq, k0, m, ws)
        forward_block(ws, constants, parents)
        if stage.size == 0:
            regressor_pairs(ws, constants, parents, slots, runs, m, y, k0)
        else:
            shift, line_count = regressor_streamed(ws, constants, parents, slots, runs, m, y, k0, stage, shift, lines,
                                                   line_count, every)
    if stage.size > 0:
        store_fence()


@nb.njit(cache=True)
def store_block(ws, constants, parents, slots, runs, m, y, k0, stage, shift, lines, line_count, every):
    """The blocks of lanes 0 .. m, in the workspace already (a generated kernel's: folded.py), to
    y[k0 : k0 + m]: in place when ``stage`` is empty (``regressor_pairs``), else streamed through
    it (``regressor_streamed``: its arguments and what it returns)."""
    if stage.size == 0:
        regressor_pairs(ws, constants, parents, slots, runs, m, y, k0, False)
        return shift, line_count
    return regressor_streamed(ws, constants, parents, slots, runs, m, y, k0, stage, shift, lines, line_count, every,
                              False)


@nb.njit(cache=True)
def line_map(slots, head, zero, every, alias, next_lane=1):
    """(L, 9): the whole cache lines that start in one sample of Y, its first whole line ``head``
    numbers into it: for each line that holds a number of a non-zero block other than a constant 0
    (every line when ``every``), the workspace offsets (``at``) of the lane rows of its eight
    numbers (row ``zero``, never written, for a number of a zero block or a constant 0; + ``next_lane``
    for a number of the next sample, whose lane is that far from the sample's: the last line
    straddles two samples unless the next one starts a line), and in column 8 its position in the
    sample. ``alias``: for each block row (from ``scratch_row``), ``lanes.OWN_ROW`` (the kernel
    stores it), ``lanes.ZERO_ROW`` (a constant 0) or the row that holds its number (folded.py)."""
    n = slots.shape[0]
    stride, width = 10 * n * n, 10 * n
    scratch = scratch_row(n, slots)
    out = np.empty((stride // 8 + 1, 9), dtype=np.int64)
    count = 0
    for x in range(head, stride, 8):
        hot = every
        for r in range(8):
            p = x + r
            delta = 0
            if p >= stride:
                p, delta = p - stride, next_lane
            i, c = p // width, p % width
            j, a = c // 10, c % 10
            row = zero
            if slots[i, j] >= 0:
                b = 10 * slots[i, j] + a
                row = scratch + b if alias[b] == OWN_ROW else zero if alias[b] == ZERO_ROW else alias[b]
            hot = hot or row != zero
            out[count, r] = row * LANES + delta
        out[count, 8] = x
        count += hot
    return out[:count]


@nb.njit(cache=True)
def fill_aliases(ws, alias, scratch):
    """The block rows that a generated kernel does not store (``line_map``'s ``alias``) filled from
    the rows that hold their numbers, or zeros, for the passes that read every block row
    (``store_block``)."""
    zero = scratch + alias.size
    for b in range(alias.size):
        if alias[b] != OWN_ROW:
            src, dst = at(zero if alias[b] == ZERO_ROW else alias[b]), at(scratch + b)
            for k in range(lanes(ws)):
                ws[dst + k] = ws[src + k]


@nb.njit(cache=True)
def write_lines(ws, lmap, m, y, k0, keep, pending, more):
    """The blocks of lanes 0 .. m (in the workspace) to y[k0 : k0 + m], whose samples are whole
    lines (``line_map``): eight samples at a time, each line of ``lmap`` transposed in registers
    and stored past the caches (``tiles.lines8``: no stage, no read of the line). The line that
    straddles two samples needs the next sample's lane. In a group short of eight samples, and in
    the last group of the range's last block, each sample's own part of it goes by ordinary stores
    (``_own_parts``); in the last group of a block that the range's next block follows (``more``)
    the last sample's line waits in ``keep`` (8 numbers, 64-byte aligned; ``tiles.lines8_keep``)
    and the call returns True: with ``pending`` True the next call fills in its sample k0's numbers
    and writes it whole past the caches (``tiles.stream8``); without, sample k0's numbers before its
    first whole line go by ordinary stores (a range's first block). A partly written line is read
    from memory before it is written: eight of er3a's 960 lines per block were. Call
    ``store_fence`` after the last."""
    stride = y.shape[1] * y.shape[2]
    flat, base, last = y.reshape(-1), k0 * stride, lmap.shape[0]
    if last > 0 and lmap[last - 1, 8] + 8 > stride:  # sample k0's numbers before its first whole line
        x = lmap[last - 1, 8]
        if pending:
            for r in range(stride - x, 8):
                keep[r] = ws[nb.uint64(lmap[last - 1, r] - 1)]
            stream8(keep, 0, flat, base + x - stride)
        else:
            for r in range(stride - x, 8):
                flat[base + x + r - stride] = ws[nb.uint64(lmap[last - 1, r] - 1)]
    kept = False
    k = 0
    while k + 8 <= m:
        for line in range(last):
            x = lmap[line, 8]
            if x + 8 <= stride or k + 9 <= m:
                lines8(ws, nb.uint64(lmap[line, 0] + k), nb.uint64(lmap[line, 1] + k), nb.uint64(lmap[line, 2] + k),
                       nb.uint64(lmap[line, 3] + k), nb.uint64(lmap[line, 4] + k), nb.uint64(lmap[line, 5] + k),
                       nb.uint64(lmap[line, 6] + k), nb.uint64(lmap[line, 7] + k), flat, base + k * stride + x, stride)
            elif more and k + 8 == m:  # its lane 7's next sample is the next block's lane 0
                lines8_keep(ws, nb.uint64(lmap[line, 0] + k), nb.uint64(lmap[line, 1] + k),
                            nb.uint64(lmap[line, 2] + k), nb.uint64(lmap[line, 3] + k), nb.uint64(lmap[line, 4] + k),
                            nb.uint64(lmap[line, 5] + k), nb.uint64(lmap[line, 6] + k), nb.uint64(lmap[line, 7] + k),
                            flat, base + k * stride + x, stride, keep, 0)
                kept = True
            else:
                _own_parts(ws, lmap, line, k, k + 8, m, flat, base, stride)
        k += 8
    for line in range(last):
        _own_parts(ws, lmap, line, k, m, m, flat, base, stride)
    return kept


@nb.njit(cache=True)
def phase_line_maps(slots, y, start, zero, every, alias):
    """(lmaps (4, L, 9), counts (4,)): the ``line_map`` of each of the four places in a cache line
    that the samples start, y[start + p + 4 u] for p = 0 .. 3, of a Y whose sample is not a whole
    number of lines (10 n^2 = 2 mod 8: an odd n; four samples are). With the lanes of
    ``load_block(..., phases=True)`` the next sample of lane 8 p + u is lane 8 (p + 1) + u, and
    that of lane 24 + u (p = 3) is lane u + 1 (of the next block for u = 7). ``alias``: as there."""
    n = slots.shape[0]
    stride = 10 * n * n
    lmaps = np.zeros((4, stride // 8 + 1, 9), dtype=np.int64)
    counts = np.zeros(4, dtype=np.int64)
    for p in range(4):
        head = (8 - (y.ctypes.data // 8 + (start + p) * stride) % 8) % 8
        lmap = line_map(slots, head, zero, every, alias, 8 if p < 3 else 1 - 24)
        counts[p] = lmap.shape[0]
        lmaps[p, :lmap.shape[0]] = lmap
    return lmaps, counts


@nb.njit(cache=True)
def explicit_phase_plan(slots, y, zero, alias, slot_count):
    """(table (16, L, 9), counts (16,), orders (17, slot_count)): the line maps of the explicit kernel for
    a Y whose samples are not whole lines (odd n; ``explicit.py``). Map 4 g + p (``counts``: its lines) is
    ``phase_line_maps``' map of lane group g (lanes 8 g .. 8 g + 8 of ``load_block(..., phases=True)``) for
    samples y[p + 4 u]; its line slots are row 4 g + p of ``orders`` (each entry a line of the table
    as (16 L, 9), -1 none; group 3 without the line that straddles into the next block); row 16: none."""
    n = slots.shape[0]
    stride = 10 * n * n
    size = stride // 8 + 1
    table = np.zeros((16, size, 9), dtype=np.int64)
    counts = np.zeros(16, dtype=np.int64)
    orders = np.full((17, slot_count), -1, dtype=np.int64)
    for g in range(4):
        for p in range(4):
            c = 4 * g + p
            lmap = line_map(slots, (8 - (y.ctypes.data // 8 + p * stride) % 8) % 8, zero, False, alias,
                            8 if g < 3 else 1 - 24)
            lines = lmap.shape[0]
            if lines > slot_count:
                raise ValueError("more lines per sample than the explicit kernel's line slots")
            counts[c] = lines
            table[c, :lines] = lmap
            for line in range(lines):
                if g < 3 or line < lines - 1 or lmap[line, 8] + 8 <= stride:
                    orders[c, line * slot_count // lines] = c * size + line  # spread as slot_orders does
    return table, counts, orders


@nb.njit(cache=True)
def write_lines_phases(ws, lmaps, counts, y, k0, keep, pending, more):
    """``write_lines`` for a Y whose samples are not whole lines (odd n), a whole block of lanes
    loaded with ``load_block(..., phases=True)``: the eight samples k0 + p + 4 u (u = 0 .. 7) of
    lanes 8 p .. 8 p + 8 start at the same place in a line, so each line of their map
    (``phase_line_maps``) is transposed from those lanes in registers and stored past the caches
    for the eight at once (``tiles.lines8`` with a stride of four samples). The line that sample
    k0 + 31 shares with the next block waits in ``keep`` when ``more`` (returns True) and is written
    whole by the next call (``pending``), as in ``write_lines``; else each block's own numbers of it,
    and of the part of sample k0's first line that it shares with the previous one, go by ordinary
    stores. Call ``store_fence`` after the last."""
    stride = y.shape[1] * y.shape[2]
    flat, base = y.reshape(-1), k0 * stride
    last = counts[3] - 1
    if last >= 0 and lmaps[3, last, 8] + 8 > stride:  # sample k0's numbers before its first whole line
        x = lmaps[3, last, 8]
        if pending:
            for r in range(stride - x, 8):
                keep[r] = ws[nb.uint64(lmaps[3, last, r] + 23)]
            stream8(keep, 0, flat, base + x - stride)
        else:
            for r in range(stride - x, 8):
                flat[base + x + r - stride] = ws[nb.uint64(lmaps[3, last, r] + 23)]
    kept = False
    for p in range(4):
        o = nb.uint64(8 * p)
        for line in range(counts[p]):
            x = lmaps[p, line, 8]
            if x + 8 <= stride or p < 3:
                lines8(ws, nb.uint64(lmaps[p, line, 0]) + o, nb.uint64(lmaps[p, line, 1]) + o,
                       nb.uint64(lmaps[p, line, 2]) + o, nb.uint64(lmaps[p, line, 3]) + o,
                       nb.uint64(lmaps[p, line, 4]) + o, nb.uint64(lmaps[p, line, 5]) + o,
                       nb.uint64(lmaps[p, line, 6]) + o, nb.uint64(lmaps[p, line, 7]) + o, flat,
                       base + p * stride + x, 4 * stride)
            elif more:  # samples 4 u + 3: the next one is lane u + 1, of the next block for u = 7 (kept)
                lines8_keep(ws, nb.uint64(lmaps[p, line, 0]) + o, nb.uint64(lmaps[p, line, 1]) + o,
                            nb.uint64(lmaps[p, line, 2]) + o, nb.uint64(lmaps[p, line, 3]) + o,
                            nb.uint64(lmaps[p, line, 4]) + o, nb.uint64(lmaps[p, line, 5]) + o,
                            nb.uint64(lmaps[p, line, 6]) + o, nb.uint64(lmaps[p, line, 7]) + o, flat,
                            base + p * stride + x, 4 * stride, keep, 0)
                kept = True
            else:
                for u in range(8):
                    for r in range(8 if u < 7 else stride - x):
                        flat[base + (4 * u + 3) * stride + x + r] = ws[nb.uint64(lmaps[p, line, r] + 24 + u)]
    return kept


@nb.njit(cache=True, inline="always")
def _own_parts(ws, lmap, line, t0, t1, m, flat, base, stride):
    """Line ``line`` of ``write_lines`` for the samples t0 .. t1 by ordinary stores: each sample's
    numbers in it and, for the line that straddles two samples, the next sample's (below m)."""
    x = lmap[line, 8]
    for t in range(t0, t1):
        for r in range(min(8, stride - x)):
            flat[base + t * stride + x + r] = ws[nb.uint64(lmap[line, r] + t)]
    if x + 8 > stride:
        for t in range(t0 + 1, min(t1 + 1, m)):
            for r in range(stride - x, 8):
                flat[base + t * stride + x + r - stride] = ws[nb.uint64(lmap[line, r] - 1 + t)]


@nb.njit(cache=True, nogil=True)
def regressor_rows_serial(q, dq, ddq, constants, parents, slots, gravity, row_of, xt):
    """``regressor_rows`` for all samples of q, dq, ddq into xt (n, rows, N), GIL released."""
    ws = new_workspace(q.shape[1], slots, constants, gravity, 10 * slots_used(slots))
    for k0 in range(0, q.shape[0], LANES):
        m = min(LANES, q.shape[0] - k0)
        load_block(q, dq, ddq, k0, m, ws)
        forward_block(ws, constants, parents)
        regressor_rows(ws, constants, parents, slots, m, row_of, xt, k0)


@nb.njit(cache=True, parallel=True)
def _regressor_parallel(q, dq, ddq, constants, parents, slots, gravity, y, threads, stage_samples=0, every=False):
    """Y on ``threads`` threads (Numba's count set to it), one stretch of samples each; streamed
    through a stage of ``stage_samples`` samples per thread when > 0 (``regressor_range``)."""
    count, n = q.shape
    runs = block_runs(slots)
    parts = max(1, min(threads, count // CHUNK))
    for t in nb.prange(parts):  # one workspace (and stage) per thread
        ws = new_workspace(n, slots, constants, gravity, 10 * slots_used(slots))
        stage = np.zeros(stage_samples * 10 * n * n + 8 * (stage_samples > 0))
        regressor_range(q, dq, ddq, constants, parents, slots, runs, ws, y, t * count // parts,
                        (t + 1) * count // parts, stage, every)


@nb.njit(cache=True, nogil=True)
def regressor_serial(q, dq, ddq, constants, parents, slots, gravity, y, stage_samples=0, every=False):
    """The whole of Y in the calling thread, GIL released (streaming identification's workers:
    Y stays in cache for the Gram matrix that reads it next, so no ``stage_samples`` there)."""
    n = q.shape[1]
    runs = block_runs(slots)
    ws = new_workspace(n, slots, constants, gravity, 10 * slots_used(slots))
    # start an int64, not the literal 0: one compiled regressor_range serves this and _regressor_parallel
    regressor_range(q, dq, ddq, constants, parents, slots, runs, ws, y, np.int64(0), q.shape[0],
                    np.zeros(stage_samples * 10 * n * n + 8 * (stage_samples > 0)), every)


FOLDED_MIN_SAMPLES = 4096  # smaller batches keep the generic kernel (a generated one compiles once, for 5-15 s)


def touched_lines(slots: np.ndarray) -> float:
    """Cache lines of 64 bytes that one sample's non-zero entries of Y lie in, averaged over the
    eight places a sample can start in a line (8-byte numbers)."""
    n = slots.shape[0]
    runs = block_runs(slots)
    entries = np.concatenate([np.arange(i * 10 * n + 10 * j0, i * 10 * n + 10 * (j0 + count)) for i, j0, count in runs])
    return float(np.mean([np.unique((8 * (entries + shift)) // 64).size for shift in range(8)]))


def stream_stage_samples(robot, y_bytes: int) -> int:
    """Samples of the stage through which ``regressor`` streams Y (0: stores the non-zero blocks in
    place instead). Streaming writes each line of a sample that holds a non-zero block once, past
    the caches: 64 bytes per touched line; in-place stores read each touched line from memory
    before writing it back (a store to part of a line moves all of it): 128 bytes. So streaming
    pays whenever Y is larger than the last-level cache (it would not stay there anyway; a smaller
    Y stays cached for its reader), for every tree. The stage holds as many samples (a multiple
    of 4, at least 4) as fit in the L1 data cache."""
    sample = 80 * robot.n ** 2
    if y_bytes < cache_bytes(3, 32 * 2**20):
        return 0
    return int(min(LANES, max(4, cache_bytes(1, 32 * 2**10) // sample // 4 * 4)))


def cache_bytes(level: int, default: int) -> int:
    """Size of this CPU's level-``level`` data or unified cache (Linux sysfs), else ``default``."""
    return _cache_sizes().get(level, default)


@functools.cache
def _cache_sizes() -> dict:
    sizes = {}
    for index in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*"):
        try:
            kind = (index / "type").read_text().strip()
            level = int((index / "level").read_text())
            text = (index / "size").read_text().strip().upper()
        except (OSError, ValueError):
            continue
        if kind == "Instruction" or not text:
            continue
        scale = {"K": 2**10, "M": 2**20, "G": 2**30}.get(text[-1], 1)
        sizes[level] = int(text.rstrip("KMG")) * scale
    return sizes


def generated_kernel(robot, count: int, folded_kernel: bool | None = None):
    """The generated kernel (``folded.kernel_for``) that ``regressor`` runs for a batch of ``count``
    samples, or None for the generic one (its ``folded_kernel`` argument: None chooses)."""
    if folded_kernel is None:
        folded_kernel = count >= FOLDED_MIN_SAMPLES and folded.enabled()
    return folded.kernel_for(robot) if folded_kernel else None


def explicit_kernel(robot):
    """The explicit kernel's module of the robot's structure (``explicit.kernel_for``, line slots for
    the longest of its line maps), or None (no folded kernel)."""
    cached = robot.__dict__.get("_explicit_kernel", False)  # explicit.kernel_for's, without the line maps
    if cached is not False:
        return cached
    kernel = folded.kernel_for(robot)
    if kernel is None:
        return None
    return explicit.kernel_for(robot, max(_explicit_line_map(robot, head, kernel.ALIAS).shape[0] for head in range(8)))


def explicit_plan(robot, module, y: np.ndarray) -> tuple[np.ndarray, ...]:
    """The arguments after Y of the explicit kernel ``module`` for Y's place in a cache line: (line map,
    slot orders) for an even n; (table, counts, orders) of ``explicit_phase_plan`` for an odd n. They
    depend only on that place, so each of the eight is made once per robot and module (making one
    took 40-80 us, 2-4 % of a 20000-sample call)."""
    head = (y.ctypes.data // 8) % 8
    plans = robot.__dict__.setdefault("_explicit_plans", {})
    key = (module.__name__, module.SLOTS, head)
    if key not in plans:
        plans[key] = _explicit_plan(robot, module, y)
    return plans[key]


def _explicit_plan(robot, module, y: np.ndarray) -> tuple[np.ndarray, ...]:
    """``explicit_plan`` made anew."""
    if module.PHASES:
        slots = kernel_arrays(robot)[2]
        return explicit_phase_plan(slots, y, scratch_row(robot.n, slots) + 10 * slots_used(slots), module.ALIAS,
                                   module.SLOTS)
    lmap = _explicit_line_map(robot, (8 - (y.ctypes.data // 8) % 8) % 8, module.ALIAS)
    return lmap, explicit.slot_orders(lmap, 10 * robot.n ** 2, module.SLOTS)


def _explicit_line_map(robot, head: int, alias: np.ndarray) -> np.ndarray:
    """``line_map`` of the lines the explicit kernel writes (those holding a non-zero) for a Y whose
    samples start ``head`` numbers before a cache line; the zero row follows the blocks' rows."""
    slots = kernel_arrays(robot)[2]
    return line_map(slots, head, scratch_row(robot.n, slots) + 10 * slots_used(slots), False, alias)


def thread_kind(robot, stage: int, folded_kernel: bool, explicit_runs: bool = False) -> str:
    """The name under which ``threads.py`` keeps the measurements of ``regressor``'s kernel for this
    robot: its n, whether Y is streamed (``stage``) and whether the generated kernel runs, folded or
    explicit (benches read the thread count chosen with it)."""
    return (f"regressor/{robot.n}" + ("/streamed" if stage else "") + ("/folded" if folded_kernel else "")
            + ("/explicit" if explicit_runs else ""))


def kernel_call(robot, q, dq, ddq, out, stage: int, every: bool, folded_kernel: bool | None = None):
    """(thread kind, call(workers, start, stop)): the kernel ``regressor`` runs to write Y[start:stop]
    of this batch into ``out`` on ``workers`` threads (q, dq, ddq contiguous (N, n); ``stage`` from
    ``stream_stage_samples``; ``every``: all of Y's numbers written). The explicit kernel
    (``explicit.py``) for a streamed Y, as ``line_map`` writes it (``every`` False; the plan of each
    segment's Y[start:stop], ``explicit_plan``);
    else the generated (folded) kernel from ``generated_kernel``; else the generic one."""
    arrays = kernel_arrays(robot)
    kernel = generated_kernel(robot, q.shape[0], folded_kernel)
    fast = explicit_kernel(robot) if kernel is not None and stage and not every and explicit.enabled() else None
    if fast is not None:
        constants, _, slots, gravity = arrays

        def call(workers, start, stop):
            y = out[start:stop]
            args = (q[start:stop], dq[start:stop], ddq[start:stop], constants, slots, gravity, y,
                    *explicit_plan(robot, fast, y))
            if workers == 1:
                fast.regressor_serial(*args)
            else:
                threads.with_threads(workers, fast.regressor_parallel, *args, workers)

        return thread_kind(robot, stage, True, True), call
    serial, parallel = (kernel.regressor_serial, kernel.regressor_parallel) if kernel else (regressor_serial,
                                                                                            _regressor_parallel)

    def call(workers, start, stop):
        args = (q[start:stop], dq[start:stop], ddq[start:stop], *arrays, out[start:stop])
        if workers == 1:
            serial(*args, stage, every)
        else:
            threads.with_threads(workers, parallel, *args, workers, stage, every)

    return thread_kind(robot, stage, kernel is not None), call


def regressor(robot, q, dq, ddq, out: np.ndarray | None = None, *, folded_kernel: bool | None = None) -> np.ndarray:
    """Joint-torque regressor of the rigid-body model, tau = Y @ robot.parameters().

    q, dq, ddq: (N, n) joint positions [rad | m], velocities, accelerations.
    Returns Y: (N, n, 10 n); a single sample (n,) gives (n, 10 n). ``out`` may supply a
    zero-filled (N, n, 10 n) array to fill: entries that are zero for the robot's structure are
    left alone (non-ancestor blocks, and with the folded kernel also the numbers of ancestor
    blocks that are a constant zero), but for zeros written in the cache lines that hold a
    non-zero number when a Y larger than the last-level cache is streamed past the caches
    (module docstring); an ``out`` holding other numbers keeps some of them. Without ``out``, a large Y may take the
    memory of a Y this process no longer uses (``recycled.py``: no page faults, every number
    written). ``folded_kernel``: compute with the kernel written for the robot's structure, its
    constant placements folded in (``folded.py``; the numbers equal the generic kernel's to
    rounding, about 1e-14 of Y's largest); None: for a batch of ``FOLDED_MIN_SAMPLES`` or more, when
    folding saves a fifth of the operations, unless DYNID_FOLDED_KERNELS=0; for a streamed Y, its
    statements as explicit vector code with the line stores inside (``explicit.py``,
    the same numbers to rounding; unless DYNID_EXPLICIT_KERNELS=0; ``kernel_call``). Identification
    passes False: its in-memory and streamed paths give the same numbers bit for bit.
    A robot with mimic joints gives (N, n, 10 n_bodies) (dynamics/mimic.py). Runs on one
    thread, or on all of Numba's for a batch of at least 4096 samples when this process measured
    them faster, now (``threads.py``).
    """
    if robot.has_mimic:
        return mimic.regressor(robot, q, dq, ddq, out, tree=functools.partial(regressor, folded_kernel=folded_kernel))
    (q, dq, ddq), single = joint_arrays(robot, q=q, dq=dq, ddq=ddq)
    shape = (q.shape[0], robot.n, 10 * robot.n)
    every = False  # every number of Y written: its memory holds old numbers (recycled.py)
    if out is None:
        out, every = recycled.empty(shape)
    elif out.shape != shape or out.dtype != np.float64 or not out.flags.c_contiguous:
        raise ValueError(f"out: expected a C-contiguous float64 array of shape {shape}")
    q, dq, ddq = np.ascontiguousarray(q), np.ascontiguousarray(dq), np.ascontiguousarray(ddq)

    stage = stream_stage_samples(robot, out.nbytes) if out.ctypes.data % 8 == 0 else 0  # whole lines need aligned numbers
    if every and not stage:
        out.fill(0.0)  # in place, the kernel leaves the non-ancestor blocks alone

    kind, call = kernel_call(robot, q, dq, ddq, out, stage, every, folded_kernel)
    threads.run(kind, q.shape[0], call)
    return out[0] if single else out
