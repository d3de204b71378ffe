"""Kinetic and potential energy of the rigid-body model."""

from __future__ import annotations

import numpy as np

from dynid.dynamics.arrays import joint_arrays
from dynid.dynamics.kinematics import forward_kinematics, link_motion
from dynid.dynamics.spatial import inertia_times_motion, rotate


def kinetic_energy(robot, q, dq) -> np.ndarray:
    """T = 1/2 sum_i V_i . I_i V_i  (N,) [J]."""
    (q, dq), single = joint_arrays(robot, q=q, dq=dq)
    if robot.has_mimic:  # the tree's energy at the tree coordinates of q, dq (dynamics/mimic.py)
        total = kinetic_energy(robot.tree, *robot.tree_coordinates(q, dq)[:2])
        return total[0] if single else total
    motion = link_motion(robot, q, dq, np.zeros_like(q), gravity=np.zeros(3))
    total = np.zeros(q.shape[0])
    for i, link in enumerate(robot.links):
        n, f = inertia_times_motion(link.inertial, motion.w[:, i], motion.v[:, i])
        total += 0.5 * (np.sum(motion.w[:, i] * n, -1) + np.sum(motion.v[:, i] * f, -1))
    return total[0] if single else total


def potential_energy(robot, q) -> np.ndarray:
    """V = -sum_i m_i g . c_i (world COM positions), zero at the world origin (N,) [J]."""
    (q,), single = joint_arrays(robot, q=q)
    if robot.has_mimic:
        total = potential_energy(robot.tree, robot.tree_coordinates(q)[0])
        return total[0] if single else total
    rotation, origin = forward_kinematics(robot, q)
    total = np.zeros(q.shape[0])
    for i, link in enumerate(robot.links):
        m, h = link.inertial[0], link.inertial[1:4]
        first_moment = m * origin[:, i] + rotate(rotation[:, i], h)  # m * c_world
        total -= first_moment @ robot.gravity
    return total[0] if single else total
