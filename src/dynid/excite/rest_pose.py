"""Resting configurations for the friction stage (thesis 4.4).

While joint j moves alone, gravity adds no torque about its axis if that axis is vertical
(parallel to gravity); the thesis does this for joints 1, 4 and 5 of the ER3A, while joints
2 and 3 have horizontal axes in every configuration. The axis of joint j depends only on
the joints before it, so we choose those (within the allowed range, close to a home pose)
to maximize |cos| of the angle between the axis and gravity; joints after j stay at home.
"""

from __future__ import annotations

import numpy as np
import scipy.optimize

from dynid.dynamics import forward_kinematics


def joint_axes_world(robot, q: np.ndarray) -> np.ndarray:
    """(N, n, 3) unit joint axes in world coordinates for configurations q (N, n)."""
    rotation, _ = forward_kinematics(robot, q)
    return np.einsum("snab,nb->sna", rotation, robot.screw_axes[:, :3])


def vertical_alignment(robot, q: np.ndarray, joint: int) -> np.ndarray:
    """(N,) |cos| of the angle between joint ``joint``'s axis and gravity."""
    g = robot.gravity / np.linalg.norm(robot.gravity)
    return np.abs(joint_axes_world(robot, np.atleast_2d(q))[:, joint] @ g)


def vertical_axis_pose(robot, joint: int, home: np.ndarray, lower: np.ndarray, upper: np.ndarray,
                       seed: int = 0, candidates: int = 2000, distance_weight: float = 1e-3):
    """A configuration with joint ``joint``'s axis as close to vertical as the kinematics allow.

    Only the joints before ``joint`` on its chain move away from ``home``, within
    [lower, upper]. Score: |cos(axis, g)| - distance_weight ||q - home||^2; seeded random
    candidates, then a bounded local refinement. Returns (q (n,), |cos| achieved).
    """
    home = np.asarray(home, dtype=float)
    if np.linalg.norm(robot.gravity) == 0:
        return home.copy(), 0.0
    free = [i for i in robot.ancestors[joint] if i != joint]
    if not free:
        return home.copy(), float(vertical_alignment(robot, home, joint)[0])
    rng = np.random.default_rng(seed)
    pool = np.repeat(home[None, :], candidates + 1, axis=0)
    pool[1:, free] = rng.uniform(lower[free], upper[free], (candidates, len(free)))

    def score(qs):
        return vertical_alignment(robot, qs, joint) - distance_weight * np.sum((qs - home) ** 2, axis=1)

    best = pool[int(np.argmax(score(pool)))].copy()

    def negative(x):
        q = home.copy()
        q[free] = x
        return -float(score(q[None, :])[0])

    res = scipy.optimize.minimize(negative, best[free], method="L-BFGS-B",
                                  bounds=list(zip(lower[free], upper[free])))
    if -res.fun >= score(best[None, :])[0]:
        best[free] = res.x
    return best, float(vertical_alignment(robot, best, joint)[0])
