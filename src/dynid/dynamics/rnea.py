"""Recursive Newton-Euler inverse dynamics, batched over samples (Featherstone 2008, sec. 5.3).

``inverse_dynamics`` runs the compiled kernel (dynid.dynamics.kernels); ``link_wrenches`` is the
NumPy form that also returns every joint's transmitted wrench (used by the multibody module).
"""

from __future__ import annotations

import numpy as np

from dynid.dynamics.arrays import joint_arrays
from dynid.dynamics.kernels import rnea_kernel, robot_arrays
from dynid.dynamics.kinematics import LinkMotion
from dynid.dynamics.spatial import cross, inertia_times_motion, rotate


def link_wrenches(robot, motion: LinkMotion) -> tuple[np.ndarray, np.ndarray]:
    """Joint wrench transmitted from each link's parent into it, in link frame, about its origin.

    f_i = I_i A_i + V_i x* I_i V_i + sum over children X*_{i<-c} f_c.
    Returns moment (N, n, 3) [N m] and force (N, n, 3) [N].
    """
    moment = np.empty_like(motion.w)
    force = np.empty_like(motion.w)
    for i, link in enumerate(robot.links):
        th = link.inertial
        n_a, f_a = inertia_times_motion(th, motion.dw[:, i], motion.dv[:, i])
        n_v, f_v = inertia_times_motion(th, motion.w[:, i], motion.v[:, i])
        w, v = motion.w[:, i], motion.v[:, i]
        moment[:, i] = n_a + cross(w, n_v) + cross(v, f_v)
        force[:, i] = f_a + cross(w, f_v)
    for i in range(robot.n - 1, -1, -1):
        p = robot.parents[i]
        if p >= 0:
            r, t = motion.rotation[:, i], motion.translation[:, i]
            f_parent = rotate(r, force[:, i])
            moment[:, p] += rotate(r, moment[:, i]) + cross(t, f_parent)
            force[:, p] += f_parent
    return moment, force


def inverse_dynamics(robot, q, dq, ddq, gravity=None) -> np.ndarray:
    """Joint torques/forces tau = M(q) ddq + c(q, dq) + g(q) of the rigid-body model.

    q, dq, ddq: (N, n) joint positions [rad | m], velocities, accelerations.
    gravity: optional (3,) override of the robot's gravity vector [m/s^2].
    Returns tau: (N, n) [N m | N]. A single sample (n,) gives (n,).
    """
    if robot.has_mimic:  # actuated coordinates of a tree with mimic joints (dynamics/mimic.py)
        from dynid.dynamics import mimic
        return mimic.inverse_dynamics(robot, q, dq, ddq, gravity)
    (q, dq, ddq), single = joint_arrays(robot, q=q, dq=dq, ddq=ddq)
    arrays = list(robot_arrays(robot))
    if gravity is not None:
        arrays[-1] = np.ascontiguousarray(gravity, dtype=float).reshape(3)
    tau = np.empty_like(q)
    rnea_kernel(np.ascontiguousarray(q), np.ascontiguousarray(dq), np.ascontiguousarray(ddq), *arrays,
                np.ascontiguousarray(robot.parameters().reshape(-1, 10)), tau)
    return tau[0] if single else tau


def gravity_torques(robot, q) -> np.ndarray:
    """g(q): (N, n) torques that hold the robot still against gravity."""
    zeros = np.zeros_like(np.asarray(q, dtype=float))
    return inverse_dynamics(robot, q, zeros, zeros)


def coriolis_torques(robot, q, dq) -> np.ndarray:
    """c(q, dq) = C(q, dq) dq: (N, n) Coriolis and centrifugal torques."""
    zeros = np.zeros_like(np.asarray(q, dtype=float))
    return inverse_dynamics(robot, q, dq, zeros, gravity=np.zeros(3))
