"""Rotations and homogeneous transforms, scalar and batched (leading axes broadcast)."""

from __future__ import annotations

import numpy as np


def rot_x(angle) -> np.ndarray:
    """Rotation about x by ``angle`` [rad]; (...,) -> (..., 3, 3)."""
    c, s = np.cos(angle), np.sin(angle)
    o, z = np.ones_like(c), np.zeros_like(c)
    return np.stack([np.stack([o, z, z], -1), np.stack([z, c, -s], -1), np.stack([z, s, c], -1)], -2)


def rot_y(angle) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    o, z = np.ones_like(c), np.zeros_like(c)
    return np.stack([np.stack([c, z, s], -1), np.stack([z, o, z], -1), np.stack([-s, z, c], -1)], -2)


def rot_z(angle) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    o, z = np.ones_like(c), np.zeros_like(c)
    return np.stack([np.stack([c, -s, z], -1), np.stack([s, c, z], -1), np.stack([z, z, o], -1)], -2)


def rpy_matrix(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """URDF fixed-axis roll-pitch-yaw: R = Rz(yaw) Ry(pitch) Rx(roll)."""
    return rot_z(yaw) @ rot_y(pitch) @ rot_x(roll)


def skew(v: np.ndarray) -> np.ndarray:
    """(..., 3) -> (..., 3, 3) matrix with skew(a) @ b == cross(a, b)."""
    v = np.asarray(v, dtype=float)
    x, y, z = v[..., 0], v[..., 1], v[..., 2]
    o = np.zeros_like(x)
    return np.stack([np.stack([o, -z, y], -1), np.stack([z, o, -x], -1), np.stack([-y, x, o], -1)], -2)


def axis_angle(axis: np.ndarray, angle) -> np.ndarray:
    """Rodrigues: rotation by ``angle`` (...,) about the unit ``axis`` (3,) -> (..., 3, 3)."""
    angle = np.asarray(angle, dtype=float)
    k = skew(np.asarray(axis, dtype=float))
    s, c = np.sin(angle)[..., None, None], np.cos(angle)[..., None, None]
    return np.eye(3) + s * k + (1.0 - c) * (k @ k)


def homogeneous(rotation: np.ndarray, translation: np.ndarray) -> np.ndarray:
    """(..., 3, 3), (..., 3) -> (..., 4, 4)."""
    shape = np.broadcast_shapes(rotation.shape[:-2], translation.shape[:-1])
    t = np.zeros(shape + (4, 4))
    t[..., :3, :3] = rotation
    t[..., :3, 3] = translation
    t[..., 3, 3] = 1.0
    return t
