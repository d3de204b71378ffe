"""Rigid-body kernels over blocks of samples with the samples innermost (structure of arrays).

A block of ``LANES`` samples is processed together: every per-joint quantity (rotation entries,
velocities, accelerations, ...) is a row of ``LANES`` numbers in one flat workspace array, and
every loop over the lanes is straight-line arithmetic that the compiler turns into SIMD
instructions (4 or 8 samples per instruction with AVX2 or AVX-512). sin and cos come from
``sincos.py`` (no library call, so the loops vectorize).

What lets LLVM vectorize every lane loop, whatever the SIMD width:

- the workspace is one flat array and a row starts at ``row * LANES``, a compile-time multiple:
  two rows of the same joint are a constant distance apart, so the compiler proves that a
  loop's stores cannot reach its loads (with a 2-D array the row length is a run-time value
  and it needed hundreds of run-time overlap checks per loop, or gave up);
- offsets are unsigned (``at``), so Numba leaves out its negative-index fix-up, whose select
  would hide that consecutive lanes are consecutive in memory;
- every lane loop runs over all ``LANES`` lanes (a last, partial block is padded with zeros),
  a count the vector loop divides: its remainder loop never runs, and every sample goes
  through the same vector instructions, so a sample's numbers never depend on its place in a
  block (the count is hidden from the compiler, ``lanes``: a known one makes LLVM unroll the
  loop whole, and its straight-line vectorizer gives up where the loop vectorizer does not);
- products and sums may be fused (``FMA``: fastmath "contract" only, no reassociation), as
  Pinocchio's own -O3 build fuses them.

This module holds the workspace and the forward recursion (Featherstone 2008, Table 5.1);
``regressor.py`` and ``rnea.py`` add their own passes over the same workspace. Savings over a
sample-at-a-time kernel with full spatial transforms (besides the SIMD lanes):

- the joint transform is linear in (cos q, sin q, q): rel_i = A0 + c A1 + s A2 and
  t_i = t0 + c t1 + s t2 + q t3 with constant matrices (``joint_constants``), 18 multiply-adds
  instead of two 3x3 products;
- the regressor needs joint i's axis S_i in the frame of each descendant j; it is carried down
  the tree one motion transform per (ancestor, link) pair, S_i^(j) = X_{j<-p(j)} S_i^(p(j)),
  instead of going through world coordinates;
- only the blocks of ancestors are written (the rest of Y is zero and left alone).

Workspace rows of joint i (``JR`` rows from i * JR; the base is pseudo-joint n, at rest,
accelerating by -gravity): ``R_REL`` rel (3x3, row major, parent <- link), ``R_T`` t,
``R_W``/``R_V``/``R_DW``/``R_DV`` motion (angular, linear at the origin, link frame),
``R_C``/``R_S`` cos q/sin q, ``R_Q``/``R_QD``/``R_QDD``, ``R_N``/``R_F`` the RNEA wrench,
``R_A`` classical acceleration of the origin, ``R_K`` the 15 terms of the regressor's blocks
(``block_formulas.link_terms``). After the joints: 6 rows (u, s) per (ancestor i, link j) pair,
``slots[i, j]``; the pairs (j, j) hold the constant screw axes.
Then ``scratch`` rows, for a pass that gathers its results in lanes before storing them.

Editing this module: Numba's on-disk cache (``cache=True``) keys a kernel on its own file only,
so the kernels of ``regressor.py`` and ``rnea.py`` keep their compiled copy of the functions
here (and of ``tiles.py``); delete ``src/dynid/dynamics/__pycache__`` after a change.
"""

from __future__ import annotations

import math

import llvmlite.binding as llvm
import numba as nb
import numpy as np

from dynid.dynamics.sincos import SINCOS_LIMIT, sincos

# LLVM vectorizes a loop only after checking at run time that its stores cannot overlap its
# loads, and by default gives up past 8 such checks; a lane loop that touches rows of two
# joints or pairs needs a few dozen to about a hundred compares, once per loop of LANES lanes. These
# are process-wide LLVM options, read when a kernel is compiled (a cached kernel keeps the code
# it was compiled to); they let LLVM vectorize more loops, never change a result.
llvm.set_option("", "-runtime-memory-check-threshold=1024")
llvm.set_option("", "-vectorize-memory-check-threshold=1024")

LANES = 32  # samples per block: four AVX-512 or eight AVX2 vectors per row
CHUNK = 512  # fewest samples per thread of a parallel kernel
PARALLEL_MIN_SAMPLES = 2 * CHUNK  # below this, waking the thread pool costs more than it saves
FMA = {"contract"}  # fastmath flags of the lane kernels: fused multiply-add, nothing else

R_REL, R_T, R_W, R_V, R_DW, R_DV = 0, 9, 12, 15, 18, 21
R_C, R_S, R_Q, R_QD, R_QDD = 24, 25, 26, 27, 28
R_N, R_F, R_A, R_K = 29, 32, 35, 38
JR = 53
OWN_ROW, ZERO_ROW = -1, -2  # a block row of a generated kernel (folded.py, ``ALIAS``): stored; a constant 0


def joint_constants(robot) -> np.ndarray:
    """(n, 45): A0, A1, A2 (9 each, row major), t0, t1, t2, t3 (3 each), screw axis (6).

    Revolute joint about unit axis a: M(q) = a a^T + c (I - a a^T) + s [a]x, so with the
    placement P and offset E, rel = P M E = A0 + c A1 + s A2 and t = p + P M e = t0 + c t1 + s t2.
    Prismatic: rel = P E, t = p + P (e + a q) = t0 + q t3.
    """
    k = np.zeros((len(robot.joints), 45))
    for i, joint in enumerate(robot.joints):
        p_rot, e_rot = np.asarray(joint.placement_rotation), np.asarray(joint.offset_rotation)
        p_t, e_t = np.asarray(joint.placement_translation), np.asarray(joint.offset_translation)
        a = np.asarray(joint.axis, dtype=float)
        zero3, zero33 = np.zeros(3), np.zeros((3, 3))
        if joint.type == "revolute":
            aa = np.outer(a, a)
            ax = np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
            parts = [p_rot @ aa @ e_rot, p_rot @ (np.eye(3) - aa) @ e_rot, p_rot @ ax @ e_rot]
            shifts = [p_t + p_rot @ aa @ e_t, p_rot @ (np.eye(3) - aa) @ e_t, p_rot @ ax @ e_t, zero3]
        else:
            parts = [p_rot @ e_rot, zero33, zero33]
            shifts = [p_t + p_rot @ e_t, zero3, zero3, p_rot @ a]
        k[i, :27] = np.concatenate([m.ravel() for m in parts])
        k[i, 27:39] = np.concatenate(shifts)
        k[i, 39:45] = robot.screw_axes[i]
    return k


def kernel_arrays(robot) -> tuple:
    """(constants, parents, slots, gravity) of the robot's tree for the kernels (cached on it)."""
    cache = robot.__dict__.get("_lane_arrays")
    if cache is None:
        parents = np.ascontiguousarray(robot.parents, dtype=np.int64)
        cache = (joint_constants(robot), parents, pair_slots(parents),
                 np.ascontiguousarray(robot.gravity, dtype=float))
        robot.__dict__["_lane_arrays"] = cache
    return cache


def pair_slots(parents: np.ndarray) -> np.ndarray:
    """(n, n) workspace slot of each (ancestor-or-self i, link j) pair, -1 elsewhere; numbered
    joint by joint, each joint's links in order, as Y's rows hold their blocks."""
    n = parents.size
    ancestor = np.eye(n, dtype=bool)
    for j in range(n):
        i = parents[j]
        while i >= 0:
            ancestor[i, j] = True
            i = parents[i]
    slots = np.full((n, n), -1, dtype=np.int64)
    slots[ancestor] = np.arange(int(ancestor.sum()))  # row-major: joint i, then its links j
    return slots


@nb.njit(cache=True, inline="always")
def at(row):
    """Offset of the first lane of workspace row ``row`` (unsigned: module docstring)."""
    return nb.uint64(row) * nb.uint64(LANES)


@nb.njit(cache=True, inline="always")
def lanes(ws):
    """LANES, the trip count of every lane loop, as a value the compiler cannot see (the
    workspace is never shorter): with a constant count LLVM unrolls a loop whole, and its
    straight-line vectorizer cannot check at run time that rows do not overlap, so the
    arithmetic would stay scalar; the loop vectorizer can."""
    return nb.uint64(min(LANES, ws.size))


@nb.njit(cache=True, inline="always")
def lane(ws, o, r, k):
    """Lane k of row r after the row whose offset is o (``at``)."""
    return ws[o + nb.uint64(r * LANES) + k]


@nb.njit(cache=True, inline="always")
def lane3(ws, o, r, k):
    """Lane k of the rows r, r + 1, r + 2 after offset o: a 3-vector."""
    return ws[o + nb.uint64(r * LANES) + k], ws[o + nb.uint64((r + 1) * LANES) + k], ws[o + nb.uint64((r + 2) * LANES) + k]


@nb.njit(cache=True, inline="always")
def put3(ws, o, r, k, x, y, z):
    ws[o + nb.uint64(r * LANES) + k] = x
    ws[o + nb.uint64((r + 1) * LANES) + k] = y
    ws[o + nb.uint64((r + 2) * LANES) + k] = z


@nb.njit(cache=True, inline="always")
def pair_row(n, slot):
    """First workspace row of the axis (u, s) of the (ancestor, link) pair in ``slot``."""
    return (n + 1) * JR + 6 * slot


@nb.njit(cache=True, inline="always")
def slots_used(slots):
    """Number of (ancestor, link) pairs."""
    pairs = 0
    for i in range(slots.shape[0]):
        for j in range(slots.shape[1]):
            pairs += slots[i, j] >= 0
    return pairs


@nb.njit(cache=True, inline="always")
def scratch_row(n, slots):
    """First workspace row after the joints and the pair axes."""
    return pair_row(n, slots_used(slots))


@nb.njit(cache=True)
def new_workspace(n, slots, constants, gravity, scratch):
    """Flat workspace of one thread: base at rest accelerating by -gravity, screw axes in the
    (j, j) slots (``slots`` all -1: no pair rows, as inverse dynamics needs), then ``scratch``
    rows; it starts on a cache line (64 bytes), so a vector of eight lanes of a row is one line
    (NumPy starts an array 16 or 32 bytes into a line as often as not: the folded kernel took
    0.125-0.138 us per sample on er3a then, 0.120 on a line; iiwa14 0.173-0.190 against 0.164)."""
    size = (scratch_row(n, slots) + scratch) * LANES
    raw = np.zeros(size + 8)  # on a cache line: no vector access of a row straddles two (docs/performance.md)
    ws = raw[(-(raw.ctypes.data // 8)) % 8:][:size]
    base = at(n * JR)
    for k in range(lanes(ws)):
        put3(ws, base, R_DV, k, -gravity[0], -gravity[1], -gravity[2])
    for j in range(n):
        if slots[j, j] >= 0:
            o = at(pair_row(n, slots[j, j]))
            for k in range(lanes(ws)):
                put3(ws, o, 0, k, constants[j, 39], constants[j, 40], constants[j, 41])
                put3(ws, o, 3, k, constants[j, 42], constants[j, 43], constants[j, 44])
    return ws


@nb.njit(cache=True, inline="always")
def cross3(a0, a1, a2, b0, b1, b2):
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@nb.njit(cache=True, fastmath=FMA)
def load_block(q, dq, ddq, k0, m, ws, phases=False):
    """Rows q, dq, ddq, cos q, sin q of every joint for the samples k0 .. k0 + m (m <= LANES;
    the lanes past m get zeros). Sample k0 + t goes to lane t, or, with ``phases`` (a whole block,
    m = LANES), to lane 8 (t % 4) + t // 4: lanes 8 p .. 8 p + 8 hold the samples t = p, p + 4, ...,
    p + 28 (``regressor.write_lines_phases``). A sample's numbers do not depend on its lane."""
    n = q.shape[1]
    qb, dqb, ddqb = q[k0:k0 + m], dq[k0:k0 + m], ddq[k0:k0 + m]
    for i in range(n):
        o = at(i * JR)
        for k in range(nb.uint64(m)):  # samples are rows of q: a small transpose into lane rows
            slot = nb.uint64(8 * (k % 4) + k // 4) if phases else k
            ws[o + nb.uint64(R_Q * LANES) + slot] = qb[k, i]
            ws[o + nb.uint64(R_QD * LANES) + slot] = dqb[k, i]
            ws[o + nb.uint64(R_QDD * LANES) + slot] = ddqb[k, i]
        for k in range(nb.uint64(m), nb.uint64(LANES)):
            ws[o + nb.uint64(R_Q * LANES) + k] = 0.0
            ws[o + nb.uint64(R_QD * LANES) + k] = 0.0
            ws[o + nb.uint64(R_QDD * LANES) + k] = 0.0
    large = 0
    for i in range(n):
        o = at(i * JR)
        for k in range(lanes(ws)):
            x = lane(ws, o, R_Q, k)
            s, c = sincos(x)
            ws[o + nb.uint64(R_C * LANES) + k] = c
            ws[o + nb.uint64(R_S * LANES) + k] = s
            large += not (abs(x) < SINCOS_LIMIT)
    if large:  # huge (or non-finite) angles: the C library, one by one
        for i in range(n):
            o = at(i * JR)
            for k in range(lanes(ws)):
                x = lane(ws, o, R_Q, k)
                if not (abs(x) < SINCOS_LIMIT):
                    ws[o + nb.uint64(R_C * LANES) + k] = math.cos(x)
                    ws[o + nb.uint64(R_S * LANES) + k] = math.sin(x)


@nb.njit(cache=True, inline="always")
def pure_rotation(K):
    """A revolute joint about an axis through its frame's origin (``joint_constants`` K: screw
    axis (a, 0), no q t3 term): every revolute joint of a URDF or a DH table."""
    return K[36] == 0.0 and K[37] == 0.0 and K[38] == 0.0 and K[42] == 0.0 and K[43] == 0.0 and K[44] == 0.0


@nb.njit(cache=True, fastmath=FMA)
def forward_block(ws, constants, parents):
    """Forward recursion (Featherstone 2008, Table 5.1) for the lanes of a loaded block:
    rel, t, w, v, dw, dv of every joint; the base accelerates by -gravity. A revolute joint
    about an axis through its frame's origin (screw axis (a, 0), no q t3 term: every revolute
    joint of a URDF or a DH table) takes a loop without the terms that are zero for it."""
    n = parents.shape[0]
    for i in range(n):
        p = parents[i] if parents[i] >= 0 else n
        K = constants[i]
        if pure_rotation(K):
            _joint_motion(ws, K, at(i * JR), at(p * JR), False)
        else:
            _joint_motion(ws, K, at(i * JR), at(p * JR), True)


@nb.njit(cache=True, inline="always")
def _joint_motion(ws, K, oi, op, general):
    """rel, t, w, v, dw, dv of one joint (constants K, rows from oi, its parent's from op) for
    every lane; ``general`` False: the linear part of the screw axis and t3 are zero."""
    # the constants as numbers before the loop: read from K inside it, they would be loads the
    # compiler cannot hoist past the workspace's stores (both float64 arrays): half the speed
    c45 = (K[0], K[1], K[2], K[3], K[4], K[5], K[6], K[7], K[8], K[9], K[10], K[11], K[12], K[13], K[14], K[15],
           K[16], K[17], K[18], K[19], K[20], K[21], K[22], K[23], K[24], K[25], K[26], K[27], K[28], K[29], K[30],
           K[31], K[32], K[33], K[34], K[35], K[36], K[37], K[38], K[39], K[40], K[41], K[42], K[43], K[44])
    for k in range(lanes(ws)):
        r, t, w, v, dw, dv = joint_motion(lane(ws, oi, R_C, k), lane(ws, oi, R_S, k), lane(ws, oi, R_Q, k),
                                          lane(ws, oi, R_QD, k), lane(ws, oi, R_QDD, k), c45, lane3(ws, op, R_W, k),
                                          lane3(ws, op, R_V, k), lane3(ws, op, R_DW, k), lane3(ws, op, R_DV, k), general)
        put3(ws, oi, R_REL, k, r[0], r[1], r[2])
        put3(ws, oi, R_REL + 3, k, r[3], r[4], r[5])
        put3(ws, oi, R_REL + 6, k, r[6], r[7], r[8])
        put3(ws, oi, R_T, k, t[0], t[1], t[2])
        put3(ws, oi, R_W, k, w[0], w[1], w[2])
        put3(ws, oi, R_V, k, v[0], v[1], v[2])
        put3(ws, oi, R_DW, k, dw[0], dw[1], dw[2])
        put3(ws, oi, R_DV, k, dv[0], dv[1], dv[2])


@nb.njit(cache=True, inline="always")
def joint_motion(c, s, x, qd, qdd, K, wp, vp, ep, ap, general):
    """rel (9, row major), t, w, v, dw, dv of a joint at cos q = c, sin q = s, q = x with
    constants K (``joint_constants``) from its parent's w, v, dw, dv (3-tuples); ``general``
    False: the linear part of the screw axis and t3 are zero. Plain arithmetic on its arguments,
    so that ``folded.py`` runs it on symbols to write a robot's kernel with its constants folded."""
    a00, a01, a02, a10, a11, a12, a20, a21, a22 = K[0], K[1], K[2], K[3], K[4], K[5], K[6], K[7], K[8]
    b00, b01, b02, b10, b11, b12, b20, b21, b22 = K[9], K[10], K[11], K[12], K[13], K[14], K[15], K[16], K[17]
    c00, c01, c02, c10, c11, c12, c20, c21, c22 = K[18], K[19], K[20], K[21], K[22], K[23], K[24], K[25], K[26]
    t00, t01, t02, t10, t11, t12 = K[27], K[28], K[29], K[30], K[31], K[32]
    t20, t21, t22, t30, t31, t32 = K[33], K[34], K[35], K[36], K[37], K[38]
    su0, su1, su2, sv0, sv1, sv2 = K[39], K[40], K[41], K[42], K[43], K[44]
    r00 = a00 + c * b00 + s * c00
    r01 = a01 + c * b01 + s * c01
    r02 = a02 + c * b02 + s * c02
    r10 = a10 + c * b10 + s * c10
    r11 = a11 + c * b11 + s * c11
    r12 = a12 + c * b12 + s * c12
    r20 = a20 + c * b20 + s * c20
    r21 = a21 + c * b21 + s * c21
    r22 = a22 + c * b22 + s * c22
    tx = t00 + c * t10 + s * t20
    ty = t01 + c * t11 + s * t21
    tz = t02 + c * t12 + s * t22
    if general:
        tx, ty, tz = tx + x * t30, ty + x * t31, tz + x * t32
    wp0, wp1, wp2 = wp
    vp0, vp1, vp2 = vp
    ep0, ep1, ep2 = ep
    ap0, ap1, ap2 = ap
    # X_{i<-p} m = (R^T w, R^T (v - t x w))
    x0, x1, x2 = cross3(tx, ty, tz, wp0, wp1, wp2)
    x0, x1, x2 = vp0 - x0, vp1 - x1, vp2 - x2
    y0, y1, y2 = cross3(tx, ty, tz, ep0, ep1, ep2)
    y0, y1, y2 = ap0 - y0, ap1 - y1, ap2 - y2
    w0 = r00 * wp0 + r10 * wp1 + r20 * wp2 + su0 * qd
    w1 = r01 * wp0 + r11 * wp1 + r21 * wp2 + su1 * qd
    w2 = r02 * wp0 + r12 * wp1 + r22 * wp2 + su2 * qd
    v0 = r00 * x0 + r10 * x1 + r20 * x2
    v1 = r01 * x0 + r11 * x1 + r21 * x2
    v2 = r02 * x0 + r12 * x1 + r22 * x2
    # + V_i x S qd
    g0, g1, g2 = cross3(w0, w1, w2, su0 * qd, su1 * qd, su2 * qd)
    d0, d1, d2 = cross3(v0, v1, v2, su0 * qd, su1 * qd, su2 * qd)
    dv0 = r00 * y0 + r10 * y1 + r20 * y2 + d0
    dv1 = r01 * y0 + r11 * y1 + r21 * y2 + d1
    dv2 = r02 * y0 + r12 * y1 + r22 * y2 + d2
    if general:
        v0, v1, v2 = v0 + sv0 * qd, v1 + sv1 * qd, v2 + sv2 * qd
        h0, h1, h2 = cross3(w0, w1, w2, sv0 * qd, sv1 * qd, sv2 * qd)
        d0, d1, d2 = cross3(sv0 * qd, sv1 * qd, sv2 * qd, su0 * qd, su1 * qd, su2 * qd)
        dv0, dv1, dv2 = dv0 + sv0 * qdd + h0 + d0, dv1 + sv1 * qdd + h1 + d1, dv2 + sv2 * qdd + h2 + d2
    dw0 = r00 * ep0 + r10 * ep1 + r20 * ep2 + su0 * qdd + g0
    dw1 = r01 * ep0 + r11 * ep1 + r21 * ep2 + su1 * qdd + g1
    dw2 = r02 * ep0 + r12 * ep1 + r22 * ep2 + su2 * qdd + g2
    return ((r00, r01, r02, r10, r11, r12, r20, r21, r22), (tx, ty, tz), (w0, w1, w2), (v0, v1, v2), (dw0, dw1, dw2),
            (dv0, dv1, dv2))
