"""Joint-torque regressor Y(q, dq, ddq) with tau = Y theta (rigid body), batched and compiled.

For link j the Newton-Euler wrench about its origin is linear in its parameters theta_j
(thesis eq. 3.14 order [m, mx, my, mz, Ixx, Ixy, Ixz, Iyy, Iyz, Izz]):

    f_j = m a + dw x h + w x (w x h)
    n_j = I dw + w x (I w) + h x a            (a: classical acceleration of the origin,
                                               gravity included as base acceleration -g)

Joint i (an ancestor of j, or j itself) carries tau_i = S_i^(j) . (n_j, f_j), with
S_i^(j) = (u, s) its motion subspace expressed in frame j. Collecting terms gives the block
Y[i, 10 j : 10 j + 10] (derived in docs/derivations.md):

    Y_m = s . a
    Y_h = s x dw + w x (w x s) + a x u
    Y_I = L(dw)^T u + L(w)^T (u x w),   L(w) I6 = I w

Only ancestors couple, so the rest of Y is zero and is not written. The kernels run over blocks
of samples in SIMD lanes (``lanes.py``): after the forward recursion, for each link j the pair
(j, j) uses the constant axis S_j of frame j; each ancestor i's axis is carried down one
motion transform per pair, S_i^(j) = X_{j<-p(j)} S_i^(p(j)) (u = R^T u_p, s = R^T (s_p - t x u_p)),
and the ten numbers go straight to Y. Parallel over blocks of samples; no Python loop over samples.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from dynid.dynamics import mimic
from dynid.dynamics.arrays import joint_arrays
from dynid.dynamics.lanes import (
    CHUNK, JR, LANES, PARALLEL_MIN_SAMPLES, R_A, R_DV, R_DW, R_REL, R_T, R_V, R_W, cross3, forward_block,
    kernel_arrays, load_block, new_workspace,
)


@nb.njit(cache=True, inline="always")
def _link_block(u0, u1, u2, s0, s1, s2, w0, w1, w2, e0, e1, e2, a0, a1, a2):
    """Y[i, 10 j : 10 j + 10] from joint i's axis (u, s) and link j's w, dw = e and classical
    acceleration a, all in frame j (regressor.py's module docstring):
    Y_m = s . a, Y_h = s x dw + w x (w x s) + a x u, Y_I = L(dw)^T u + L(w)^T (u x w)."""
    b0, b1, b2 = cross3(w0, w1, w2, s0, s1, s2)
    b0, b1, b2 = cross3(w0, w1, w2, b0, b1, b2)
    c0, c1, c2 = cross3(s0, s1, s2, e0, e1, e2)
    d0, d1, d2 = cross3(a0, a1, a2, u0, u1, u2)
    x0, x1, x2 = cross3(u0, u1, u2, w0, w1, w2)
    return (s0 * a0 + s1 * a1 + s2 * a2, c0 + b0 + d0, c1 + b1 + d1, c2 + b2 + d2,
            e0 * u0 + w0 * x0, e1 * u0 + e0 * u1 + w1 * x0 + w0 * x1, e2 * u0 + e0 * u2 + w2 * x0 + w0 * x2,
            e1 * u1 + w1 * x1, e2 * u1 + e1 * u2 + w2 * x1 + w1 * x2, e2 * u2 + w2 * x2)


@nb.njit(cache=True, inline="always")
def _own_pair(ws, rj, k, su0, su1, su2, sv0, sv1, sv2):
    """Y[j, 10 j : 10 j + 10] of lane k (the axis is constant in its own frame); stores link j's
    classical acceleration a = dv + w x v for the ancestors' pairs."""
    w0, w1, w2 = ws[rj + R_W, k], ws[rj + R_W + 1, k], ws[rj + R_W + 2, k]
    v0, v1, v2 = ws[rj + R_V, k], ws[rj + R_V + 1, k], ws[rj + R_V + 2, k]
    c0, c1, c2 = cross3(w0, w1, w2, v0, v1, v2)
    a0, a1, a2 = ws[rj + R_DV, k] + c0, ws[rj + R_DV + 1, k] + c1, ws[rj + R_DV + 2, k] + c2
    ws[rj + R_A, k], ws[rj + R_A + 1, k], ws[rj + R_A + 2, k] = a0, a1, a2
    e0, e1, e2 = ws[rj + R_DW, k], ws[rj + R_DW + 1, k], ws[rj + R_DW + 2, k]
    return _link_block(su0, su1, su2, sv0, sv1, sv2, w0, w1, w2, e0, e1, e2, a0, a1, a2)


@nb.njit(cache=True, inline="always")
def _ancestor_pair(ws, rj, src, dst, k):
    """Y[i, 10 j : 10 j + 10] of lane k for an ancestor i of j, whose axis in the parent's frame
    is at row ``src``: S_i^(j) = X_{j<-p} S_i^(p), u = R^T u_p, s = R^T (s_p - t x u_p), kept at
    row ``dst`` for j's children."""
    r00, r01, r02 = ws[rj + R_REL, k], ws[rj + R_REL + 1, k], ws[rj + R_REL + 2, k]
    r10, r11, r12 = ws[rj + R_REL + 3, k], ws[rj + R_REL + 4, k], ws[rj + R_REL + 5, k]
    r20, r21, r22 = ws[rj + R_REL + 6, k], ws[rj + R_REL + 7, k], ws[rj + R_REL + 8, k]
    tx, ty, tz = ws[rj + R_T, k], ws[rj + R_T + 1, k], ws[rj + R_T + 2, k]
    p0, p1, p2 = ws[src, k], ws[src + 1, k], ws[src + 2, k]
    c0, c1, c2 = cross3(tx, ty, tz, p0, p1, p2)
    l0, l1, l2 = ws[src + 3, k] - c0, ws[src + 4, k] - c1, ws[src + 5, k] - c2
    u0 = r00 * p0 + r10 * p1 + r20 * p2
    u1 = r01 * p0 + r11 * p1 + r21 * p2
    u2 = r02 * p0 + r12 * p1 + r22 * p2
    s0 = r00 * l0 + r10 * l1 + r20 * l2
    s1 = r01 * l0 + r11 * l1 + r21 * l2
    s2 = r02 * l0 + r12 * l1 + r22 * l2
    ws[dst, k], ws[dst + 1, k], ws[dst + 2, k] = u0, u1, u2
    ws[dst + 3, k], ws[dst + 4, k], ws[dst + 5, k] = s0, s1, s2
    w0, w1, w2 = ws[rj + R_W, k], ws[rj + R_W + 1, k], ws[rj + R_W + 2, k]
    e0, e1, e2 = ws[rj + R_DW, k], ws[rj + R_DW + 1, k], ws[rj + R_DW + 2, k]
    a0, a1, a2 = ws[rj + R_A, k], ws[rj + R_A + 1, k], ws[rj + R_A + 2, k]
    return _link_block(u0, u1, u2, s0, s1, s2, w0, w1, w2, e0, e1, e2, a0, a1, a2)


@nb.njit(cache=True, inline="always")
def _store_sample_major(yb, k, i, col, b):
    row = yb[k, i]
    row[col], row[col + 1], row[col + 2], row[col + 3], row[col + 4] = b[0], b[1], b[2], b[3], b[4]
    row[col + 5], row[col + 6], row[col + 7], row[col + 8], row[col + 9] = b[5], b[6], b[7], b[8], b[9]


@nb.njit(cache=True)
def regressor_pairs(ws, constants, parents, slots, m, y, k0):
    """The ancestor blocks Y[i, 10 j : 10 j + 10] of the lanes 0 .. m of a block after
    ``forward_block``, written to y[k0 : k0 + m] (N, n, 10 n)."""
    n = parents.shape[0]
    pair_row = (n + 1) * JR
    yb = y[k0:k0 + m]
    for j in range(n):
        rj, col, p = j * JR, 10 * j, parents[j]
        su0, su1, su2 = constants[j, 39], constants[j, 40], constants[j, 41]
        sv0, sv1, sv2 = constants[j, 42], constants[j, 43], constants[j, 44]
        for k in range(m):
            _store_sample_major(yb, k, j, col, _own_pair(ws, rj, k, su0, su1, su2, sv0, sv1, sv2))
        i = p
        while i >= 0:
            src, dst = pair_row + 6 * slots[i, p], pair_row + 6 * slots[i, j]
            for k in range(m):
                _store_sample_major(yb, k, i, col, _ancestor_pair(ws, rj, src, dst, k))
            i = parents[i]


@nb.njit(cache=True, inline="always")
def _store_rows(xi, r, k, b):
    xi[r[0], k], xi[r[1], k], xi[r[2], k], xi[r[3], k], xi[r[4], k] = b[0], b[1], b[2], b[3], b[4]
    xi[r[5], k], xi[r[6], k], xi[r[7], k], xi[r[8], k], xi[r[9], k] = b[5], b[6], b[7], b[8], b[9]


@nb.njit(cache=True, inline="always")
def _ten(a, i, col):
    """a[i, col : col + 10] as a tuple (loop-invariant indices held in registers)."""
    return (a[i, col], a[i, col + 1], a[i, col + 2], a[i, col + 3], a[i, col + 4],
            a[i, col + 5], a[i, col + 6], a[i, col + 7], a[i, col + 8], a[i, col + 9])


@nb.njit(cache=True)
def regressor_rows(ws, constants, parents, slots, m, row_of, xt, k0):
    """The same blocks as ``regressor_pairs``, transposed and selected for a Gram matrix:
    Y[k0 + k, i, c] goes to xt[i, row_of[i, c], k0 + k] (row_of: (n, 10 n), a row past the
    ones in use for the columns not wanted), so each joint's rows are contiguous lanes."""
    n = parents.shape[0]
    pair_row = (n + 1) * JR
    for j in range(n):
        rj, col, p = j * JR, 10 * j, parents[j]
        su0, su1, su2 = constants[j, 39], constants[j, 40], constants[j, 41]
        sv0, sv1, sv2 = constants[j, 42], constants[j, 43], constants[j, 44]
        xj, rows = xt[j, :, k0:k0 + m], _ten(row_of, j, col)
        for k in range(m):
            _store_rows(xj, rows, k, _own_pair(ws, rj, k, su0, su1, su2, sv0, sv1, sv2))
        i = p
        while i >= 0:
            src, dst = pair_row + 6 * slots[i, p], pair_row + 6 * slots[i, j]
            xi, rows = xt[i, :, k0:k0 + m], _ten(row_of, i, col)
            for k in range(m):
                _store_rows(xi, rows, k, _ancestor_pair(ws, rj, src, dst, k))
            i = parents[i]


@nb.njit(cache=True, nogil=True)
def regressor_range(q, dq, ddq, constants, parents, slots, ws, y, start, stop):
    """Y[start:stop] of (N, n) q, dq, ddq into y (N, n, 10 n), block by block, in this thread."""
    for k0 in range(start, stop, LANES):
        m = min(LANES, stop - k0)
        load_block(q, dq, ddq, k0, m, ws)
        forward_block(ws, constants, parents, m)
        regressor_pairs(ws, constants, parents, slots, m, y, k0)


@nb.njit(cache=True, nogil=True)
def regressor_rows_serial(q, dq, ddq, constants, parents, slots, gravity, row_of, xt):
    """``regressor_rows`` for all samples of q, dq, ddq into xt (n, rows, N), GIL released."""
    ws = new_workspace(q.shape[1], slots, constants, gravity)
    for k0 in range(0, q.shape[0], LANES):
        m = min(LANES, q.shape[0] - k0)
        load_block(q, dq, ddq, k0, m, ws)
        forward_block(ws, constants, parents, m)
        regressor_rows(ws, constants, parents, slots, m, row_of, xt, k0)


@nb.njit(cache=True, parallel=True)
def _regressor_parallel(q, dq, ddq, constants, parents, slots, gravity, y):
    count = q.shape[0]
    for c in nb.prange((count + CHUNK - 1) // CHUNK):
        ws = new_workspace(q.shape[1], slots, constants, gravity)
        regressor_range(q, dq, ddq, constants, parents, slots, ws, y, c * CHUNK, min(count, (c + 1) * CHUNK))


@nb.njit(cache=True, nogil=True)
def regressor_serial(q, dq, ddq, constants, parents, slots, gravity, y):
    """The whole of Y in the calling thread, GIL released (streaming identification's workers)."""
    ws = new_workspace(q.shape[1], slots, constants, gravity)
    regressor_range(q, dq, ddq, constants, parents, slots, ws, y, 0, q.shape[0])


def regressor(robot, q, dq, ddq, out: np.ndarray | None = None) -> np.ndarray:
    """Joint-torque regressor of the rigid-body model, tau = Y @ robot.parameters().

    q, dq, ddq: (N, n) joint positions [rad | m], velocities, accelerations.
    Returns Y: (N, n, 10 n); a single sample (n,) gives (n, 10 n). ``out`` may supply a
    zero-filled (N, n, 10 n) array to fill (entries of non-ancestor blocks are left alone).
    A robot with mimic joints gives (N, n, 10 n_bodies) (dynamics/mimic.py).
    """
    if robot.has_mimic:
        return mimic.regressor(robot, q, dq, ddq, out, tree=regressor)
    (q, dq, ddq), single = joint_arrays(robot, q=q, dq=dq, ddq=ddq)
    shape = (q.shape[0], robot.n, 10 * robot.n)
    if out is None:
        out = np.zeros(shape)
    elif out.shape != shape or out.dtype != np.float64 or not out.flags.c_contiguous:
        raise ValueError(f"out: expected a C-contiguous float64 array of shape {shape}")
    kernel = _regressor_parallel if q.shape[0] >= PARALLEL_MIN_SAMPLES else regressor_serial
    kernel(np.ascontiguousarray(q), np.ascontiguousarray(dq), np.ascontiguousarray(ddq), *kernel_arrays(robot), out)
    return out[0] if single else out
