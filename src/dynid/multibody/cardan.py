"""Cardan-angle bodies (seed 000, eqs. 1-7, 29, 33, 34): theta = (alpha, beta, gamma).

A^(0i) = Rx(alpha) Ry(beta) Rz(gamma) (eq. 29) maps body-fixed e^(i) coordinates to frame 0;
the body-frame angular velocity is omega^(i) = D theta_dot (eq. 33). D is singular at
beta = +-pi/2 (cos beta = 0): there the angles cannot represent the motion and the
quaternion form (seed 001) must be used.
"""

from __future__ import annotations

import numpy as np

from dynid.errors import DynidError

# |cos beta| below this is treated as the Cardan singularity (D has det = cos beta)
SINGULAR_COS = 1e-6


class CardanSingularityError(DynidError):
    """The Cardan angles of a body reach beta = +-pi/2 (gimbal lock)."""


def _cs(theta):
    theta = np.asarray(theta, dtype=float)
    return np.cos(theta[..., 0]), np.sin(theta[..., 0]), np.cos(theta[..., 1]), \
        np.sin(theta[..., 1]), np.cos(theta[..., 2]), np.sin(theta[..., 2])


class Cardan:
    """Generalized angular coordinates theta (..., 3) of seed 000."""

    name = "cardan"
    size = 3

    @staticmethod
    def rotation(theta) -> np.ndarray:
        """A^(0i) (..., 3, 3) of seed 000, eq. 29."""
        ca, sa, cb, sb, cg, sg = _cs(theta)
        return np.stack([
            np.stack([cb * cg, -cb * sg, sb], -1),
            np.stack([ca * sg + sa * sb * cg, ca * cg - sa * sb * sg, -sa * cb], -1),
            np.stack([sa * sg - ca * sb * cg, sa * cg + ca * sb * sg, ca * cb], -1),
        ], -2)

    @staticmethod
    def angular_map(theta) -> np.ndarray:
        """D (..., 3, 3) with omega^(i) = D theta_dot (seed 000, eq. 33)."""
        _, _, cb, sb, cg, sg = _cs(theta)
        z, o = np.zeros_like(cb), np.ones_like(cb)
        return np.stack([
            np.stack([cb * cg, sg, z], -1),
            np.stack([-cb * sg, cg, z], -1),
            np.stack([sb, z, o], -1),
        ], -2)

    @staticmethod
    def map_rate_times_rate(theta, dtheta) -> np.ndarray:
        """D_dot theta_dot (..., 3) (seed 000, eq. 34; its (3,3) entry printed as 1 is 0)."""
        _, _, cb, sb, cg, sg = _cs(theta)
        da, db, dg = dtheta[..., 0], dtheta[..., 1], dtheta[..., 2]
        d11 = -db * sb * cg - dg * cb * sg
        d21 = db * sb * sg - dg * cb * cg
        d31 = db * cb
        return np.stack([d11 * da + dg * cg * db, d21 * da - dg * sg * db, d31 * da], -1)

    @classmethod
    def check(cls, theta, what: str = "body") -> None:
        cb = np.cos(np.asarray(theta, dtype=float)[..., 1])
        bad = np.abs(cb) < SINGULAR_COS
        if np.any(bad):
            idx = [int(i) for i in np.argwhere(bad)[0]]
            where = f"sample {idx[0]}, body B{idx[1] + 1}" if len(idx) == 2 else f"index {tuple(idx)}"
            raise CardanSingularityError(
                f"{what}: Cardan angle beta = +-pi/2 at {where}; "
                "D of seed 000 eq. 33 is singular there (gimbal lock). "
                "Use the quaternion form (--coordinates quaternion)."
            )

    @staticmethod
    def from_rotation(rotation) -> np.ndarray:
        """Cardan angles (..., 3) of rotation matrices (..., 3, 3), inverse of eq. 29."""
        a = np.asarray(rotation, dtype=float)
        alpha = np.arctan2(-a[..., 1, 2], a[..., 2, 2])
        beta = np.arctan2(a[..., 0, 2], np.hypot(a[..., 0, 0], a[..., 0, 1]))
        gamma = np.arctan2(-a[..., 0, 1], a[..., 0, 0])
        return np.stack([alpha, beta, gamma], -1)

    @classmethod
    def rates(cls, theta, omega_body) -> np.ndarray:
        """theta_dot = D^-1 omega^(i) (..., 3)."""
        cls.check(theta)
        return np.linalg.solve(cls.angular_map(theta), omega_body[..., None])[..., 0]

    @classmethod
    def second_rates(cls, theta, dtheta, domega_body) -> np.ndarray:
        """theta_ddot from omega_dot^(i) = D theta_ddot + D_dot theta_dot."""
        rhs = domega_body - cls.map_rate_times_rate(theta, dtheta)
        return np.linalg.solve(cls.angular_map(theta), rhs[..., None])[..., 0]
