"""The MuJoCo export, checked with MuJoCo itself: its inverse dynamics (plus the damping and
frictionloss terms it holds) equals ``dynid predict`` of the same result to 1e-5 of the RMS
torque, coupled motors included (tendons); the URDF export's <dynamics> reach MuJoCo and
Pinocchio; a forward simulation of the export tracks the logged motion under the logged torques
(and a model with a wrong link does not); what MuJoCo cannot express is said."""

from __future__ import annotations

import json

import mujoco
import numpy as np
import pinocchio as pin
import pytest
from cli_helpers import run_ok

import dynid
from dynid.export import identified_model
from dynid.identify.model import parameter_slices
from dynid.identify.prediction import predict_file
from dynid.identify.result import load_result, result_model
from dynid.simulate.mujoco_bridge import inverse_torques, load_model, replay
from dynid.simulate.mujoco_check import mujoco_check

AGREEMENT = 1e-5  # of the RMS torque (measured ~1e-9: MuJoCo diagonalizes the inertia itself)


@pytest.fixture(scope="module")
def er3a_pc(tmp_path_factory):
    """An er3a log with Coulomb, viscous friction, rotor inertia and offsets; its pc result and exports."""
    d = tmp_path_factory.mktemp("er3a")
    log, result = d / "log.csv", d / "pc.json"
    run_ok("simulate", "-r", "er3a", "--out", log, "--duration", "12", "--seed", "4",
           "--offsets", "0.3,-0.2,0.1,0.02,-0.01,0.005")
    run_ok("identify", "-r", "er3a", "--data", log, "--out", result, "--estimator", "pc", "--offset", "--lowpass", "8")
    out = run_ok("export", "-r", "er3a", "--params", result, "--mjcf", d / "model.xml", "--urdf", d / "model.urdf")
    return d, out


def _agreement(robot, result_path, mjcf, log):
    result = load_result(result_path, robot)
    model = identified_model(robot, result)
    pred = predict_file(robot, result, log)
    offsets = np.zeros(robot.n) if model.offsets is None else model.offsets
    tau = inverse_torques(load_model(mjcf), robot.joint_names, pred["q"], pred["dq"], pred["ddq"],
                          model.options.smooth_sign) + offsets
    rms = np.sqrt(np.mean(pred["tau_hat"] ** 2, axis=0))
    return np.max(np.abs(tau - pred["tau_hat"]), axis=0) / rms, pred


def test_mujoco_inverse_dynamics_of_the_export_equals_dynid_predict(er3a_pc, tmp_path):
    d, out = er3a_pc
    robot = dynid.load_robot("er3a")
    agreement, pred = _agreement(robot, d / "pc.json", d / "model.xml", d / "log.csv")
    assert np.all(agreement < AGREEMENT), agreement
    # ``dynid predict`` writes the same torques the comparison used
    run_ok("predict", "-r", "er3a", "--params", d / "pc.json", "--data", d / "log.csv", "--out", tmp_path / "p.csv")
    written = np.loadtxt(tmp_path / "p.csv", delimiter=",", skiprows=1)
    np.testing.assert_allclose(written[:, 1:1 + robot.n], pred["tau_hat"], rtol=1e-9, atol=1e-9)
    # MuJoCo holds the identified terms where they belong; offsets are said to be left out
    result = json.loads((d / "pc.json").read_text())
    theta = np.array([p["value"] for p in result["standard_parameters"]])
    sl = parameter_slices(robot, identified_model(robot, result).options)
    friction = theta[sl["friction"]].reshape(robot.n, 2)
    mj = load_model(d / "model.xml")
    np.testing.assert_allclose(mj.dof_armature, theta[sl["rotor_inertia"]], rtol=1e-12)
    np.testing.assert_allclose(mj.dof_damping, friction[:, 1], rtol=1e-12)
    np.testing.assert_allclose(mj.dof_frictionloss, friction[:, 0], rtol=1e-12)
    assert "torque offsets left out" in out and "warning:" in out


def test_urdf_export_carries_joint_friction_to_mujoco_and_pinocchio(er3a_pc):
    d, _ = er3a_pc
    result = json.loads((d / "pc.json").read_text())
    robot = dynid.load_robot("er3a")
    theta = np.array([p["value"] for p in result["standard_parameters"]])
    friction = theta[parameter_slices(robot, identified_model(robot, result).options)["friction"]].reshape(robot.n, 2)
    mj = mujoco.MjModel.from_xml_path(str(d / "model.urdf"))
    np.testing.assert_allclose(mj.dof_damping, friction[:, 1], rtol=1e-12)
    np.testing.assert_allclose(mj.dof_frictionloss, friction[:, 0], rtol=1e-12)
    model = pin.buildModelFromUrdf(str(d / "model.urdf"))
    np.testing.assert_allclose(model.damping, friction[:, 1], rtol=1e-12)
    np.testing.assert_allclose(model.friction, friction[:, 0], rtol=1e-12)


def test_mujoco_simulation_of_the_export_tracks_the_log_and_a_wrong_link_does_not(er3a_pc, tmp_path):
    """Open loop from the logged state every 0.5 s under the logged torques: the exported model
    stays within 0.02 rad of the logged motion (its Coulomb friction is MuJoCo's constraint, not
    a sign function, so it is not exact); the same export with link 3's mass 30 % heavier drifts
    at least 3x as far. ``dynid replay`` prints and writes the same figures."""
    d, _ = er3a_pc
    robot = dynid.load_robot("er3a")
    result = load_result(d / "pc.json", robot)
    check = mujoco_check(robot, result, identified_model(robot, result), d / "model.xml", d / "log.csv", 0.5)
    assert np.all(check.agreement() < AGREEMENT)
    good = np.array(check.tracking(logged=True)["max"])
    assert np.max(good) < 0.02, good
    span = np.ptp(check.q, axis=0)
    assert np.all(good < 0.1 * span)
    wrong = json.loads((d / "pc.json").read_text())
    k = 20  # m3 (link 3's mass; its first moments scale with it: the centre of mass stays)
    for entry in wrong["standard_parameters"][k:k + 10]:
        entry["value"] *= 1.3
    (tmp_path / "wrong.json").write_text(json.dumps(wrong))
    run_ok("export", "-r", "er3a", "--params", tmp_path / "wrong.json", "--mjcf", tmp_path / "wrong.xml")
    bad = mujoco_check(robot, wrong, identified_model(robot, wrong), tmp_path / "wrong.xml", d / "log.csv", 0.5)
    assert np.max(bad.tracking(logged=True)["max"]) > 3 * np.max(good)
    out = run_ok("replay", "-r", "er3a", "--params", d / "pc.json", "--mjcf", d / "model.xml", "--data",
                 d / "log.csv", "--window", "0.5", "--json", tmp_path / "replay.json", "--figure", tmp_path / "r.png",
                 "--out", tmp_path / "replay.csv")
    summary = json.loads((tmp_path / "replay.json").read_text())
    assert max(summary["inverse_dynamics_agreement"]) < AGREEMENT and "vs dynid predict" in out
    np.testing.assert_allclose(summary["tracking_logged_torques"]["max"], good, rtol=1e-9)
    assert (tmp_path / "r.png").stat().st_size > 10_000


def test_coupled_wrist_exports_its_motor_terms_as_tendons(tmp_path):
    """tx40: motor 6 turns joints 5 and 6 (q_m6 = 32 (q5 + q6)); its rotor inertia and friction
    act through the coupling row, which a MuJoCo fixed tendon carries exactly."""
    log, result, xml = tmp_path / "log.csv", tmp_path / "pc.json", tmp_path / "tx40.xml"
    run_ok("simulate", "-r", "tx40", "--out", log, "--duration", "10", "--seed", "2")
    run_ok("identify", "-r", "tx40", "--data", log, "--out", result, "--estimator", "pc", "--lowpass", "8")
    run_ok("export", "-r", "tx40", "--params", result, "--mjcf", xml)
    robot = dynid.load_robot("tx40")
    mj = load_model(xml)
    assert mj.ntendon >= 1 and mj.tendon_armature.max() > 0
    agreement, _ = _agreement(robot, result, xml, log)
    assert np.all(agreement < AGREEMENT), agreement


def test_what_mujoco_cannot_express_is_said(tmp_path):
    log, result = tmp_path / "log.csv", tmp_path / "r.json"
    run_ok("simulate", "-r", "planar2", "--out", log, "--duration", "8", "--friction", "asymmetric")
    run_ok("identify", "-r", "planar2", "--data", log, "--out", result, "--estimator", "pc", "--friction", "asymmetric",
           "--lowpass", "8")
    out = run_ok("export", "-r", "planar2", "--params", result, "--mjcf", tmp_path / "m.xml")
    assert "asymmetric friction written as the mean" in out
    theta = np.array([p["value"] for p in json.loads(result.read_text())["standard_parameters"]])
    robot = dynid.load_robot("planar2")
    f = theta[parameter_slices(robot, identified_model(robot, json.loads(result.read_text())).options)["friction"]]
    f = f.reshape(robot.n, 4)  # Fcp, Fcn, Fvp, Fvn
    mj = load_model(tmp_path / "m.xml")
    np.testing.assert_allclose(mj.dof_frictionloss, 0.5 * (f[:, 0] + f[:, 1]), rtol=1e-12)
    assert "asymmetric" in (tmp_path / "m.xml").read_text().split("<mujoco")[0]  # the note is in the file too
    # --urdf alone said nothing of what it left out (issue 26, review): the same lines, URDF's words
    out = run_ok("export", "-r", "planar2", "--params", result, "--urdf", tmp_path / "m.urdf")
    said = [line for line in out.splitlines() if line.startswith("warning:") and "m.urdf" in line]
    assert any("asymmetric friction written as the mean" in line and "URDF's" in line for line in said), out
    assert any("rotor inertia left out" in line for line in said), out
    assert "asymmetric friction" in (tmp_path / "m.urdf").read_text().split("<robot")[0]


def test_each_kind_of_term_urdf_cannot_carry_is_one_note():
    """export.motor_terms.urdf_terms on identified models built by hand: offsets, asymmetric,
    polynomial and Stribeck friction, the tanh sign, rotor inertia, coupled motors: one note per
    kind present, none for a model URDF carries whole (Coulomb-viscous, no rotor inertia)."""
    from dynid.export import IdentifiedModel, urdf_terms
    from dynid.identify.model import FRICTION_MODELS, ModelOptions

    def notes(name, friction="coulomb-viscous", rotor=False, offset=False, smooth=0.0, **more):
        robot = dynid.load_robot(name)
        options = ModelOptions(friction=friction, rotor_inertia=rotor, offset=offset, smooth_sign=smooth, **more)
        k = len(FRICTION_MODELS[friction])
        model = IdentifiedModel(robot, options, np.zeros(0), np.arange(1.0, 1.0 + robot.n * k).reshape(robot.n, k),
                                np.full(robot.n, 0.01) if rotor else None, np.full(robot.n, 0.2) if offset else None,
                                "pc", "r.json")
        return urdf_terms(model)

    dynamics, said = notes("planar2")
    assert said == [] and np.allclose(dynamics[0], [2.0, 4.0]) and np.allclose(dynamics[1], [1.0, 3.0])  # Fv, Fc
    cases = {("polynomial",): "Fv2 dq^2", ("stribeck",): "Stribeck", ("asymmetric",): "mean of both"}
    for (friction,), words in cases.items():
        more = {"stribeck_velocity": (0.05, 0.05)} if friction == "stribeck" else {}
        _, said = notes("planar2", friction, **more)
        assert len(said) == 1 and words in said[0] and "URDF" in said[0], said
    _, said = notes("planar2", rotor=True, offset=True, smooth=0.01)
    assert len(said) == 3 and [s.split()[0] for s in said] == ["the", "torque", "rotor"], said
    dynamics, said = notes("tx40", "asymmetric", offset=True)
    assert dynamics is None and len(said) == 2 and "coupled transmission" in said[1], said


def test_mimic_joints_are_joint_equalities_mujoco_moves_and_inverts_like_dynid(tmp_path):
    """A follower (j4 = -0.7 j2 + 0.3, a second finger or a parallel link) is written as its own
    joint tied to its leader by an ``<equality joint>``; MuJoCo's inverse dynamics, mapped onto the
    actuated coordinates through that equality (read back from MuJoCo's model, not from dynid),
    equals ``dynid predict``, and MuJoCo's forward simulation keeps the follower on its leader."""
    from urdf_factory import random_urdf

    path = random_urdf(tmp_path / "mimic.urdf", np.random.default_rng(0), [0, 1, 2, 2], ["revolute"] * 4,
                       mimic={3: (1, -0.7, 0.3)})
    log, result, xml = tmp_path / "log.csv", tmp_path / "r.json", tmp_path / "m.xml"
    run_ok("simulate", "-r", path, "--out", log, "--duration", "6")
    run_ok("identify", "-r", path, "--data", log, "--out", result, "--estimator", "pc", "--lowpass", "8")
    assert "3 joints and 1 mimic joint as equalities" in run_ok("export", "-r", path, "--params", result, "--mjcf", xml)
    robot = dynid.load_robot(path)
    mj = load_model(xml)
    assert mj.nv == 4 and mj.neq == 1 and mj.nu == 3
    np.testing.assert_allclose(mj.eq_data[0, :5], [0.3, -0.7, 0, 0, 0], rtol=1e-15)
    agreement, pred = _agreement(robot, result, xml, log)
    assert np.all(agreement < AGREEMENT), agreement
    fit = load_result(result, robot)
    check = mujoco_check(robot, fit, identified_model(robot, fit), xml, log, 0.5)
    good = np.array(check.tracking(logged=True)["max"])
    assert np.all(good < 0.1 * np.ptp(check.q, axis=0)), good
    keep = np.asarray(pred["interior"], dtype=bool)
    every, _, _ = replay(mj, robot.joint_names, pred["t"], pred["q"], pred["dq"], pred["tau"], 0.5, keep=keep,
                         every_joint=True)
    every = every[np.all(np.isfinite(every), axis=1)]
    slip = every[:, 3] - (-0.7 * every[:, 1] + 0.3)
    assert np.max(np.abs(slip)) < 1e-3, np.max(np.abs(slip))


def test_point_masses_and_massless_links_are_raised_to_what_mujoco_accepts(er3a_pc, tmp_path):
    """A result whose link 6 is a point mass and link 5 massless (physical, the limits of bodies)
    exports with a note per link, MuJoCo loads it, and its inverse dynamics still equals
    ``dynid predict`` within 1e-5 of the RMS torque."""
    d, _ = er3a_pc
    result = json.loads((d / "pc.json").read_text())
    values = [p["value"] for p in result["standard_parameters"]]
    m6, h6 = values[50], np.array(values[51:54])
    c6 = h6 / m6
    values[54:60] = (m6 * np.array([c6[1] ** 2 + c6[2] ** 2, -c6[0] * c6[1], -c6[0] * c6[2], c6[0] ** 2 + c6[2] ** 2,
                                    -c6[1] * c6[2], c6[0] ** 2 + c6[1] ** 2])).tolist()  # I about the origin of a point
    values[40:50] = [0.0] * 10
    for entry, v in zip(result["standard_parameters"], values):
        entry["value"] = v
    base = result_model(result)[1]
    for entry, v in zip(result["base_parameters"], base.K @ np.array(values)):  # predict reads these
        entry["value"] = float(v)
    (tmp_path / "points.json").write_text(json.dumps(result))
    out = run_ok("export", "-r", "er3a", "--params", tmp_path / "points.json", "--mjcf", tmp_path / "p.xml")
    assert "link 'link6': principal moments" in out and "link 'link5'" in out and "mass 0 raised" in out
    robot = dynid.load_robot("er3a")
    agreement, _ = _agreement(robot, tmp_path / "points.json", tmp_path / "p.xml", d / "log.csv")
    assert np.all(agreement < AGREEMENT), agreement
