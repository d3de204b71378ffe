"""Joint data columns as the motor side logs them: encoder angles, motor torques or currents.

A drive logs its motor: angle q_m = T q (likewise dq_m, ddq_m) and torque tau_m = T^-T tau
(power balance, robot/transmission.py and docs/transmissions.md), or the current
i = tau_m / k_t of a motor with torque constant k_t. ``dynid identify --motor-side`` (and
``--current-gain drive`` for currents) reads such columns back to the joint side.
"""

from __future__ import annotations

import numpy as np

from dynid.errors import DataError
from dynid.robot.transmission import motor_from_joint, motor_torques


def _block(cols: dict, prefix: str, n: int) -> np.ndarray | None:
    names = [f"{prefix}{j + 1}" for j in range(n)]
    return np.column_stack([cols[c] for c in names]) if all(c in cols for c in names) else None


def motor_side_columns(robot, cols: dict, motor_side: bool, currents: bool) -> dict:
    """Replace the joint-side q, dq, ddq (when ``motor_side``) and tau (by motor torques when
    ``motor_side``, by currents i1..in when ``currents``) of a column dict, in place; returns it."""
    n, t_matrix = robot.n, robot.transmission_matrix
    if motor_side:
        for prefix in ("q", "dq", "ddq"):
            block = _block(cols, prefix, n)
            if block is not None:
                cols.update({f"{prefix}{j + 1}": v for j, v in enumerate(motor_from_joint(t_matrix, block).T)})
    tau = _block(cols, "tau", n)
    if tau is None or not (motor_side or currents):
        return cols
    tau_m = motor_torques(t_matrix, tau)
    if not currents:
        cols.update({f"tau{j + 1}": v for j, v in enumerate(tau_m.T)})
        return cols
    kt = np.array([j.drive.torque_constant for j in robot.actuated_joints])
    if not np.all(np.isfinite(kt)):
        raise DataError(f"--currents: robot '{robot.name}' lacks torque constants for some drives")
    # i = tau_m / k_t; without coupling written as tau / (k_t N), the numbers of earlier versions
    current = tau / (kt * robot.gear_ratios) if not robot.is_coupled else tau_m / kt
    for j in range(n):
        cols.pop(f"tau{j + 1}")
        cols[f"i{j + 1}"] = current[:, j]
    return cols
