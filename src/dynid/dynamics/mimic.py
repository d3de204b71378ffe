"""Dynamics of robots with mimic joints, in actuated coordinates, on top of the tree algorithms.

A robot with mimic joints has ``n_bodies`` moving bodies but ``n`` actuated coordinates; the
tree coordinates are a constant affine map of the actuated ones (``Robot.mimic_map``):

    q_tree = G q + o,   dq_tree = G dq,   ddq_tree = G ddq                       (M1)

The virtual work of the tree torques on any admissible motion equals that of the actuated
torques, tau^T dq = tau_tree^T G dq, so (Featherstone 2008, sec. 8.3, gears)

    tau = G^T tau_tree(q_tree, G dq, G ddq),   Y = G^T Y_tree,   M = G^T M_tree G  (M2)

and the standard parameters stay those of the tree, 10 per moving body (theta (10 n_bodies,)).
Every public dynamics function checks ``robot.has_mimic`` and hands such robots to the
function of the same name here, passing itself as ``tree``: the function here runs it on
``robot.tree`` (whose kernels know nothing about mimic joints) and projects the result with
(M2). This module imports none of the algorithms it wraps, so none of them imports in a circle.
Forward dynamics needs nothing here: ddq = M^-1 (tau - bias) with M and the bias of (M2).
"""

from __future__ import annotations

import numpy as np

from dynid.dynamics.arrays import joint_arrays


def _squeeze(single: bool, *arrays):
    out = tuple(a[0] if single else a for a in arrays)
    return out if len(out) > 1 else out[0]


def inverse_dynamics(robot, q, dq, ddq, gravity=None, parameters=None, *, tree) -> np.ndarray:
    """tau = G^T tau_tree (M2); ``tree``: dynamics.rnea.inverse_dynamics."""
    (q, dq, ddq), single = joint_arrays(robot, q=q, dq=dq, ddq=ddq)
    g, _ = robot.mimic_map
    tau_tree = tree(robot.tree, *robot.tree_coordinates(q, dq, ddq), gravity=gravity,
                    parameters=parameters)
    return _squeeze(single, tau_tree @ g)  # (M2)


def regressor(robot, q, dq, ddq, out: np.ndarray | None = None, *, tree) -> np.ndarray:
    """Y = G^T Y_tree (M2); ``tree``: dynamics.regressor.regressor."""
    (q, dq, ddq), single = joint_arrays(robot, q=q, dq=dq, ddq=ddq)
    g, _ = robot.mimic_map
    shape = (q.shape[0], robot.n, 10 * robot.n_bodies)
    if out is not None and (out.shape != shape or out.dtype != np.float64):
        raise ValueError(f"out: expected a float64 array of shape {shape}")
    y_tree = tree(robot.tree, *robot.tree_coordinates(q, dq, ddq))
    y = np.matmul(g.T, y_tree, out=out)  # Y = G^T Y_tree (M2), batched over samples (10x einsum's speed)
    return _squeeze(single, y)


def mass_matrix(robot, q, *, tree) -> np.ndarray:
    """M = G^T M_tree G (M2); ``tree``: dynamics.mass_matrix.mass_matrix."""
    (q,), single = joint_arrays(robot, q=q)
    g, _ = robot.mimic_map
    m_tree = tree(robot.tree, robot.tree_coordinates(q)[0])
    return _squeeze(single, g.T @ m_tree @ g)  # (M2)

