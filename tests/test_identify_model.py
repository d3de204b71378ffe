"""The identification model and its base parameters state facts of the dynamics."""

from __future__ import annotations

import numpy as np
import pytest
from urdf_factory import write_robot

import dynid
from dynid.identify import (
    ModelOptions, base_parameters, base_regressor, column_normalize, condition_number, full_parameters,
    identifiability_table, identification_regressor, parameter_names,
)
from dynid.identify.base import random_states
from dynid.identify.model import friction_columns, parameter_slices

ALL_OPTIONS = [ModelOptions(), ModelOptions("polynomial", True, True), ModelOptions("asymmetric", True, False, 0.05),
               ModelOptions("none", False, False)]


def _friction_torque(dq, coeffs, friction, smooth):
    """Friction written out per model, independent of friction_columns."""
    s = np.tanh(dq / smooth) if smooth > 0 else np.sign(dq)
    c = coeffs
    if friction == "coulomb-viscous":
        return c[:, 0] * s + c[:, 1] * dq
    if friction == "polynomial":  # thesis eq. 3.10
        return c[:, 0] * s + c[:, 1] * dq + c[:, 2] * dq**2 * s + c[:, 3] * dq**3
    if friction == "asymmetric":
        up, down = (1 + s) / 2, (1 - s) / 2
        return c[:, 0] * up - c[:, 1] * down + c[:, 2] * dq * up + c[:, 3] * dq * down
    return np.zeros_like(dq)


@pytest.mark.parametrize("options", ALL_OPTIONS, ids=lambda o: f"{o.friction}-{o.offset}")
def test_regressor_reproduces_rnea_plus_friction_plus_rotor_inertia(options):
    robot = dynid.load_robot("er3a")
    rng = np.random.default_rng(0)
    q, dq, ddq = rng.normal(size=(3, 300, robot.n))
    k = len(parameter_names(robot, options)) // robot.n - 10 - int(options.rotor_inertia) - int(options.offset)
    coeffs = rng.uniform(0.1, 2.0, (robot.n, k))
    offsets = rng.normal(size=robot.n)
    theta = full_parameters(robot, options, coeffs, offsets)
    expected = dynid.inverse_dynamics(robot, q, dq, ddq)  # RNEA, not the regressor
    expected += _friction_torque(dq, coeffs, options.friction, options.smooth_sign)
    if options.rotor_inertia:
        expected += robot.rotor_inertias * ddq  # thesis eq. 3.12
    if options.offset:
        expected += offsets
    tau = identification_regressor(robot, q, dq, ddq, options) @ theta
    np.testing.assert_allclose(tau, expected, rtol=1e-10, atol=1e-10 * np.abs(expected).max())


@pytest.mark.parametrize("spec", ["er3a", "scara5", "kr500-rail", "planar6", "branched", "mixed7"])
def test_full_and_base_regressors_agree_for_random_theta(spec, tmp_path):
    robot = dynid.load_robot(str(write_robot(tmp_path, spec, seed=1)) if spec in ("branched", "mixed7") else spec)
    rng = np.random.default_rng(3)
    for options in ALL_OPTIONS[:3]:
        base = base_parameters(robot, options)
        q, dq, ddq = random_states(robot, 100, seed=11)  # other states than the QR's
        theta = rng.normal(size=len(parameter_names(robot, options)))
        y = identification_regressor(robot, q, dq, ddq, options)
        yb = base_regressor(robot, q, dq, ddq, options, base)
        scale = np.abs(y @ theta).max()
        np.testing.assert_allclose(yb @ (base.K @ theta), y @ theta, atol=1e-10 * scale)
        # the base regressor has full column rank: its rank is b on fresh states
        assert np.linalg.matrix_rank(yb.reshape(-1, base.rank)) == base.rank
        assert np.linalg.matrix_rank(y.reshape(-1, y.shape[2])) == base.rank


def test_er3a_base_parameters_merge_rotor_inertia_of_the_first_joints():
    """Joint 1 is vertical: I_a1 only ever multiplies ddq1 like Izz1, so they merge; the same for
    joint 2 with Izz2. Rotor inertias of the wrist joints stay separate."""
    robot = dynid.load_robot("er3a")
    base = base_parameters(robot, ModelOptions())
    combos = dict(zip(base.names, base.combinations))
    assert "Ia1" in combos["Izz1R"] and "Ia2" in combos["Izz2R"]
    assert {"Ia3", "Ia4", "Ia5", "Ia6"} <= set(base.names)
    # beta = K theta keeps the representatives with coefficient 1
    np.testing.assert_array_equal(base.K[np.arange(base.rank), base.independent], 1.0)
    assert base.singular_values[base.rank - 1] > 1e6 * base.singular_values[base.rank]


def test_joint_torque_depends_only_on_links_it_carries():
    """In a serial chain tau_i depends on links i..n only (thesis eq. 3.17a is upper triangular)."""
    robot = dynid.load_robot("er3a")
    table = identifiability_table(robot, ModelOptions("none", False, False))
    for i in range(robot.n):
        assert not table[i, : 10 * i].any()
        assert table[i, 10 * i:].any()


def test_friction_columns_are_odd_in_velocity_and_smooth_sign_tends_to_sign():
    dq = np.linspace(-2, 2, 41)[:, None]
    cols = friction_columns(dq, ModelOptions("polynomial"))
    np.testing.assert_allclose(cols[::-1], -cols)
    sharp = friction_columns(dq, ModelOptions(smooth_sign=1e-6))
    np.testing.assert_allclose(sharp, friction_columns(dq, ModelOptions()), atol=1e-12)


def test_column_normalization_gives_unit_columns_and_the_same_model():
    rng = np.random.default_rng(0)
    w = rng.normal(size=(50, 4)) * np.array([1e-3, 1.0, 1e3, 0.0])
    wn, h = column_normalize(w)
    np.testing.assert_allclose(np.linalg.norm(wn[:, :3], axis=0), 1.0)
    theta = rng.normal(size=4)
    np.testing.assert_allclose(wn @ (theta / h), w @ theta)  # thesis eq. 2.15
    assert condition_number(w[:, :3]) < condition_number(w[:, :3], normalize=False)


def test_parameter_layout_follows_thesis_eq_3_17():
    robot = dynid.load_robot("planar2")
    options = ModelOptions("coulomb-viscous", True, True)
    names = parameter_names(robot, options)
    sl = parameter_slices(robot, options)
    assert names[sl["rigid"]][:10] == ["m1", "mx1", "my1", "mz1", "Ixx1", "Ixy1", "Ixz1", "Iyy1", "Iyz1", "Izz1"]
    assert names[sl["friction"]] == ["Fc1", "Fv1", "Fc2", "Fv2"]
    assert names[sl["rotor_inertia"]] == ["Ia1", "Ia2"] and names[sl["offset"]] == ["off1", "off2"]


def test_model_torques_without_the_regressor_equal_y_theta(tmp_path):
    """model_torques (RNEA with theta's inertial parameters + each motor's own columns) is
    Y(q, dq, ddq) theta for any theta, also not physically consistent ones, with coupled
    transmissions (tx40) and mimic joints."""
    from urdf_factory import random_urdf

    from dynid.identify.model import model_torques

    mimic = random_urdf(tmp_path / "mimic.urdf", np.random.default_rng(3), [0, 1, 2, 3, 4, 2, 6, 7],
                        ["revolute"] * 5 + ["prismatic", "revolute", "revolute"], {4: (3, 0.7, 0.3)})
    rng = np.random.default_rng(1)
    for robot, options in [(dynid.load_robot("er3a"), ALL_OPTIONS[1]), (dynid.load_robot("tx40"), ALL_OPTIONS[2]),
                           (dynid.load_robot(mimic), ALL_OPTIONS[0])]:
        q, dq, ddq = rng.normal(size=(3, 200, robot.n))
        theta = rng.normal(size=len(parameter_names(robot, options)))
        expected = identification_regressor(robot, q, dq, ddq, options) @ theta
        np.testing.assert_allclose(model_torques(robot, q, dq, ddq, theta, options), expected,
                                   rtol=0, atol=1e-11 * np.abs(expected).max())
