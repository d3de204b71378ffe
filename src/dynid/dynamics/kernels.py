"""Compiled per-sample kernels (Numba), parallel over samples; no Python loop over samples.

``motion_sample`` is the forward recursion of RNEA for one sample (Featherstone 2008,
Table 5.1), written out in scalars; the regressor and inverse-dynamics kernels build on it.
Motion vectors are (angular, linear at the frame origin), expressed in link frames.
"""

from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=True, inline="always")
def cross3(a0, a1, a2, b0, b1, b2):
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@nb.njit(cache=True)
def motion_sample(qk, dqk, ddqk, parents, revolute, p_rot, p_t, axis, e_rot, e_t, screw, gravity,
                  rel, t, w, v, dw, dv):
    """Fill rel (n,3,3), t (n,3) (parent-to-link transforms) and w, v, dw, dv (n,3) for one sample.

    T_{p,i} = P_i M_i(q_i) E_i; V_i = X V_p + S qd; A_i = X A_p + S qdd + V_i x S qd, with the
    base accelerating by -gravity.
    """
    n = qk.shape[0]
    tmp = np.empty((3, 3))
    for i in range(n):
        if revolute[i]:
            c, s_ = np.cos(qk[i]), np.sin(qk[i])
            ax, ay, az = axis[i, 0], axis[i, 1], axis[i, 2]
            cc = 1.0 - c
            r00 = c + ax * ax * cc
            r01 = ax * ay * cc - az * s_
            r02 = ax * az * cc + ay * s_
            r10 = ay * ax * cc + az * s_
            r11 = c + ay * ay * cc
            r12 = ay * az * cc - ax * s_
            r20 = az * ax * cc - ay * s_
            r21 = az * ay * cc + ax * s_
            r22 = c + az * az * cc
            for a in range(3):
                tmp[a, 0] = p_rot[i, a, 0] * r00 + p_rot[i, a, 1] * r10 + p_rot[i, a, 2] * r20
                tmp[a, 1] = p_rot[i, a, 0] * r01 + p_rot[i, a, 1] * r11 + p_rot[i, a, 2] * r21
                tmp[a, 2] = p_rot[i, a, 0] * r02 + p_rot[i, a, 1] * r12 + p_rot[i, a, 2] * r22
            te0, te1, te2 = e_t[i, 0], e_t[i, 1], e_t[i, 2]
        else:
            for a in range(3):
                for b in range(3):
                    tmp[a, b] = p_rot[i, a, b]
            te0 = e_t[i, 0] + axis[i, 0] * qk[i]
            te1 = e_t[i, 1] + axis[i, 1] * qk[i]
            te2 = e_t[i, 2] + axis[i, 2] * qk[i]
        for a in range(3):
            t[i, a] = p_t[i, a] + tmp[a, 0] * te0 + tmp[a, 1] * te1 + tmp[a, 2] * te2
            for b in range(3):
                rel[i, a, b] = tmp[a, 0] * e_rot[i, 0, b] + tmp[a, 1] * e_rot[i, 1, b] + tmp[a, 2] * e_rot[i, 2, b]
        p = parents[i]
        if p < 0:
            wp0 = wp1 = wp2 = 0.0
            vp0 = vp1 = vp2 = 0.0
            dwp0 = dwp1 = dwp2 = 0.0
            dvp0, dvp1, dvp2 = -gravity[0], -gravity[1], -gravity[2]
        else:
            wp0, wp1, wp2 = w[p, 0], w[p, 1], w[p, 2]
            vp0, vp1, vp2 = v[p, 0], v[p, 1], v[p, 2]
            dwp0, dwp1, dwp2 = dw[p, 0], dw[p, 1], dw[p, 2]
            dvp0, dvp1, dvp2 = dv[p, 0], dv[p, 1], dv[p, 2]
        # X_{i<-p} m = (E w, E (v - t x w)), E = rel^T
        c0, c1, c2 = cross3(t[i, 0], t[i, 1], t[i, 2], wp0, wp1, wp2)
        x0, x1, x2 = vp0 - c0, vp1 - c1, vp2 - c2
        c0, c1, c2 = cross3(t[i, 0], t[i, 1], t[i, 2], dwp0, dwp1, dwp2)
        y0, y1, y2 = dvp0 - c0, dvp1 - c1, dvp2 - c2
        qd, qdd = dqk[i], ddqk[i]
        for a in range(3):
            w[i, a] = rel[i, 0, a] * wp0 + rel[i, 1, a] * wp1 + rel[i, 2, a] * wp2 + screw[i, a] * qd
            v[i, a] = rel[i, 0, a] * x0 + rel[i, 1, a] * x1 + rel[i, 2, a] * x2 + screw[i, 3 + a] * qd
            dw[i, a] = rel[i, 0, a] * dwp0 + rel[i, 1, a] * dwp1 + rel[i, 2, a] * dwp2 + screw[i, a] * qdd
            dv[i, a] = rel[i, 0, a] * y0 + rel[i, 1, a] * y1 + rel[i, 2, a] * y2 + screw[i, 3 + a] * qdd
        su0, su1, su2 = screw[i, 0] * qd, screw[i, 1] * qd, screw[i, 2] * qd
        sv0, sv1, sv2 = screw[i, 3] * qd, screw[i, 4] * qd, screw[i, 5] * qd
        c0, c1, c2 = cross3(w[i, 0], w[i, 1], w[i, 2], su0, su1, su2)
        dw[i, 0] += c0
        dw[i, 1] += c1
        dw[i, 2] += c2
        c0, c1, c2 = cross3(w[i, 0], w[i, 1], w[i, 2], sv0, sv1, sv2)
        d0, d1, d2 = cross3(v[i, 0], v[i, 1], v[i, 2], su0, su1, su2)
        dv[i, 0] += c0 + d0
        dv[i, 1] += c1 + d1
        dv[i, 2] += c2 + d2


@nb.njit(cache=True)
def rnea_sample(k, q, dq, ddq, parents, revolute, p_rot, p_t, axis, e_rot, e_t, screw, gravity, theta, tau):
    """tau[k] = ID(q[k], dq[k], ddq[k]) for standard parameters theta (n, 10)."""
    n = q.shape[1]
    rel = np.empty((n, 3, 3))
    t = np.empty((n, 3))
    w = np.empty((n, 3))
    v = np.empty((n, 3))
    dw = np.empty((n, 3))
    dv = np.empty((n, 3))
    mom = np.empty((n, 3))
    frc = np.empty((n, 3))
    motion_sample(q[k], dq[k], ddq[k], parents, revolute, p_rot, p_t, axis, e_rot, e_t, screw,
                  gravity, rel, t, w, v, dw, dv)
    for i in range(n):
        m, h0, h1, h2 = theta[i, 0], theta[i, 1], theta[i, 2], theta[i, 3]
        ixx, ixy, ixz, iyy, iyz, izz = theta[i, 4], theta[i, 5], theta[i, 6], theta[i, 7], theta[i, 8], theta[i, 9]
        w0, w1, w2 = w[i, 0], w[i, 1], w[i, 2]
        v0, v1, v2 = v[i, 0], v[i, 1], v[i, 2]
        e0, e1, e2 = dw[i, 0], dw[i, 1], dw[i, 2]
        a0, a1, a2 = dv[i, 0], dv[i, 1], dv[i, 2]
        # I A: n = I_O dw + h x dv, f = m dv + dw x h
        c0, c1, c2 = cross3(h0, h1, h2, a0, a1, a2)
        na0 = ixx * e0 + ixy * e1 + ixz * e2 + c0
        na1 = ixy * e0 + iyy * e1 + iyz * e2 + c1
        na2 = ixz * e0 + iyz * e1 + izz * e2 + c2
        c0, c1, c2 = cross3(e0, e1, e2, h0, h1, h2)
        fa0, fa1, fa2 = m * a0 + c0, m * a1 + c1, m * a2 + c2
        # I V, then V x* (I V) = (w x n + v x f, w x f)
        c0, c1, c2 = cross3(h0, h1, h2, v0, v1, v2)
        nv0 = ixx * w0 + ixy * w1 + ixz * w2 + c0
        nv1 = ixy * w0 + iyy * w1 + iyz * w2 + c1
        nv2 = ixz * w0 + iyz * w1 + izz * w2 + c2
        c0, c1, c2 = cross3(w0, w1, w2, h0, h1, h2)
        fv0, fv1, fv2 = m * v0 + c0, m * v1 + c1, m * v2 + c2
        c0, c1, c2 = cross3(w0, w1, w2, nv0, nv1, nv2)
        d0, d1, d2 = cross3(v0, v1, v2, fv0, fv1, fv2)
        mom[i, 0], mom[i, 1], mom[i, 2] = na0 + c0 + d0, na1 + c1 + d1, na2 + c2 + d2
        c0, c1, c2 = cross3(w0, w1, w2, fv0, fv1, fv2)
        frc[i, 0], frc[i, 1], frc[i, 2] = fa0 + c0, fa1 + c1, fa2 + c2
    for i in range(n - 1, -1, -1):
        tau[k, i] = (screw[i, 0] * mom[i, 0] + screw[i, 1] * mom[i, 1] + screw[i, 2] * mom[i, 2]
                     + screw[i, 3] * frc[i, 0] + screw[i, 4] * frc[i, 1] + screw[i, 5] * frc[i, 2])
        p = parents[i]
        if p >= 0:  # f_p += X*_{p<-i} f_i = (R n + t x R f, R f)
            f0 = rel[i, 0, 0] * frc[i, 0] + rel[i, 0, 1] * frc[i, 1] + rel[i, 0, 2] * frc[i, 2]
            f1 = rel[i, 1, 0] * frc[i, 0] + rel[i, 1, 1] * frc[i, 1] + rel[i, 1, 2] * frc[i, 2]
            f2 = rel[i, 2, 0] * frc[i, 0] + rel[i, 2, 1] * frc[i, 1] + rel[i, 2, 2] * frc[i, 2]
            c0, c1, c2 = cross3(t[i, 0], t[i, 1], t[i, 2], f0, f1, f2)
            for a in range(3):
                mom[p, a] += rel[i, a, 0] * mom[i, 0] + rel[i, a, 1] * mom[i, 1] + rel[i, a, 2] * mom[i, 2]
            mom[p, 0] += c0
            mom[p, 1] += c1
            mom[p, 2] += c2
            frc[p, 0] += f0
            frc[p, 1] += f1
            frc[p, 2] += f2


@nb.njit(cache=True, parallel=True)
def _rnea_parallel(q, dq, ddq, parents, revolute, p_rot, p_t, axis, e_rot, e_t, screw, gravity, theta, tau):
    for k in nb.prange(q.shape[0]):
        rnea_sample(k, q, dq, ddq, parents, revolute, p_rot, p_t, axis, e_rot, e_t, screw, gravity, theta, tau)


@nb.njit(cache=True)
def _rnea_serial(q, dq, ddq, parents, revolute, p_rot, p_t, axis, e_rot, e_t, screw, gravity, theta, tau):
    for k in range(q.shape[0]):
        rnea_sample(k, q, dq, ddq, parents, revolute, p_rot, p_t, axis, e_rot, e_t, screw, gravity, theta, tau)


# Below this many samples, waking the thread pool costs more than it saves.
PARALLEL_MIN_SAMPLES = 512


def rnea_kernel(q, *args):
    (_rnea_parallel if q.shape[0] >= PARALLEL_MIN_SAMPLES else _rnea_serial)(q, *args)


def robot_arrays(robot) -> tuple:
    """The robot's structure as contiguous arrays for the kernels (cached on the robot)."""
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
