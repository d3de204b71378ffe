"""Graph description of a tree robot (seed 000, section 2.1, eqs. 8-27).

Bodies B_1..B_n are the links; joint O_k joins its inside body (the parent, or the ground B_0)
to its outside body B_k. Every joint is also a force element E_k (n_e = n), whose force
F^e_k and moment M^a_k are exerted by the inside body on the outside body.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynid.multibody.bodies import BodyModel


@dataclass(frozen=True)
class Graph:
    """S (n, n) incidence matrix (eq. 8-9); C (n, n, 3) weighted body-joint vectors C_ij =
    S_ij c_ij in the body axes e^(i) (eq. 11; c_ij from O_ci to O_j, at q = 0 for prismatic
    joints); S_e (n, n_e) force-element path matrix (eq. 12); C_e (n, n_e, 3) force-element
    vector matrix (eq. 17), both in e^(i)."""

    S: np.ndarray
    C: np.ndarray
    S_e: np.ndarray
    C_e: np.ndarray


def graph(model: BodyModel) -> Graph:
    n = model.n
    S = np.zeros((n, n))
    C = np.zeros((n, n, 3))
    for k in range(n):
        S[k, k] = -1.0  # O_k ends with its outside body B_k (eq. 8)
        C[k, k] = -model.s_out[k]
        i = model.inside[k]
        if i >= 0:
            S[i, k] = 1.0  # O_k starts with its inside body B_i (eq. 8)
            C[i, k] = model.s_in[k]
    # the force elements are the joints themselves: P_k^+ on B_i, P_k^- on B_k (eq. 12, 17)
    return Graph(S, C, S.copy(), C.copy())


def weighted_vectors_world(graph_: Graph, r: np.ndarray, joint_point: np.ndarray) -> np.ndarray:
    """C^e_ik = S^e_ik (O_k - O_ci) in frame 0 from sampled positions: (N, n, n_e, 3).

    r: (N, n, 3) centres of mass; joint_point: (N, n_e, 3) joint points O_k.
    """
    c = joint_point[:, None, :, :] - r[:, :, None, :]
    return graph_.S_e[None, :, :, None] * c


def weighted_vectors_body(graph_: Graph, model, rotation: np.ndarray, r: np.ndarray,
                          joint_point: np.ndarray) -> np.ndarray:
    """C^e_ik in frame 0 from the body geometry (eqs. 17-18): A^(0i) C^e_ik^(i), (N, n, n_e, 3).

    The seed's C^e holds the constant body-joint vectors (l_i/2 e1^(i)); only the vector from
    the inside body of a prismatic joint to its joint point changes with the slide, and is
    taken from the sampled joint point there. rotation: (N, n, 3, 3) A^(0i).
    """
    c = np.einsum("nipq,ikq->nikp", rotation, graph_.C_e)
    for k in np.flatnonzero(model.prismatic):
        i = int(model.inside[k])
        if i >= 0:
            c[:, i, k] = graph_.S_e[i, k] * (joint_point[:, k] - r[:, i])
    return c


def resultant_forces(graph_: Graph, force: np.ndarray) -> np.ndarray:
    """F^(e hat) = -S^e F^e (eq. 15): force of all joints on each body, (N, n, 3).

    force: (N, n_e, 3) joint forces F^e_k exerted by the inside on the outside body.
    """
    return -np.einsum("ik,nkj->nij", graph_.S_e, force)


def resultant_moments(graph_: Graph, c_world: np.ndarray, force: np.ndarray, moment: np.ndarray) -> np.ndarray:
    """M_i = -sum_k (C^e_ik x F^e_k + S_ik M^a_k) (eqs. 19, 25): joint moments on each body
    about its centre of mass, (N, n, 3). moment: (N, n_e, 3) M^a_k about O_k."""
    m_e = -np.sum(np.cross(c_world, force[:, None, :, :]), axis=2)  # eq. 19
    m_a = -np.einsum("ik,nkj->nij", graph_.S, moment)  # eq. 26
    return m_e + m_a


def describe(model: BodyModel, graph_: Graph) -> dict:
    """Plain lists for printing: S, S^e and C, C^e as body-axis vectors [m]."""
    return {
        "bodies": model.names,
        "joints": [j.name for j in model.robot.joints],
        "S": graph_.S.astype(int).tolist(),
        "S_e": graph_.S_e.astype(int).tolist(),
        "C": graph_.C.tolist(),
        "C_e": graph_.C_e.tolist(),
    }
