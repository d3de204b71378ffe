"""Constrained dynamics in absolute coordinates (seed 000, eqs. 110-111) and the joint
reactions recovered from the Lagrange multipliers.

Eq. 110, A q_ddot - B + Phi_q^T lambda = 0, needs A and Phi_q^T lambda in the same space:
the Euler rows of eq. 35 / eq. 12 are moments in body axes, Phi_q^T lambda is a generalized
force on theta. We left-multiply the Euler rows by H^T (H = D, or 2 R*), which makes the
mass matrix symmetric:  M_i = diag(m E, H^T J H),
Q_i = (F, H^T (M^(i) - omega x J omega - J H_dot theta_dot)),
and solve  [M Phi_q^T; Phi_q 0] [q_ddot; lambda] = [Q; zeta]   (eq. 111).
Quaternion normalization (seed 001, eq. 10) enters as one more constraint per body.
The constraint wrench of joint k on its outside body B_j is (f, n) = -G_kj^T lambda_k in
frame 0 (about the centre of mass); the actuation tau_k adds tau_k p_k as a moment
(revolute) or a force (prismatic).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynid.multibody.bodies import BodyModel
from dynid.multibody.constraints import ROWS_PER_JOINT, constraint_terms, cross, kinematics


def generalized_mass_and_forces(model: BodyModel, form, q, qd, gravity=None):
    """M (N, n, d, d) per body and passive Q (N, n, d) (gravity and gyroscopic terms)."""
    g = model.robot.gravity if gravity is None else np.asarray(gravity, dtype=float)
    kin = kinematics(form, q, qd)
    N, n = q.shape[:2]
    d = 3 + form.size
    J = model.moments[None, :, :, None] * np.eye(3)
    M = np.zeros((N, n, d, d))
    Q = np.zeros((N, n, d))
    M[..., :3, :3] = model.mass[None, :, None, None] * np.eye(3)
    M[..., 3:, 3:] = np.swapaxes(kin.H, -1, -2) @ J @ kin.H
    Q[..., :3] = model.mass[None, :, None] * g
    jw = np.einsum("...ij,...j->...i", J, kin.w_body)
    rest = -cross(kin.w_body, jw) - np.einsum("...ij,...j->...i", J, kin.h_rate)
    Q[..., 3:] = np.einsum("...ji,...j->...i", kin.H, rest)
    return M, Q


def actuation_matrix(model: BodyModel, form, q) -> np.ndarray:
    """Generalized forces per unit joint effort: (N, n, d, n_joints)."""
    kin = kinematics(form, q, np.zeros_like(q))
    N, n = q.shape[:2]
    d = 3 + form.size
    out = np.zeros((N, n, d, n))
    for k in range(n):
        p = np.einsum("nab,b->na", kin.A[:, k], model.axis_out[k])
        a_j = np.einsum("nab,b->na", kin.A[:, k], model.s_out[k])
        i = int(model.inside[k])
        for body, sign in ((k, 1.0), (i, -1.0)):
            if body < 0:
                continue
            if model.prismatic[k]:
                lever = kin.r[:, k] + a_j - kin.r[:, body]  # force applied at O_k
                force, moment = sign * p, cross(lever, sign * p)
            else:
                force, moment = np.zeros_like(p), sign * p
            moment_body = np.einsum("nji,nj->ni", kin.A[:, body], moment)
            out[:, body, :3, k] += force
            out[:, body, 3:, k] += np.einsum("nji,nj->ni", kin.H[:, body], moment_body)
    return out


def _flat(a: np.ndarray) -> np.ndarray:
    """(N, m, n, d) -> (N, m, n d)."""
    return a.reshape(a.shape[0], a.shape[1], -1)


def _block(M: np.ndarray) -> np.ndarray:
    N, n, d, _ = M.shape
    out = np.zeros((N, n * d, n * d))
    for b in range(n):
        out[:, b * d:(b + 1) * d, b * d:(b + 1) * d] = M[:, b]
    return out


@dataclass(frozen=True)
class ConstrainedSolution:
    """qdd (N, n, d) body accelerations; lam (N, m) multipliers; tau (N, n) joint efforts;
    force, moment (N, n, 3): wrench of joint k on its outside body, frame 0, moment about O_k."""

    qdd: np.ndarray
    lam: np.ndarray
    tau: np.ndarray
    force: np.ndarray
    moment: np.ndarray


def reactions(model: BodyModel, form, q, lam, tau, G=None):
    """Joint wrenches (force, moment about O_k), frame 0, from multipliers and efforts."""
    if G is None:
        G = constraint_terms(model, form, q, np.zeros_like(q)).G
    kin = kinematics(form, q, np.zeros_like(q))
    n = model.n
    force, moment = np.zeros((q.shape[0], n, 3)), np.zeros((q.shape[0], n, 3))
    for k in range(n):
        rows = slice(ROWS_PER_JOINT * k, ROWS_PER_JOINT * (k + 1))
        wrench = -np.einsum("nmc,nm->nc", G[:, rows, k, :], lam[:, rows])  # -G^T lambda
        p = np.einsum("nab,b->na", kin.A[:, k], model.axis_out[k])
        a_j = np.einsum("nab,b->na", kin.A[:, k], model.s_out[k])
        f, n_c = wrench[:, :3], wrench[:, 3:]
        if model.prismatic[k]:
            f = f + tau[:, k, None] * p
            n_c = n_c + cross(a_j, tau[:, k, None] * p)
        else:
            n_c = n_c + tau[:, k, None] * p
        force[:, k], moment[:, k] = f, n_c - cross(a_j, f)  # moment about O_k = r_j + a_j
    return force, moment


def forward(model: BodyModel, form, q, qd, tau, gravity=None, stabilization=(0.0, 0.0),
            with_reactions: bool = True) -> ConstrainedSolution:
    """Solve eq. 111 for q_ddot and lambda, batched over N samples.

    q, qd: (N, n, d); tau: (N, n) joint efforts. stabilization (alpha, beta) adds
    Baumgarte's -2 alpha Phi_dot - beta^2 Phi to zeta (0 = exact eq. 111).
    """
    M, Q = generalized_mass_and_forces(model, form, q, qd, gravity)
    terms = constraint_terms(model, form, q, qd)
    N, n, d = q.shape
    Q = Q + np.einsum("nbdk,nk->nbd", actuation_matrix(model, form, q), tau)
    phi_q = _flat(terms.phi_q)
    zeta = terms.zeta
    alpha, beta = stabilization
    if alpha or beta:
        phi_dot = np.einsum("nmc,nc->nm", phi_q, qd.reshape(N, -1))
        zeta = zeta - 2.0 * alpha * phi_dot - beta ** 2 * terms.phi
    m = phi_q.shape[1]
    K = np.zeros((N, n * d + m, n * d + m))
    K[:, :n * d, :n * d] = _block(M)
    K[:, :n * d, n * d:] = np.swapaxes(phi_q, 1, 2)
    K[:, n * d:, :n * d] = phi_q
    rhs = np.concatenate([Q.reshape(N, -1), zeta], 1)
    sol = np.linalg.solve(K, rhs[..., None])[..., 0]
    qdd, lam = sol[:, :n * d].reshape(N, n, d), sol[:, n * d:]
    if not with_reactions:
        return ConstrainedSolution(qdd, lam, np.asarray(tau, dtype=float), None, None)
    force, moment = reactions(model, form, q, lam, tau, terms.G)
    return ConstrainedSolution(qdd, lam, np.asarray(tau, dtype=float), force, moment)


def inverse(model: BodyModel, form, q, qd, qdd, gravity=None) -> ConstrainedSolution:
    """Joint efforts tau and multipliers lambda that produce the body motion (q, qd, qdd).

    Eq. 110 with tau unknown: [Q_act, -Phi_q^T] [tau; lambda] = M q_ddot - Q (square system:
    n d equations, n + 5 n (+ n) unknowns).
    """
    M, Q = generalized_mass_and_forces(model, form, q, qd, gravity)
    terms = constraint_terms(model, form, q, qd)
    N, n, d = q.shape
    act = actuation_matrix(model, form, q).reshape(N, n * d, n)
    phi_q = _flat(terms.phi_q)
    lhs = np.concatenate([act, -np.swapaxes(phi_q, 1, 2)], 2)
    rhs = np.einsum("nbij,nbj->nbi", M, qdd).reshape(N, -1) - Q.reshape(N, -1)
    sol = np.linalg.solve(lhs, rhs[..., None])[..., 0]
    tau, lam = sol[:, :n], sol[:, n:]
    force, moment = reactions(model, form, q, lam, tau, terms.G)
    return ConstrainedSolution(qdd, lam, tau, force, moment)
