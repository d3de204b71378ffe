"""Least-squares estimators of the base parameters with one interface (scikit-learn style).

    est = WeightedLeastSquares(base.names)         # configure: names, then keyword options
    est.fit(Yb, tau)            # Yb (N, n, b) base regressor, tau (N, n); or
    est.fit_normal_equations(ne)                   # streaming sums (normal_equations.py)
    est.coef_, est.std_, est.rel_std_              # beta, sigma_beta, %sigma (Khalil-Gautier)
    est.predict(Yb), est.score(Yb, tau)

Every estimator has the same constructor shape, ``Estimator(names, *, fixed=None, prior=None,
max_condition=..., ...)``: ``fixed`` parameters are held at their ``prior`` values and the others
are fitted to tau - W_fixed beta_fixed (from the normal equations: ``NormalEquations.reduce``);
the results cover all b parameters (the fixed ones with NaN standard deviations), and the rank
and condition number are those of the fitted ones. Only the estimator writes its results.

Standard deviations (Khalil & Gautier): with r rows and b unknowns the noise variance is
sigma^2 = ||tau - W beta||^2 / (r - b), the covariance C = sigma^2 (W^T W)^-1,
sigma_beta_k = sqrt(C_kk), and %sigma_k = 100 sigma_beta_k / |beta_k|.

Conditioning is checked on the column-normalized normal matrix (thesis eq. 2.13-2.16), one
eigendecomposition per solve (``normal_equations.Spectrum``): cond = sqrt(lambda_max /
lambda_min) equals the 2-norm condition number of the normalized regressor. A rank-deficient
problem or cond > ``max_condition`` raises IllConditionedError naming the least determined
parameters; cond > ``warn_condition`` adds a warning.
"""

from __future__ import annotations

import numpy as np

from dynid.errors import DataError, IllConditionedError
from dynid.identify.normal_equations import NormalEquations, spectrum


class Estimator:
    """Common life cycle and results of the estimators.

    Options, the same for every estimator (each kind adds its own, keyword only):
    names: (b,) parameter names (messages and warnings); fixed: (k,) indices of parameters that
    are not fitted but held at ``prior`` (b,) values (the base parameters a log leaves
    undetermined keep the description's: ``identify.undetermined``); max_condition: refuse a
    fit above this condition number; warn_condition: warn above it; rel_std_warning: warn
    about parameters with %sigma above it.

    Results (after fit), over all b parameters: coef_ (b,) (the fixed ones at their prior),
    std_ (b,) (NaN for the fixed ones), rel_std_ (b,) [%], cov_ (b, b) (zero rows and columns
    for the fixed ones), sigma2_ (n,) per-joint residual variance, rss_ (n,), rows_ (n,), and of
    the fitted ones: cond_, rank_ (of their column-normalized normal matrix), unexcited_,
    warnings_ (list).
    """

    name = "estimator"
    holds_fixed = False  # True: the kind holds ``fixed`` itself (as constraints) on the whole problem

    def __init__(self, names: list[str] | None = None, *, fixed=None, prior=None, max_condition: float = 1e7,
                 warn_condition: float = 1e3, rel_std_warning: float = 50.0):
        self.names = names
        self.fixed = np.zeros(0, dtype=np.int64) if fixed is None else np.asarray(fixed, dtype=np.int64)
        self.prior = None if prior is None else np.asarray(prior, dtype=float)
        if self.fixed.size and self.prior is None:
            raise ValueError("fixed parameters need their prior values (prior=, one per parameter)")
        self.max_condition = max_condition
        self.warn_condition = warn_condition
        self.rel_std_warning = rel_std_warning

    # -- public interface ----------------------------------------------------------------
    def fit(self, y: np.ndarray, tau: np.ndarray, mask: np.ndarray | None = None) -> "Estimator":
        """Fit on y (N, n, b) and tau (N, n); mask (N, n) selects the rows used."""
        y, tau = np.asarray(y, dtype=float), np.asarray(tau, dtype=float)
        if y.ndim != 3 or tau.shape != y.shape[:2]:
            raise DataError(f"fit: expected y (N, n, b) and tau (N, n), got {y.shape} and {tau.shape}")
        free = self._start(y.shape[2])
        if self.fixed.size and not self.holds_fixed:  # tau - W_U beta_U = W_D beta_D
            y, tau = np.ascontiguousarray(y[..., free]), tau - y[..., self.fixed] @ self.prior[self.fixed]
        self._fit_samples(y, tau, mask)
        return self._widen(free)

    def fit_normal_equations(self, ne: NormalEquations) -> "Estimator":
        """Fit on streamed normal equations (``normal_equations.py``)."""
        free = self._start(ne.b)
        held = self.fixed.size and not self.holds_fixed
        self._fit_equations(ne.reduce(self.fixed, self.prior[self.fixed]) if held else ne)
        return self._widen(free)

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
        column-normalized normal matrix of the fitted parameters (the b base parameters less the
        ``fixed`` ones held at their prior), condition number against the warning and refusal
        limits, and convergence (IRLS iterations, SDP solver status)."""
        b = len(self.coef_)
        fitted = b - self.fixed.size
        rank = int(getattr(self, "rank_", fitted))
        cond = float(self.cond_)
        finite = lambda x: float(x) if np.isfinite(x) else None  # noqa: E731
        return {"base_parameters": b, "fixed": int(self.fixed.size), "rank": rank, "rank_deficient": rank < fitted,
                "unexcited": list(getattr(self, "unexcited_", [])),
                "condition_number": finite(cond), "warn_condition": finite(self.warn_condition),
                "max_condition": finite(self.max_condition), "ill_conditioned": not cond <= self.warn_condition,
                "converged": bool(getattr(self, "converged_", True)), "iterations": getattr(self, "n_iter_", None),
                "solver_status": getattr(self, "solver_status_", None)}

    def through_fixed_point(self, normal: np.ndarray, cross: np.ndarray) -> "Estimator":
        """The covariance of an estimate that is the fixed point of this fit, whose regressor
        A(beta) was formed with the estimate itself (``identify.load_friction``, L3): to first
        order dx = (I + G)^-1 dx_fit with G = N^-1 X over the fitted parameters, N (b, b) this
        fit's weighted normal matrix A^T W A and X (b, b) = A^T W dA/dbeta x (the fitted torque's
        change per parameter, through its regressor), so C <- T C T^T, T = (I + G)^-1; std_ and
        rel_std_ follow (the held parameters keep NaN)."""
        free = np.flatnonzero(np.isfinite(self.std_))
        gain = np.linalg.solve(normal[np.ix_(free, free)], cross[np.ix_(free, free)])
        t = np.linalg.inv(np.eye(free.size) + gain)
        return self.with_free_covariance(t @ np.asarray(self.cov_, dtype=float)[np.ix_(free, free)] @ t.T)

    def with_free_covariance(self, cov: np.ndarray) -> "Estimator":
        """The covariance of the free parameters (those with a finite std_, in their order)
        replaced by ``cov``; std_ and rel_std_ follow, the held parameters keep NaN."""
        free = np.flatnonzero(np.isfinite(self.std_))
        full = np.array(self.cov_, dtype=float)
        full[np.ix_(free, free)] = cov
        self.cov_ = full
        self.std_ = np.where(np.isfinite(self.std_), np.sqrt(np.maximum(np.diag(full), 0.0)), np.nan)
        with np.errstate(divide="ignore", invalid="ignore"):
            self.rel_std_ = 100.0 * self.std_ / np.abs(self.coef_)
        return self

    def joint_weights(self) -> np.ndarray | None:
        """(n,) the weight of each joint's rows in the fit (ols: 1, wls: 1 / sigma_j^2); None for an
        estimator whose weights are not per joint (irls: per row; pc: constrained)."""
        return None

    def with_correlated_residuals(self, ne: NormalEquations, scores: np.ndarray,
                                  weights: np.ndarray | None = None, normal: np.ndarray | None = None) -> "Estimator":
        """The covariance of the free parameters made the sandwich (R1) of
        ``identify.residual_correlation``: N^-1 (sum_j w_j^2 L_j) N^-1, N = sum_j w_j A_j, with L_j
        (n, b, b) ``scores`` the long-run covariance of joint j's scores (each joint's own noise
        level, their correlation in time); ``ne``: the normal equations the fit was made on (all
        b parameters, the held ones included; kept as ``score_covariance_``); ``weights`` (n,): w_j (default ``joint_weights``;
        irls: ones, with ``ne`` and the scores of its rows scaled by ``row_scale``); ``normal``
        (b, b): the bread N when it is not sum_j w_j A_j (irls: ``HuberIRLS.bread_scale``). std_ and
        rel_std_ follow; the held ones keep NaN."""
        w = self.joint_weights() if weights is None else np.asarray(weights, dtype=float)
        if w is None:
            raise ValueError(f"{self.name}: no per-joint weights, the sandwich (R1) does not apply")
        free = np.flatnonzero(np.isfinite(self.std_))
        normal = np.einsum("j,jab->ab", w, ne.A) if normal is None else np.asarray(normal, dtype=float)
        inv = spectrum(normal[np.ix_(free, free)]).inverse()
        self.score_covariance_ = np.asarray(scores, dtype=float)  # the essential parameters' sandwich uses them
        return self.with_free_covariance(sandwich(inv, w, self.score_covariance_[:, free][:, :, free]))

    # -- what each estimator implements ----------------------------------------------------
    def _fit_equations(self, ne: NormalEquations) -> None:
        """Fit the free parameters to ``ne``: set the results over them (``_finish``)."""
        raise NotImplementedError

    def _fit_samples(self, y: np.ndarray, tau: np.ndarray, mask: np.ndarray | None) -> None:
        """Fit the free parameters to samples (default: through their normal equations)."""
        ne = NormalEquations(y.shape[1], y.shape[2])
        ne.add(y, tau, mask)
        self._fit_equations(ne)

    # -- shared numerics -----------------------------------------------------------------
    def _start(self, b: int) -> np.ndarray:
        """Check the options against b parameters; the indices of the free (fitted) ones."""
        if self.fixed.size and (self.prior is None or self.prior.shape != (b,)):
            raise ValueError(f"prior: expected {b} values (one per parameter), got "
                             f"{None if self.prior is None else self.prior.shape}")
        if self.fixed.size and (self.fixed.min() < 0 or self.fixed.max() >= b):
            raise ValueError(f"fixed: indices must lie in 0..{b - 1}, got {self.fixed.tolist()}")
        self._free = np.arange(b) if self.holds_fixed else np.setdiff1d(np.arange(b), self.fixed)
        return self._free

    def _widen(self, free: np.ndarray) -> "Estimator":
        """The results over the free parameters widened to all b (module docstring)."""
        if not self.fixed.size or self.holds_fixed:
            return self
        b = free.size + self.fixed.size
        coef, std, cov = np.empty(b), np.full(b, np.nan), np.zeros((b, b))
        coef[free], coef[self.fixed], std[free] = self.coef_, self.prior[self.fixed], self.std_
        cov[np.ix_(free, free)] = self.cov_
        self.coef_, self.std_, self.cov_ = coef, std, cov
        with np.errstate(divide="ignore", invalid="ignore"):
            self.rel_std_ = 100.0 * std / np.abs(coef)
        return self

    def _label(self, k: int) -> str:
        """Name of the k-th fitted parameter."""
        k = int(self._free[k]) if getattr(self, "_free", None) is not None and k < len(self._free) else k
        return self.names[k] if self.names is not None and k < len(self.names) else f"beta[{k}]"

    def _solve(self, a: np.ndarray, rhs: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        """beta = A^-1 rhs with the conditioning checks; returns (beta, A^-1, cond). Sets rank_,
        cond_ and unexcited_ from the one decomposition (``normal_equations.Spectrum``) first."""
        sp = spectrum(a)
        self.unexcited_ = [self._label(k) for k in sp.dead]
        self.rank_, self.cond_ = sp.rank, sp.cond
        if sp.dead.size:
            raise IllConditionedError(
                "the data do not excite base parameter(s) "
                f"{[self._label(k) for k in sp.dead[:8]]} (their regressor columns are zero); "
                "use a richer trajectory or a model without them")
        cond = sp.cond
        self.warnings_ = []
        if not cond <= self.max_condition:
            worst = np.argsort(-np.abs(sp.vec[:, 0]))[:4]
            raise IllConditionedError(
                f"identification is ill-conditioned (condition number {cond:.3g} of the normalized "
                f"base regressor, limit {self.max_condition:.3g}): the data cannot separate "
                f"{[self._label(k) for k in worst]}; use a more exciting trajectory or more samples")
        if cond > self.warn_condition:
            self.warnings_.append(f"condition number {cond:.3g} > {self.warn_condition:.3g}: "
                                  "estimates may be poorly determined")
        inv = sp.inverse()
        return inv @ rhs, inv, cond

    def _finish(self, ne: NormalEquations, beta: np.ndarray, cov: np.ndarray, cond: float) -> "Estimator":
        self.coef_ = beta
        self.cov_ = cov
        self.std_ = np.sqrt(np.maximum(np.diag(cov), 0.0))
        with np.errstate(divide="ignore", invalid="ignore"):
            self.rel_std_ = 100.0 * self.std_ / np.abs(beta)
        self.rss_ = ne.residual_ss(beta)
        self.rows_ = ne.rows.copy()
        self.cond_ = cond
        self.score_covariance_ = None  # (n, b, b) of ``with_correlated_residuals``
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

    def _fit_equations(self, ne: NormalEquations) -> None:
        a, rhs = ne.totals()
        beta, inv, cond = self._solve(a, rhs)
        sigma2 = float(ne.residual_ss(beta).sum()) / self._dof(ne)
        self.sigma2_ = np.full(ne.n, sigma2)
        self._finish(ne, beta, sigma2 * inv, cond)

    def joint_weights(self) -> np.ndarray:
        return np.ones(len(self.sigma2_))


def sandwich(inverse: np.ndarray, weights: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """(R1) of ``identify.residual_correlation``: N^-1 (sum_j w_j^2 L_j) N^-1 from ``inverse`` N^-1
    (p, p), the joints' weights w (n,) and their scores' long-run covariances L (n, p, p), symmetrized."""
    cov = inverse @ np.einsum("j,jab->ab", np.asarray(weights, dtype=float) ** 2, scores) @ inverse
    return 0.5 * (cov + cov.T)


def joint_noise_variances(ne: NormalEquations, beta: np.ndarray) -> np.ndarray:
    """Gautier's per-joint error variance sigma_j^2 = RSS_j / (r_j - b_j), b_j the unknowns in joint j."""
    dof = np.maximum(ne.rows - ne.active_counts(), 1)
    var = ne.residual_ss(beta) / dof
    floor = 1e-12 * ne.tau_variance() + 1e-300  # noise-free data: weights by torque scale
    return np.maximum(var, floor)


class WeightedLeastSquares(Estimator):
    """Weighted least squares with each joint's rows weighted by 1 / sigma_j^2, sigma_j^2 the
    joint's residual variance, iterated to convergence (Gautier: OLS first, then the weights of
    the last fit's residuals, until they change by less than ``tol`` relative; the first weights
    of the unweighted fit leave a wrist joint's noise estimated up to 55 times too high,
    docs/friction.md); C = s^2 (W^T S^-1 W)^-1 with s^2 the weighted residual variance (about 1).
    ``max_iter`` reweightings at most; n_iter_ and converged_ say how it went."""

    name = "wls"

    def __init__(self, names=None, *, max_iter: int = 30, tol: float = 1e-3, **kw):
        super().__init__(names, **kw)
        self.max_iter, self.tol = max_iter, tol

    def _fit_equations(self, ne: NormalEquations) -> None:
        a, rhs = ne.totals()
        beta, _, _ = self._solve(a, rhs)
        var = joint_noise_variances(ne, beta)
        change = np.inf
        for self.n_iter_ in range(1, self.max_iter + 1):
            aw, rw = ne.totals(1.0 / var)
            beta, inv, cond = self._solve(aw, rw)
            new = joint_noise_variances(ne, beta)
            change = float(np.max(np.abs(new / var - 1.0)))
            if change <= self.tol:
                break
            var = new
        self.converged_ = bool(change <= self.tol)
        s2 = float(np.sum(ne.residual_ss(beta) / var)) / self._dof(ne)
        self.sigma2_ = var
        self.weights_ = 1.0 / var
        self._finish(ne, beta, s2 * inv, cond)
        if not self.converged_:
            self.warnings_.append(f"WLS weights did not converge in {self.max_iter} iterations (last relative change "
                                  f"of a joint's noise variance {change:.3g}, tolerance {self.tol:g})")

    def joint_weights(self) -> np.ndarray:
        return np.asarray(self.weights_, dtype=float)


class HuberIRLS(Estimator):
    """Robust regression by iteratively reweighted least squares with Huber weights.

    Per joint the residual scale is s_j = 1.4826 MAD; a row with |r| > c s_j gets weight
    c s_j / |r| (c = 1.345, 95 % efficiency for Gaussian noise). Needs the samples, not only
    streaming sums. Covariance: s^2 (W^T D W)^-1 with D the final weights / s_j^2.
    """

    name = "irls"

    def __init__(self, names=None, *, c: float = 1.345, max_iter: int = 50, tol: float = 1e-10, **kw):
        super().__init__(names, **kw)
        self.c, self.max_iter, self.tol = c, max_iter, tol

    def _fit_equations(self, ne):
        raise DataError("irls needs the samples, not only the normal equations: fit it in memory")

    def _fit_samples(self, y, tau, mask) -> None:
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
            inliers = (u <= self.c) & keep
            sw = np.sqrt(weights)
            ne = NormalEquations(y.shape[1], y.shape[2])
            ne.add(y * sw[:, :, None], tau * sw)
            new, inv, cond = self._solve(*ne.totals())
            change = np.max(np.abs(new - beta)) / max(1.0, float(np.max(np.abs(new))))
            beta = new
            if change <= self.tol:
                break
        self.converged_ = bool(change <= self.tol)
        self.weights_, self.slopes_ = weights, inliers / scale**2
        s2 = float(ne.residual_ss(beta).sum()) / self._dof(ne)
        self.sigma2_ = scale**2
        self._finish(ne, beta, s2 * inv, cond)
        if not self.converged_:
            self.warnings_.append(f"IRLS did not converge in {self.max_iter} iterations (last relative change of "
                                  f"the base parameters {change:.3g}, tolerance {self.tol:g}): the estimate may "
                                  "still move")
        self.rss_ = base_ne.residual_ss(beta)  # unweighted residuals, as for the others

    def row_scale(self) -> np.ndarray:
        """(N, n) the square roots of the final weights w = psi(u) / (u s^2): the scores of the
        M-estimate are those of the rows scaled by these, y w r = y psi(u) / s (Huber 1981,
        sec. 7.6; ``with_correlated_residuals`` with w_j = 1)."""
        return np.sqrt(self.weights_)

    def bread_scale(self) -> np.ndarray:
        """(N, n) the square roots of psi'(u) / s^2 (1 / s^2 within c, 0 beyond): the M-estimate's
        bread N = sum psi'(u) y y^T / s^2 is the normal matrix of the rows scaled by these (the
        final weights in its place count a down-weighted row as information: std ~20 % small
        under Gaussian noise, where 18 % of rows lie beyond c = 1.345)."""
        return np.sqrt(self.slopes_)


ESTIMATORS = {"ols": OrdinaryLeastSquares, "wls": WeightedLeastSquares, "irls": HuberIRLS}
