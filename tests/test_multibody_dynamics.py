"""The absolute-coordinate formulation (seed 000 eqs. 35-111, seed 001 eqs. 8-16) describes the
same mechanics as the foundation's recursive Newton-Euler algorithm."""

from __future__ import annotations

import numpy as np
import pytest
from multibody_robots import make_robot, random_motion

import dynid
from dynid.multibody import angular_form, body_coordinates, body_model, body_states, joint_reactions
from dynid.multibody.cardan import CardanSingularityError
from dynid.multibody.constrained import forward, inverse
from dynid.multibody.constraints import constraint_terms
from dynid.multibody.graph import (graph, resultant_forces, resultant_moments,
                                   weighted_vectors_world)
from dynid.multibody.unconstrained import block_diagonal, body_equations

ROBOTS = ["kr500", "kr500-rail", "er3a", "branched"]
FORMS = ["cardan", "quaternion"]


def _rel(a, b):
    return np.max(np.abs(a - b)) / np.max(np.abs(b))


def _setup(name, form_name, seed=11, samples=12):
    robot = make_robot(name)
    model = body_model(robot)
    q, dq, ddq = random_motion(robot, samples, seed)
    form = angular_form(form_name)
    qb, qdb, qddb = body_coordinates(form, body_states(model, q, dq, ddq))
    return robot, model, form, (q, dq, ddq), (qb, qdb, qddb)


@pytest.mark.parametrize("form_name", FORMS)
@pytest.mark.parametrize("name", ROBOTS)
def test_joint_torques_and_reactions_equal_newton_euler(name, form_name):
    robot, model, form, (q, dq, ddq), (qb, qdb, qddb) = _setup(name, form_name)
    sol = inverse(model, form, qb, qdb, qddb)  # eq. 110 solved for tau and lambda
    force, moment = joint_reactions(model, q, dq, ddq)
    assert _rel(sol.tau, dynid.inverse_dynamics(robot, q, dq, ddq)) < 1e-9
    assert _rel(sol.force, force) < 1e-9
    assert _rel(sol.moment, moment) < 1e-9


@pytest.mark.parametrize("form_name", FORMS)
@pytest.mark.parametrize("name", ROBOTS)
def test_eq111_accelerations_equal_joint_space_forward_dynamics(name, form_name):
    robot, model, form, (q, dq, _), _ = _setup(name, form_name, seed=12)
    tau = np.random.default_rng(3).normal(0.0, 50.0, q.shape)
    ddq = dynid.forward_dynamics(robot, q, dq, tau)
    qb, qdb, qddb = body_coordinates(form, body_states(model, q, dq, ddq))
    sol = forward(model, form, qb, qdb, tau)
    assert _rel(sol.qdd, qddb) < 1e-8
    force, moment = joint_reactions(model, q, dq, ddq)
    assert _rel(sol.force, force) < 1e-8 and _rel(sol.moment, moment) < 1e-8


@pytest.mark.parametrize("form_name", FORMS)
@pytest.mark.parametrize("name", ["kr500", "branched"])
def test_constraints_hold_and_jacobian_is_the_derivative(name, form_name):
    _, model, form, _, (qb, qdb, qddb) = _setup(name, form_name, seed=13, samples=4)
    terms = constraint_terms(model, form, qb, qdb)
    assert np.max(np.abs(terms.phi)) < 1e-12  # consistent body coordinates satisfy eqs. 65-73
    N = qb.shape[0]
    phi_q = terms.phi_q.reshape(N, terms.phi.shape[1], -1)
    # Phi_q qdd = zeta along every real motion (eq. 108)
    assert np.max(np.abs(np.einsum("nmc,nc->nm", phi_q, qddb.reshape(N, -1)) - terms.zeta)) \
        < 1e-9 * np.max(np.abs(terms.zeta))
    # Phi_q is the derivative of Phi along the motion direction (central differences, test only)
    h = 1e-6
    plus = constraint_terms(model, form, qb + h * qdb, qdb).phi
    minus = constraint_terms(model, form, qb - h * qdb, qdb).phi
    fd = (plus - minus) / (2 * h)
    assert np.max(np.abs(fd - np.einsum("nmc,nc->nm", phi_q, qdb.reshape(N, -1)))) < 1e-6
    # zeta = -(Phi_q qd)_q qd (eq. 109): derivative of Phi_q qd along qd
    def phi_q_times_qd(shift):
        shifted = constraint_terms(model, form, qb + shift * qdb, qdb).phi_q.reshape(phi_q.shape)
        return np.einsum("nmc,nc->nm", shifted, qdb.reshape(N, -1))

    vel_p, vel_m = phi_q_times_qd(h), phi_q_times_qd(-h)
    assert np.max(np.abs(-(vel_p - vel_m) / (2 * h) - terms.zeta)) < 1e-5 * np.max(np.abs(terms.zeta))


@pytest.mark.parametrize("form_name", FORMS)
@pytest.mark.parametrize("name", ["kr500", "er3a", "branched"])
def test_unconstrained_body_equations_hold_with_the_joint_forces(name, form_name):
    """A q_ddot = B (seed 000 eq. 38, seed 001 eq. 15) with the resultant joint forces of eqs. 14-27."""
    robot, model, form, (q, dq, ddq), (qb, qdb, qddb) = _setup(name, form_name, seed=14)
    states = body_states(model, q, dq, ddq)
    force, moment = joint_reactions(model, q, dq, ddq)
    gr = graph(model)
    f_total = resultant_forces(gr, force) + model.mass[None, :, None] * robot.gravity  # eq. 24
    m_total = resultant_moments(gr, weighted_vectors_world(gr, states.r, states.joint_point), force, moment)
    A, B = body_equations(model, form, qb, qdb, f_total, m_total)
    lhs = np.einsum("nij,nj->ni", block_diagonal(A), qddb.reshape(len(q), -1))
    assert _rel(lhs, B.reshape(len(q), -1)) < 1e-9


def test_graph_of_the_kr500_is_the_seed_one():
    model = body_model(dynid.load_robot("kr500"))
    gr = graph(model)
    expected_s = -np.eye(6) + np.eye(6, k=1)  # seed 000, eq. 10
    assert np.array_equal(gr.S, expected_s) and np.array_equal(gr.S_e, expected_s)
    lengths = (1.045, 1.245, 1.21, 0.315, 0.29, 0.3)
    for i, length in enumerate(lengths):  # eq. 11: C_ii = C_i,i+1 = l_i/2 e1^(i)
        assert np.allclose(gr.C[i, i], [length / 2, 0, 0], atol=1e-15)
        if i < 5:
            assert np.allclose(gr.C[i, i + 1], [length / 2, 0, 0], atol=1e-15)


@pytest.mark.parametrize("name", ["kr500", "branched"])
def test_internal_joint_forces_cancel_in_the_sum_over_bodies(name):
    """Newton's third law: sum_i F^(e hat)_i = force of the ground joints (eq. 15)."""
    robot, model, _, (q, dq, ddq), _ = _setup(name, "quaternion", seed=15)
    force, _ = joint_reactions(model, q, dq, ddq)
    total = resultant_forces(graph(model), force).sum(1)
    ground = force[:, model.inside < 0].sum(1)
    assert _rel(total, ground) < 1e-12


def test_cardan_singularity_is_detected_and_quaternions_pass_through():
    robot = dynid.load_robot("kr500")
    model = body_model(robot)
    q = np.array([[0.0, np.pi / 2, 0.0, 0.0, 0.0, 0.0]])  # B2 axis e1 along world z: beta_2 = pi/2
    dq, ddq = np.full((1, 6), 0.3), np.full((1, 6), -0.2)
    states = body_states(model, q, dq, ddq)
    with pytest.raises(CardanSingularityError, match="quaternion"):
        body_coordinates(angular_form("cardan"), states)
    form = angular_form("quaternion")
    sol = inverse(model, form, *body_coordinates(form, states))
    assert _rel(sol.tau, dynid.inverse_dynamics(robot, q, dq, ddq)) < 1e-9


@pytest.mark.parametrize("form_name", FORMS)
def test_angular_maps_give_the_body_angular_velocity(form_name):
    """A_dot = A omega~ with omega^(i) = D theta_dot (seed 000 eq. 33) or 2 R* Lambda_dot
    (seed 001 eq. 8), and omega_dot^(i) = H theta_ddot + H_dot theta_dot (central differences)."""
    from dynid.multibody.quaternion import e_matrix, r_star
    from dynid.robot.transforms import skew

    form = angular_form(form_name)
    rng = np.random.default_rng(5)
    rotation = dynid.robot.transforms.rpy_matrix(*rng.uniform(-1.2, 1.2, 3))
    theta = form.from_rotation(rotation[None])[0]
    omega, domega = rng.normal(size=3), rng.normal(size=3)
    dtheta = form.rates(theta, omega)
    ddtheta = form.second_rates(theta, dtheta, domega)
    h = 1e-6
    a_dot = (form.rotation(theta + h * dtheta) - form.rotation(theta - h * dtheta)) / (2 * h)
    np.testing.assert_allclose(a_dot, form.rotation(theta) @ skew(omega), atol=1e-8)

    def omega_at(shift):
        return form.angular_map(theta + shift * dtheta) @ (dtheta + shift * ddtheta)

    np.testing.assert_allclose((omega_at(h) - omega_at(-h)) / (2 * h), domega, atol=1e-7)
    if form_name == "quaternion":
        np.testing.assert_allclose(e_matrix(theta) @ r_star(theta).T, form.rotation(theta), atol=1e-15)
