"""Removal of the gravity contribution from the friction measurement (thesis 5.2.2).

While only joint j moves (revolute), its torque is exactly

    tau = I ddq + g_s sin(q) + g_c cos(q) + friction(dq)

because the inertia of the links beyond j about its axis does not depend on q_j (no
Coriolis term of its own velocity) and the gravity torque of a body rotating about a fixed
axis is a sinusoid of the angle. This is thesis eq. 5.3 with mP_x = -g_s, mP_y = -g_c
(the OCR'd eq. 5.2 and 5.3 disagree on the sign; we keep 5.3's regressor
[ddq, -sin q, -cos q, sign dq, dq, dq^2 sign dq, dq^3] and its parameter names):

    tau = [ddq  -sin q  -cos q  sign  dq  dq^2 sign  dq^3] [I_motor mP_x mP_y f1 f2 f3 f4]^T   (eq. 5.3)

and the gravity-free torque is eq. 5.2: tau_no-gravity = tau + mP_x sin q + mP_y cos q.
Prismatic joints have a constant gravity force: the column [-1] with parameter mP_0.

The gravity parameters are shared by all cycles, the friction coefficients f1..f4 are
fitted per cycle (friction drifts between cycles; thesis 5.2.1). Samples: joint j moving
alone in the friction stage with |dq_j| >= ``min_speed`` (ramps included: they determine I).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynid.errors import DataError


@dataclass
class GravityFit:
    """Eq. 5.3 fit of one joint: names, values, std (Khalil-Gautier) of [I_motor, mP_x, mP_y]
    (or [I_motor, mP_0] for a prismatic joint), residual RMS [N m] and sample count."""

    joint: int
    names: list
    values: np.ndarray
    std: np.ndarray
    residual_rms: float
    samples: int
    revolute: bool

    def gravity(self, q: np.ndarray) -> np.ndarray:
        """Gravity torque (N,) of this joint at its positions q (N,): -mP_x sin q - mP_y cos q."""
        if self.revolute:
            return -self.values[1] * np.sin(q) - self.values[2] * np.cos(q)
        return -self.values[1] * np.ones_like(q)

    def to_dict(self) -> dict:
        return {"joint": self.joint + 1, "parameters": {k: float(v) for k, v in zip(self.names, self.values)},
                "std": {k: float(v) for k, v in zip(self.names, self.std)},
                "residual_rms": self.residual_rms, "samples": self.samples}


def eq53_columns(q: np.ndarray, dq: np.ndarray, ddq: np.ndarray, cycle_index: np.ndarray, cycles: int,
                 revolute: bool) -> np.ndarray:
    """(N, shared + 4 cycles) regressor of eq. 5.3 for one joint: shared [ddq, -sin q, -cos q]
    (prismatic: [ddq, -1]), then [sign, dq, dq^2 sign, dq^3] in the block of each sample's cycle."""
    s = np.sign(dq)
    shared = [ddq, -np.sin(q), -np.cos(q)] if revolute else [ddq, -np.ones_like(q)]
    friction = np.stack([s, dq, dq * dq * s, dq**3], axis=1)  # eq. 3.10 / 5.3 friction terms
    blocks = np.zeros((q.size, cycles, 4))
    blocks[np.arange(q.size), cycle_index] = friction
    return np.column_stack(shared + [blocks.reshape(q.size, 4 * cycles)])


def fit_gravity(joint: int, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray, tau: np.ndarray,
                cycle: np.ndarray, revolute: bool = True) -> GravityFit:
    """Least-squares fit of eq. 5.3 for joint ``joint`` on its samples (N,) (see module docstring)."""
    labels, cycle_index = np.unique(cycle, return_inverse=True)
    w = eq53_columns(q, dq, ddq, cycle_index, labels.size, revolute)
    # a cycle whose samples miss a speed range leaves columns empty: drop them
    shared = 3 if revolute else 2
    used = np.any(w != 0, axis=0)
    used[:shared] = True
    w_used = w[:, used]
    if w_used.shape[0] <= w_used.shape[1]:
        raise DataError(f"joint {joint + 1}: {w_used.shape[0]} friction-stage samples cannot determine "
                        f"the {w_used.shape[1]} parameters of eq. 5.3")
    # column scaling for conditioning (dq^3 and ddq differ by orders of magnitude)
    scale = np.linalg.norm(w_used, axis=0)
    x, _, rank, _ = np.linalg.lstsq(w_used / scale, tau, rcond=None)
    if rank < w_used.shape[1]:
        raise DataError(f"joint {joint + 1}: eq. 5.3 is rank deficient on the friction stage "
                        f"(rank {rank} of {w_used.shape[1]}); does the joint move through enough of its range?")
    x = x / scale
    residual = tau - w_used @ x
    dof = w_used.shape[0] - w_used.shape[1]
    sigma2 = float(residual @ residual) / dof
    cov = sigma2 * np.linalg.inv(w_used.T @ w_used)
    names = ["I_motor", "mP_x", "mP_y"] if revolute else ["I_motor", "mP_0"]
    return GravityFit(joint, names, x[:shared], np.sqrt(np.diag(cov))[:shared],
                      float(np.sqrt(np.mean(residual**2))), int(q.size), revolute)
