"""Identification with a friction that drifts from cold to warm (``identify.drift``, eq. D1).

    1. time mode: each joint's slow and fast time constants t1_j > t2_j, by variable projection
       on at most ``max_rows`` samples (``drift_constants.fit_joints``: the rigid body projected
       out, half of each log's rows from its first 10 minutes after the cold start, where the
       fast terms leave their trace), as ``dynid friction drift`` does;
    2. with them fixed the model is linear: the static model's base regressor Y_b (N, n, b) and
       each joint's k m drift columns F_jk phi_jm form one least-squares problem over every
       sample. Its per-joint normal equations are summed block by block (``BLOCK`` samples: no
       (N, n, b) array is held), joint j's rows filling the b base parameters and its own
       block of drift coefficients (``NormalEquations`` positions), and the project's
       estimators solve them: OLS, WLS, or PC with the drift coefficients unconstrained.

A joint held still (no friction column on its fitted rows) gets no drift: its coefficients are
fixed at 0 (reported NaN, with the reason), beside the base parameters ``undetermined`` holds.
The fit's figures (``fit.rmsd``...) are those of the whole model, drift included.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from dynid.data.columns import JointData
from dynid.data.preprocess import Preprocessing, edge_samples, prepared_rate
from dynid.data.segments import segment_edge_mask
from dynid.errors import DataError
from dynid.identify.base import BaseParameters
from dynid.identify.drift import LABELS, FrictionDrift, LogCovariate, check_mode, log_covariate
from dynid.identify.drift_constants import MIN_TIME_CONSTANT, fit_joints, sample_rows
from dynid.identify.model import FRICTION_MODELS, ModelOptions, log_regressor
from dynid.identify.normal_equations import NormalEquations
from dynid.identify.pipeline import row_mask
from dynid.identify.threads import single_blas_thread
from dynid.identify.undetermined import STILL_RANGE, Undetermined

BLOCK = 8192  # samples per regressor evaluation
TEMPERATURE_REFERENCE = 95.0  # percentile of the training temperatures: the warm end of a warm-up


@dataclass
class DriftFit:
    """estimator: fitted on the b base parameters then the n k m drift coefficients (coef_,
    std_, cov_ over all); ne: the normal equations of that whole model; drift: the drift part
    (its ``options``: the model fitted); load_fit: friction ``load-dependent``, the fixed point
    of its load torque with the drift ({"iterations", "change"}, ``load_friction``); uncertainty:
    result.json "uncertainty", how the std were made (``correlated_std``); held: the parameters of
    the whole model held at their prior (the undetermined base parameters, the drift of joints
    that never moved), whether the estimator holds them itself or not (pc)."""

    estimator: object
    ne: NormalEquations
    drift: FrictionDrift
    load_fit: dict | None = None
    uncertainty: dict | None = None
    held: Undetermined | None = None

    def result_entry(self, timing: list[LogCovariate]) -> dict:
        """result.json's "friction_drift" (docs/formats.md): the drift, how each training log was
        timed ("sources") and the covariance of all b + n k m parameters (prediction bands)."""
        out = self.drift.to_dict()
        out["sources"] = [t.to_dict() for t in timing]
        if self.load_fit is not None:
            out["load_fit"] = dict(self.load_fit)
        cov = np.asarray(self.estimator.cov_, dtype=float)
        if np.all(np.isfinite(cov)):
            out["covariance"] = [[float(x) for x in row] for row in cov]
        return out


def fit_rows(readies: list[JointData], prep: Preprocessing) -> list[np.ndarray]:
    """Per log, (N, n) rows used in the fit (edges of every segment and slow samples left out)."""
    masks = []
    for ready in readies:
        keep = segment_edge_mask(ready, edge_samples(prep, prepared_rate(ready)))
        mask = row_mask(ready.dq, keep, prep)
        masks.append(np.repeat(keep[:, None], ready.n, axis=1) if mask is None else mask)
    return masks


def search_time_constants(robot, readies: list[JointData], times: list[np.ndarray], masks: list[np.ndarray],
                          options: ModelOptions, max_rows: int = 8_000) -> tuple[np.ndarray, list]:
    """((n, 2) t1_j > t2_j [s], NaN for a joint held still; notes): step 1 of the module docstring."""
    share = max(200, max_rows // len(readies))
    parts, lo, hi = [], np.inf, 0.0
    for ready, s, mask in zip(readies, times, masks):
        finite = np.isfinite(s)
        if finite.sum() < 3:
            continue
        rows = np.flatnonzero(finite)[sample_rows(s[finite], share)]
        parts.append((s[rows], ready.q[rows], ready.dq[rows], ready.ddq[rows], ready.tau[rows], mask[rows]))
        steps = np.diff(s[finite])
        lo = min(lo, max(MIN_TIME_CONSTANT, 2.0 * float(np.min(steps[steps > 0])) if np.any(steps > 0) else 1.0))
        hi = max(hi, 3.0 * float(s[finite][-1] - s[finite][0]))
    if not parts or hi <= lo:
        raise DataError("--friction-drift time: no log spans any operating time (every log is 'warm' or too short); "
                        "the drift is fitted from logs that start cold or record a since_cold column")
    stacked = [np.concatenate(arrays) for arrays in zip(*parts)]
    fits = fit_joints(robot, *stacked[:5], options, mask=stacked[5], bounds=(lo, hi))
    tc = np.full((robot.n, 2), np.nan)
    notes = []
    for j, fit in enumerate(fits):
        if fit is None:
            notes.append(f"joint {j + 1} does not move in the fitted samples: no friction drift")
            continue
        tc[j] = fit.t1, fit.t2
        for note in fit.notes:
            notes.append(note + ("; the fitted drift holds within the logs, warm predictions beyond them "
                                 "extrapolate it" if "t1" in note else ""))
    return tc, notes


def fit_drifting(robot, readies: list[JointData], covariates: list[np.ndarray], options: ModelOptions,
                 base: BaseParameters, prep: Preprocessing, make, mode: str, found: Undetermined | None = None,
                 max_rows: int = 8_000, pc: bool = False, masks: list[np.ndarray] | None = None,
                 searched: tuple | None = None) -> DriftFit:
    """Identify the static model and the drift (D1) of ``mode`` together (module docstring).

    readies: prepared logs; covariates: per log its operating times (N,) [s] (time) or
    temperatures (N, n) (temperature) at the prepared samples; make(): a fresh estimator of
    the b + n k m parameters (``fit_normal_equations``); found: base parameters the logs leave
    undetermined (held at the description's values); ``make(names, fixed=, prior=)``: a fresh
    estimator of the b + n k m parameters with those options; pc: ``make`` is physically consistent;
    masks: per log the (N, n) rows to fit (default ``fit_rows``); searched: time mode, the (time
    constants (n, 2), notes) of an earlier search (step 1) to keep."""
    check_mode(mode, options, robot)
    n, k, m = robot.n, len(FRICTION_MODELS[options.friction]), len(LABELS[mode])
    if any(ready.tau is None for ready in readies):
        raise DataError("no torques (tau1..taun) or currents (i1..in) to identify from")
    masks = fit_rows(readies, prep) if masks is None else masks
    tc, tref, notes = None, None, []
    if mode == "time":
        tc, notes = (searched[0].copy(), list(searched[1])) if searched is not None else \
            search_time_constants(robot, readies, covariates, masks, options, max_rows)
    else:
        used = np.concatenate([c[mask.any(axis=1)] for c, mask in zip(covariates, masks)])
        tref = np.percentile(used, TEMPERATURE_REFERENCE, axis=0)
    nan = np.full((n, k, m), np.nan)
    shape = FrictionDrift(mode, options, np.zeros((n, k, m)), nan, tc, tref)
    b, d = base.rank, n * k * m
    positions = [np.concatenate([np.arange(b), b + j * k * m + np.arange(k * m)]) for j in range(n)]
    ne = NormalEquations(n, b + d, columns=[np.arange(b + k * m)] * n, positions=positions)
    with single_blas_thread():
        for ready, covariate, mask in zip(readies, covariates, masks):
            for s in range(0, len(ready), BLOCK):  # blocks of samples
                sl = slice(s, s + BLOCK)
                y = log_regressor(robot, ready, sl, options)
                load = shape.load(robot, ready.q[sl], ready.dq[sl], ready.ddq[sl])
                w = np.concatenate([y[..., base.independent], shape.columns(ready.dq[sl], covariate[sl], load)], axis=2)
                ne.add(w, ready.tau[sl], mask[sl])
    still = ~np.isfinite(tc[:, 0]) if tc is not None else np.zeros(n, dtype=bool)
    column_norm = np.array([np.diag(ne.A[j])[b + j * k * m:b + (j + 1) * k * m].max() for j in range(n)])
    still |= ~(column_norm > 0)
    fixed = [b + j * k * m + c for j in np.flatnonzero(still) for c in range(k * m)]
    names = list(base.names) + shape.names()
    if found is None:
        found = Undetermined([], np.zeros(0), np.zeros(n), np.zeros(0, dtype=np.int64), np.zeros(b))
    held = replace(found, index=np.union1d(found.index, fixed).astype(np.int64),
                   prior=np.concatenate([found.prior, np.zeros(d)]))
    est = (make(names) if pc else make(names, fixed=held.index, prior=held.prior)).fit_normal_equations(ne)
    coef, std = est.coef_[b:].reshape(n, k, m).copy(), est.std_[b:].reshape(n, k, m).copy()
    coef[still], std[still] = np.nan, np.nan
    if tc is not None:
        tc[still] = np.nan
    drift = FrictionDrift(mode, options, coef, std, tc, tref, notes)
    return DriftFit(est, ne, drift, held=held)


def training_covariates(robot, readies: list[JointData], mapping, mode: str, since_cold: float | None = None,
                        sources: list | None = None) -> tuple[list[LogCovariate], list[np.ndarray]]:
    """(how each training log is timed, its covariate at its prepared samples): ``drift.log_covariate``
    with ``since_cold`` given, else the log's ``since_cold`` column, else it starts cold. sources:
    the logs the readies were read from (default their paths; an in-memory log is given here)."""
    sources = [ready.source for ready in readies] if sources is None else sources
    timings = [log_covariate(mode, source, mapping, robot.n, since_cold, default=0.0) for source in sources]
    return timings, [timing.at(ready.t) for timing, ready in zip(timings, readies)]


def identify_drifting(robot, readies: list[JointData], covariates: list[np.ndarray], options: ModelOptions,
                      base: BaseParameters, prep: Preprocessing, make, mode: str, still_range: float = STILL_RANGE,
                      max_rows: int = 8_000) -> tuple[DriftFit, list, Undetermined]:
    """``fit_drifting`` with what ``dynid identify`` reports beside it: (the fit, per log the
    samples it gave (``pipeline.SourceCount``), the base parameters the logs leave undetermined
    (joints held still over the fitted samples))."""
    from dynid.identify.pipeline import source_counts
    from dynid.identify.undetermined import find_undetermined

    masks = fit_rows(readies, prep)
    counts = [source_counts(ready, mask) for ready, mask in zip(readies, masks)]
    used = np.concatenate([ready.q[mask.any(axis=1)] for ready, mask in zip(readies, masks)])
    if not len(used):
        raise DataError("no samples left after preprocessing")
    found = find_undetermined(robot, options, base, used.min(axis=0), used.max(axis=0), still_range)
    fit = fit_drifting(robot, readies, covariates, options, base, prep, make, mode, found, max_rows, masks=masks)
    if options.friction != "load-dependent":
        correlated_std(robot, readies, covariates, masks, fit, base)
        return fit, counts, found
    # the load torque's fixed point (identify.load_friction, L2) with the drift, from the static one; the time
    # constants stay those searched at the static fixed point's load torque (a change of the load torque by d of
    # the RMS torque moves the friction columns by Fl d: far below what the time constants resolve)
    from dynid.identify.load_friction import (
        TOLERANCE, fixed_point_std, inertial_base_columns, refit_to_fixed_point, slope_gram,
    )

    first = (fit.drift.time_constants, fit.drift.notes) if mode == "time" else None
    refit = lambda opts: fit if opts is options else fit_drifting(  # noqa: E731
        robot, readies, covariates, opts, base, prep, make, mode, found, max_rows, masks=masks, searched=first)
    fit, options, info = refit_to_fixed_point(robot, options, base, refit)
    fit.load_fit = info
    inertial = np.concatenate([inertial_base_columns(robot, options, base), np.zeros(fit.ne.b - base.rank, bool)])
    correlated_std(robot, readies, covariates, masks, fit, base)  # the sandwich first, then through the fixed point
    gram = slope_gram(drifting_parts(robot, readies, covariates, masks, fit, base), robot.n, fit.ne.b)
    fixed_point_std(fit.estimator, fit.ne, gram, inertial)  # the std of the fixed point (L3)
    fit.drift.std = drift_std(fit, base.rank)
    if info["change"] >= TOLERANCE:
        fit.drift.notes.append(f"load-dependent friction: the load torque still moved by {info['change']:.2g} of "
                               f"the RMS torque after {info['iterations']} fixed-point iterations with the drift "
                               "(not converged)")
    return fit, counts, found


def correlated_std(robot, readies: list[JointData], covariates: list[np.ndarray], masks: list[np.ndarray],
                   fit: DriftFit, base: BaseParameters) -> None:
    """Give ``fit``'s estimator (ols or wls) the std of the residuals' correlation in time
    (``identify.residual_correlation`` R1-R3), measured on evenly spread windows of the logs
    (``residual_correlation.windowed_uncertainty``) with the drift model's rows [Y_b | drift
    columns] (D1); ``fit.uncertainty`` says which covariance the std are, ``fit.drift.std`` follows."""
    from dynid.identify.residual_correlation import windowed_uncertainty

    est = fit.estimator
    parts = lambda windows: [(a, readies[i].tau[sl] - a @ est.coef_, mask)  # noqa: E731
                             for i, sl, a, _, mask in drifting_rows(robot, fit, base, readies, covariates, masks,
                                                                    windows)]
    fit.uncertainty = windowed_uncertainty(est, fit.ne, readies, parts)
    fit.drift.std = drift_std(fit, base.rank)


def drift_std(fit: DriftFit, b: int) -> np.ndarray:
    """(n, k, m) the drift coefficients' std of ``fit``'s estimator (NaN where the drift has none)."""
    std = np.asarray(fit.estimator.std_[b:], dtype=float).reshape(fit.drift.std.shape).copy()
    std[~np.isfinite(fit.drift.std)] = np.nan
    return std


def drifting_rows(robot, fit: DriftFit, base: BaseParameters, readies: list[JointData], covariates: list[np.ndarray],
                  masks: list[np.ndarray], rows=None):
    """(log index, slice, the rows [Y_b | drift columns] (N, n, b + n k m) of the whole model (D1),
    their load torque (None unless load-dependent), mask (N, n)) as ``fit`` formed them, block by
    block (``load_friction.fitted_rows``; ``rows``: these [(log index, slice)] instead)."""
    from dynid.identify.load_friction import fitted_rows

    drift = fit.drift
    for i, sl, q, dq, ddq, yb, mask in fitted_rows(robot, drift.options, base, readies, masks, BLOCK, rows):
        load = drift.load(robot, q, dq, ddq)
        yield i, sl, np.concatenate([yb, drift.place(drift.columns(dq, covariates[i][sl], load))], axis=2), load, mask


def drifting_parts(robot, readies: list[JointData], covariates: list[np.ndarray], masks: list[np.ndarray],
                   fit: DriftFit, base: BaseParameters):
    """``load_friction.slope_gram``'s parts of a load-dependent model with a drift (D1) at its fit:
    the regressor rows [Y_b | drift columns] and the slope of the friction in the load torque, whose
    Fl drifts too (Fl_j + sum_m d_Fl,jm phi_jm at each sample)."""
    from dynid.identify.load_friction import fitted_fl, load_slope

    drift, options = fit.drift, fit.drift.options
    fl = fitted_fl(base, fit.estimator.coef_[:base.rank], robot.n)
    d = np.nan_to_num(drift.coefficients[:, FRICTION_MODELS[options.friction].index("Fl"), :])  # (n, m)
    for i, sl, a, load, mask in drifting_rows(robot, fit, base, readies, covariates, masks):
        fl_now = fl + np.einsum("tjm,jm->tj", drift.basis(covariates[i][sl]), d)  # Fl drifts too
        yield a, load_slope(options, fl_now, readies[i].dq[sl], load), mask


def without_drift(robot, readies: list[JointData], covariates: list[np.ndarray],
                  drift: FrictionDrift) -> list[JointData]:
    """The logs with the fitted drift's friction torque taken off their torques: what a static
    model of the warm robot sees. ``identify --per cycle`` with a drift fits each cycle to these,
    so a cycle's parameters no longer carry the friction it had then (thesis Table 5.4)."""
    out = []
    for ready, covariate in zip(readies, covariates):
        warm = ready.select(slice(None))
        load = drift.load(robot, ready.q, ready.dq, ready.ddq)
        warm.tau = ready.tau - drift.torque(ready.dq, covariate, load)
        out.append(warm)
    return out
