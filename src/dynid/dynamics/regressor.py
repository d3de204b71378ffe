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


@nb.njit(cache=True, inline="always")
def _cross(a0, a1, a2, b0, b1, b2):
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@nb.njit(cache=True, parallel=True)
def _regressor_kernel(q, dq, ddq, parents, revolute, p_rot, p_t, axis, e_rot, e_t, screw, gravity, y):
    n_samples, n = q.shape
    for k in nb.prange(n_samples):
        rw = np.empty((n, 3, 3))  # world rotation of each link frame
        ow = np.empty((n, 3))  # world origin
        w = np.empty((n, 3))
        v = np.empty((n, 3))
        dw = np.empty((n, 3))
        dv = np.empty((n, 3))
        uw = np.empty((n, 3))  # joint motion subspace in world coordinates, angular part
        sw = np.empty((n, 3))  # ... linear part at the world origin
        rel = np.empty((3, 3))
        rm = np.empty((3, 3))
        tmp = np.empty((3, 3))
        for i in range(n):
            # relative transform T_{p,i} = P M(q) E
            if revolute[i]:
                c, s_ = np.cos(q[k, i]), np.sin(q[k, i])
                ax, ay, az = axis[i, 0], axis[i, 1], axis[i, 2]
                cc = 1.0 - c
                rm[0, 0] = c + ax * ax * cc
                rm[0, 1] = ax * ay * cc - az * s_
                rm[0, 2] = ax * az * cc + ay * s_
                rm[1, 0] = ay * ax * cc + az * s_
                rm[1, 1] = c + ay * ay * cc
                rm[1, 2] = ay * az * cc - ax * s_
                rm[2, 0] = az * ax * cc - ay * s_
                rm[2, 1] = az * ay * cc + ax * s_
                rm[2, 2] = c + az * az * cc
                for a in range(3):
                    for b in range(3):
                        tmp[a, b] = p_rot[i, a, 0] * rm[0, b] + p_rot[i, a, 1] * rm[1, b] + p_rot[i, a, 2] * rm[2, b]
                te0 = e_t[i, 0]
                te1 = e_t[i, 1]
                te2 = e_t[i, 2]
            else:
                for a in range(3):
                    for b in range(3):
                        tmp[a, b] = p_rot[i, a, b]
                te0 = e_t[i, 0] + axis[i, 0] * q[k, i]
                te1 = e_t[i, 1] + axis[i, 1] * q[k, i]
                te2 = e_t[i, 2] + axis[i, 2] * q[k, i]
            t0 = p_t[i, 0] + tmp[0, 0] * te0 + tmp[0, 1] * te1 + tmp[0, 2] * te2
            t1 = p_t[i, 1] + tmp[1, 0] * te0 + tmp[1, 1] * te1 + tmp[1, 2] * te2
            t2 = p_t[i, 2] + tmp[2, 0] * te0 + tmp[2, 1] * te1 + tmp[2, 2] * te2
            for a in range(3):
                for b in range(3):
                    rel[a, b] = tmp[a, 0] * e_rot[i, 0, b] + tmp[a, 1] * e_rot[i, 1, b] + tmp[a, 2] * e_rot[i, 2, b]
            p = parents[i]
            if p < 0:
                wp0 = wp1 = wp2 = 0.0
                vp0 = vp1 = vp2 = 0.0
                dwp0 = dwp1 = dwp2 = 0.0
                dvp0, dvp1, dvp2 = -gravity[0], -gravity[1], -gravity[2]
                for a in range(3):
                    for b in range(3):
                        rw[i, a, b] = rel[a, b]
                ow[i, 0], ow[i, 1], ow[i, 2] = t0, t1, t2
            else:
                wp0, wp1, wp2 = w[p, 0], w[p, 1], w[p, 2]
                vp0, vp1, vp2 = v[p, 0], v[p, 1], v[p, 2]
                dwp0, dwp1, dwp2 = dw[p, 0], dw[p, 1], dw[p, 2]
                dvp0, dvp1, dvp2 = dv[p, 0], dv[p, 1], dv[p, 2]
                for a in range(3):
                    for b in range(3):
                        rw[i, a, b] = rw[p, a, 0] * rel[0, b] + rw[p, a, 1] * rel[1, b] + rw[p, a, 2] * rel[2, b]
                    ow[i, a] = ow[p, a] + rw[p, a, 0] * t0 + rw[p, a, 1] * t1 + rw[p, a, 2] * t2
            # spatial transform X_{i<-p}: (E w, E (v - t x w)), E = rel^T
            c0, c1, c2 = _cross(t0, t1, t2, wp0, wp1, wp2)
            x0, x1, x2 = vp0 - c0, vp1 - c1, vp2 - c2
            c0, c1, c2 = _cross(t0, t1, t2, dwp0, dwp1, dwp2)
            y0, y1, y2 = dvp0 - c0, dvp1 - c1, dvp2 - c2
            su0, su1, su2 = screw[i, 0], screw[i, 1], screw[i, 2]
            sv0, sv1, sv2 = screw[i, 3], screw[i, 4], screw[i, 5]
            qd, qdd = dq[k, i], ddq[k, i]
            for a in range(3):
                w[i, a] = rel[0, a] * wp0 + rel[1, a] * wp1 + rel[2, a] * wp2 + screw[i, a] * qd
                v[i, a] = rel[0, a] * x0 + rel[1, a] * x1 + rel[2, a] * x2 + screw[i, 3 + a] * qd
                dw[i, a] = rel[0, a] * dwp0 + rel[1, a] * dwp1 + rel[2, a] * dwp2 + screw[i, a] * qdd
                dv[i, a] = rel[0, a] * y0 + rel[1, a] * y1 + rel[2, a] * y2 + screw[i, 3 + a] * qdd
            # + V_i x (S qd): (w x su qd, w x sv qd + v x su qd)
            c0, c1, c2 = _cross(w[i, 0], w[i, 1], w[i, 2], su0 * qd, su1 * qd, su2 * qd)
            dw[i, 0] += c0
            dw[i, 1] += c1
            dw[i, 2] += c2
            c0, c1, c2 = _cross(w[i, 0], w[i, 1], w[i, 2], sv0 * qd, sv1 * qd, sv2 * qd)
            d0, d1, d2 = _cross(v[i, 0], v[i, 1], v[i, 2], su0 * qd, su1 * qd, su2 * qd)
            dv[i, 0] += c0 + d0
            dv[i, 1] += c1 + d1
            dv[i, 2] += c2 + d2
            # motion subspace in world coordinates (linear part at the world origin)
            for a in range(3):
                uw[i, a] = rw[i, a, 0] * su0 + rw[i, a, 1] * su1 + rw[i, a, 2] * su2
            c0, c1, c2 = _cross(ow[i, 0], ow[i, 1], ow[i, 2], uw[i, 0], uw[i, 1], uw[i, 2])
            for a in range(3):
                sw[i, a] = rw[i, a, 0] * sv0 + rw[i, a, 1] * sv1 + rw[i, a, 2] * sv2
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


def robot_arrays(robot) -> tuple:
    """The robot's structure as contiguous arrays for compiled kernels (cached per robot)."""
    cache = robot.__dict__.get("_kernel_arrays")
    if cache is None:
        j = robot.joints
        cache = (
            robot.parents.astype(np.int64),
            np.array([x.type == "revolute" for x in j]),
            np.ascontiguousarray([x.placement_rotation for x in j], dtype=float),
            np.ascontiguousarray([x.placement_translation for x in j], dtype=float),
            np.ascontiguousarray([x.axis for x in j], dtype=float),
            np.ascontiguousarray([x.offset_rotation for x in j], dtype=float),
            np.ascontiguousarray([x.offset_translation for x in j], dtype=float),
            np.ascontiguousarray(robot.screw_axes, dtype=float),
            np.ascontiguousarray(robot.gravity, dtype=float),
        )
        robot.__dict__["_kernel_arrays"] = cache
    return cache


def regressor(robot, q, dq, ddq, out: np.ndarray | None = None) -> np.ndarray:
    """Joint-torque regressor of the rigid-body model, tau = Y @ robot.parameters().

    q, dq, ddq: (N, n) joint positions [rad | m], velocities, accelerations.
    Returns Y: (N, n, 10 n); a single sample (n,) gives (n, 10 n). ``out`` may supply a
    zero-filled (N, n, 10 n) array to fill (entries of non-ancestor blocks are left alone).
    """
    (q, dq, ddq), single = joint_arrays(robot, q=q, dq=dq, ddq=ddq)
    shape = (q.shape[0], robot.n, 10 * robot.n)
    if out is None:
        out = np.zeros(shape)
    elif out.shape != shape or out.dtype != np.float64 or not out.flags.c_contiguous:
        raise ValueError(f"out: expected a C-contiguous float64 array of shape {shape}")
    _regressor_kernel(
        np.ascontiguousarray(q), np.ascontiguousarray(dq), np.ascontiguousarray(ddq),
        *robot_arrays(robot), out,
    )
    return out[0] if single else out
