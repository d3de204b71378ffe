"""Vectorized distances between segments, planes and boxes, with closest points.

Capsules are segments with a radius, so every distance here is between a segment and
another segment, a plane or a box; the capsule distance subtracts the radii. All functions
take arrays of any leading shape (...) and return the signed distance (negative when the
shapes overlap) and the witness points whose difference gives the direction in which the
distance grows (used for gradients, ``geometry.constraints``).

Segment-segment: the closest points minimize |p0 + s d1 - q0 - t d2|^2 over the unit
square. The unconstrained minimum solves the 2 x 2 normal equations
    [a -b; b -e] [s; t] = [-c; -f],  a = d1.d1, b = d1.d2, e = d2.d2, c = d1.r, f = d2.r,
with r = p0 - q0; clamping s to [0, 1], taking t = (b s + f) / e, and re-clamping t (and
then s against it) gives the minimum on the square because the objective is convex and
separable once one parameter is fixed (the classical scheme of computational geometry
texts, e.g. Ericson, Real-Time Collision Detection, 2005, section 5.1.9).

Segment-box: the signed distance of a point to a box is convex, so along a segment it is a
convex function of the segment parameter; a golden-section search of ``GOLDEN_STEPS``
steps finds its minimum, and the returned distance is lowered by the remaining bracket
times the segment length (the signed distance is 1-Lipschitz), so it never overstates.
"""

from __future__ import annotations

import numpy as np

EPS = 1e-12
GOLDEN_STEPS = 30
_INV_PHI = (np.sqrt(5.0) - 1.0) / 2.0


def _dot(a, b):
    return np.einsum("...i,...i->...", a, b)


def segment_segment(p0, p1, q0, q1):
    """Distance between segments [p0, p1] and [q0, q1] (..., 3) and the closest points.

    Returns (distance (...), point on the first (..., 3), point on the second (..., 3))."""
    d1, d2, r = p1 - p0, q1 - q0, p0 - q0
    a, e, f = _dot(d1, d1), _dot(d2, d2), _dot(d2, r)
    c, b = _dot(d1, r), _dot(d1, d2)
    a_ok, e_ok = a > EPS, e > EPS
    a_safe, e_safe = np.where(a_ok, a, 1.0), np.where(e_ok, e, 1.0)
    denom = a * e - b * b
    s = np.where(denom > EPS * np.maximum(a * e, EPS), np.clip((b * f - c * e) / np.where(denom > 0, denom, 1.0),
                                                                 0.0, 1.0), 0.0)
    t = (b * s + f) / e_safe
    s = np.where(t < 0.0, np.clip(-c / a_safe, 0.0, 1.0), np.where(t > 1.0, np.clip((b - c) / a_safe, 0.0, 1.0), s))
    t = np.clip(t, 0.0, 1.0)
    # degenerate segments (points)
    s = np.where(a_ok, s, 0.0)
    t = np.where(e_ok, np.where(a_ok, t, np.clip(f / e_safe, 0.0, 1.0)), 0.0)
    s = np.where(a_ok & ~e_ok, np.clip(-c / a_safe, 0.0, 1.0), s)
    cp = p0 + s[..., None] * d1
    cq = q0 + t[..., None] * d2
    return np.linalg.norm(cp - cq, axis=-1), cp, cq


def segment_halfspace(p0, p1, normal, offset):
    """Signed distance of segment [p0, p1] (..., 3) to the half-space {x : normal.x <= offset}
    (unit normal (3,)): min over the segment of normal.x - offset; returns (distance, point on
    the segment, its projection on the plane)."""
    h0, h1 = _dot(p0, normal) - offset, _dot(p1, normal) - offset
    low = h0 <= h1
    point = np.where(low[..., None], p0, p1)
    height = np.minimum(h0, h1)
    return height, point, point - height[..., None] * normal


def point_box(x, half):
    """Signed distance of points x (..., 3), in box coordinates, to the box |x_i| <= half_i."""
    return _point_box_xyz(x[..., 0], x[..., 1], x[..., 2], half)


def _point_box_xyz(x, y, z, half):
    qx, qy, qz = np.abs(x) - half[0], np.abs(y) - half[1], np.abs(z) - half[2]
    outside = np.sqrt(np.maximum(qx, 0.0) ** 2 + np.maximum(qy, 0.0) ** 2 + np.maximum(qz, 0.0) ** 2)
    return outside + np.minimum(np.maximum(np.maximum(qx, qy), qz), 0.0)


def closest_on_box(x, half):
    """Point of the box surface closest to x (box coordinates); for x inside, on the nearest face."""
    inside = np.all(np.abs(x) <= half, axis=-1)
    clamped = np.clip(x, -half, half)
    face = np.argmax(np.abs(x) - half, axis=-1)
    on_face = x.copy()
    np.put_along_axis(on_face, face[..., None], (np.sign(np.take_along_axis(x, face[..., None], -1))
                                                 * np.take_along_axis(np.broadcast_to(half, x.shape),
                                                                      face[..., None], -1)), -1)
    return np.where(inside[..., None], on_face, clamped)


def segment_box(p0, p1, rotation, center, half):
    """Signed distance of segment [p0, p1] (..., 3) to the box (rotation (3, 3) box axes in
    world, center (3,), half extents (3,)); returns (distance, point on the segment, closest
    point of the box surface), world coordinates. Never overstates (module docstring)."""
    a = (p0 - center) @ rotation
    b = (p1 - center) @ rotation

    ax, ay, az = a[..., 0], a[..., 1], a[..., 2]
    dx, dy, dz = b[..., 0] - ax, b[..., 1] - ay, b[..., 2] - az

    def f(s):
        return _point_box_xyz(ax + s * dx, ay + s * dy, az + s * dz, half)

    lo, hi = np.zeros(a.shape[:-1]), np.ones(a.shape[:-1])
    x1, x2 = 1.0 - _INV_PHI + lo, _INV_PHI + lo
    f1, f2 = f(x1), f(x2)
    for _ in range(GOLDEN_STEPS):  # invariant: lo < x1 < x2 < hi, a minimizer in [lo, hi]
        left = f1 <= f2  # convex: a minimizer lies in [lo, x2]
        lo, hi = np.where(left, lo, x1), np.where(left, x2, hi)
        probe = np.where(left, hi - _INV_PHI * (hi - lo), lo + _INV_PHI * (hi - lo))
        f_probe = f(probe)
        x1, x2, f1, f2 = (np.where(left, probe, x2), np.where(left, x1, probe),
                          np.where(left, f_probe, f2), np.where(left, f1, f_probe))
    s = np.where(f1 <= f2, x1, x2)
    x = a + s[..., None] * (b - a)
    length = np.linalg.norm(b - a, axis=-1)
    distance = np.minimum(f1, f2) - (hi - lo) * length
    closest = closest_on_box(x, half)
    return distance, center + x @ rotation.T, center + closest @ rotation.T
