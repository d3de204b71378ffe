"""Prior model torques for excitation design: the robot description's own parameters."""

from __future__ import annotations

import numpy as np

from dynid.dynamics import inverse_dynamics


def prior_torques(robot, q, dq, ddq) -> np.ndarray:
    """(N, n) rigid-body torques of the description plus rotor inertia I_a ddq (thesis eq. 3.12).

    Friction is not included: a description carries no friction coefficients. A link whose inertia
    misses the triangle inequality counts as the nearest physical one (``Robot.physical``).
    """
    return inverse_dynamics(robot.physical, q, dq, ddq) + np.asarray(ddq) * robot.rotor_inertias
