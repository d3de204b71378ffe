"""Dynamics of robots with mimic joints, in actuated coordinates, on top of the tree algorithms.

A robot with mimic joints has ``n_bodies`` moving bodies but ``n`` actuated coordinates; the
tree coordinates are a constant affine map of the actuated ones (``Robot.mimic_map``):

    q_tree = G q + o,   dq_tree = G dq,   ddq_tree = G ddq                       (M1)

The virtual work of the tree torques on any admissible motion equals that of the actuated
torques, tau^T dq = tau_tree^T G dq, so (Featherstone 2008, sec. 8.3, gears)

    tau = G^T tau_tree(q_tree, G dq, G ddq),   Y = G^T Y_tree,   M = G^T M_tree G  (M2)

and the standard parameters stay those of the tree, 10 per moving body (theta (10 n_bodies,)).
Every public dynamics function checks ``robot.has_mimic`` and hands such robots to the
function of the same name here, which runs the tree algorithm on ``robot.tree`` (whose
kernels know nothing about mimic joints) and projects the result with (M2).
"""

from __future__ import annotations

import numpy as np

from dynid.dynamics.arrays import joint_arrays


def _squeeze(single: bool, *arrays):
    out = tuple(a[0] if single else a for a in arrays)
    return out if len(out) > 1 else out[0]


def inverse_dynamics(robot, q, dq, ddq, gravity=None, parameters=None) -> np.ndarray:
    from dynid.dynamics.rnea import inverse_dynamics as tree_inverse_dynamics

    (q, dq, ddq), single = joint_arrays(robot, q=q, dq=dq, ddq=ddq)
    g, _ = robot.mimic_map
    tau_tree = tree_inverse_dynamics(robot.tree, *robot.tree_coordinates(q, dq, ddq), gravity=gravity,
                                     parameters=parameters)
    return _squeeze(single, tau_tree @ g)  # (M2)


def regressor(robot, q, dq, ddq, out: np.ndarray | None = None) -> np.ndarray:
    from dynid.dynamics.regressor import regressor as tree_regressor

    (q, dq, ddq), single = joint_arrays(robot, q=q, dq=dq, ddq=ddq)
    g, _ = robot.mimic_map
    shape = (q.shape[0], robot.n, 10 * robot.n_bodies)
    if out is not None and (out.shape != shape or out.dtype != np.float64):
        raise ValueError(f"out: expected a float64 array of shape {shape}")
    y_tree = tree_regressor(robot.tree, *robot.tree_coordinates(q, dq, ddq))
    y = np.matmul(g.T, y_tree, out=out)  # Y = G^T Y_tree (M2), batched over samples (10x einsum's speed)
    return _squeeze(single, y)


def mass_matrix(robot, q) -> np.ndarray:
    from dynid.dynamics.mass_matrix import mass_matrix as tree_mass_matrix

    (q,), single = joint_arrays(robot, q=q)
    g, _ = robot.mimic_map
    m_tree = tree_mass_matrix(robot.tree, robot.tree_coordinates(q)[0])
    return _squeeze(single, g.T @ m_tree @ g)  # (M2)


def forward_dynamics(robot, q, dq, tau) -> np.ndarray:
    """ddq = (G^T M_tree G)^-1 (tau - G^T bias_tree): the follower's inertia loads its leader."""
    (q, dq, tau), single = joint_arrays(robot, q=q, dq=dq, tau=tau)
    bias = inverse_dynamics(robot, q, dq, np.zeros_like(q))
    ddq = np.linalg.solve(mass_matrix(robot, q), (tau - bias)[..., None])[..., 0]
    return _squeeze(single, ddq)
