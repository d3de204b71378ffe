"""Optimization of excitation trajectories.

Small checks of the machinery (feasible parametrization, linear constraints, end conditions,
torque limits, harmonic family, determinism, the wall-time safety net) on small fixed
configurations, then the issue's claims on er3a with the command line defaults: cond at least
2x lower than the thesis' Table 4.1 trajectory with every limit held, and smaller
least-squares standard deviations on simulated data. The search stops on counts
(generations, polish iterations, starts), so its result does not depend on machine load; the
wall time of the default command is measured and reported (about 30 s on an idle 2-core
machine, docs/excitation.md); its CPU time, which load does not stretch, is asserted with a
loose bound (90 s).
"""

from __future__ import annotations

import json
import math
import os
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


def test_zero_ends_harmonic_family_and_counts(er3a_model):
    robot = er3a_model.robot
    settings = OptimizeSettings(family="harmonic", n_harmonics=4, zero_ends=True, starts=2, generations=4,
                                polish_iterations=10, criterion="logdet", seed=3)
    result = optimize_excitation(er3a_model, settings)
    traj = result.trajectory
    assert traj.family == "harmonic" and not result.time_limited
    assert [h["seed"] for h in result.history] == [3, 4]
    assert all(h["generations"] == 4 and h["polish_iterations"] <= 10 for h in result.history)
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
    settings = OptimizeSettings(n_harmonics=3, generations=10, polish_iterations=60, torque_limits=True,
                                torque_fraction=fraction, seed=1)
    result = optimize_excitation(er3a_model, settings)
    traj = result.trajectory
    t = np.arange(200) * traj.period / 200  # the polish instants (20 Hz)
    tau = prior_torques(robot, *traj.evaluate(t))
    assert np.all(np.abs(tau) <= fraction * robot.limit_array("tau_max") + 1e-9)
    assert dense_within_limits(robot, traj)


SMALL = dict(n_harmonics=3, generations=5, popsize=2, polish_iterations=15)
TINY = dict(n_harmonics=3, generations=2, popsize=2, polish_iterations=6)  # every phase, fewer steps of each


def test_same_seed_same_settings_identical_coefficients(er3a_model):
    """Determinism: two runs of a tiny configuration (every phase: generations, then polish) give
    bit-identical coefficients (the epigraph polish of cond with two starts, the plain polish of
    logdet); another seed gives another trajectory."""
    for criterion, starts in (("cond", 2), ("logdet", 1)):
        settings = OptimizeSettings(criterion=criterion, starts=starts, seed=11, **TINY)
        first = optimize_excitation(er3a_model, settings)
        second = optimize_excitation(er3a_model, settings)
        assert not first.time_limited and not second.time_limited
        np.testing.assert_array_equal(first.trajectory.coefficients, second.trajectory.coefficients)
        np.testing.assert_array_equal(first.trajectory.q0, second.trajectory.q0)
        assert first.value == second.value
        assert [h["polished"] for h in first.history] == [h["polished"] for h in second.history]
        assert first.trajectory.metadata["optimization"]["reproducible"] is True
    other = optimize_excitation(er3a_model, OptimizeSettings(criterion="logdet", seed=21, **TINY))
    assert not np.array_equal(other.trajectory.coefficients, second.trajectory.coefficients)


def test_counts_not_time_decide_the_result(er3a_model, monkeypatch):
    """A clock that runs 1000x faster changes nothing while the safety net is off."""
    import dynid.excite.optimize as optimize_module
    import dynid.excite.polish as polish_module

    settings = OptimizeSettings(seed=5, max_seconds=None, **SMALL)
    reference = optimize_excitation(er3a_model, settings)

    class FastClock:
        def __init__(self):
            self.real = time.perf_counter

        def perf_counter(self):
            return 1000.0 * self.real()

    monkeypatch.setattr(optimize_module, "time", FastClock())
    monkeypatch.setattr(polish_module, "time", FastClock())
    fast = optimize_excitation(er3a_model, settings)
    np.testing.assert_array_equal(fast.trajectory.coefficients, reference.trajectory.coefficients)
    assert [h["generations"] for h in fast.history] == [5]


def test_safety_net_flags_the_result_and_cli_warns(er3a_model, tmp_path):
    settings = OptimizeSettings(seed=2, starts=3, max_seconds=1e-3, **SMALL)
    result = optimize_excitation(er3a_model, settings)
    assert result.time_limited
    meta = result.trajectory.metadata["optimization"]
    assert meta["time_limited"] is True and meta["reproducible"] is False
    assert len(result.history) == 1 and result.history[0]["time_limited"]
    assert result.history[0]["generations"] < settings.generations  # stopped after its first generation
    assert dense_within_limits(er3a_model.robot, result.trajectory)  # still a valid trajectory

    out = tmp_path / "limited.json"
    run = CliRunner().invoke(app, ["excite", "optimize", "--robot", "er3a", "--out", str(out), "-N", "3",
                                   "--generations", "5", "--polish-iterations", "15", "--starts", "2",
                                   "--max-seconds", "0.001"])
    assert run.exit_code == 0, run.output
    assert "NOT reproducible" in " ".join(run.output.split())  # rich may wrap the line
    written = json.loads(out.read_text())["metadata"]
    assert written["optimization"]["time_limited"] is True
    assert written["optimization"]["reproducible"] is False

    out2 = tmp_path / "full.json"
    run = CliRunner().invoke(app, ["excite", "optimize", "--robot", "er3a", "--out", str(out2), "-N", "3",
                                   "--generations", "5", "--polish-iterations", "15"])
    assert run.exit_code == 0, run.output
    assert "NOT reproducible" not in run.output
    written = json.loads(out2.read_text())["metadata"]["optimization"]
    assert written["time_limited"] is False and written["reproducible"] is True
    assert (written["generations"], written["polish_iterations"], written["starts"]) == (5, 15, 1)


@pytest.fixture(scope="module")
def optimized(tmp_path_factory):
    """`dynid excite optimize --robot er3a` with the defaults (N = 5, w_f = 2 pi 0.1, Table 2.1).

    The defaults are fixed counts (20 generations, <= 120 polish iterations, 1 start, seed 0),
    so the trajectory is the same however loaded the machine is. Wall time is measured around
    the whole command in this process and reported."""
    d = tmp_path_factory.mktemp("optimize")
    out, csv = d / "traj.json", d / "traj.csv"
    t0, c0 = time.perf_counter(), time.process_time()
    result = CliRunner().invoke(app, ["excite", "optimize", "--robot", "er3a", "--out", str(out),
                                      "--csv", str(csv), "--rate", "1000"])
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    assert result.exit_code == 0, result.output
    return {"out": out, "csv": csv, "wall": wall, "cpu": cpu, "output": result.output}


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


def test_optimized_cond_twice_lower_within_limits(optimized, thesis_report, er3a_model):
    robot = er3a_model.robot
    report = json.loads(evaluate_file(optimized["out"]))
    meta = json.loads(optimized["out"].read_text())["metadata"]
    # the deterministic defaults ran to the end: the safety net did not cut this run short
    assert meta["optimization"]["time_limited"] is False, (
        f"the --max-seconds safety net cut the run at {optimized['wall']:.0f} s (load average "
        f"{os.getloadavg()[0]:.1f}): the machine is far too loaded for this test", optimized["output"])
    assert report["limits_ok"] is True
    # 0.45 x (about 4.29) is what the defaults reach for seeds 0-5; 2x is the claim
    assert report["cond"] <= thesis_report["cond"] / 2.0, (report["cond"], thesis_report["cond"])
    assert report["cond"] <= 0.45 * thesis_report["cond"], (report["cond"], thesis_report["cond"])
    # about 30 s on the idle 2-core machine (docs/excitation.md); the work is fixed, so the
    # CPU time is bounded (a loaded machine stretches only the wall time, which is printed)
    print(f"\n`dynid excite optimize --robot er3a` defaults: cond {report['cond']:.4f} "
          f"(thesis {thesis_report['cond']:.4f}), wall time {optimized['wall']:.1f} s, CPU "
          f"{optimized['cpu']:.1f} s, load average {os.getloadavg()[0]:.2f}")
    assert optimized["cpu"] < 90.0, optimized["cpu"]
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
