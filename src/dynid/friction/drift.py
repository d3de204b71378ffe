"""The time-based friction drift model of thesis eq. 5.4 and its fit with confidence intervals.

    tau_f(t) = a + b e^(-t/t1) + c e^(-t/t2)                                    (eq. 5.4)

t is the operating time [s] since the robot started cold (the thesis quotes t1, t2 in
minutes); a is the warm friction, a + b + c the cold one; we order t1 >= t2 (slow first,
as in Table 5.6).

The fit is separable: for fixed (t1, t2) the model is linear in (a, b, c). A grid over
log t1 > log t2 in [spacing / 4, 3 x span] of the times (all pairs solved at once) gives the
start, then a bounded (same range) trust-region
search over (log t1, log t2) with (a, b, c) solved linearly at every step (variable
projection, ``scipy.optimize.least_squares``) polishes it and ``starts`` seeded starts
drawn from the 40 best grid pairs; the best is kept. Covariance C = s^2 (J^T J)^-1 with
s^2 = RSS / (K - 5), and 95 % confidence intervals +- t_{0.975, K-5} sqrt(C_ii) (Student).
The "mix" fit (thesis 5.2.4, Figure 5.23) is the same fit over the points of several tests.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.optimize
import scipy.stats

from dynid.errors import DataError

NAMES = ("a", "b", "t1", "c", "t2")  # the column order of Table 5.6


def eq54(t: np.ndarray, a: float, b: float, t1: float, c: float, t2: float) -> np.ndarray:
    """tau_f(t) of eq. 5.4; t (K,) [s]."""
    t = np.asarray(t, dtype=float)
    return a + b * np.exp(-t / t1) + c * np.exp(-t / t2)


def _jacobian(t: np.ndarray, p: np.ndarray) -> np.ndarray:
    """(K, 5) d tau_f / d(a, b, t1, c, t2)."""
    a, b, t1, c, t2 = p
    e1, e2 = np.exp(-t / t1), np.exp(-t / t2)
    return np.column_stack([np.ones_like(t), e1, b * e1 * t / t1**2, e2, c * e2 * t / t2**2])


@dataclass
class DriftFit:
    """Result of an eq. 5.4 fit: values, std, 95 % intervals of (a, b, t1, c, t2) and the residual."""

    values: np.ndarray
    std: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    rmse: float
    points: int
    t_span: tuple
    cov: np.ndarray | None = None
    notes: list = field(default_factory=list)

    @property
    def cold(self) -> tuple[float, float]:
        """Friction at t = 0, a + b + c, and its standard deviation (from the covariance)."""
        g = np.array([1.0, 1.0, 0.0, 1.0, 0.0])
        var = float(g @ self.cov @ g) if self.cov is not None else np.inf
        return float(self.values @ g), float(np.sqrt(max(var, 0.0)))

    def __getitem__(self, name: str) -> float:
        return float(self.values[NAMES.index(name)])

    def predict(self, t: np.ndarray) -> np.ndarray:
        return eq54(t, *self.values)

    def contains(self, truth: dict) -> dict:
        """{name: True if truth[name] lies in the 95 % interval} for the names given."""
        return {k: bool(self.ci_low[NAMES.index(k)] <= v <= self.ci_high[NAMES.index(k)]) for k, v in truth.items()}

    def to_dict(self) -> dict:
        f = lambda x: float(x) if np.isfinite(x) else None  # noqa: E731
        return {"model": "a + b exp(-t/t1) + c exp(-t/t2) (thesis eq. 5.4), t in s",
                "parameters": {k: f(v) for k, v in zip(NAMES, self.values)},
                "std": {k: f(v) for k, v in zip(NAMES, self.std)},
                "ci95": {k: [f(lo), f(hi)] for k, lo, hi in zip(NAMES, self.ci_low, self.ci_high)},
                "cold": {"value": f(self.cold[0]), "std": f(self.cold[1])},
                "rmse": self.rmse, "points": self.points, "t_span": [float(x) for x in self.t_span],
                "notes": list(self.notes)}


def _grid_start(t: np.ndarray, y: np.ndarray, candidates: int = 24) -> tuple[np.ndarray, np.ndarray]:
    """Best (a, b, t1, c, t2) over a log grid of t1 > t2 (linear in a, b, c), and the grid's
    pairs sorted by residual (for further starts)."""
    steps = np.diff(np.unique(t))
    lo = 0.25 * (steps.min() if steps.size else 1.0)
    hi = 3.0 * max(float(t.max() - t.min()), lo)  # longer time constants are a straight line here
    tc = np.geomspace(lo, hi, candidates)
    i, j = np.triu_indices(candidates, 1)  # t1 = tc[j] > t2 = tc[i]
    t1, t2 = tc[j], tc[i]
    x = np.stack([np.ones((t1.size, t.size)), np.exp(-t[None] / t1[:, None]), np.exp(-t[None] / t2[:, None])], -1)
    xtx = np.einsum("pki,pkj->pij", x, x) + 1e-12 * np.eye(3)
    coef = np.linalg.solve(xtx, np.einsum("pki,k->pi", x, y)[..., None])[..., 0]
    rss = np.sum((np.einsum("pki,pi->pk", x, coef) - y) ** 2, axis=1)
    order = np.argsort(rss)
    p = np.column_stack([coef[:, 0], coef[:, 1], t1, coef[:, 2], t2])
    return p[order[0]], p[order], (lo, hi)


def fit_drift(t: np.ndarray, y: np.ndarray, seed: int = 0, starts: int = 6) -> DriftFit:
    """Fit eq. 5.4 to points (t (K,) [s], y (K,) [N m]) with 95 % confidence intervals."""
    t, y = np.asarray(t, dtype=float).ravel(), np.asarray(y, dtype=float).ravel()
    ok = np.isfinite(t) & np.isfinite(y)
    t, y = t[ok], y[ok]
    if t.size < 6:
        raise DataError(f"eq. 5.4 has 5 parameters: {t.size} points (cycles) are too few, need at least 6")
    best, ranked, (lo, hi) = _grid_start(t, y)
    rng = np.random.default_rng(seed)
    picks = [best] + [ranked[k] for k in rng.choice(min(len(ranked), 40), size=min(starts, len(ranked)),
                                                    replace=False)]

    def linear(z):  # variable projection: (a, b, c) for time constants exp(z)
        x = np.column_stack([np.ones_like(t), np.exp(-t / np.exp(z[0])), np.exp(-t / np.exp(z[1]))])
        coef, *_ = np.linalg.lstsq(x, y, rcond=None)
        return x, coef

    def residual(z):
        x, coef = linear(z)
        return x @ coef - y

    bounds = (np.log(lo), np.log(hi))
    solution, cost = None, np.inf
    for p in picks:
        z0 = np.clip(np.log([p[2], p[4]]), bounds[0] + 1e-9, bounds[1] - 1e-9)
        res = scipy.optimize.least_squares(residual, z0, bounds=bounds, method="trf", max_nfev=200)
        if res.cost < cost:
            solution, cost = res.x, res.cost
    _, coef = linear(solution)
    solution = np.array([coef[0], coef[1], solution[0], coef[2], solution[1]])
    p = np.array([solution[0], solution[1], np.exp(solution[2]), solution[3], np.exp(solution[4])])
    if p[2] < p[4]:  # slow term first
        p = p[[0, 3, 4, 1, 2]]
    r = eq54(t, *p) - y
    dof = t.size - 5
    s2 = float(r @ r) / dof
    j = _jacobian(t, p)
    try:
        cov = s2 * np.linalg.inv(j.T @ j)
        std = np.sqrt(np.maximum(np.diag(cov), 0.0))
    except np.linalg.LinAlgError:
        cov, std = None, np.full(5, np.inf)
    half = scipy.stats.t.ppf(0.975, dof) * std
    notes = []
    spacing = float(np.min(np.diff(np.unique(t))))
    if p[4] < spacing / 3:  # the fast term falls below 5 % between two points: it rests on the first one
        notes.append(f"t2 = {p[4]:.4g} s is below a third of the spacing of the points ({spacing:.4g} s): the "
                     "fast term shows in the first point only, c and t2 are not determined separately "
                     "(fit every sample instead: dynid friction drift)")
    return DriftFit(p, std, p - half, p + half, float(np.sqrt(np.mean(r**2))), int(t.size),
                    (float(t.min()), float(t.max())), cov, notes)


def mix_fit(tests: list, seed: int = 0) -> DriftFit:
    """The thesis' "mix" fit: eq. 5.4 over the (t, y) points of several tests (each t from its
    own cold start), ``tests`` a list of (t (K,), y (K,)) pairs."""
    if not tests:
        raise DataError("mix fit: no tests given")
    return fit_drift(np.concatenate([np.asarray(t, float) for t, _ in tests]),
                     np.concatenate([np.asarray(y, float) for _, y in tests]), seed=seed)


def compare_fits(first: DriftFit, second: DriftFit) -> dict:
    """Robot 1 vs Robot 2 (thesis 5.2.4): per parameter (and for the cold friction a + b + c) the
    difference, z = diff / sqrt(s1^2 + s2^2) and whether it is significant at 95 % (|z| > 1.96).
    The five parameters are correlated: the cold and warm (a) friction are the sharpest contrasts."""
    names = list(NAMES) + ["cold"]
    v1 = np.append(first.values, first.cold[0])
    v2 = np.append(second.values, second.cold[0])
    s1 = np.append(first.std, first.cold[1])
    s2 = np.append(second.std, second.cold[1])
    diff = v2 - v1
    z = diff / np.sqrt(s1**2 + s2**2)
    return {k: {"first": float(a), "second": float(b), "difference": float(d), "z": float(zz),
                "significant": bool(abs(zz) > 1.96)}
            for k, a, b, d, zz in zip(names, v1, v2, diff, z)}
