"""Defects of real logs beyond white torque noise and encoder quantization (``Measurement``):

- torque ripple of the drives: a motor's torque (and current) carries a ripple that repeats
  ``ripple_order`` times per motor revolution (six per electrical period for a three-phase
  motor with sinusoidal commutation errors; cogging likewise). On the joint side of a gear of
  ratio N_j it is

      tau_ripple_j = a_j sin(ripple_order N_j q_j + phi_j)                          (R1)

  a position-periodic error at ripple_order N_j |dq_j| / (2 pi) Hz: high-frequency, coloured,
  and correlated with the motion (not white noise);
- dropped samples: a fraction ``drop`` of the rows (chosen at random, seeded) never reaches
  the log, so the time stamps are irregular where they are missing.

``degrade`` applies both to a simulated ``JointData`` (torques and motion already measured).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynid.data.columns import JointData
from dynid.errors import DataError


@dataclass(frozen=True)
class Defects:
    """ripple: joint-side ripple amplitude a_j [N m | N], one number or one per joint;
    ripple_order: ripple periods per motor revolution; drop: fraction of rows lost [0, 0.5)."""

    ripple: tuple[float, ...] | float = 0.0
    ripple_order: int = 6
    drop: float = 0.0

    def __post_init__(self):
        if not 0.0 <= self.drop < 0.5:
            raise DataError(f"dropped-sample fraction must be in [0, 0.5), got {self.drop}")


def degrade(robot, data: JointData, q_true: np.ndarray, defects: Defects, seed: int = 0) -> JointData:
    """``data`` with the ripple (R1) of the true positions q_true (N, n) added to its torques
    and a random share ``defects.drop`` of its rows removed (first and last rows kept)."""
    rng = np.random.default_rng(seed)
    amplitude = np.broadcast_to(np.asarray(defects.ripple, dtype=float), (robot.n,))
    if data.tau is not None and np.any(amplitude > 0):
        phase = rng.uniform(0.0, 2.0 * np.pi, robot.n)
        ripple = amplitude * np.sin(defects.ripple_order * robot.gear_ratios * q_true + phase)  # (R1)
        data = JointData(data.t, data.q, data.dq, data.ddq, data.tau + ripple, data.cycle, data.stage,
                         data.source, list(data.notes))
    if defects.drop > 0 and len(data) > 2:
        keep = rng.random(len(data)) >= defects.drop
        keep[[0, -1]] = True
        data = data.select(keep)
    return data
