"""Recursive Newton-Euler inverse dynamics, batched over samples (Featherstone 2008, sec. 5.3).

``inverse_dynamics`` runs the compiled kernels below over blocks of samples in SIMD lanes
(forward recursion and workspace in ``lanes.py``); ``link_wrenches`` is the NumPy form that also
returns every joint's transmitted wrench (used by the multibody module).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from dynid.dynamics import mimic, threads
from dynid.dynamics.arrays import joint_arrays
from dynid.dynamics.kinematics import LinkMotion
from dynid.dynamics.lanes import (
    CHUNK, FMA, JR, LANES, R_DV, R_DW, R_F, R_N, R_Q, R_REL, R_T, R_V, R_W, at, cross3,
    forward_block, kernel_arrays, lane3, lanes, load_block, new_workspace, put3,
)
from dynid.dynamics.spatial import cross, inertia_times_motion, rotate


def link_wrenches(robot, motion: LinkMotion) -> tuple[np.ndarray, np.ndarray]:
    """Joint wrench transmitted from each link's parent into it, in link frame, about its origin.

    f_i = I_i A_i + V_i x* I_i V_i + sum over children X*_{i<-c} f_c.
    Returns moment (N, n, 3) [N m] and force (N, n, 3) [N].
    """
    moment = np.empty_like(motion.w)
    force = np.empty_like(motion.w)
    for i, link in enumerate(robot.links):
        th = link.inertial
        n_a, f_a = inertia_times_motion(th, motion.dw[:, i], motion.dv[:, i])
        n_v, f_v = inertia_times_motion(th, motion.w[:, i], motion.v[:, i])
        w, v = motion.w[:, i], motion.v[:, i]
        moment[:, i] = n_a + cross(w, n_v) + cross(v, f_v)
        force[:, i] = f_a + cross(w, f_v)
    for i in range(robot.n - 1, -1, -1):
        p = robot.parents[i]
        if p >= 0:
            r, t = motion.rotation[:, i], motion.translation[:, i]
            f_parent = rotate(r, force[:, i])
            moment[:, p] += rotate(r, moment[:, i]) + cross(t, f_parent)
            force[:, p] += f_parent
    return moment, force


@nb.njit(cache=True, fastmath=FMA)
def rnea_backward(ws, constants, parents, theta, m, tau, k0):
    """Inverse dynamics of the lanes of a block after ``forward_block``: each link's wrench
    I A + V x* I V about its origin (link frame), summed from the leaves to the base
    (f_p += X*_{p<-i} f_i = (R n + t x R f, R f)), tau_i = S_i . f_i in lane rows, then the
    lanes 0 .. m into tau[k0 : k0 + m]."""
    n = parents.shape[0]
    for i in range(n):
        oi = at(i * JR)
        mass, h0, h1, h2 = theta[i, 0], theta[i, 1], theta[i, 2], theta[i, 3]
        ixx, ixy, ixz, iyy, iyz, izz = theta[i, 4], theta[i, 5], theta[i, 6], theta[i, 7], theta[i, 8], theta[i, 9]
        for k in range(lanes(ws)):
            w0, w1, w2 = lane3(ws, oi, R_W, k)
            v0, v1, v2 = lane3(ws, oi, R_V, k)
            e0, e1, e2 = lane3(ws, oi, R_DW, k)
            a0, a1, a2 = lane3(ws, oi, R_DV, k)
            # I A: n = I_O dw + h x dv, f = m dv + dw x h
            c0, c1, c2 = cross3(h0, h1, h2, a0, a1, a2)
            na0 = ixx * e0 + ixy * e1 + ixz * e2 + c0
            na1 = ixy * e0 + iyy * e1 + iyz * e2 + c1
            na2 = ixz * e0 + iyz * e1 + izz * e2 + c2
            c0, c1, c2 = cross3(e0, e1, e2, h0, h1, h2)
            fa0, fa1, fa2 = mass * a0 + c0, mass * a1 + c1, mass * a2 + c2
            # I V, then V x* (I V) = (w x n + v x f, w x f)
            c0, c1, c2 = cross3(h0, h1, h2, v0, v1, v2)
            nv0 = ixx * w0 + ixy * w1 + ixz * w2 + c0
            nv1 = ixy * w0 + iyy * w1 + iyz * w2 + c1
            nv2 = ixz * w0 + iyz * w1 + izz * w2 + c2
            c0, c1, c2 = cross3(w0, w1, w2, h0, h1, h2)
            fv0, fv1, fv2 = mass * v0 + c0, mass * v1 + c1, mass * v2 + c2
            c0, c1, c2 = cross3(w0, w1, w2, nv0, nv1, nv2)
            d0, d1, d2 = cross3(v0, v1, v2, fv0, fv1, fv2)
            put3(ws, oi, R_N, k, na0 + c0 + d0, na1 + c1 + d1, na2 + c2 + d2)
            c0, c1, c2 = cross3(w0, w1, w2, fv0, fv1, fv2)
            put3(ws, oi, R_F, k, fa0 + c0, fa1 + c1, fa2 + c2)
    for i in range(n - 1, -1, -1):
        oi = at(i * JR)
        su0, su1, su2 = constants[i, 39], constants[i, 40], constants[i, 41]
        sv0, sv1, sv2 = constants[i, 42], constants[i, 43], constants[i, 44]
        for k in range(lanes(ws)):  # tau_i into the row of q_i (not needed any more)
            n0, n1, n2 = lane3(ws, oi, R_N, k)
            f0, f1, f2 = lane3(ws, oi, R_F, k)
            ws[oi + nb.uint64(R_Q * LANES) + k] = su0 * n0 + su1 * n1 + su2 * n2 + sv0 * f0 + sv1 * f1 + sv2 * f2
        p = parents[i]
        if p < 0:
            continue
        op = at(p * JR)
        for k in range(lanes(ws)):
            r00, r01, r02 = lane3(ws, oi, R_REL, k)
            r10, r11, r12 = lane3(ws, oi, R_REL + 3, k)
            r20, r21, r22 = lane3(ws, oi, R_REL + 6, k)
            tx, ty, tz = lane3(ws, oi, R_T, k)
            n0, n1, n2 = lane3(ws, oi, R_N, k)
            g0, g1, g2 = lane3(ws, oi, R_F, k)
            f0 = r00 * g0 + r01 * g1 + r02 * g2
            f1 = r10 * g0 + r11 * g1 + r12 * g2
            f2 = r20 * g0 + r21 * g1 + r22 * g2
            c0, c1, c2 = cross3(tx, ty, tz, f0, f1, f2)
            m0, m1, m2 = lane3(ws, op, R_N, k)
            put3(ws, op, R_N, k, m0 + r00 * n0 + r01 * n1 + r02 * n2 + c0,
                 m1 + r10 * n0 + r11 * n1 + r12 * n2 + c1, m2 + r20 * n0 + r21 * n1 + r22 * n2 + c2)
            b0, b1, b2 = lane3(ws, op, R_F, k)
            put3(ws, op, R_F, k, b0 + f0, b1 + f1, b2 + f2)
    for k in range(m):
        for i in range(n):
            tau[k0 + k, i] = ws[at(i * JR + R_Q) + nb.uint64(k)]


@nb.njit(cache=True, nogil=True)
def rnea_range(q, dq, ddq, constants, parents, theta, ws, tau, start, stop):
    """tau[start:stop] of (N, n) q, dq, ddq for standard parameters theta (n, 10), in this thread."""
    for k0 in range(start, stop, LANES):
        m = min(LANES, stop - k0)
        load_block(q, dq, ddq, k0, m, ws)
        forward_block(ws, constants, parents)
        rnea_backward(ws, constants, parents, theta, m, tau, k0)


@nb.njit(cache=True, parallel=True)
def _rnea_parallel(q, dq, ddq, constants, parents, slots, gravity, theta, tau, threads):
    """tau on ``threads`` threads (Numba's count set to it), one stretch of samples each."""
    count = q.shape[0]
    parts = max(1, min(threads, count // CHUNK))
    for t in nb.prange(parts):  # one workspace per thread
        ws = new_workspace(q.shape[1], slots, constants, gravity, 0)
        rnea_range(q, dq, ddq, constants, parents, theta, ws, tau, t * count // parts, (t + 1) * count // parts)


@nb.njit(cache=True, nogil=True)
def _rnea_serial(q, dq, ddq, constants, parents, slots, gravity, theta, tau):
    ws = new_workspace(q.shape[1], slots, constants, gravity, 0)
    rnea_range(q, dq, ddq, constants, parents, theta, ws, tau, 0, q.shape[0])


def inverse_dynamics(robot, q, dq, ddq, gravity=None, parameters=None) -> np.ndarray:
    """Joint torques/forces tau = M(q) ddq + c(q, dq) + g(q) of the rigid-body model.

    q, dq, ddq: (N, n) joint positions [rad | m], velocities, accelerations.
    gravity: optional (3,) override of the robot's gravity vector [m/s^2].
    parameters: optional (10 n_bodies,) standard inertial parameters instead of the robot's
    (any values: tau = Y(q, dq, ddq) parameters, the recursion being linear in them).
    Returns tau: (N, n) [N m | N]. A single sample (n,) gives (n,). Runs on one thread, or on
    all of Numba's for a batch of at least 4096 samples when this process measured them faster,
    now (``threads.py``).
    """
    if robot.has_mimic:  # actuated coordinates of a tree with mimic joints (dynamics/mimic.py)
        return mimic.inverse_dynamics(robot, q, dq, ddq, gravity, parameters, tree=inverse_dynamics)
    (q, dq, ddq), single = joint_arrays(robot, q=q, dq=dq, ddq=ddq)
    constants, parents, slots, g = kernel_arrays(robot)
    if gravity is not None:
        g = np.ascontiguousarray(gravity, dtype=float).reshape(3)
    tau = np.empty_like(q)
    q, dq, ddq = np.ascontiguousarray(q), np.ascontiguousarray(dq), np.ascontiguousarray(ddq)
    theta = np.ascontiguousarray((robot.parameters() if parameters is None else parameters), dtype=float)
    no_pairs = np.full_like(slots, -1)

    def call(workers, start, stop):
        args = (q[start:stop], dq[start:stop], ddq[start:stop], constants, parents, no_pairs, g,
                theta.reshape(-1, 10), tau[start:stop])
        if workers == 1:
            _rnea_serial(*args)
        else:
            threads.with_threads(workers, _rnea_parallel, *args, workers)

    threads.run(f"inverse_dynamics/{robot.n}", q.shape[0], call)
    return tau[0] if single else tau


def gravity_torques(robot, q) -> np.ndarray:
    """g(q): (N, n) torques that hold the robot still against gravity."""
    zeros = np.zeros_like(np.asarray(q, dtype=float))
    return inverse_dynamics(robot, q, zeros, zeros)


def coriolis_torques(robot, q, dq) -> np.ndarray:
    """c(q, dq) = C(q, dq) dq: (N, n) Coriolis and centrifugal torques."""
    zeros = np.zeros_like(np.asarray(q, dtype=float))
    return inverse_dynamics(robot, q, dq, zeros, gravity=np.zeros(3))
