"""Compiled capsule placement and distance loop for the optimizer's many candidate configurations.

``segments_kernel`` places the capsules (and extra points such as the flange) for every
configuration: the parent-to-link transforms rel = A0 + cos q A1 + sin q A2,
t = t0 + cos q t1 + sin q t2 + q t3 with the constant matrices of the dynamics kernels
(``dynid.dynamics.lanes.joint_constants``), composed from the base outwards, then each capsule
end moved by its link's pose.

Same mathematics as ``distance`` (segment-segment closest points, segment-half-space,
golden-section segment-box with the never-overstating correction), one sample and one
constraint at a time, without witness points: the global search only needs margins, for
millions of (configuration, pair) combinations per generation. ``distance`` stays the
reference (and gives the witnesses the gradients need); tests compare the two.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from dynid.dynamics.lanes import joint_constants

SELF, FLOOR, BOX = 0, 1, 2
_INV_PHI = (math.sqrt(5.0) - 1.0) / 2.0


@nb.njit(cache=True, inline="always")
def _clamp(x):
    return 0.0 if x < 0.0 else (1.0 if x > 1.0 else x)


@nb.njit(cache=True, inline="always")
def _segment_segment(p0, p1, m, i, j):
    """Distance between segments i and j of sample m (arrays (N, C, 3))."""
    d1x, d1y, d1z = p1[m, i, 0] - p0[m, i, 0], p1[m, i, 1] - p0[m, i, 1], p1[m, i, 2] - p0[m, i, 2]
    d2x, d2y, d2z = p1[m, j, 0] - p0[m, j, 0], p1[m, j, 1] - p0[m, j, 1], p1[m, j, 2] - p0[m, j, 2]
    rx, ry, rz = p0[m, i, 0] - p0[m, j, 0], p0[m, i, 1] - p0[m, j, 1], p0[m, i, 2] - p0[m, j, 2]
    a = d1x * d1x + d1y * d1y + d1z * d1z
    e = d2x * d2x + d2y * d2y + d2z * d2z
    f = d2x * rx + d2y * ry + d2z * rz
    eps = 1e-12
    if a <= eps and e <= eps:
        s, t = 0.0, 0.0
    elif a <= eps:
        s, t = 0.0, _clamp(f / e)
    else:
        c = d1x * rx + d1y * ry + d1z * rz
        if e <= eps:
            s, t = _clamp(-c / a), 0.0
        else:
            b = d1x * d2x + d1y * d2y + d1z * d2z
            denom = a * e - b * b
            s = _clamp((b * f - c * e) / denom) if denom > eps * max(a * e, eps) else 0.0
            t = (b * s + f) / e
            if t < 0.0:
                t, s = 0.0, _clamp(-c / a)
            elif t > 1.0:
                t, s = 1.0, _clamp((b - c) / a)
    wx = rx + s * d1x - t * d2x
    wy = ry + s * d1y - t * d2y
    wz = rz + s * d1z - t * d2z
    return math.sqrt(wx * wx + wy * wy + wz * wz)


@nb.njit(cache=True, inline="always")
def _point_box(x, y, z, hx, hy, hz):
    qx, qy, qz = abs(x) - hx, abs(y) - hy, abs(z) - hz
    outside = math.sqrt(max(qx, 0.0) ** 2 + max(qy, 0.0) ** 2 + max(qz, 0.0) ** 2)
    return outside + min(max(qx, qy, qz), 0.0)


@nb.njit(cache=True, inline="always")
def _segment_box(p0, p1, m, i, rotation, center, half, steps):
    """Signed distance of segment i of sample m to the box (never overstated)."""
    # segment ends in box coordinates: (p - center) R
    ux, uy, uz = p0[m, i, 0] - center[0], p0[m, i, 1] - center[1], p0[m, i, 2] - center[2]
    wx, wy, wz = p1[m, i, 0] - center[0], p1[m, i, 1] - center[1], p1[m, i, 2] - center[2]
    ax = ux * rotation[0, 0] + uy * rotation[1, 0] + uz * rotation[2, 0]
    ay = ux * rotation[0, 1] + uy * rotation[1, 1] + uz * rotation[2, 1]
    az = ux * rotation[0, 2] + uy * rotation[1, 2] + uz * rotation[2, 2]
    dx = wx * rotation[0, 0] + wy * rotation[1, 0] + wz * rotation[2, 0] - ax
    dy = wx * rotation[0, 1] + wy * rotation[1, 1] + wz * rotation[2, 1] - ay
    dz = wx * rotation[0, 2] + wy * rotation[1, 2] + wz * rotation[2, 2] - az
    hx, hy, hz = half[0], half[1], half[2]
    lo, hi = 0.0, 1.0
    x1, x2 = 1.0 - _INV_PHI, _INV_PHI
    f1 = _point_box(ax + x1 * dx, ay + x1 * dy, az + x1 * dz, hx, hy, hz)
    f2 = _point_box(ax + x2 * dx, ay + x2 * dy, az + x2 * dz, hx, hy, hz)
    for _ in range(steps):
        if f1 <= f2:
            hi, x2, f2 = x2, x1, f1
            x1 = hi - _INV_PHI * (hi - lo)
            f1 = _point_box(ax + x1 * dx, ay + x1 * dy, az + x1 * dz, hx, hy, hz)
        else:
            lo, x1, f1 = x1, x2, f2
            x2 = lo + _INV_PHI * (hi - lo)
            f2 = _point_box(ax + x2 * dx, ay + x2 * dy, az + x2 * dz, hx, hy, hz)
    return min(f1, f2) - (hi - lo) * math.sqrt(dx * dx + dy * dy + dz * dz)


@nb.njit(cache=True)
def margins_kernel(p0, p1, radius, kind, first, second, required, floor, box_rotation, box_center, box_half,
                   steps, out):
    """out (N, K) = distance - required for world segments p0, p1 (N, C, 3); constraint k is
    kind[k] (SELF: capsules first[k], second[k]; FLOOR: capsule first[k]; BOX: capsule
    first[k], box second[k])."""
    for m in range(p0.shape[0]):
        for k in range(kind.size):
            i = first[k]
            if kind[k] == SELF:
                j = second[k]
                dist = _segment_segment(p0, p1, m, i, j) - radius[i] - radius[j]
            elif kind[k] == FLOOR:
                dist = min(p0[m, i, 2], p1[m, i, 2]) - floor - radius[i]
            else:
                j = second[k]
                dist = _segment_box(p0, p1, m, i, box_rotation[j], box_center[j], box_half[j], steps) - radius[i]
            out[m, k] = dist - required[k]


def pair_margins(p0, p1, radius, table, required, floor, boxes, steps: int) -> np.ndarray:
    """(N, K) margins of the capsule constraints (``table``: kind, first, second (K,) arrays)."""
    kind, first, second = table
    out = np.empty((p0.shape[0], kind.size))
    rotation = np.array([b.rotation for b in boxes], dtype=float).reshape(-1, 3, 3)
    center = np.array([b.center for b in boxes], dtype=float).reshape(-1, 3)
    half = np.array([b.half for b in boxes], dtype=float).reshape(-1, 3)
    margins_kernel(np.ascontiguousarray(p0), np.ascontiguousarray(p1), radius, kind, first, second,
                   required, 0.0 if floor is None else float(floor), rotation, center, half, steps, out)
    return out


@nb.njit(cache=True)
def segments_kernel(q, constants, parents, link, a, b, p0, p1):
    """p0, p1 (N, C, 3): world ends of the segments a, b (C, 3) given in the frames of
    ``link`` (C,) (-1: base, not moved) at tree configurations q (N, n_bodies)."""
    n = q.shape[1]
    rel = np.empty((3, 3))
    t = np.empty(3)
    rot = np.empty((n, 3, 3))
    org = np.empty((n, 3))
    for m in range(q.shape[0]):
        for i in range(n):
            k = constants[i]
            c, s_ = math.cos(q[m, i]), math.sin(q[m, i])
            for r in range(3):
                t[r] = k[27 + r] + c * k[30 + r] + s_ * k[33 + r] + q[m, i] * k[36 + r]
                for col in range(3):
                    rel[r, col] = k[3 * r + col] + c * k[9 + 3 * r + col] + s_ * k[18 + 3 * r + col]
            p = parents[i]
            for r in range(3):
                if p < 0:
                    org[i, r] = t[r]
                    for col in range(3):
                        rot[i, r, col] = rel[r, col]
                else:
                    org[i, r] = org[p, r] + rot[p, r, 0] * t[0] + rot[p, r, 1] * t[1] + rot[p, r, 2] * t[2]
                    for col in range(3):
                        rot[i, r, col] = (rot[p, r, 0] * rel[0, col] + rot[p, r, 1] * rel[1, col]
                                          + rot[p, r, 2] * rel[2, col])
        for k in range(link.size):
            j = link[k]
            for r in range(3):
                if j < 0:
                    p0[m, k, r] = a[k, r]
                    p1[m, k, r] = b[k, r]
                else:
                    p0[m, k, r] = org[j, r] + rot[j, r, 0] * a[k, 0] + rot[j, r, 1] * a[k, 1] + rot[j, r, 2] * a[k, 2]
                    p1[m, k, r] = org[j, r] + rot[j, r, 0] * b[k, 0] + rot[j, r, 1] * b[k, 1] + rot[j, r, 2] * b[k, 2]


def world_segments(robot, q: np.ndarray, link: np.ndarray, a: np.ndarray, b: np.ndarray):
    """(N, C, 3) world segment ends for configurations q (N, n) (``segments_kernel``)."""
    q = np.atleast_2d(q)
    if robot.has_mimic:  # the kernels see the tree: q_tree = G q + o
        q = robot.tree_coordinates(q)[0]
    q = np.ascontiguousarray(q, dtype=float)
    tree = robot.tree
    constants = tree.__dict__.get("_segment_constants")
    if constants is None:
        constants = tree.__dict__["_segment_constants"] = np.ascontiguousarray(joint_constants(tree))
    p0 = np.empty((q.shape[0], link.size, 3))
    p1 = np.empty_like(p0)
    segments_kernel(q, constants, np.ascontiguousarray(tree.parents, dtype=np.int64), link,
                    np.ascontiguousarray(a), np.ascontiguousarray(b), p0, p1)
    return p0, p1
