"""Quaternion bodies (seed 001, eqs. 8-14): Lambda = (l0, l1, l2, l3), scalar first, unit norm.

omega^(i) = 2 R* Lambda_dot with R* of eq. 8 (Nikravesh's L matrix); R* Lambda = 0 and
R* R*^T = E for a unit quaternion. No trigonometric function is evaluated.
"""

from __future__ import annotations

import numpy as np


def _parts(lam):
    lam = np.asarray(lam, dtype=float)
    return lam[..., 0], lam[..., 1], lam[..., 2], lam[..., 3]


def r_star(lam) -> np.ndarray:
    """R* (..., 3, 4) of seed 001, eq. 8 (also gives R*_dot from Lambda_dot, eq. 9)."""
    l0, l1, l2, l3 = _parts(lam)
    return np.stack([
        np.stack([-l1, l0, l3, -l2], -1),
        np.stack([-l2, -l3, l0, l1], -1),
        np.stack([-l3, l2, -l1, l0], -1),
    ], -2)


def e_matrix(lam) -> np.ndarray:
    """E (..., 3, 4) with A = E R*^T and omega (frame 0) = 2 E Lambda_dot."""
    l0, l1, l2, l3 = _parts(lam)
    return np.stack([
        np.stack([-l1, l0, -l3, l2], -1),
        np.stack([-l2, l3, l0, -l1], -1),
        np.stack([-l3, -l2, l1, l0], -1),
    ], -2)


def product(a, b) -> np.ndarray:
    """Hamilton product a (x) b of (..., 4) quaternions."""
    a0, a1, a2, a3 = _parts(a)
    b0, b1, b2, b3 = _parts(b)
    return np.stack([
        a0 * b0 - a1 * b1 - a2 * b2 - a3 * b3,
        a0 * b1 + a1 * b0 + a2 * b3 - a3 * b2,
        a0 * b2 - a1 * b3 + a2 * b0 + a3 * b1,
        a0 * b3 + a1 * b2 - a2 * b1 + a3 * b0,
    ], -1)


def _pure(v):
    v = np.asarray(v, dtype=float)
    return np.concatenate([np.zeros(v.shape[:-1] + (1,)), v], -1)


class Quaternion:
    """Generalized angular coordinates Lambda (..., 4) of seed 001."""

    name = "quaternion"
    size = 4

    @staticmethod
    def rotation(lam) -> np.ndarray:
        """A^(0i) = E R*^T (..., 3, 3), written out entry by entry (no sines or cosines)."""
        l0, l1, l2, l3 = _parts(lam)
        return 2.0 * np.stack([
            np.stack([l0 * l0 + l1 * l1 - 0.5, l1 * l2 - l0 * l3, l1 * l3 + l0 * l2], -1),
            np.stack([l1 * l2 + l0 * l3, l0 * l0 + l2 * l2 - 0.5, l2 * l3 - l0 * l1], -1),
            np.stack([l1 * l3 - l0 * l2, l2 * l3 + l0 * l1, l0 * l0 + l3 * l3 - 0.5], -1),
        ], -2)

    @staticmethod
    def angular_map(lam) -> np.ndarray:
        """H = 2 R* (..., 3, 4) with omega^(i) = H Lambda_dot (seed 001, eqs. 7-8)."""
        return 2.0 * r_star(lam)

    @staticmethod
    def map_rate_times_rate(lam, dlam) -> np.ndarray:
        """H_dot Lambda_dot = 2 R*(Lambda_dot) Lambda_dot, identically zero."""
        return np.zeros(np.shape(lam)[:-1] + (3,))

    @staticmethod
    def check(lam, what: str = "body") -> None:
        """Quaternions have no singular pose."""

    @staticmethod
    def from_rotation(rotation) -> np.ndarray:
        """Unit quaternions (..., 4) of rotation matrices (..., 3, 3) (Shepperd's method).

        Along a leading time axis the sign is made continuous (Lambda and -Lambda are the
        same rotation) so that finite differences of Lambda stay smooth.
        """
        a = np.asarray(rotation, dtype=float)
        tr = np.trace(a, axis1=-2, axis2=-1)
        cand = np.stack([
            np.stack([1 + tr, a[..., 2, 1] - a[..., 1, 2], a[..., 0, 2] - a[..., 2, 0],
                      a[..., 1, 0] - a[..., 0, 1]], -1),
            np.stack([a[..., 2, 1] - a[..., 1, 2], 1 + 2 * a[..., 0, 0] - tr,
                      a[..., 0, 1] + a[..., 1, 0], a[..., 0, 2] + a[..., 2, 0]], -1),
            np.stack([a[..., 0, 2] - a[..., 2, 0], a[..., 0, 1] + a[..., 1, 0],
                      1 + 2 * a[..., 1, 1] - tr, a[..., 1, 2] + a[..., 2, 1]], -1),
            np.stack([a[..., 1, 0] - a[..., 0, 1], a[..., 0, 2] + a[..., 2, 0],
                      a[..., 1, 2] + a[..., 2, 1], 1 + 2 * a[..., 2, 2] - tr], -1),
        ], -2)
        pivot = np.argmax(np.stack([tr, a[..., 0, 0], a[..., 1, 1], a[..., 2, 2]], -1), -1)
        lam = np.take_along_axis(cand, pivot[..., None, None], -2)[..., 0, :]
        lam = lam / np.linalg.norm(lam, axis=-1, keepdims=True)
        lam = lam * np.where(lam[..., :1] < 0, -1.0, 1.0)
        if lam.ndim >= 2 and lam.shape[0] > 1:
            dots = np.sum(lam[1:] * lam[:-1], -1)
            flips = np.cumprod(np.where(dots < 0, -1.0, 1.0), axis=0)
            lam[1:] *= flips[..., None]
        return lam

    @staticmethod
    def rates(lam, omega_body) -> np.ndarray:
        """Lambda_dot = 1/2 Lambda (x) (0, omega^(i)) (..., 4)."""
        return 0.5 * product(lam, _pure(omega_body))

    @staticmethod
    def second_rates(lam, dlam, domega_body) -> np.ndarray:
        """Lambda_ddot = 1/2 (Lambda_dot (x) (0, omega^(i)) + Lambda (x) (0, omega_dot^(i)))."""
        omega = 2.0 * np.einsum("...ij,...j->...i", r_star(lam), dlam)
        return 0.5 * (product(dlam, _pure(omega)) + product(lam, _pure(domega_body)))

