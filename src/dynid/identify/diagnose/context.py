"""What every check of ``dynid diagnose`` looks at, computed once: a bounded piece of the log,
its motion differentiated from q alone (a logged dq or ddq column is one of the suspects, so
it is not trusted), the base regressor on at most ``MAX_ROWS`` interior samples and the
least-squares fit of the identification model to them. As in ``identify``, the base parameters
that joints held still leave undetermined (``identify.undetermined``, ``still_range``) keep
the description's values in that fit (std NaN), so no check judges a number fitted to noise."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from dynid.data.blocks import read_blocks
from dynid.data.columns import ColumnMapping, JointData
from dynid.data.preprocess import Preprocessing, edge_samples, lowpass, prepare, sample_rate
from dynid.data.segments import segment_edge_mask
from dynid.errors import DataError, IllConditionedError
from dynid.identify.base import BaseParameters, base_parameters, base_regressor
from dynid.identify.estimators import OrdinaryLeastSquares
from dynid.identify.model import ModelOptions
from dynid.identify.undetermined import STILL_RANGE, Undetermined, find_undetermined

BUDGET = 100_000  # raw rows read (the middle of a longer log)
MAX_ROWS = 12_000  # rows of the regressor the fits use (evenly spaced interior samples)


@dataclass
class LogFit:
    """raw: the cleaned log piece (logged columns as they are); ready: q filtered, dq and ddq
    from it, tau as logged; rows: (m,) indices into ready of the fitted samples; y (m, n, b)
    base regressor there; est: OLS fit (None, with ``problem``, when it cannot be fitted) with the
    ``found`` undetermined parameters held (``identify.undetermined``; None: not determined)."""

    robot: object
    options: ModelOptions
    base: BaseParameters
    prep: Preprocessing
    raw: JointData
    ready: JointData
    fs: float
    cutoff: float
    rows: np.ndarray
    y: np.ndarray
    est: OrdinaryLeastSquares | None
    problem: str = ""
    found: Undetermined | None = None
    from_result: bool = False  # options and prep are a result.json's (diagnose --params)

    @property
    def tau(self) -> np.ndarray:
        """(m, n) measured torques at the fitted rows."""
        return self.ready.tau[self.rows]

    def smooth(self, x: np.ndarray) -> np.ndarray:
        """x (N, ...) on ready's grid through the same low-pass as q."""
        return lowpass(x, self.fs, self.cutoff, self.prep.filter_order)


def fit_ols(y: np.ndarray, tau: np.ndarray, names,
            found: Undetermined | None = None) -> tuple[OrdinaryLeastSquares | None, str]:
    """OLS of all base parameters, or with ``found`` those held at their prior."""
    try:
        held = found.options() if found else {}
        return OrdinaryLeastSquares(names, max_condition=1e10, **held).fit(y, tau), ""
    except (IllConditionedError, np.linalg.LinAlgError) as exc:
        return None, str(exc)


def log_fit(robot, path, mapping: ColumnMapping = ColumnMapping(), nan: str = "drop",
            options: ModelOptions | None = None, prep: Preprocessing | None = None,
            still_range: float = STILL_RANGE) -> LogFit:
    """The shared context of the checks (module docstring). options default: Coulomb-viscous
    friction, rotor inertia and a torque offset per joint; prep default: low-pass
    min(10 Hz, fs / 10), central differences. Given options: those of a result.json (``from_result``)."""
    from_result = options is not None
    options = options or ModelOptions(offset=True)
    prep = prep or Preprocessing()
    raw = read_blocks(path, robot, mapping, nan, budget=BUDGET, count=1, prep=prep)
    if not raw or len(raw[0]) < 10:
        raise DataError(f"{path}: {sum(len(b) for b in raw)} usable rows; diagnose needs at least 10")
    raw = raw[0]
    if raw.tau is None:
        raise DataError(f"{path}: no torques (tau1..taun) or currents (i1..in, with --current-gain): diagnose "
                        "compares the measured torque with the model and needs them")
    fs = sample_rate(raw.t)
    if prep.lowpass_hz is None:
        prep = replace(prep, lowpass_hz=min(10.0, fs / 10.0))
    prep = replace(prep, decimate=1, min_velocity=0.0, tau_delay=0.0)  # the delay is measured, not applied
    motion_only = replace(raw, dq=None, ddq=None, notes=list(raw.notes))
    ready = prepare(motion_only, prep)
    fs = sample_rate(ready.t)
    interior = np.flatnonzero(segment_edge_mask(ready, edge_samples(prep, fs)))
    if interior.size < 10:
        raise DataError(f"{path}: {len(ready)} samples leave {interior.size} once the filter edges are trimmed; "
                        "diagnose needs a longer log")
    rows = interior[::max(1, -(-interior.size // MAX_ROWS))]
    base = base_parameters(robot, options)
    y = base_regressor(robot, ready.q[rows], ready.dq[rows], ready.ddq[rows], options, base)
    try:
        found = find_undetermined(robot, options, base, ready.q[rows].min(axis=0), ready.q[rows].max(axis=0),
                                  still_range)
    except IllConditionedError as exc:  # every joint still: nothing to fit
        return LogFit(robot, options, base, prep, raw, ready, fs, prep.cutoff(fs), rows, y, None, str(exc),
                      from_result=from_result)
    est, problem = fit_ols(y, ready.tau[rows], base.names, found)
    return LogFit(robot, options, base, prep, raw, ready, fs, prep.cutoff(fs), rows, y, est, problem, found,
                  from_result)


def refit(fit: LogFit, options: ModelOptions | None = None, negate: tuple[int, ...] = ()) -> tuple:
    """(OLS estimate or None, its base parameters) of the diagnosed rows with another model
    (``options``, e.g. with offsets) or with the torques of the 0-based joints ``negate``
    reversed: what a fix would give, to name the fix that removes a finding."""
    options = options or fit.options
    base = fit.base if options == fit.options else base_parameters(fit.robot, options)
    rows = fit.rows
    y = fit.y if base is fit.base else base_regressor(fit.robot, fit.ready.q[rows], fit.ready.dq[rows],
                                                      fit.ready.ddq[rows], options, base)
    tau = fit.tau.copy()
    tau[:, list(negate)] *= -1.0
    q = fit.ready.q[rows]
    try:
        found = find_undetermined(fit.robot, options, base, q.min(axis=0), q.max(axis=0), STILL_RANGE)
    except IllConditionedError:
        return None, base
    return fit_ols(y, tau, base.names, found)[0], base
