"""The real KUKA LBR iiwa 14 logs (shared/real/kuka_iiwa14, SOURCE.md there) end to end, as
docs/workflow-own-robot.md shows them: convert the text files, identify on
joint_2_to_7_dynamic_motion, validate on joint_3_to_7_dynamic_motion (held out).

Facts of the data, not numbers of the code: the torque sensors report the negative of the
URDF's joint torque; the driver's velocity lags the positions by 35-40 ms; joints 1-2 are
held still, so what their motion excites cannot be identified; joint 4 carries the arm's
weight, which the rigid-body model explains."""

from __future__ import annotations

import json

import numpy as np
import pytest

import dynid

from cli_helpers import run_ok

SIGNALS = ("t=cur_traj_time_s.txt,q=joint_position_measured.txt,dq=joint_velocity_measured.txt,"
           "tau=joint_torque_measured.txt")
OPTIONS = ["--negate", "tau", "--ignore", "dq", "--offset", "--smooth-sign", "0.02", "--tau-delay", "0.02",
           "--estimator", "wls"]  # docs/workflow-own-robot.md


@pytest.fixture(scope="module")
def iiwa(kuka_iiwa14, tmp_path_factory):
    d = tmp_path_factory.mktemp("iiwa")
    for name, out in (("joint_2_to_7_dynamic_motion", "train.parquet"), ("joint_3_to_7_dynamic_motion", "check.parquet")):
        run_ok("convert", kuka_iiwa14 / name, "--signals", SIGNALS, "--out", d / out)
    return d, str(kuka_iiwa14 / "urdf" / "iiwa14.urdf")


def test_identify_on_one_recording_validate_on_the_other(iiwa):
    d, urdf = iiwa
    out = run_ok("identify", "-r", urdf, "--data", d / "train.parquet", "--out", d / "r.json", *OPTIONS)
    assert "10 segment(s)" in out and "held still" in out
    result = json.loads((d / "r.json").read_text())
    assert result["undetermined"]["still_joints"] == [1, 2]
    flagged = {p["name"] for p in result["base_parameters"] if p.get("determined") is False}
    # joint 1's inertia about its axis, joint 2's viscous friction, and mx2 (with joint 2 held, its
    # gravity torque is a constant, the same as joint 2's offset) are not determined by this log
    assert {"Izz1R", "Fv1", "Fv2", "mx2"} <= flagged
    assert all(p["std"] is not None for p in result["base_parameters"] if p["name"] not in flagged)
    robot = dynid.load_robot(urdf)
    prior = {p["name"]: p["value"] for p in result["base_parameters"]}
    assert prior["Izz1R"] == pytest.approx(result["base"]["K"][0] @ np.concatenate(
        [robot.parameters(), np.zeros(len(result["base"]["standard_names"]) - 10 * robot.n)]))
    run_ok("validate", "-r", urdf, "--params", d / "r.json", "--data", d / "check.parquet", "--json", d / "v.json")
    held_out = json.loads((d / "v.json").read_text())[str(d / "check.parquet")]
    assert held_out["kind"] == "cross" and held_out["segments"] == 4
    # the weight of the arm on joint 4 (16 N m RMS) is predicted to a few percent on the other recording
    assert held_out["relative_rmsd"][3] < 0.03
    assert held_out["relative_error"] < 0.05


def test_the_logged_velocity_lags_and_the_torque_sign_is_reversed(iiwa):
    """The fit with the driver's velocity is worse than with differentiated positions (its 35-40
    ms lag); without --negate tau the first moments come out negative (the sensor's sign)."""
    from dynid.data.columns import ColumnMapping
    from dynid.data.preprocess import Preprocessing
    from dynid.identify import ModelOptions, base_parameters
    from dynid.identify.estimators import OrdinaryLeastSquares
    from dynid.identify.pipeline import accumulate_sources
    from dynid.identify.undetermined import find_undetermined

    d, urdf = iiwa
    robot = dynid.load_robot(urdf)
    options = ModelOptions(offset=True)
    base = base_parameters(robot, options)
    prep = Preprocessing(lowpass_hz=10.0, tau_delay=0.02)

    def fit(mapping):
        acc = accumulate_sources(robot, [d / "train.parquet"], options, base, mapping, prep)
        found = find_undetermined(robot, options, base, acc.q_min, acc.q_max)
        est = OrdinaryLeastSquares(base.names, **found.options()).fit_normal_equations(acc.ne)
        return est, np.sqrt(acc.ne.residual_ss(est.coef_) / acc.ne.rows)

    est, rmsd = fit(ColumnMapping(negate=("tau",), ignore=("dq",)))
    _, lagging = fit(ColumnMapping(negate=("tau",)))
    # all joints together, and joints 3 and 4, which carry the most inertia of the moving ones
    assert np.sum(lagging**2) > 1.2 * np.sum(rmsd**2) and np.all(lagging[2:4] > 1.2 * rmsd[2:4])
    flipped, _ = fit(ColumnMapping(ignore=("dq",)))
    my4 = base.names.index("my4R")  # first moment of links 4-7 along link 4's axis: the arm's weight on joint 4
    assert est.coef_[my4] > 0 > flipped.coef_[my4]


def test_automatic_cutoff_is_within_ten_percent_of_the_best_fixed_one_on_the_held_out_recording(iiwa):
    """identify's default --lowpass auto on the real log, whose joints 1-2 stand still: its
    refits hold the same undetermined parameters as the fit, and the held-out error on the
    other recording is within 10 % of the best of a grid of fixed cutoffs over the range the
    cross-validation may choose from (1.6 Hz: 30 / the median segment's 18 s; 50 Hz)."""
    from dataclasses import replace

    from dynid.data.columns import ColumnMapping
    from dynid.identify.pipeline import accumulate_sources, make_estimator
    from dynid.identify.prediction import validate_sources
    from dynid.identify.result import build_result, result_model
    from dynid.identify.undetermined import find_undetermined

    d, urdf = iiwa
    run_ok("identify", "-r", urdf, "--data", d / "train.parquet", "--out", d / "auto.json", *OPTIONS)
    result = json.loads((d / "auto.json").read_text())
    selection = result["lowpass_selection"]
    assert selection["undetermined"] == result["undetermined"]["parameters"]
    robot = dynid.load_robot(urdf)
    options, base, _, prep = result_model(result)
    mapping = ColumnMapping(negate=("tau",), ignore=("dq",))
    check = d / "check.parquet"

    def held_out(res: dict) -> float:
        return validate_sources(robot, res, [check], mapping)[str(check)]["relative_error"]

    fixed = {}
    for cutoff in np.geomspace(1.6, 50.0, 9):
        p = replace(prep, lowpass_hz=float(cutoff))
        acc = accumulate_sources(robot, [d / "train.parquet"], options, base, mapping, p)
        found = find_undetermined(robot, options, base, acc.q_min, acc.q_max)
        est = make_estimator("wls", robot, options, base, **found.options()).fit_normal_equations(acc.ne)
        fixed[cutoff] = held_out(build_result(urdf, robot, options, base, est, acc.ne, p, mapping, acc.samples, [],
                                              str(d / "train.parquet"), {}))
    auto = held_out(result)
    assert auto <= 1.10 * min(fixed.values()), (selection["chosen_hz"], auto, fixed)
    assert auto < fixed[50.0]  # and better than the least filtering
