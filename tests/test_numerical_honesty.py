"""Every estimator reports rank deficiency, ill conditioning and non-convergence (IRLS iterations,
SDP solver status) in result.json ("diagnostics") and on the console (issue 14 part 4)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cli_helpers import run_ok, runner
from dynid.cli.main import app
from dynid.errors import IllConditionedError
from dynid.identify.estimators import HuberIRLS, OrdinaryLeastSquares, WeightedLeastSquares


def regression(cond_target: float | None = None, seed: int = 0, n: int = 2, b: int = 4, rows: int = 400):
    """(Y (N, n, b), tau (N, n), beta): a random regressor, optionally with two columns made
    nearly collinear so the column-normalized condition number is large."""
    rng = np.random.default_rng(seed)
    y = rng.normal(size=(rows, n, b))
    if cond_target is not None:
        y[..., 1] = y[..., 0] + y[..., 1] / cond_target
    beta = rng.normal(size=b)
    return y, y @ beta + 0.01 * rng.normal(size=(rows, n)), beta


def normalized_cond(y):
    w = y.reshape(-1, y.shape[-1])
    return np.linalg.cond(w / np.linalg.norm(w, axis=0))  # 2-norm condition number (thesis eq. 2.13-2.16)


@pytest.mark.parametrize("estimator", [OrdinaryLeastSquares, WeightedLeastSquares, HuberIRLS])
def test_condition_number_is_that_of_the_normalized_regressor_and_reported(estimator):
    y, tau, _ = regression(cond_target=1e4)
    est = estimator(names=["a", "b", "c", "d"]).fit(y, tau)
    d = est.diagnostics()
    if estimator is OrdinaryLeastSquares:
        assert d["condition_number"] == pytest.approx(normalized_cond(y), rel=1e-6)
    assert d["ill_conditioned"] and d["rank"] == 4 and not d["rank_deficient"]
    assert any("condition number" in w for w in est.warnings_)
    well = estimator(names=["a", "b", "c", "d"]).fit(*regression()[:2])
    assert not well.diagnostics()["ill_conditioned"] and well.warnings_ == []


@pytest.mark.parametrize("estimator", [OrdinaryLeastSquares, WeightedLeastSquares, HuberIRLS])
def test_rank_deficiency_and_ill_conditioning_beyond_the_limit_are_errors(estimator):
    y, tau, _ = regression()
    y[..., 2] = 0.0  # a parameter the data do not excite
    with pytest.raises(IllConditionedError, match=r"do not excite base parameter\(s\) \['c'\]"):
        estimator(names=["a", "b", "c", "d"]).fit(y, tau)
    y, tau, _ = regression(cond_target=1e9)
    with pytest.raises(IllConditionedError, match=r"ill-conditioned .*limit 1e\+07.*'a'"):
        estimator(names=["a", "b", "c", "d"]).fit(y, tau)


def test_irls_reports_its_iterations_and_non_convergence():
    y, tau, beta = regression(seed=3)
    tau[::17] += 5.0  # outliers: the reweighting has work to do
    est = HuberIRLS(max_iter=200, tol=1e-9).fit(y, tau)
    d = est.diagnostics()
    assert d["converged"] and 1 < d["iterations"] < 200
    assert np.max(np.abs(est.coef_ - beta)) < 0.05  # the outliers are down-weighted
    short = HuberIRLS(max_iter=1).fit(y, tau)
    assert short.diagnostics() | {"converged": False, "iterations": 1} == short.diagnostics()
    assert any("IRLS did not converge in 1 iterations" in w for w in short.warnings_)


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    d = tmp_path_factory.mktemp("honesty")
    run_ok("simulate", "-r", "planar2", "--out", d / "log.csv", "--duration", "4", "--tau-noise", "0.01")
    t = np.arange(300) * 0.01
    (d / "still.csv").write_text("t,q1,q2,tau1,tau2\n" + "".join(f"{x},0.3,0.2,1.0,0.5\n" for x in t))
    (d / "half.csv").write_text("t,q1,q2,tau1,tau2\n" + "".join(  # joint 2 held still
        f"{x},{np.sin(2 * x)},0.2,{np.cos(2 * x)},0.5\n" for x in t))
    return d


def test_irls_non_convergence_in_result_and_console(log, tmp_path):
    out = run_ok("identify", "-r", "planar2", "--data", log / "log.csv", "--out", tmp_path / "r.json",
                 "--estimator", "irls", "--irls-iterations", "1")
    d = json.loads((tmp_path / "r.json").read_text())["diagnostics"]
    assert d["converged"] is False and d["iterations"] == 1
    assert "NOT CONVERGED (1 iterations)" in out and "IRLS did not converge" in out


def test_sdp_status_in_result_and_console(log, tmp_path):
    out = run_ok("identify", "-r", "planar2", "--data", log / "log.csv", "--out", tmp_path / "pc.json",
                 "--estimator", "pc")
    d = json.loads((tmp_path / "pc.json").read_text())["diagnostics"]
    assert d["solver_status"] == "optimal" and d["converged"] and d["iterations"] >= 1
    assert "solver status optimal" in out


def test_sdp_inaccurate_or_failed_status_is_reported(log, monkeypatch):
    import dynid
    from dynid.identify.base import base_parameters
    from dynid.identify.model import ModelOptions
    from dynid.identify.physical import PhysicallyConsistent

    robot = dynid.load_robot("planar2")
    base = base_parameters(robot, ModelOptions())
    y, tau, _ = regression(seed=4, n=2, b=base.rank)
    solve = PhysicallyConsistent._solve_problem

    for status in ("optimal_inaccurate", "infeasible"):
        monkeypatch.setattr(PhysicallyConsistent, "_solve_problem",
                            lambda self, problem, cp, s=status: (solve(self, problem, cp), s)[1])
        est = PhysicallyConsistent(robot=robot, options=ModelOptions(), base=base)
        if status == "infeasible":
            with pytest.raises(IllConditionedError, match="solver status 'infeasible'"):
                est.fit(y, tau)
            continue
        d = est.fit(y, tau).diagnostics()
        assert d["solver_status"] == status and d["converged"] is False
        assert "solver status optimal_inaccurate" in est.warnings_


def test_pc_rank_deficiency_with_max_condition_inf_is_reported(log, tmp_path):
    """Without motion pc is refused; accepted explicitly, the result says it rests on the prior."""
    result = runner.invoke(app, ["identify", "-r", "planar2", "--data", str(log / "still.csv"), "--out",
                                 str(tmp_path / "x.json"), "--estimator", "pc"])
    assert result.exit_code == 2 and "do not excite" in result.output
    out = run_ok("identify", "-r", "planar2", "--data", log / "half.csv", "--out", tmp_path / "pc.json",
                 "--estimator", "pc", "--max-condition", "inf")
    saved = json.loads((tmp_path / "pc.json").read_text())
    d = saved["diagnostics"]  # joint 2 never moves: its friction and rotor inertia are not excited
    assert d["rank_deficient"] and d["rank"] < d["base_parameters"] and {"Fc2", "Ia2"} <= set(d["unexcited"])
    assert "RANK DEFICIENT" in out and any("rests on the prior" in w for w in saved["warnings"])
