"""Coupled transmissions: power balance of the motor-side conversion, the coupled model against
Pinocchio with the rotors as bodies, base parameters of a coupled wrist recovered from a
noise-free motor-side log, and malformed transmissions refused in one line."""

import json
from dataclasses import replace

import numpy as np
import pinocchio as pin
import pytest
from cli_helpers import run_ok

import dynid
from dynid.data.columns import ColumnMapping
from dynid.errors import ModelError
from dynid.identify import ModelOptions, base_parameters, full_parameters
from dynid.identify.base import identifiability_table
from dynid.identify.model import model_torques, parameter_names
from dynid.simulate import default_friction
from dynid.simulate.motor_side import motor_side_columns


@pytest.fixture(scope="module")
def tx40():
    return dynid.load_robot("tx40")


def _states(robot, count, seed):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1.5, 1.5, (3, count, robot.n))


def test_motor_side_columns_keep_the_power_and_read_back(tx40):
    """tau_m . dq_m == tau . dq for every sample (T2), and --motor-side reads the motor columns
    back to the joint side: encoder angles, motor torques and motor currents alike."""
    q, dq, ddq = _states(tx40, 50, 0)
    tau = np.random.default_rng(1).normal(size=q.shape) * 10
    cols = {"t": np.arange(50) * 0.01}
    for prefix, block in (("q", q), ("dq", dq), ("ddq", ddq), ("tau", tau)):
        cols.update({f"{prefix}{j + 1}": block[:, j] for j in range(tx40.n)})
    motor = motor_side_columns(tx40, dict(cols), motor_side=True, currents=False)
    dq_m = np.column_stack([motor[f"dq{j + 1}"] for j in range(6)])
    tau_m = np.column_stack([motor[f"tau{j + 1}"] for j in range(6)])
    np.testing.assert_allclose(np.sum(tau_m * dq_m, axis=1), np.sum(tau * dq, axis=1), rtol=1e-12)
    np.testing.assert_allclose(dq_m[:, 5], 32.0 * (dq[:, 4] + dq[:, 5]), rtol=1e-12)  # q_m6 = N6 (q5 + q6)
    back = ColumnMapping(motor_side=True).apply(tx40, motor, "motor.csv")
    for got, want in ((back.q, q), (back.dq, dq), (back.ddq, ddq), (back.tau, tau)):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12 * np.abs(want).max())
    currents = motor_side_columns(tx40, dict(cols), motor_side=True, currents=True)
    kt = np.array([j.drive.torque_constant for j in tx40.joints])
    np.testing.assert_allclose(currents["i6"], tau_m[:, 5] / kt[5], rtol=1e-12)
    back = ColumnMapping(motor_side=True, current_gain="drive").apply(tx40, currents, "currents.csv")
    np.testing.assert_allclose(back.tau, tau, rtol=0, atol=1e-11 * np.abs(tau).max())


def test_coupled_motor_terms_load_the_neighbouring_joint(tx40):
    options = ModelOptions()
    names = parameter_names(tx40, options)
    table = identifiability_table(tx40, options)
    joints_of = {name: set(np.flatnonzero(table[:, names.index(name)]) + 1)
                 for name in ("Ia5", "Iam6", "Fcm6", "Fvm6", "Fc5")}
    assert joints_of == {"Ia5": {5}, "Iam6": {5, 6}, "Fcm6": {5, 6}, "Fvm6": {5, 6}, "Fc5": {5}}
    uncoupled = replace(tx40, transmission=None)
    assert "Ia6" in parameter_names(uncoupled, options)
    assert not table[3, names.index("Iam6")]  # joint 4 is not touched by motor 6


def test_coupled_model_agrees_with_pinocchio_rotor_bodies(tx40, tmp_path):
    """Pinocchio: the arm (its own URDF parser) plus one body per rotor on a fixed axis with
    inertia J_k, moved at q_m = T q; the joint torques are the virtual work of the arm's and the
    rotors' torques, tau = tau_arm + T^T (J ddq_m + f_m(dq_m)), with the motor friction f_m in
    motor units (Fc_m = Fc / |N|, Fv_m = Fv / N^2). dynid evaluates its model eq. C1 instead."""
    from dynid.export import write_urdf

    path = tmp_path / "tx40.urdf"
    write_urdf(path, tx40)
    model = pin.buildModelFromUrdf(str(path))
    jm = np.array([j.drive.rotor_inertia for j in tx40.joints])
    for k in range(tx40.n):
        joint = model.addJoint(0, pin.JointModelRZ(), pin.SE3.Identity(), f"rotor{k + 1}")
        model.appendBodyToJoint(joint, pin.Inertia(0.0, np.zeros(3), np.diag([jm[k], jm[k], jm[k]])),
                                pin.SE3.Identity())
    t, n = tx40.transmission_matrix, tx40.gear_ratios
    options = ModelOptions()
    friction = default_friction(tx40, options)  # joint-side units per motor: Fc_k, Fv_k
    theta = full_parameters(tx40, options, friction)
    q, dq, ddq = _states(tx40, 20, 2)
    tau = model_torques(tx40, q, dq, ddq, theta, options)
    for k in range(q.shape[0]):
        qm, dqm, ddqm = t @ q[k], t @ dq[k], t @ ddq[k]
        full = pin.rnea(model, model.createData(), np.concatenate([q[k], qm]), np.concatenate([dq[k], dqm]),
                        np.concatenate([ddq[k], ddqm]))
        f_m = friction[:, 0] / np.abs(n) * np.sign(dqm) + friction[:, 1] / n**2 * dqm
        expected = full[:6] + t.T @ (full[6:] + f_m)
        np.testing.assert_allclose(tau[k], expected, rtol=0, atol=1e-9 * np.abs(expected).max())


def _base_values(path):
    result = json.loads(path.read_text())
    return np.array([p["value"] for p in result["base_parameters"]]), [p["name"] for p in result["base_parameters"]]


def test_coupled_wrist_recovered_from_a_noise_free_motor_side_log(tx40, tmp_path):
    """TX40 coupled wrist: `simulate --motor-side` then `identify --motor-side` recovers every base
    parameter (rotor inertia and friction of the coupled motor 6 included) to 1e-6 relative; the
    joint-side log and the motor-current log give the same."""
    options = ModelOptions()
    base = base_parameters(tx40, options)
    beta = base.K @ full_parameters(tx40, options, default_friction(tx40, options))
    common = ["--duration", 30, "--rate", 200, "--seed", 3]
    routes = {"motor": (["--motor-side"], ["--motor-side"]), "joint": ([], []),
              "currents": (["--motor-side", "--currents"], ["--motor-side", "--current-gain", "drive"])}
    for route, (sim, ident) in routes.items():
        log, result = tmp_path / f"{route}.csv", tmp_path / f"{route}.json"
        run_ok("simulate", "-r", "tx40", "--out", log, *common, *sim)
        run_ok("identify", "-r", "tx40", "--data", log, "--lowpass", 0, "--out", result, *ident)
        values, names = _base_values(result)
        assert names == base.names and {"Iam6", "Fcm6", "Fvm6"} <= set(names)
        assert np.all(beta != 0)
        np.testing.assert_allclose(values, beta, rtol=1e-6, atol=0, err_msg=route)
        print(f"\ntx40 {route} route: max relative error of the {beta.size} base parameters "
              f"{np.max(np.abs(values / beta - 1.0)):.2e}")


@pytest.mark.parametrize("block,message", [
    ("matrix: [[1, 0], [0, 1]]", "expected an 6 x 6 matrix"),
    ("matrix: [[32,0,0,0,0,0],[0,32,0,0,0,0],[0,0,45,0,0,0],[0,0,0,48,0,0],[0,0,0,0,45,45],[0,0,0,0,45,45]]",
     "singular"),
    ("coupling: [{motor: 6, joint: 9, ratio: 32}]", "joint: 9 is not a joint number 1..6"),
    ("coupling: [{motor: 6, joint: 6, ratio: 32}]", "motor 6 on its own joint is the gear ratio"),
])
def test_a_malformed_transmission_is_refused_in_one_line(tmp_path, block, message):
    from cli_helpers import runner

    from dynid.cli.main import app

    joints = "\n".join(f"  - {{a: 0.1, alpha: 0.5, d: 0.1}}" for _ in range(6))
    path = tmp_path / "arm.yaml"
    path.write_text(f"convention: mdh\njoints:\n{joints}\ntransmission:\n  {block}\n")
    with pytest.raises(ModelError, match=message):
        dynid.load_robot(path)
    out = tmp_path / "never.csv"
    result = runner.invoke(app, ["simulate", "-r", str(path), "--out", str(out)])
    assert result.exit_code == 2 and not out.exists()
    assert message.split()[0] in result.output and "Traceback" not in result.output


def test_urdf_round_trip_keeps_the_coupling_and_the_mimic_joints(tx40, tmp_path):
    """The URDF export writes <transmission> gear ratios, <dynid_coupling> and <mimic>; the loader
    reads back the same transmission matrix and the same dynamics."""
    from urdf_factory import random_urdf

    from dynid.export import write_urdf

    write_urdf(tmp_path / "tx40.urdf", tx40)
    back = dynid.load_robot(tmp_path / "tx40.urdf")
    np.testing.assert_array_equal(back.transmission_matrix, tx40.transmission_matrix)
    mimic = dynid.load_robot(random_urdf(tmp_path / "m.urdf", np.random.default_rng(0), [0, 1, 1, 3],
                                         ["revolute", "revolute", "revolute", "prismatic"], {2: (1, -0.5, 0.2)}))
    write_urdf(tmp_path / "m2.urdf", mimic)
    again = dynid.load_robot(tmp_path / "m2.urdf")
    for a, b in ((tx40, back), (mimic, again)):
        q, dq, ddq = _states(a, 5, 4)
        np.testing.assert_allclose(dynid.inverse_dynamics(b, q, dq, ddq), dynid.inverse_dynamics(a, q, dq, ddq),
                                   atol=1e-9)


def test_encoders_of_a_coupled_robot_quantize_the_motor_angles(tx40):
    """Simulated encoders count motor revolutions: T q of the written joint angles is a whole number
    of encoder steps, and no motor angle moves by more than half a step."""
    from dynid.simulate import Measurement, simulate_joint_data

    t = np.arange(0.0, 2.0, 0.01)
    q, dq, ddq = _states(tx40, t.size, 5)
    data, _, _ = simulate_joint_data(tx40, t, q, dq, ddq, measurement=Measurement(encoder_counts=4096))
    step = 2 * np.pi / 4096
    counts = data.q @ tx40.transmission_matrix.T / step
    np.testing.assert_allclose(counts, np.round(counts), atol=1e-6)
    assert np.max(np.abs((data.q - q) @ tx40.transmission_matrix.T)) <= step / 2 + 1e-12


def test_base_params_command_lists_the_coupled_motor_terms(tmp_path):
    """`dynid base-params tx40`: the coupled motor 6's rotor inertia and friction (motor coordinates)
    are base parameters of their own, named *m6, and replace joint 6's Ia6/Fc6/Fv6."""
    out = run_ok("base-params", "tx40", "--json", tmp_path / "b.json")
    names = json.loads((tmp_path / "b.json").read_text())["names"]
    for name in ("Iam6", "Fcm6", "Fvm6"):
        assert name in names and f"{name} = {name}" in out
    assert not {"Ia6", "Fc6", "Fv6"} & set(names)
    assert "motor 6 is coupled" in out and "joint5, joint6" in out
