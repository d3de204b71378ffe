"""Least-squares estimators of the base parameters with one interface (scikit-learn style).

    est = WeightedLeastSquares(names=base.names)   # configure
    est.fit(Yb, tau)            # Yb (N, n, b) base regressor, tau (N, n); or
    est.fit_normal_equations(ne)                   # streaming sums (normal_equations.py)
    est.coef_, est.std_, est.rel_std_              # beta, sigma_beta, %sigma (Khalil-Gautier)
    est.predict(Yb), est.score(Yb, tau)

Standard deviations (Khalil & Gautier): with r rows and b unknowns the noise variance is
sigma^2 = ||tau - W beta||^2 / (r - b), the covariance C = sigma^2 (W^T W)^-1,
sigma_beta_k = sqrt(C_kk), and %sigma_k = 100 sigma_beta_k / |beta_k|.

Conditioning is checked on the column-normalized normal matrix (thesis eq. 2.13-2.16):
cond = sqrt(lambda_max / lambda_min) equals the 2-norm condition number of the normalized
regressor. A rank-deficient problem or cond > ``max_condition`` raises IllConditionedError
naming the least determined parameters; cond > ``warn_condition`` adds a warning.
"""

from __future__ import annotations

import numpy as np

from dynid.errors import DataError, IllConditionedError
from dynid.identify.normal_equations import NormalEquations


class Estimator:
    """Common life cycle and results of the estimators.

    Results (after fit): coef_ (b,), std_ (b,), rel_std_ (b,) [%], cov_ (b, b),
    sigma2_ (n,) per-joint residual variance, rss_ (n,), rows_ (n,), cond_, warnings_ (list).
    """

    name = "estimator"

    def __init__(self, names: list[str] | None = None, max_condition: float = 1e7,
                 warn_condition: float = 1e3, rel_std_warning: float = 50.0):
        self.names = names
        self.max_condition = max_condition
        self.warn_condition = warn_condition
        self.rel_std_warning = rel_std_warning

    # -- public interface ----------------------------------------------------------------
    def fit(self, y: np.ndarray, tau: np.ndarray, mask: np.ndarray | None = None) -> "Estimator":
        """Fit on y (N, n, b) and tau (N, n); mask (N, n) selects the rows used."""
        y, tau = np.asarray(y, dtype=float), np.asarray(tau, dtype=float)
        if y.ndim != 3 or tau.shape != y.shape[:2]:
            raise DataError(f"fit: expected y (N, n, b) and tau (N, n), got {y.shape} and {tau.shape}")
        ne = NormalEquations(y.shape[1], y.shape[2])
        ne.add(y, tau, mask)
        return self.fit_normal_equations(ne)

    def fit_normal_equations(self, ne: NormalEquations) -> "Estimator":
        raise NotImplementedError

    def predict(self, y: np.ndarray) -> np.ndarray:
        """Torques (N, n) of the fitted model for base regressor y (N, n, b)."""
        return np.asarray(y) @ self.coef_

    def score(self, y: np.ndarray, tau: np.ndarray) -> float:
        """Coefficient of determination R^2 over all joints (1 is a perfect fit)."""
        tau = np.asarray(tau, dtype=float)
        ss_res = np.sum((tau - self.predict(y)) ** 2)
        ss_tot = np.sum((tau - tau.mean(axis=0)) ** 2)
        return float(1.0 - ss_res / ss_tot) if ss_tot > 0 else float("nan")

    def diagnostics(self) -> dict:
        """Numerical honesty of the fit, stored in result.json as "diagnostics": rank of the
        column-normalized normal matrix (of the b base parameters), condition number against the
        warning and refusal limits, and convergence (IRLS iterations, SDP solver status)."""
        b = len(self.coef_)
        rank = int(getattr(self, "rank_", b))
        cond = float(self.cond_)
        finite = lambda x: float(x) if np.isfinite(x) else None  # noqa: E731
        return {"base_parameters": b, "rank": rank, "rank_deficient": rank < b,
                "unexcited": list(getattr(self, "unexcited_", [])),
                "condition_number": finite(cond), "warn_condition": finite(self.warn_condition),
                "max_condition": finite(self.max_condition), "ill_conditioned": not cond <= self.warn_condition,
                "converged": bool(getattr(self, "converged_", True)), "iterations": getattr(self, "n_iter_", None),
                "solver_status": getattr(self, "solver_status_", None)}

    # -- shared numerics -----------------------------------------------------------------
    def _conditioning(self, a: np.ndarray) -> None:
        """rank_, cond_, unexcited_ of the normal matrix A, without judging them."""
        diag = np.diag(a)
        dead = np.flatnonzero(diag <= 0)
        live = np.flatnonzero(diag > 0)
        d = 1.0 / np.sqrt(diag[live])
        lam = np.linalg.eigvalsh(a[np.ix_(live, live)] * d[:, None] * d[None, :]) if live.size else np.zeros(1)
        self.unexcited_ = [self._label(k) for k in dead]
        self.rank_ = int(np.sum(lam > 1e-12 * max(lam[-1], 1e-300))) if live.size else 0
        self.cond_ = float(np.sqrt(lam[-1] / lam[0])) if dead.size == 0 and lam[0] > 0 else float("inf")

    def _label(self, k: int) -> str:
        return self.names[k] if self.names is not None and k < len(self.names) else f"beta[{k}]"

    def _solve(self, a: np.ndarray, rhs: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        """beta = A^-1 rhs with the conditioning checks; returns (beta, A^-1, cond)."""
        self._conditioning(a)
        diag = np.diag(a).copy()
        dead = np.flatnonzero(diag <= 0)
        if dead.size:
            raise IllConditionedError(
                "the data do not excite base parameter(s) "
                f"{[self._label(k) for k in dead[:8]]} (their regressor columns are zero); "
                "use a richer trajectory or a model without them")
        d = 1.0 / np.sqrt(diag)
        an = a * d[:, None] * d[None, :]  # column-normalized W^T W (thesis eq. 2.13)
        lam, vec = np.linalg.eigh(an)
        cond = float(np.sqrt(lam[-1] / lam[0])) if lam[0] > 0 else float("inf")
        self.warnings_ = []
        if not cond <= self.max_condition:
            worst = np.argsort(-np.abs(vec[:, 0]))[:4]
            raise IllConditionedError(
                f"identification is ill-conditioned (condition number {cond:.3g} of the normalized "
                f"base regressor, limit {self.max_condition:.3g}): the data cannot separate "
                f"{[self._label(k) for k in worst]}; use a more exciting trajectory or more samples")
        if cond > self.warn_condition:
            self.warnings_.append(f"condition number {cond:.3g} > {self.warn_condition:.3g}: "
                                  "estimates may be poorly determined")
        inv_n = (vec / lam) @ vec.T
        inv = inv_n * d[:, None] * d[None, :]
        beta = inv @ rhs
        return beta, inv, cond

    def _finish(self, ne: NormalEquations, beta: np.ndarray, cov: np.ndarray, cond: float) -> "Estimator":
        self.coef_ = beta
        self.cov_ = cov
        self.std_ = np.sqrt(np.maximum(np.diag(cov), 0.0))
        with np.errstate(divide="ignore", invalid="ignore"):
            self.rel_std_ = 100.0 * self.std_ / np.abs(beta)
        self.rss_ = ne.residual_ss(beta)
        self.rows_ = ne.rows.copy()
        self.cond_ = cond
        poor = np.flatnonzero(~(self.rel_std_ <= self.rel_std_warning))
        if poor.size:
            self.warnings_.append(
                f"{poor.size} base parameter(s) with %sigma > {self.rel_std_warning:g}, poorly identified: "
                f"{[self._label(k) for k in poor[:10]]}")
        return self

    @staticmethod
    def _dof(ne: NormalEquations) -> int:
        dof = int(ne.rows.sum()) - ne.b
        if dof <= 0:
            raise IllConditionedError(f"{int(ne.rows.sum())} equations for {ne.b} base parameters: "
                                      "more samples are needed")
        return dof


class OrdinaryLeastSquares(Estimator):
    """beta = (W^T W)^-1 W^T tau (thesis eq. 2.9), one noise variance for all joints."""

    name = "ols"

    def fit_normal_equations(self, ne: NormalEquations) -> "OrdinaryLeastSquares":
        a, rhs = ne.totals()
        beta, inv, cond = self._solve(a, rhs)
        sigma2 = float(ne.residual_ss(beta).sum()) / self._dof(ne)
        self.sigma2_ = np.full(ne.n, sigma2)
        return self._finish(ne, beta, sigma2 * inv, cond)


def joint_noise_variances(ne: NormalEquations, beta: np.ndarray) -> np.ndarray:
    """Gautier's per-joint error variance sigma_j^2 = RSS_j / (r_j - b_j), b_j the unknowns in joint j."""
    dof = np.maximum(ne.rows - ne.active_counts(), 1)
    var = ne.residual_ss(beta) / dof
    floor = 1e-12 * ne.tau_variance() + 1e-300  # noise-free data: weights by torque scale
    return np.maximum(var, floor)


class WeightedLeastSquares(Estimator):
    """Two-step weighted least squares (Gautier): OLS, then each joint's rows weighted by
    1 / sigma_j^2 with sigma_j^2 its OLS residual variance; C = s^2 (W^T S^-1 W)^-1 with s^2 the
    weighted residual variance (about 1)."""

    name = "wls"

    def fit_normal_equations(self, ne: NormalEquations) -> "WeightedLeastSquares":
        a, rhs = ne.totals()
        beta0, _, _ = self._solve(a, rhs)
        var = joint_noise_variances(ne, beta0)
        aw, rw = ne.totals(1.0 / var)
        beta, inv, cond = self._solve(aw, rw)
        s2 = float(np.sum(ne.residual_ss(beta) / var)) / self._dof(ne)
        self.sigma2_ = var
        self.weights_ = 1.0 / var
        return self._finish(ne, beta, s2 * inv, cond)


class HuberIRLS(Estimator):
    """Robust regression by iteratively reweighted least squares with Huber weights.

    Per joint the residual scale is s_j = 1.4826 MAD; a row with |r| > c s_j gets weight
    c s_j / |r| (c = 1.345, 95 % efficiency for Gaussian noise). Needs the samples, not only
    streaming sums. Covariance: s^2 (W^T D W)^-1 with D the final weights / s_j^2.
    """

    name = "irls"

    def __init__(self, names=None, c: float = 1.345, max_iter: int = 50, tol: float = 1e-10, **kw):
        super().__init__(names, **kw)
        self.c, self.max_iter, self.tol = c, max_iter, tol

    def fit_normal_equations(self, ne):
        raise DataError("irls needs the samples, not only the normal equations: fit it in memory")

    def fit(self, y, tau, mask=None) -> "HuberIRLS":
        y, tau = np.asarray(y, dtype=float), np.asarray(tau, dtype=float)
        keep = np.ones(tau.shape, dtype=bool) if mask is None else mask
        base_ne = NormalEquations(y.shape[1], y.shape[2])
        base_ne.add(y, tau, keep)
        beta, _, _ = self._solve(*base_ne.totals())
        weights = keep.astype(float)
        change = np.inf
        for self.n_iter_ in range(1, self.max_iter + 1):
            r = tau - y @ beta
            scale = np.array([1.4826 * np.median(np.abs(r[keep[:, j], j] - np.median(r[keep[:, j], j])))
                              for j in range(tau.shape[1])])
            scale = np.maximum(scale, 1e-12 * max(1.0, float(np.max(np.abs(tau)))))
            u = np.abs(r) / scale
            weights = np.where(u <= self.c, 1.0, self.c / np.maximum(u, 1e-300)) * keep / scale**2
            sw = np.sqrt(weights)
            ne = NormalEquations(y.shape[1], y.shape[2])
            ne.add(y * sw[:, :, None], tau * sw)
            new, inv, cond = self._solve(*ne.totals())
            change = np.max(np.abs(new - beta)) / max(1.0, float(np.max(np.abs(new))))
            beta = new
            if change <= self.tol:
                break
        self.converged_ = bool(change <= self.tol)
        self.weights_ = weights
        s2 = float(ne.residual_ss(beta).sum()) / self._dof(ne)
        self.sigma2_ = scale**2
        self._finish(ne, beta, s2 * inv, cond)
        if not self.converged_:
            self.warnings_.append(f"IRLS did not converge in {self.max_iter} iterations (last relative change of "
                                  f"the base parameters {change:.3g}, tolerance {self.tol:g}): the estimate may "
                                  "still move")
        self.rss_ = base_ne.residual_ss(beta)  # unweighted residuals, as for the others
        return self


ESTIMATORS = {"ols": OrdinaryLeastSquares, "wls": WeightedLeastSquares, "irls": HuberIRLS}
