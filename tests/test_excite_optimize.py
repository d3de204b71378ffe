"""Optimization of excitation trajectories.

Small checks of the machinery (feasible parametrization, linear constraints, end conditions,
torque limits, harmonic family) on short budgets, then the issue's claims on er3a with the
command line defaults: cond at least 2x lower than the thesis' Table 4.1 trajectory with every
limit held, in under 60 s, and smaller least-squares standard deviations on simulated data.
"""

from __future__ import annotations

import json
import math
import time

import numpy as np
import pyarrow.csv as pacsv
import pytest
from typer.testing import CliRunner

import dynid
from dynid.cli.main import app
from dynid.excite.criteria import ExcitationModel, batch_values, criterion_value
from dynid.excite.evaluate import evaluate_trajectory
from dynid.excite.fileio import load_trajectory
from dynid.excite.optimize import OptimizeSettings, Problem, optimize_excitation
from dynid.excite.prior import prior_torques
from dynid.identify.base import base_regressor
from dynid.identify.estimators import OrdinaryLeastSquares
from dynid.simulate.joint_space import Measurement, simulate_joint_data


@pytest.fixture(scope="module")
def er3a_model():
    return ExcitationModel.of(dynid.load_robot("er3a"))


def dense_within_limits(robot, traj, samples=100_000):
    """Raw check at dense instants against the robot's limit arrays."""
    q, dq, ddq = traj.evaluate(np.linspace(0, traj.period, samples))
    return (np.all(q >= robot.limit_array("q_min")) and np.all(q <= robot.limit_array("q_max"))
            and np.all(np.abs(dq) <= robot.limit_array("dq_max"))
            and np.all(np.abs(ddq) <= robot.limit_array("ddq_max")))


def test_projection_is_feasible_and_constraints_are_the_sampled_limits(er3a_model):
    problem = Problem(er3a_model, OptimizeSettings())
    z = np.random.default_rng(0).uniform(-1, 1, (16, problem.dim))
    q0, c = problem.project(z)
    a, ub = problem.linear_constraints()
    for k in range(16):
        x = problem.pack(q0[k], c[k])
        assert np.all(a @ x <= ub + 1e-9)
        # the linear rows are q, dq, ddq at the dense instants: compare with direct evaluation
        traj = problem.trajectory(q0[k], c[k])
        q, dq, ddq = traj.evaluate(problem.t_dense)
        m = problem.t_dense.size
        rows = (a @ x)[: 2 * m]  # joint 1: +q, -q
        np.testing.assert_allclose(rows[:m], q[:, 0], atol=1e-12)
        np.testing.assert_allclose(-rows[m:], q[:, 0], atol=1e-12)


def test_batch_criteria_agree_with_exact_values(er3a_model):
    problem = Problem(er3a_model, OptimizeSettings(search_rate=100.0))
    q0, c = problem.project(np.random.default_rng(1).uniform(-1, 1, (3, problem.dim)))
    q, dq, ddq = problem.samples(q0, c)
    for name in ("cond", "logdet", "weighted"):
        batch = batch_values(name, er3a_model, q, dq, ddq)
        exact = [criterion_value(name, er3a_model, q[k], dq[k], ddq[k]) for k in range(3)]
        if name == "cond":
            exact = np.log(exact)
        np.testing.assert_allclose(batch, exact, rtol=1e-6)


def test_zero_ends_harmonic_family_and_budget(er3a_model):
    robot = er3a_model.robot
    settings = OptimizeSettings(family="harmonic", n_harmonics=4, zero_ends=True, budget=4.0, starts=2,
                                criterion="logdet", seed=3)
    t0 = time.perf_counter()
    result = optimize_excitation(er3a_model, settings)
    elapsed = time.perf_counter() - t0
    assert elapsed < settings.budget + 3.0
    traj = result.trajectory
    assert traj.family == "harmonic" and len(result.history) >= 1
    for end in (0.0, traj.period):
        _, dq, ddq = traj.evaluate(np.array([end]))
        np.testing.assert_allclose(dq, 0.0, atol=1e-9)
        np.testing.assert_allclose(ddq, 0.0, atol=1e-9)
    assert dense_within_limits(robot, traj)
    for start in result.history:  # the polish never returns something worse than its start
        assert start["polished"] <= start["global"] + 1e-12


def test_torque_limits_from_prior_model(er3a_model):
    robot = er3a_model.robot
    fraction = 0.12  # below what an unconstrained search reaches on joint 2 (about 0.18)
    settings = OptimizeSettings(n_harmonics=3, budget=5.0, starts=1, torque_limits=True,
                                torque_fraction=fraction, seed=1)
    result = optimize_excitation(er3a_model, settings)
    traj = result.trajectory
    t = np.arange(200) * traj.period / 200  # the polish instants (20 Hz)
    tau = prior_torques(robot, *traj.evaluate(t))
    assert np.all(np.abs(tau) <= fraction * robot.limit_array("tau_max") + 1e-9)
    assert dense_within_limits(robot, traj)


@pytest.fixture(scope="module")
def optimized(tmp_path_factory):
    """`dynid excite optimize --robot er3a` with the defaults (N = 5, w_f = 2 pi 0.1, Table 2.1).

    Wall time is measured around the whole command in this process (the machine is shared
    with other jobs while it runs)."""
    d = tmp_path_factory.mktemp("optimize")
    out, csv = d / "traj.json", d / "traj.csv"
    t0 = time.perf_counter()
    result = CliRunner().invoke(app, ["excite", "optimize", "--robot", "er3a", "--out", str(out),
                                      "--csv", str(csv), "--rate", "1000"])
    wall = time.perf_counter() - t0
    assert result.exit_code == 0, result.output
    return {"out": out, "csv": csv, "wall": wall, "output": result.output}


@pytest.fixture(scope="module")
def thesis_report(tmp_path_factory):
    path = tmp_path_factory.mktemp("evaluate") / "thesis.json"
    result = CliRunner().invoke(app, ["excite", "evaluate", "--robot", "er3a", "--trajectory",
                                      "thesis-table-4.1", "--json", str(path)])
    assert result.exit_code == 0, result.output
    return json.loads(path.read_text())


def test_evaluate_thesis_contract(thesis_report):
    r = thesis_report
    assert isinstance(r["cond"], float) and 1.0 < r["cond"] < 1e3
    assert set(r["max_ratio"]) == {"q", "dq", "ddq"}
    # Table 4.1 respects Table 2.1 (checked independently in test_excite_families)
    assert r["limits_ok"] is True and max(r["max_ratio"].values()) < 1.0


def test_optimized_cond_twice_lower_within_limits_under_60s(optimized, thesis_report, er3a_model):
    robot = er3a_model.robot
    report = json.loads(evaluate_file(optimized["out"]))
    assert report["limits_ok"] is True
    assert report["cond"] <= thesis_report["cond"] / 2.0, (report["cond"], thesis_report["cond"])
    assert optimized["wall"] < 60.0, optimized["wall"]
    # the exported samples (1 kHz, one period) hold every limit, checked on the raw columns
    table = pacsv.read_csv(optimized["csv"])
    cols = {k: table.column(k).to_numpy() for k in table.column_names}
    q = np.column_stack([cols[f"q{j}"] for j in range(1, 7)])
    dq = np.column_stack([cols[f"dq{j}"] for j in range(1, 7)])
    ddq = np.column_stack([cols[f"ddq{j}"] for j in range(1, 7)])
    assert q.shape[0] == 10_000
    assert np.all(q >= robot.limit_array("q_min")) and np.all(q <= robot.limit_array("q_max"))
    assert np.all(np.abs(dq) <= robot.limit_array("dq_max"))
    assert np.all(np.abs(ddq) <= robot.limit_array("ddq_max"))
    assert dense_within_limits(robot, load_trajectory(str(optimized["out"]), 6))


def evaluate_file(path) -> str:
    out = path.with_suffix(".eval.json")
    result = CliRunner().invoke(app, ["excite", "evaluate", "--robot", "er3a", "--trajectory", str(path),
                                      "--json", str(out)])
    assert result.exit_code == 0, result.output
    return out.read_text()


def identify_std(model, traj, periods=3, noise=0.5, seed=7):
    """OLS standard deviations of the base parameters from simulated noisy torques."""
    t = traj.sample_times(100.0, periods)
    q, dq, ddq = traj.evaluate(t)
    data, _, _ = simulate_joint_data(model.robot, t, q, dq, ddq, model.options,
                                     measurement=Measurement(tau_noise=noise), seed=seed)
    yb = base_regressor(model.robot, q, dq, ddq, model.options, model.base)
    return OrdinaryLeastSquares(names=model.base.names).fit(yb, data.tau).std_


def test_optimized_trajectory_gives_smaller_parameter_std(optimized, er3a_model):
    """Same noise (0.5 N m, same seed), same duration (3 periods at 100 Hz), same model."""
    std_thesis = identify_std(er3a_model, load_trajectory("thesis-table-4.1", 6))
    std_opt = identify_std(er3a_model, load_trajectory(str(optimized["out"]), 6))
    ratio = std_opt / std_thesis
    assert np.median(ratio) < 1.0
    assert np.exp(np.mean(np.log(ratio))) < 1.0
    assert np.sum(ratio < 1.0) > ratio.size / 2
