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

Only ancestors couple, so the rest of Y is zero. The per-sample work runs in a Numba kernel,
parallel over samples; there is no Python loop over samples.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from dynid.dynamics.arrays import joint_arrays
from dynid.dynamics.kernels import cross3 as _cross
from dynid.dynamics.kernels import PARALLEL_MIN_SAMPLES, motion_sample, robot_arrays


@nb.njit(cache=True)
def _workspace(n):
    """Scratch arrays of one sample: rel, t, w, v, dw, dv, rw (world rotations), ow (world
    origins), uw, sw (joint motion subspaces in world coordinates, linear part at the origin)."""
    return (np.empty((n, 3, 3)), np.empty((n, 3)), np.empty((n, 3)), np.empty((n, 3)),
            np.empty((n, 3)), np.empty((n, 3)), np.empty((n, 3, 3)), np.empty((n, 3)),
            np.empty((n, 3)), np.empty((n, 3)))


@nb.njit(cache=True)
def _regressor_sample(k, q, dq, ddq, parents, revolute, p_rot, p_t, axis, e_rot, e_t, screw, gravity, y):
    _regressor_sample_in(k, q, dq, ddq, parents, revolute, p_rot, p_t, axis, e_rot, e_t, screw, gravity, y,
                         _workspace(q.shape[1]))


@nb.njit(cache=True)
def _regressor_sample_in(k, q, dq, ddq, parents, revolute, p_rot, p_t, axis, e_rot, e_t, screw, gravity, y,
                         work):
    n = q.shape[1]
    rel, t, w, v, dw, dv, rw, ow, uw, sw = work
    motion_sample(q[k], dq[k], ddq[k], parents, revolute, p_rot, p_t, axis, e_rot, e_t, screw,
                  gravity, rel, t, w, v, dw, dv)
    for i in range(n):
        p = parents[i]
        for a in range(3):
            if p < 0:
                ow[i, a] = t[i, a]
                for b in range(3):
                    rw[i, a, b] = rel[i, a, b]
            else:
                ow[i, a] = ow[p, a] + rw[p, a, 0] * t[i, 0] + rw[p, a, 1] * t[i, 1] + rw[p, a, 2] * t[i, 2]
                for b in range(3):
                    rw[i, a, b] = rw[p, a, 0] * rel[i, 0, b] + rw[p, a, 1] * rel[i, 1, b] + rw[p, a, 2] * rel[i, 2, b]
        for a in range(3):
            uw[i, a] = rw[i, a, 0] * screw[i, 0] + rw[i, a, 1] * screw[i, 1] + rw[i, a, 2] * screw[i, 2]
            sw[i, a] = rw[i, a, 0] * screw[i, 3] + rw[i, a, 1] * screw[i, 4] + rw[i, a, 2] * screw[i, 5]
        c0, c1, c2 = _cross(ow[i, 0], ow[i, 1], ow[i, 2], uw[i, 0], uw[i, 1], uw[i, 2])
        sw[i, 0] += c0
        sw[i, 1] += c1
        sw[i, 2] += c2
    for j in range(n):
        w0, w1, w2 = w[j, 0], w[j, 1], w[j, 2]
        e0, e1, e2 = dw[j, 0], dw[j, 1], dw[j, 2]
        c0, c1, c2 = _cross(w0, w1, w2, v[j, 0], v[j, 1], v[j, 2])
        a0, a1, a2 = dv[j, 0] + c0, dv[j, 1] + c1, dv[j, 2] + c2  # classical acceleration
        col = 10 * j
        i = j
        while i >= 0:
            # S_i in frame j: u = Rj^T uw_i, s = Rj^T (sw_i - o_j x uw_i)
            c0, c1, c2 = _cross(ow[j, 0], ow[j, 1], ow[j, 2], uw[i, 0], uw[i, 1], uw[i, 2])
            l0, l1, l2 = sw[i, 0] - c0, sw[i, 1] - c1, sw[i, 2] - c2
            u0 = rw[j, 0, 0] * uw[i, 0] + rw[j, 1, 0] * uw[i, 1] + rw[j, 2, 0] * uw[i, 2]
            u1 = rw[j, 0, 1] * uw[i, 0] + rw[j, 1, 1] * uw[i, 1] + rw[j, 2, 1] * uw[i, 2]
            u2 = rw[j, 0, 2] * uw[i, 0] + rw[j, 1, 2] * uw[i, 1] + rw[j, 2, 2] * uw[i, 2]
            s0 = rw[j, 0, 0] * l0 + rw[j, 1, 0] * l1 + rw[j, 2, 0] * l2
            s1 = rw[j, 0, 1] * l0 + rw[j, 1, 1] * l1 + rw[j, 2, 1] * l2
            s2 = rw[j, 0, 2] * l0 + rw[j, 1, 2] * l1 + rw[j, 2, 2] * l2
            row = y[k, i]
            row[col] = s0 * a0 + s1 * a1 + s2 * a2
            # Y_h = s x dw + w x (w x s) + a x u
            b0, b1, b2 = _cross(w0, w1, w2, s0, s1, s2)
            b0, b1, b2 = _cross(w0, w1, w2, b0, b1, b2)
            c0, c1, c2 = _cross(s0, s1, s2, e0, e1, e2)
            d0, d1, d2 = _cross(a0, a1, a2, u0, u1, u2)
            row[col + 1] = c0 + b0 + d0
            row[col + 2] = c1 + b1 + d1
            row[col + 3] = c2 + b2 + d2
            # Y_I = L(dw)^T u + L(w)^T (u x w)
            x0, x1, x2 = _cross(u0, u1, u2, w0, w1, w2)
            row[col + 4] = e0 * u0 + w0 * x0
            row[col + 5] = e1 * u0 + e0 * u1 + w1 * x0 + w0 * x1
            row[col + 6] = e2 * u0 + e0 * u2 + w2 * x0 + w0 * x2
            row[col + 7] = e1 * u1 + w1 * x1
            row[col + 8] = e2 * u1 + e1 * u2 + w2 * x1 + w1 * x2
            row[col + 9] = e2 * u2 + w2 * x2
            i = parents[i]


_BLOCK = 256


@nb.njit(cache=True, parallel=True)
def _regressor_parallel(q, dq, ddq, parents, revolute, p_rot, p_t, axis, e_rot, e_t, screw, gravity, y):
    n_blocks = (q.shape[0] + _BLOCK - 1) // _BLOCK
    for b in nb.prange(n_blocks):  # scratch space once per block of samples, not per sample
        work = _workspace(q.shape[1])
        for k in range(b * _BLOCK, min((b + 1) * _BLOCK, q.shape[0])):
            _regressor_sample_in(k, q, dq, ddq, parents, revolute, p_rot, p_t, axis, e_rot, e_t, screw,
                                 gravity, y, work)


@nb.njit(cache=True)
def _regressor_serial(q, dq, ddq, parents, revolute, p_rot, p_t, axis, e_rot, e_t, screw, gravity, y):
    work = _workspace(q.shape[1])
    for k in range(q.shape[0]):
        _regressor_sample_in(k, q, dq, ddq, parents, revolute, p_rot, p_t, axis, e_rot, e_t, screw, gravity, y,
                             work)


def regressor(robot, q, dq, ddq, out: np.ndarray | None = None) -> np.ndarray:
    """Joint-torque regressor of the rigid-body model, tau = Y @ robot.parameters().

    q, dq, ddq: (N, n) joint positions [rad | m], velocities, accelerations.
    Returns Y: (N, n, 10 n); a single sample (n,) gives (n, 10 n). ``out`` may supply a
    zero-filled (N, n, 10 n) array to fill (entries of non-ancestor blocks are left alone).
    A robot with mimic joints gives (N, n, 10 n_bodies) (dynamics/mimic.py).
    """
    if robot.has_mimic:
        from dynid.dynamics import mimic
        return mimic.regressor(robot, q, dq, ddq, out)
    (q, dq, ddq), single = joint_arrays(robot, q=q, dq=dq, ddq=ddq)
    shape = (q.shape[0], robot.n, 10 * robot.n)
    if out is None:
        out = np.zeros(shape)
    elif out.shape != shape or out.dtype != np.float64 or not out.flags.c_contiguous:
        raise ValueError(f"out: expected a C-contiguous float64 array of shape {shape}")
    kernel = _regressor_parallel if q.shape[0] >= PARALLEL_MIN_SAMPLES else _regressor_serial
    kernel(
        np.ascontiguousarray(q), np.ascontiguousarray(dq), np.ascontiguousarray(ddq),
        *robot_arrays(robot), out,
    )
    return out[0] if single else out
