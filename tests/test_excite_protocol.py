"""The test-cycle protocol file: contract columns, limits at every sample, continuity,
stage structure, friction speed levels and vertical axes (thesis 4.3-4.5)."""

from __future__ import annotations

import numpy as np
import pyarrow.csv as pacsv
import pytest
from typer.testing import CliRunner

import dynid
from dynid.cli.main import app
from dynid.excite.builtin import thesis_table_4_1
from dynid.excite.protocol import FRICTION_LEVELS, ProtocolSettings, cycle_timeline
from dynid.excite.rest_pose import vertical_alignment

RATE = 500.0
CYCLES = 2


@pytest.fixture(scope="module")
def protocol_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("protocol") / "cycle.csv"
    result = CliRunner().invoke(app, ["excite", "protocol", "--robot", "er3a", "--out", str(path),
                                      "--cycles", str(CYCLES), "--rate", str(RATE),
                                      "--warming-duration", "20", "--level-duration", "6"])
    assert result.exit_code == 0, result.output
    table = pacsv.read_csv(path)
    return {name: table.column(name).to_numpy(zero_copy_only=False) for name in table.column_names}


def joint_matrix(cols, prefix, n=6):
    return np.column_stack([cols[f"{prefix}{j + 1}"] for j in range(n)]).astype(float)


def test_contract_columns_and_labels(protocol_file):
    cols = protocol_file
    expected = (["t"] + [f"q{j}" for j in range(1, 7)] + [f"dq{j}" for j in range(1, 7)]
                + [f"ddq{j}" for j in range(1, 7)] + ["cycle", "stage"])
    assert list(cols) == expected
    t = cols["t"]
    assert np.all(np.diff(t) > 0)
    np.testing.assert_allclose(np.diff(t), 1 / RATE, rtol=1e-9, atol=1e-9)
    assert sorted(set(cols["cycle"].tolist())) == list(range(1, CYCLES + 1))
    assert set(cols["stage"].tolist()) == {"transition", "excitation", "additional", "friction", "warming"}
    # stages come in the thesis' order within each cycle
    first = {s: np.flatnonzero((cols["stage"] == s) & (cols["cycle"] == 1))[0]
             for s in ("excitation", "additional", "friction", "warming")}
    assert first["excitation"] < first["additional"] < first["friction"] < first["warming"]
    # both cycles are the same motion
    c1, c2 = cols["cycle"] == 1, cols["cycle"] == 2
    np.testing.assert_allclose(joint_matrix(cols, "q")[c1], joint_matrix(cols, "q")[c2], atol=1e-12)


def test_every_sample_within_table_2_1(protocol_file):
    """Raw samples against the robot's limit arrays (no bound formula involved)."""
    robot = dynid.load_robot("er3a")
    q, dq, ddq = (joint_matrix(protocol_file, p) for p in ("q", "dq", "ddq"))
    assert np.all(q >= robot.limit_array("q_min")) and np.all(q <= robot.limit_array("q_max"))
    assert np.all(np.abs(dq) <= robot.limit_array("dq_max"))
    assert np.all(np.abs(ddq) <= robot.limit_array("ddq_max"))


def test_position_velocity_acceleration_continuous(protocol_file):
    """dq is the derivative of q and ddq of dq over the whole file (cycle joints included):
    trapezoidal integration of the file's own columns reproduces the next column."""
    t = protocol_file["t"]
    q, dq, ddq = (joint_matrix(protocol_file, p) for p in ("q", "dq", "ddq"))
    dt = np.diff(t)[:, None]
    np.testing.assert_allclose(np.diff(q, axis=0), 0.5 * (dq[1:] + dq[:-1]) * dt, atol=2e-5)
    np.testing.assert_allclose(np.diff(dq, axis=0), 0.5 * (ddq[1:] + ddq[:-1]) * dt, atol=2e-4)


def test_segments_meet_in_position_velocity_acceleration():
    """At every segment boundary of the cycle the state is the same just before and after."""
    robot = dynid.load_robot("er3a")
    tl, _ = cycle_timeline(robot, thesis_table_4_1(), ProtocolSettings(warming_duration=20.0))
    edges = np.cumsum([s.duration for s in tl.segments])[:-1]
    eps = 1e-7
    before = tl.evaluate(edges - eps)[:3]
    after = tl.evaluate(edges + eps)[:3]
    for name, a, b, tol in zip(("q", "dq", "ddq"), before, after, (1e-6, 1e-5, 1e-3)):
        assert np.abs(a - b).max() < tol, name


def test_friction_levels_one_joint_at_a_time():
    robot = dynid.load_robot("er3a")
    settings = ProtocolSettings(warming_duration=20.0)
    tl, summary = cycle_timeline(robot, thesis_table_4_1(), settings)
    t = np.arange(0, tl.duration, 1e-3)
    q, dq, ddq, stage = tl.evaluate(t)
    fr = stage == "friction"
    moving = np.abs(dq[fr]) > 1e-9
    assert np.all(moving.sum(axis=1) <= 1)  # one joint at a time
    dq_max = robot.limit_array("dq_max")
    assert summary["stage_durations"]["friction"] == pytest.approx(6 * len(FRICTION_LEVELS) * settings.level_duration)
    for j in range(6):
        speeds = np.abs(dq[fr][:, j])
        shares = np.asarray(summary["friction_speed_shares"][j])
        # every level is the thesis' share of dq_max (5 .. 100 %); each shows a constant-speed plateau
        np.testing.assert_allclose(shares, FRICTION_LEVELS)
        for share in shares:
            at_level = np.isclose(speeds, share * dq_max[j], rtol=1e-9)
            assert at_level.sum() > 100, (j, share)
    # axes: 1, 4, 5, 6 can be vertical for er3a; 2 and 3 are horizontal in every configuration
    cos = np.asarray(summary["vertical_axis_cos"])
    assert np.all(cos[[0, 3, 4, 5]] > 0.999) and np.all(cos[[1, 2]] < 1e-9)
    start = np.flatnonzero(fr)[0]
    assert vertical_alignment(robot, q[start], 0)[0] > 0.999


def test_warming_uses_80_percent_of_range_and_speed():
    robot = dynid.load_robot("er3a")
    tl, _ = cycle_timeline(robot, thesis_table_4_1(), ProtocolSettings(warming_duration=30.0))
    t = np.arange(0, tl.duration, 1e-3)
    q, dq, _, stage = tl.evaluate(t)
    w = stage == "warming"
    lo, hi = robot.limit_array("q_min"), robot.limit_array("q_max")
    mid, half = (lo + hi) / 2, (hi - lo) / 2
    np.testing.assert_allclose(q[w].max(axis=0), mid + 0.8 * half, atol=1e-9)
    np.testing.assert_allclose(q[w].min(axis=0), mid - 0.8 * half, atol=1e-9)
    # 80 % of the speed on every joint (thesis 4.5), joint 3 included: its 80 % range is too
    # short for cycloidal ramps at 80 % of ddq_max (2 v^2 / a = 3.4 rad > 2.37 rad), so its
    # ramps hold a constant acceleration; the limits hold everywhere
    speed = np.abs(dq[w]).max(axis=0)
    target = 0.8 * robot.limit_array("dq_max")
    np.testing.assert_allclose(speed, target, rtol=1e-9)
    cycloid_reach = 2 * target**2 / (0.8 * robot.limit_array("ddq_max")) <= 1.6 * half
    assert not cycloid_reach[2]
    assert np.all(np.abs(dq[w]) <= robot.limit_array("dq_max"))


def test_protocol_with_an_excitation_at_the_limits():
    """An excitation that uses 99 % of the limits (as optimized ones do) still gets blends
    within the limits; every sample of the result is checked on the raw arrays."""
    from dynid.excite.criteria import ExcitationModel
    from dynid.excite.optimize import OptimizeSettings, Problem
    from dynid.excite.protocol import sample_protocol

    robot = dynid.load_robot("er3a")
    problem = Problem(ExcitationModel.of(robot), OptimizeSettings(limit_fraction=0.99))
    q0, c = problem.project(np.random.default_rng(11).uniform(-1, 1, (1, problem.dim)))
    traj = problem.trajectory(q0[0], c[0])
    data = sample_protocol(robot, traj, 1, 200.0, ProtocolSettings(warming_duration=10.0))
    q, dq, ddq = data["q"], data["dq"], data["ddq"]
    assert np.all(q >= robot.limit_array("q_min")) and np.all(q <= robot.limit_array("q_max"))
    assert np.all(np.abs(dq) <= robot.limit_array("dq_max"))
    assert np.all(np.abs(ddq) <= robot.limit_array("ddq_max"))
    # and the excitation really runs at the edge: every joint reaches 98 % of some limit
    exc = data["stage"] == "excitation"
    mid = (robot.limit_array("q_min") + robot.limit_array("q_max")) / 2
    half = (robot.limit_array("q_max") - robot.limit_array("q_min")) / 2
    usage = np.maximum.reduce([np.abs(q[exc] - mid).max(axis=0) / half,
                               np.abs(dq[exc]).max(axis=0) / robot.limit_array("dq_max"),
                               np.abs(ddq[exc]).max(axis=0) / robot.limit_array("ddq_max")])
    assert np.all(usage > 0.98)
