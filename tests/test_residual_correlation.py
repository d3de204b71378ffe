"""Standard deviations that hold for filtered, heteroscedastic residuals (identify/residual_correlation.py).

A logged torque's noise is low-pass filtered (a drive's current filter, the --lowpass of
parallel filtering) and differs from joint to joint. Khalil-Gautier's s^2 (W^T W)^-1 then
reports standard deviations several times smaller than the spread of the estimates over noise
draws; the per-joint sandwich whose scores carry the residuals' correlation (R1-R3) reports the
spread. Each draw is one fit of fixed rows (no preprocessing), so the draws are cheap."""

from __future__ import annotations

import numpy as np
import scipy.signal

import dynid
from dynid.data.columns import JointData
from dynid.identify.estimators import HuberIRLS, OrdinaryLeastSquares, WeightedLeastSquares
from dynid.identify.identification import Identification
from dynid.identify.normal_equations import NormalEquations
from dynid.identify.residual_correlation import (
    PIECE_ROWS, _autocovariance, correlated_uncertainty, log_windows, residual_correlation, spread_windows, window_of,
)
from dynid.simulate import random_multisine

from test_load_friction import base_rows

RATE, SECONDS, DRAWS = 250.0, 40.0, 40
NOISE = np.array([0.05, 0.005])  # N m: the wrist ten times quieter than the shoulder


def _rows():
    robot = dynid.load_robot("planar2")
    t = np.arange(0.0, SECONDS, 1.0 / RATE)
    q, dq, ddq = random_multisine(robot, seed=7, f0=0.1, harmonics=6).sample(t)
    base, yb, _ = base_rows(robot, q, dq, ddq)
    beta = np.linalg.lstsq(yb.reshape(-1, yb.shape[2]), dynid.inverse_dynamics(robot, q, dq, ddq).ravel(),
                           rcond=None)[0]
    return yb, yb @ beta


def _noise(rng, shape, corner: float | None) -> np.ndarray:
    """White, or a 2nd-order zero-phase low-pass of white noise (its middle: stationary, no filter
    edges), scaled to the standard deviation NOISE."""
    if corner is None:
        return rng.normal(size=shape) * NOISE
    pad = int(20 * RATE / corner)
    e = scipy.signal.sosfiltfilt(scipy.signal.butter(2, corner, fs=RATE, output="sos"),
                                 rng.normal(size=(shape[0] + 2 * pad, shape[1])), axis=0)
    return e[pad:pad + shape[0]] / e.std(axis=0) * NOISE


def _spread_over_std(kind, corner):
    """(spread / mean white std, spread / mean correlated std) per parameter over DRAWS draws."""
    yb, tau0 = _rows()
    keep = np.ones(tau0.shape, dtype=bool)
    rng = np.random.default_rng(3)
    values, white, correlated = [], [], []
    for _ in range(DRAWS):
        tau = tau0 + _noise(rng, tau0.shape, corner)
        ne = NormalEquations(*yb.shape[1:])
        ne.add(yb, tau)
        est = kind().fit_normal_equations(ne)
        values.append(est.coef_)
        white.append(est.std_.copy())
        measured = residual_correlation([(yb, tau - yb @ est.coef_, keep)])
        correlated.append(est.with_correlated_residuals(ne, measured.scores(ne, est.coef_)).std_)
    spread = np.std(values, axis=0, ddof=1)
    return spread / np.mean(white, axis=0), spread / np.mean(correlated, axis=0)


def test_filtered_noise_std_is_the_spread_where_the_white_noise_std_is_several_times_too_small():
    """Noise filtered at 5 Hz (about 25 samples per independent one at 250 Hz), joints 10x apart:
    over 40 draws the correlated std is the spread of every parameter within 0.7-1.45 and their
    median within 0.9-1.25 (a 40-draw spread scatters by 11 %; against the exact covariance of
    the filtered noise the residuals' std are 0-15 % low: the fit absorbs some of the noise),
    ols and wls; Khalil-Gautier's is several times too small."""
    for kind in (OrdinaryLeastSquares, WeightedLeastSquares):
        to_white, to_correlated = _spread_over_std(kind, 5.0)
        assert np.all((to_correlated > 0.7) & (to_correlated < 1.45)), (kind.name, np.round(to_correlated, 2))
        assert 0.9 < np.median(to_correlated) < 1.25, (kind.name, np.round(to_correlated, 2))
        assert np.median(to_white) > 2.5, (kind.name, np.round(to_white, 2))


def test_white_noise_keeps_the_white_noise_std_of_wls():
    """White noise: wls's std stay Khalil-Gautier's within 15 % (the inflation measured near 1,
    floored at 1), and both match the spread (0.6-1.45: a 40-draw spread of 11 parameters); ols's
    pooled std is too large for the quiet joint's parameters (spread below half of it), its
    per-joint sandwich is not."""
    to_white, to_correlated = _spread_over_std(WeightedLeastSquares, None)
    assert np.all((to_correlated > 0.6) & (to_correlated < 1.45)), np.round(to_correlated, 2)
    assert np.all(np.abs(to_correlated / to_white - 1.0) < 0.15), np.round(to_correlated / to_white, 2)
    ols_white, ols_correlated = _spread_over_std(OrdinaryLeastSquares, None)
    assert np.all((ols_correlated > 0.6) & (ols_correlated < 1.45)), np.round(ols_correlated, 2)
    assert np.min(ols_white) < 0.5, np.round(ols_white, 2)


def test_irls_std_at_its_final_weights_is_the_spread_of_filtered_noise():
    """irls, fitted in memory: its std (the sandwich at its final weights, ``Identification``'s
    in-memory path over evenly spread windows of the rows) is the spread of the estimates over
    draws of noise filtered at 5 Hz (within 0.7-1.45, median 0.85-1.25), where its white-noise
    s^2 (W^T D W)^-1 is several times too small; a gap in the rows (``--cycles``) is no lag."""
    yb, tau0 = _rows()
    rng = np.random.default_rng(3)
    t = np.arange(len(tau0)) / RATE
    t[len(t) // 2:] += 10.0  # the rows of two cycles with one left out between
    ready = JointData(t, np.zeros_like(tau0))
    values, white, correlated = [], [], []
    for _ in range(DRAWS // 2):
        tau = tau0 + _noise(rng, tau0.shape, 5.0)
        est = HuberIRLS().fit(yb, tau)
        values.append(est.coef_)
        white.append(est.std_.copy())
        ne = NormalEquations(*yb.shape[1:])
        ne.add(yb, tau)
        assert Identification._in_memory_std(est, ne, [ready], yb, tau, None)["covariance"] == "correlated"
        correlated.append(est.std_)
    spread = np.std(values, axis=0, ddof=1)
    to_correlated, to_white = spread / np.mean(correlated, axis=0), spread / np.mean(white, axis=0)
    assert np.all((to_correlated > 0.6) & (to_correlated < 1.6)), np.round(to_correlated, 2)
    assert 0.8 < np.median(to_correlated) < 1.3, np.round(to_correlated, 2)
    assert np.median(to_white) > 2.5, np.round(to_white, 2)


def test_many_short_cycles_are_measured_on_the_rows_of_a_long_log_and_their_std_is_the_spread():
    """A log of many short runs (cycles of 0.5 s, every other one left out) has its residuals measured
    on as many rows as one long log (the windows go on over a run's end and are cut there: no lag
    spans two runs), so its std is the spread of the estimates over draws of noise filtered at 5 Hz
    (40 runs of 125 rows at 250 Hz, ~25 samples per independent one; 2000 of the 5000 rows measured:
    median within 0.8-1.25, all within 0.6-1.6). Was: each window within one run, 4 runs of 125 rows
    measured, the std too small (median 1.45, up to 2.85)."""
    lengths = [500] * 60  # 30 s of 0.5 s cycles at 1 kHz
    windows = spread_windows(lengths)
    assert sum(w.stop - w.start for _, w in windows) == PIECE_ROWS  # was 2000 of 30000 rows
    assert all(0 <= w.start < w.stop <= lengths[k] for k, w in windows) and len({k for k, _ in windows}) > 40
    t = np.concatenate([np.arange(k * 1000, k * 1000 + 500) for k in range(4)]) / 1000.0  # 4 cycles, 3 left out
    assert log_windows([JointData(t, np.zeros((t.size, 1)))], 800, 2) == \
        [(0, slice(300, 500)), (0, slice(500, 700)), (0, slice(1300, 1500)), (0, slice(1500, 1700))]  # two windows
    # of 400 rows of the log's 2000, each cut where its cycle ends (rows 500, 1500: a time gap)
    yb, tau0 = _rows()
    run = 125
    rows = np.concatenate([np.arange(s, s + run) for s in range(0, len(tau0), 2 * run)])
    y, starts = yb[rows], np.arange(0, rows.size, run)
    pieces = [slice(starts[k] + w.start, starts[k] + w.stop) for k, w in spread_windows([run] * starts.size, 2000)]
    assert sum(s.stop - s.start for s in pieces) == 2000
    keep = np.ones((rows.size, 2), dtype=bool)
    rng = np.random.default_rng(3)
    values, correlated = [], []
    for _ in range(DRAWS):
        tau = (tau0 + _noise(rng, tau0.shape, 5.0))[rows]
        ne = NormalEquations(*y.shape[1:])
        ne.add(y, tau)
        est = OrdinaryLeastSquares().fit_normal_equations(ne)
        values.append(est.coef_)
        parts = [(y[s], tau[s] - y[s] @ est.coef_, keep[s]) for s in pieces]
        correlated.append(est.with_correlated_residuals(ne, residual_correlation(parts).scores(ne, est.coef_)).std_)
    to_correlated = np.std(values, axis=0, ddof=1) / np.mean(correlated, axis=0)
    assert 0.8 < np.median(to_correlated) < 1.25, np.round(to_correlated, 2)
    assert np.all((to_correlated > 0.6) & (to_correlated < 1.6)), np.round(to_correlated, 2)


def test_what_cannot_be_measured_keeps_the_white_std_and_says_why():
    """An estimator without per-joint weights that is not irls (pc regularized toward a prior)
    keeps its white-noise std in memory too (was: taken for irls, an AttributeError), and rows
    whose runs are all too short to hold a lag (a log of a few samples per cycle) give the white
    std with the reason, not an error."""
    yb, tau0 = _rows()
    tau = tau0 + _noise(np.random.default_rng(1), tau0.shape, None)
    est = OrdinaryLeastSquares().fit(yb, tau)
    ne = NormalEquations(*yb.shape[1:])
    ne.add(yb, tau)
    prior_pulled = type("Prior", (), {"name": "pc", "joint_weights": lambda self: None})()
    entry = Identification._in_memory_std(prior_pulled, ne, [JointData(np.arange(len(tau)) / RATE, tau)], yb, tau,
                                          None)
    assert entry["covariance"] == "white" and "estimator pc" in entry["why"]
    white = est.std_.copy()
    short = [(yb[k:k + 8], tau[k:k + 8] - yb[k:k + 8] @ est.coef_, np.ones((8, 2), dtype=bool)) for k in (0, 100)]
    entry = correlated_uncertainty(est, ne, short)
    assert entry["covariance"] == "white" and "long enough" in entry["why"]
    np.testing.assert_array_equal(est.std_, white)


def test_the_window_counts_the_samples_of_one_independent_value():
    """(R3) on an AR(1) series x_t = a x_{t-1} + e_t: tau = (1 + a) / (1 - a) (19 for a = 0.9)
    within 10 %; white noise: about 1."""
    rng = np.random.default_rng(0)
    e = rng.normal(size=200_000)
    x = scipy.signal.lfilter([1.0], [1.0, -0.9], e)
    for series, tau_true in ((x, 19.0), (e, 1.0)):
        acov = _autocovariance(series, 2000)
        tau, window = window_of(acov / acov[0])
        assert abs(tau / tau_true - 1.0) < 0.1, tau
        assert window >= 5 * tau


def test_wls_weights_are_iterated_until_they_are_the_residuals_own():
    """Gautier's weights 1 / sigma_j^2 at convergence are those of the fit's own residuals: the
    two-step fit (weights from the unweighted fit) leaves a quiet joint whose unweighted residual
    is mostly the loud joint's error with a weight far from its own (checked: more than 10 %)."""
    yb, tau0 = _rows()
    tau = tau0 + np.random.default_rng(1).normal(size=tau0.shape) * np.array([0.5, 0.0005])
    ne = NormalEquations(*yb.shape[1:])
    ne.add(yb, tau)
    est = WeightedLeastSquares().fit_normal_equations(ne)
    own = ne.residual_ss(est.coef_) / (ne.rows - ne.active_counts())
    assert est.converged_ and est.n_iter_ > 1
    assert np.allclose(est.sigma2_, own, rtol=5e-3), (est.sigma2_, own)
    first = OrdinaryLeastSquares().fit_normal_equations(ne)
    two_step = ne.residual_ss(first.coef_) / (ne.rows - ne.active_counts())
    assert np.max(np.abs(two_step / own - 1.0)) > 0.1, two_step / own


def test_identify_reports_which_covariance_its_std_are():
    """dynid.Identification with the defaults (ols, --lowpass auto, --rest auto) on a log whose
    torque noise is filtered at 5 Hz: result.json "uncertainty" says the std are the correlated
    residuals' (about fs / (2 x 5 Hz) = 25 samples per independent one measured on the loud joint;
    more on the quiet one, whose residual is mostly the low-pass filter's slow error) and they are
    several times the white-noise ones (the draws above: that is the spread); so do irls and
    ``cycles``, fitted in memory; pc says where a constraint is active."""
    robot = dynid.load_robot("planar2")
    t = np.arange(0.0, SECONDS, 1.0 / RATE)
    q, dq, ddq = random_multisine(robot, seed=7, f0=0.1, harmonics=6).sample(t)
    tau = dynid.inverse_dynamics(robot, q, dq, ddq) + _noise(np.random.default_rng(0), q.shape, 5.0)
    result = dynid.Identification(robot).fit(t, q, tau)
    uncertainty = result.document["uncertainty"]
    assert uncertainty["covariance"] == "correlated"
    loud, quiet = uncertainty["correlated_samples"]  # the quiet joint's residual: the filter's slow errors too
    assert 10 < loud < 60 and quiet > 10, uncertainty
    assert uncertainty["std_over_white"]["median"] > 2.5, uncertainty
    cov = np.array(result.document["covariance"])
    assert np.allclose(np.sqrt(np.diag(cov)), result.std, rtol=1e-9)
    # pc where Fc1 >= 0 holds it (a torque with a Coulomb term of the wrong sign): its std is null,
    # the constraint is named, the parameters the constraint does not hold keep the sandwich's std
    wrong = tau - np.array([0.05, 0.0]) * np.sign(dq)
    pc = dynid.Identification(robot, estimator="pc", lowpass=None).fit(t, q, wrong)
    constraints = pc.document["uncertainty"]["constraints"]
    assert pc.document["uncertainty"]["covariance"] == "correlated", pc.document["uncertainty"]
    assert constraints["active"] and "Fc1 >= 0" in constraints["on_boundary"] and "Fc1" in constraints["parameters"]
    std = dict(zip(pc.names, pc.std))
    assert all(np.isnan(std[name]) for name in constraints["parameters"]) and np.isfinite(std["Izz2"]), std
    cycle = {"cycle": 1 + (t // 10.0).astype(int)}
    for options in ({"estimator": "irls"}, {"cycles": "1,3-4"}):
        uncertainty = dynid.Identification(robot, **options).fit(t, q, tau, columns=cycle).document["uncertainty"]
        assert uncertainty["covariance"] == "correlated", (options, uncertainty)
        assert uncertainty["std_over_white"]["median"] > 2.5, (options, uncertainty)
