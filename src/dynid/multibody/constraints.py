"""Joint constraint equations in absolute coordinates (seed 000, eqs. 65-73, 105-109).

Each joint removes five of the twelve coordinates of its two bodies:

revolute O_k (inside B_i, outside B_j), eqs. 65-73:
  phi_1..3 = r_i + A_i c_ik - r_j - A_j c_jk                  (joint points coincide, eq. 66)
  phi_4,5  = (A_i u_a) . (A_j p_k),  a = 1, 2                 (axes coincide, eq. 70)
  Eq. 70 has rank 2; the seed keeps its world x and y components, which lose rank when p_k
  lies along e1^(0) or e2^(0) (joint 4 of the KR500 at q = 0). We project eq. 70 on the two
  body-fixed directions u_1, u_2 of B_i perpendicular to p_k instead: never singular.
prismatic O_k: (A_i u_a) . d = 0 (a = 1, 2; d = O_k on B_j minus O_k on B_i) and
  (A_i u_1).(A_j p), (A_i u_2).(A_j p), (A_i u_2).(A_j u_1) = 0 (no relative rotation).
quaternion bodies add Lambda^T Lambda - 1 = 0 (seed 001, eq. 10).

Phi_q and zeta = -(Phi_q q_dot)_q q_dot are analytic: the constraints are first
differentiated with respect to body velocities (v_i, omega_i in frame 0) as G, then
Phi_q = G T with T = diag(E, A_i H_i) and zeta = gamma - G (0, A_i H_dot_i theta_dot_i),
where gamma = -G_dot v collects the centripetal terms (no finite differences).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynid.multibody.bodies import BodyModel
from dynid.robot.transforms import skew

ROWS_PER_JOINT = 5


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a x b over the last axis (..., 3); cheaper than np.cross for small batches."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], -1)


@dataclass(frozen=True)
class ConstraintTerms:
    """phi (N, m); G (N, m, n, 6) w.r.t. (v_i, omega_i); phi_q (N, m, n, d); zeta (N, m).

    The first 5 n rows are the joints (rows 5k..5k+4 for joint k); quaternion bodies add n
    normalization rows after them."""

    phi: np.ndarray
    G: np.ndarray
    phi_q: np.ndarray
    zeta: np.ndarray


@dataclass(frozen=True)
class Kinematics:
    """Body quantities in frame 0 computed from generalized coordinates (N, n, ...)."""

    r: np.ndarray
    A: np.ndarray
    H: np.ndarray
    v: np.ndarray
    w: np.ndarray
    w_body: np.ndarray
    h_rate: np.ndarray  # H_dot theta_dot (body axes)


def kinematics(form, q: np.ndarray, qd: np.ndarray) -> Kinematics:
    """q, qd: (N, n, 3 + form.size) -> Kinematics."""
    theta, dtheta = q[..., 3:], qd[..., 3:]
    a = form.rotation(theta)
    h = form.angular_map(theta)
    w_body = np.einsum("...ij,...j->...i", h, dtheta)
    return Kinematics(q[..., :3], a, h, qd[..., :3], np.einsum("...ij,...j->...i", a, w_body),
                      w_body, form.map_rate_times_rate(theta, dtheta))


def _dot_rows(a, b, wi, wj):
    """phi = a.b with a fixed in B_i, b fixed in B_j: value, G_wi, G_wj, gamma."""
    axb = cross(a, b)
    gamma = -np.sum((wi - wj) * (cross(cross(wi, a), b) + cross(a, cross(wj, b))), -1)
    return np.sum(a * b, -1), axb, -axb, gamma


def _with_ground(x: np.ndarray, ground) -> np.ndarray:
    """Append the ground B_0 as body index n: (N, n, ...) -> (N, n + 1, ...)."""
    g = np.broadcast_to(ground, x.shape[:1] + (1,) + x.shape[2:])
    return np.concatenate([x, g], 1)


def _apply(A: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """A (N, K, 3, 3) times constant vectors (K, 3) -> (N, K, 3)."""
    return np.einsum("nkab,kb->nka", A, vectors)


def constraint_terms(model: BodyModel, form, q: np.ndarray, qd: np.ndarray) -> ConstraintTerms:
    """All constraint rows and their analytic derivatives; q, qd: (N, n, 3 + form.size).

    Vectorized over samples and joints: the ground is appended as body n (r = 0, A = E)."""
    kin = kinematics(form, q, qd)
    N, n = q.shape[0], model.n
    d = 3 + form.size
    m_joint = ROWS_PER_JOINT * n
    m = m_joint + (n if form.size == 4 else 0)
    inside = np.where(model.inside < 0, n, model.inside)  # inside body index, ground = n
    r, v, w = (_with_ground(x, np.zeros(3)) for x in (kin.r, kin.v, kin.w))
    A = _with_ground(kin.A, np.eye(3))
    r_i, v_i, w_i, A_i = r[:, inside], v[:, inside], w[:, inside], A[:, inside]  # (N, n, ...)
    r_j, v_j, w_j, A_j = kin.r, kin.v, kin.w, kin.A
    a_i, a_j = _apply(A_i, model.s_in), _apply(A_j, model.s_out)
    u1, u2 = _apply(A_i, model.perpendicular_in[:, 0]), _apply(A_i, model.perpendicular_in[:, 1])
    p_j = _apply(A_j, model.axis_out)
    eye = np.broadcast_to(np.eye(3), (N, n, 3, 3))
    val, gam = np.zeros((N, n, 5)), np.zeros((N, n, 5))
    g_ri, g_wi, g_rj, g_wj = (np.zeros((N, n, 5, 3)) for _ in range(4))
    # revolute, seed 000 eq. 66: r_i + A_i c_ik - r_j - A_j c_jk = 0 (rows 0-2)
    val[..., :3] = r_i + a_i - r_j - a_j
    g_ri[..., :3, :], g_wi[..., :3, :] = eye, -skew(a_i)
    g_rj[..., :3, :], g_wj[..., :3, :] = -eye, skew(a_j)
    gam[..., :3] = -(cross(w_i, cross(w_i, a_i)) - cross(w_j, cross(w_j, a_j)))
    # revolute rows 3-4: eq. 70 projected on u_1, u_2; prismatic rows 2-4: no relative rotation
    rev = ~model.prismatic
    pri = model.prismatic
    dot_rev = [(3, u1, p_j), (4, u2, p_j)]
    for row, a, b in dot_rev:
        val[:, rev, row], g_wi[:, rev, row], g_wj[:, rev, row], gam[:, rev, row] = \
            (x[:, rev] for x in _dot_rows(a, b, w_i, w_j))
    if np.any(pri):
        for x in (val, gam, g_ri, g_wi, g_rj, g_wj):
            x[:, pri] = 0.0  # prismatic joints have their own five rows
        u1_j = _apply(A_j, model.slide_image)
        for row, a, b in ((2, u1, p_j), (3, u2, p_j), (4, u2, u1_j)):
            val[:, pri, row], g_wi[:, pri, row], g_wj[:, pri, row], gam[:, pri, row] = \
                (x[:, pri] for x in _dot_rows(a, b, w_i, w_j))
        # prismatic rows 0-1: O_k of B_j stays on the axis line of B_i, (A_i u_a) . d = 0
        dist = (r_j + a_j) - (r_i + a_i)
        ddist = (v_j + cross(w_j, a_j)) - (v_i + cross(w_i, a_i))
        centripetal = cross(w_j, cross(w_j, a_j)) - cross(w_i, cross(w_i, a_i))
        for row, u in enumerate((u1, u2)):
            g_ri[:, pri, row], g_rj[:, pri, row] = -u[:, pri], u[:, pri]
            g_wi[:, pri, row] = cross(u, dist + a_i)[:, pri]
            g_wj[:, pri, row] = cross(a_j, u)[:, pri]
            val[:, pri, row] = np.sum(u * dist, -1)[:, pri]
            gam[:, pri, row] = -(np.sum(cross(w_i, cross(w_i, u)) * dist, -1)
                                 + 2.0 * np.sum(cross(w_i, u) * ddist, -1)
                                 + np.sum(u * centripetal, -1))[:, pri]
    phi, zeta = np.zeros((N, m)), np.zeros((N, m))
    phi[:, :m_joint], zeta[:, :m_joint] = val.reshape(N, -1), gam.reshape(N, -1)
    G = np.zeros((N, m, n + 1, 6))
    rows = np.arange(m_joint).reshape(n, 5)
    G[:, rows, inside[:, None], :3], G[:, rows, inside[:, None], 3:] = g_ri, g_wi
    G[:, rows, np.arange(n)[:, None], :3], G[:, rows, np.arange(n)[:, None], 3:] = g_rj, g_wj
    G = G[:, :, :n]  # the ground has no coordinates
    # Phi_q = G T, T = diag(E, A H) per body (seed 000, eq. 107)
    a_h = kin.A @ kin.H  # (N, n, 3, size)
    phi_q = np.zeros((N, m, n, d))
    phi_q[..., :3] = G[..., :3]
    phi_q[..., 3:] = np.einsum("nmbk,nbks->nmbs", G[..., 3:], a_h)
    # zeta = gamma - G_omega A H_dot theta_dot (seed 000, eq. 109)
    h_rate_world = np.einsum("nbij,nbj->nbi", kin.A, kin.h_rate)
    zeta[:, :m_joint] -= np.einsum("nmbk,nbk->nm", G[:, :m_joint, :, 3:], h_rate_world)
    if form.size == 4:
        lam, dlam = q[..., 3:], qd[..., 3:]
        bodies = np.arange(n)
        phi[:, m_joint:] = np.sum(lam ** 2, -1) - 1.0  # seed 001, eq. 10
        phi_q[:, m_joint + bodies, bodies, 3:] = 2.0 * lam
        zeta[:, m_joint:] = -2.0 * np.sum(dlam ** 2, -1)  # seed 001, eq. 11
    return ConstraintTerms(phi, G, phi_q, zeta)
