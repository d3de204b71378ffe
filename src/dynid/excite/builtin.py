"""Builtin excitation trajectories.

``thesis-table-4.1``: the finite Fourier series (eq. 4.19-4.21) of the thesis' Table 4.1,
"The optimization results of Equation 4.20, 4.20 and 4.21", for the EFORT ER3A, with
N = 5 and w_f = 2 pi 0.1 rad/s (thesis section 4.2.2). Source: Hao, "Advanced dynamic model
of serial robots", Table 4.1; rows a_1..a_5, b_1..b_5 [rad/s] and q_0 [rad], columns joint 1..6.
"""

from __future__ import annotations

import math

import numpy as np

from dynid.errors import DataError

# thesis Table 4.1 (columns: joint 1 .. joint 6)
TABLE_4_1_A = (
    (0.2428, -0.1795, 0.0607, -0.0039, -0.0470, -1.2177),   # a_1
    (0.3845, -0.0369, -0.2272, 0.0725, 0.0722, 0.2676),     # a_2
    (-0.6092, -0.1851, 0.6706, 0.0023, -0.0035, 0.3225),    # a_3
    (-0.1870, -0.2343, -0.8226, 0.0022, 0.0203, 0.5088),    # a_4
    (0.1689, 0.6358, 0.3185, -0.0731, -0.0419, 0.1188),     # a_5
)
TABLE_4_1_B = (
    (-0.3678, 0.4024, 0.0005, 0.2701, -0.3227, 0.0210),     # b_1
    (0.2845, -0.9426, -0.1154, 0.4287, 1.5358, 0.0139),     # b_2
    (0.0154, -0.6795, -0.2170, 0.4011, -0.5949, -0.5578),   # b_3
    (-0.7440, -0.2190, 0.7542, -1.7803, -0.5858, 0.8056),   # b_4
    (0.5457, 0.8795, -0.4271, 0.9581, 0.2758, -0.3196),     # b_5
)
TABLE_4_1_Q0 = (-0.4732, -0.2773, -0.0420, 0.5805, 0.2477, -0.0327)
TABLE_4_1_W_F = 2.0 * math.pi * 0.1  # thesis section 4.2.2 [rad/s]


def thesis_table_4_1():
    """The thesis' optimized Fourier trajectory for er3a (N = 5, w_f = 2 pi 0.1)."""
    from dynid.excite.periodic import from_table

    traj = from_table(np.array(TABLE_4_1_A), np.array(TABLE_4_1_B), np.array(TABLE_4_1_Q0), TABLE_4_1_W_F)
    return traj.with_coefficients(traj.q0, traj.coefficients, source="thesis Table 4.1", robot="er3a")


BUILTIN_TRAJECTORIES = {"thesis-table-4.1": (thesis_table_4_1, "er3a")}


def builtin_trajectory(name: str, n: int | None = None):
    """A builtin trajectory by name; checks it fits a robot with n joints when n is given."""
    if name not in BUILTIN_TRAJECTORIES:
        raise DataError(f"unknown builtin trajectory '{name}'; builtin: {sorted(BUILTIN_TRAJECTORIES)}")
    make, robot = BUILTIN_TRAJECTORIES[name]
    traj = make()
    if n is not None and traj.n != n:
        raise DataError(f"builtin trajectory '{name}' is for {robot} ({traj.n} joints), the robot has {n}")
    return traj
