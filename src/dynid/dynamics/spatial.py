"""Batched 3-D and 6-D spatial vector algebra (Featherstone, "Rigid Body Dynamics Algorithms").

Motion vectors are (angular, linear-at-frame-origin); force vectors are (moment about the
origin, force). All functions act on leading batch axes, e.g. (N, 3) or (N, 3, 3).
"""

from __future__ import annotations

import numpy as np

from dynid.robot.inertia import inertia_matrix


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a x b over the last axis (..., 3); cheaper than np.cross on small batches."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


def rotate(r: np.ndarray, v: np.ndarray) -> np.ndarray:
    """R v for (..., 3, 3) and (..., 3)."""
    return np.einsum("...ij,...j->...i", r, v)


def rotate_t(r: np.ndarray, v: np.ndarray) -> np.ndarray:
    """R^T v for (..., 3, 3) and (..., 3)."""
    return np.einsum("...ji,...j->...i", r, v)


def inertia_times_motion(theta: np.ndarray, w: np.ndarray, v: np.ndarray):
    """(n, f) = I (w, v) for standard parameters theta (10,) and motion (..., 3) parts."""
    m, h = theta[0], theta[1:4]
    io = inertia_matrix(theta[4:10])
    n = w @ io.T + cross(np.broadcast_to(h, v.shape), v)
    f = m * v + cross(w, np.broadcast_to(h, w.shape))
    return n, f
