"""Eq. 5.4 per joint from every sample of a log: fast time constants become identifiable.

The thesis fits tau_f(t) = a + b e^(-t/t1) + c e^(-t/t2) (eq. 5.4, Table 5.6) to one friction
value per cycle (the 60 % level). With 5-minute cycles a time constant well below the cycle
(Table 5.6: t2 = 0.54, 0.47, 0.31 min for joints 3, 5, 6) leaves a single trace, the excess of
the first point: c and t2 cannot be told apart from one number, and a per-cycle fit returns
whatever its bounds allow (``friction.drift`` keeps t2 >= spacing / 4 and says so).

Every sample carries the friction of its own instant, and the first minutes of a log (the
excitation stage of cycle 1, the first friction levels) are dense in time. Per joint j, with
the friction coefficients drifting as eq. 5.4 (the simulator's ``FrictionDrift``),

    tau_j = Z_j theta + sum_k F_jk(dq_j) (f_jk + d1_jk e^(-t/t1_j) + d2_jk e^(-t/t2_j))

where Z_j is joint j's row of the rigid-body regressor (plus I_a ddq_j and an offset when the
model has them) and F_jk the friction columns (``identify.model.friction_columns``). theta is
a nuisance here: its columns are projected out of joint j's equation, so each joint is fitted
alone, and for fixed (t1_j, t2_j) the rest is linear (variable projection). A log grid of
t1 > t2 pairs gives the start, Nelder-Mead over (log t1, log t2) polishes it. The covariance
s^2 (J^T J)^-1 uses the full Jacobian (linear columns and d/dt1, d/dt2), so the intervals
include the time constants' uncertainty.

At a constant speed v the friction is eq. 5.4 with a = F(v) f, b = F(v) d1, c = F(v) d2 and
the joint's t1, t2 (``friction.drift_joint.table``: the thesis' Table 5.6 layout, t in
minutes). A time constant is reported as undetermined (with the reason) when it sits on its
search bound or its standard deviation exceeds its value. ``fit_log`` fits one log from its
first sample (``dynid friction drift``); ``fit_joints`` any samples with their operating times
(the drift-aware identification, ``identify.drift_fit``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dynid.data.columns import JointData
from dynid.errors import DataError
from dynid.identify.threads import single_blas_thread
from dynid.identify.model import FRICTION_MODELS, ModelOptions, friction_columns, load_torque

MIN_TIME_CONSTANT = 1.0  # s: faster drifts are not friction warming up


@dataclass
class JointDrift:
    """Fit of one joint: friction coefficients f (k,), d1 (k,), d2 (k,); t1, t2 [s]; cov of
    (f, d1, d2, t1, t2) (3k + 2); rmse [N m]; notes on undetermined constants."""

    joint: int
    f: np.ndarray
    d1: np.ndarray
    d2: np.ndarray
    t1: float
    t2: float
    cov: np.ndarray
    rmse: float
    rows: int
    determined: dict = field(default_factory=lambda: {"t1": True, "t2": True})
    notes: list = field(default_factory=list)

    def level(self, dq: float, options: ModelOptions) -> dict:
        """Eq. 5.4 at constant speed dq: {a, b, t1, c, t2} [N m, s] and their std."""
        speed = np.array([[abs(dq)]])
        load = np.zeros_like(speed) if options.friction == "load-dependent" else None  # at zero load: Fc
        F = friction_columns(speed, options, load)[0, 0]  # (k,)
        k = F.size
        g = np.zeros((3, 3 * k + 2))
        for m in range(3):
            g[m, m * k:(m + 1) * k] = F
        values = np.array([F @ self.f, F @ self.d1, F @ self.d2])
        var = np.einsum("ij,jk,ik->i", g, self.cov, g)
        std_t = np.sqrt(np.maximum(np.diag(self.cov)[-2:], 0.0))
        return {"a": float(values[0]), "b": float(values[1]), "t1": self.t1, "c": float(values[2]), "t2": self.t2,
                "std": {"a": float(np.sqrt(max(var[0], 0))), "b": float(np.sqrt(max(var[1], 0))),
                        "t1": float(std_t[0]), "c": float(np.sqrt(max(var[2], 0))), "t2": float(std_t[1])}}


def _nuisance_basis(z: np.ndarray, tol: float = 1e-10) -> np.ndarray:
    """Orthonormal basis (N, r) of the column space of z (N, p), zero columns and dependencies dropped."""
    norms = np.linalg.norm(z, axis=0)
    keep = norms > tol * max(float(norms.max()), 1e-300)
    if not keep.any():
        return np.zeros((z.shape[0], 0))
    u, s, _ = np.linalg.svd(z[:, keep] / norms[keep], full_matrices=False)
    return u[:, s > tol * s[0]]


class _JointProblem:
    """Variable projection for one joint: y = Q theta + [F, F e1, F e2] beta."""

    def __init__(self, t, F, y, q_basis):
        self.t, self.F, self.q = t, F, q_basis
        self.y = self._project(y[:, None])[:, 0]

    def _project(self, x):
        return x - self.q @ (self.q.T @ x) if self.q.shape[1] else x

    def design(self, t1, t2):
        e1, e2 = np.exp(-self.t / t1)[:, None], np.exp(-self.t / t2)[:, None]
        return np.concatenate([self.F, self.F * e1, self.F * e2], axis=1), e1, e2

    def solve(self, t1, t2):
        x, e1, e2 = self.design(t1, t2)
        xp = self._project(x)
        scale = np.maximum(np.linalg.norm(xp, axis=0), 1e-300)
        g = (xp / scale).T @ (xp / scale)
        beta = np.linalg.solve(g + 1e-12 * np.eye(g.shape[0]), (xp / scale).T @ self.y) / scale
        r = self.y - xp @ beta
        return float(r @ r), beta, xp, e1, e2

    def cost(self, z):
        t1, t2 = np.exp(z)
        return self.solve(t1, t2)[0]


def fit_joint(t, F, y, z, bounds, grid: int = 12, joint: int = 0) -> JointDrift:
    """Eq. 5.4 drift of one joint (module docstring). t (N,) [s]; F (N, k) friction columns;
    y (N,) torque; z (N, p) nuisance columns; bounds (lo, hi) of the time constants [s]."""
    import scipy.optimize

    prob = _JointProblem(t, F, y, _nuisance_basis(z))
    k = F.shape[1]
    lo, hi = bounds
    tc = np.geomspace(lo, hi, grid)
    i, j = np.triu_indices(grid, 1)  # t1 = tc[j] > t2 = tc[i]
    costs = np.array([prob.cost(np.log([tc[b], tc[a]])) for a, b in zip(i, j)])  # loop over grid pairs
    best = int(np.argmin(costs))
    z0 = np.log([tc[j[best]], tc[i[best]]])
    box = (np.log(lo), np.log(hi))
    res = scipy.optimize.minimize(lambda v: prob.cost(np.clip(v, *box)), z0, method="Nelder-Mead",
                                  options={"xatol": 1e-3, "fatol": 1e-12, "maxfev": 200})
    t1, t2 = np.sort(np.exp(np.clip(res.x, *box)))[::-1]
    rss, beta, xp, e1, e2 = prob.solve(t1, t2)
    f, d1, d2 = beta[:k], beta[k:2 * k], beta[2 * k:]
    # full Jacobian: linear columns and d/dt of F d e^(-t/t) = F d e t / t^2, all projected
    j1 = prob._project(((F @ d1)[:, None] * e1 * (t / t1**2)[:, None]))
    j2 = prob._project(((F @ d2)[:, None] * e2 * (t / t2**2)[:, None]))
    jac = np.concatenate([xp, j1, j2], axis=1)
    dof = max(t.size - prob.q.shape[1] - jac.shape[1], 1)
    s2 = rss / dof
    cov = s2 * np.linalg.pinv(jac.T @ jac)
    fit = JointDrift(joint, f, d1, d2, float(t1), float(t2), cov, float(np.sqrt(rss / t.size)), int(t.size))
    std = np.sqrt(np.maximum(np.diag(cov)[-2:], 0.0))
    for name, value, s in (("t1", t1, std[0]), ("t2", t2, std[1])):
        edge = value <= lo * 1.02 or value >= hi / 1.02
        if edge or not np.isfinite(s) or s > value:
            fit.determined[name] = False
            why = "on its search bound" if edge else f"its std {s:.3g} s exceeds it"
            fit.notes.append(f"joint {joint + 1}: {name} = {value:.4g} s is not determined by the data ({why})")
    return fit


def sample_rows(elapsed: np.ndarray, max_rows: int, early: float = 600.0) -> np.ndarray:
    """Indices of at most ``max_rows`` samples of a log with operating times ``elapsed`` (N,)
    [s, increasing]: half evenly over the whole log, half evenly over the samples of its first
    ``early`` seconds since the cold start (or its first fifth), where fast time constants
    leave their trace."""
    n = elapsed.size
    if n <= max_rows:
        return np.arange(n)
    start = float(elapsed[0])
    first = int(np.searchsorted(elapsed, max(min(early, start + 0.2 * float(elapsed[-1] - start)), start),
                                side="right"))
    whole = np.linspace(0, n - 1, max_rows // 2).round().astype(int)
    dense = np.linspace(0, max(first - 1, 0), max_rows - max_rows // 2).round().astype(int)
    return np.unique(np.concatenate([whole, dense]))


def search_bounds(elapsed: np.ndarray) -> tuple[float, float]:
    """(lo, hi) [s] of the time-constant search: twice the sampling step (at least
    ``MIN_TIME_CONSTANT``) to three times the span of the operating times."""
    steps = np.diff(np.unique(elapsed))
    span = float(elapsed.max() - elapsed.min())
    if span <= 0 or not steps.size:
        raise DataError("the log has no duration to fit a friction drift over")
    return max(MIN_TIME_CONSTANT, 2.0 * float(steps.min())), 3.0 * span


def fit_joints(robot, elapsed: np.ndarray, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray, tau: np.ndarray,
               options: ModelOptions, mask: np.ndarray | None = None, bounds: tuple | None = None) -> list[JointDrift]:
    """Eq. 5.4 drift of every joint (module docstring) from samples (N,) x (N, n) with operating
    times ``elapsed`` [s] since the cold start; mask (N, n) the rows of each joint to use. A
    joint whose friction columns vanish on its rows (held still) gets None."""
    from dynid.dynamics import regressor as rigid_regressor

    if not FRICTION_MODELS[options.friction]:
        raise DataError("a friction drift fit needs a friction model (polynomial, coulomb-viscous or asymmetric)")
    lo, hi = bounds or search_bounds(elapsed)
    rigid = rigid_regressor(robot, q, dq, ddq, folded_kernel=False)  # (N, n, 10 n), as identification's
    load = load_torque(robot, q, dq, ddq, options) if options.friction == "load-dependent" else None
    F_all = friction_columns(dq, options, load)  # (N, n, k)
    fits = []
    with single_blas_thread():  # small products: BLAS threads cost ten times the work here
        for j in range(robot.n):  # loop over joints: each is its own least-squares problem
            rows = slice(None) if mask is None else mask[:, j]
            F = F_all[rows, j, :]
            if F.shape[0] < 3 * F.shape[1] + 3 or not np.any(np.abs(F) > 0):
                fits.append(None)
                continue
            extra = [ddq[rows, j:j + 1]] if options.rotor_inertia else []
            extra += [np.ones((F.shape[0], 1))] if options.offset else []
            z = np.concatenate([rigid[rows, j, :]] + extra, axis=1)
            fits.append(fit_joint(elapsed[rows], F, tau[rows, j], z, (lo, hi), joint=j))
    return fits


def fit_log(robot, data: JointData, options: ModelOptions = ModelOptions("polynomial"), max_rows: int = 8_000,
            bounds: tuple | None = None) -> list[JointDrift]:
    """Eq. 5.4 drift of every joint from prepared data (t, q, dq, ddq, tau); operating time from
    the first sample. At most ``max_rows`` samples are used (``sample_rows``: half over the
    whole log for the slow constants, half over its first 10 minutes for the fast ones)."""
    if data.tau is None or data.dq is None or data.ddq is None:
        raise DataError(f"{data.source}: the drift fit needs tau, dq and ddq")
    elapsed = data.t - data.t[0]
    rows = sample_rows(elapsed, max_rows)
    try:
        fits = fit_joints(robot, elapsed[rows], data.q[rows], data.dq[rows], data.ddq[rows], data.tau[rows],
                          options, bounds=bounds)
    except DataError as exc:
        raise DataError(f"{data.source}: {exc}") from None
    still = [j + 1 for j, fit in enumerate(fits) if fit is None]
    if still:
        raise DataError(f"{data.source}: joint(s) {still} do not move: no friction drift to fit")
    return fits
