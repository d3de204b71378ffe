"""Essential parameters: the smallest subset of the base parameters that keeps the fit.

Method (Pham & Gautier 1991, "Essential parameters of robots", Proc. 30th IEEE Conference on
Decision and Control, Brighton, pp. 2769-2774): starting from the base parameters, the one with
the largest relative standard deviation %sigma (the least identifiable, Khalil-Gautier) is
removed and the others are estimated again; this repeats while the residual does not grow
significantly. The remaining *essential* parameters explain the torques as well as the full
base set and are each well determined; the removed ones are set to zero.

Where this module is specific (and not the paper): "significantly" is decided by the F-test
of the nested least-squares models on the weighted residual (weights 1 / sigma_j^2 of the full
fit, Gautier's per-joint variances, kept fixed along the way):

    F = ((RSS_S - RSS_full) / k) / (RSS_full / (r - b))  ~  F(k, r - b)                 (E1)

with k the parameters removed so far, r the equations and b the base parameters; elimination
stops before the first removal whose F exceeds the 95 % quantile (``alpha`` = 0.05). Against
the full model (not the previous step) so small increases cannot add up unnoticed. Everything
is computed from the normal equations (A, B, C of ``normal_equations.py``): a reduced fit is
A_SS beta_S = B_S and RSS_S = C - B_S^T beta_S, so a streamed log needs no second pass.

With the residuals' correlation in time measured (``identify.residual_correlation``: the fit's
per-joint long-run score covariances L_j, ``Estimator.score_covariance_``) the rows are not
independent and (E1) would count each sample as one: on a log filtered at 5 Hz and sampled at
1 kHz a hundred samples carry one independent value, F is that many times too large and nearly
every parameter looks essential. Then the reduced fit's covariance is the sandwich (R1) on its
columns S, and the test is its Wald form on the parameters removed R (the robust counterpart of
(E1): with white residuals, L_j = sigma_j^2 A_j, it is (E1), as the nested residual's increase is
beta_R^T [(A^-1)_RR]^-1 beta_R):

    C_S = A_SS^-1 (sum_j w_j^2 L_j,SS) A_SS^-1,   F = beta_R^T (C_RR)^-1 beta_R / k  ~  F(k, r - b)   (E2)

(C the full fit's sandwich; A = sum_j w_j A_j). The elimination ranks by the %sigma of C_S, and
the essential parameters' std are those of C_S (result "essential" "uncertainty" says which).

Base parameters the log cannot determine (joints held still, ``identify.undetermined``) are
not candidates: they keep the description's values, as in the fit, and the elimination runs
on the normal equations of the others (``NormalEquations.reduce``); the block names them under
``held``. (On the full normal equations their near-null directions would look well determined
to a pseudo-inverse, whose inverse is zero there, and could be kept as "essential".)
"""

from __future__ import annotations

import numpy as np

from dynid.identify.normal_equations import NormalEquations


def _fit(a: np.ndarray, rhs: np.ndarray, c: float, keep: np.ndarray) -> tuple[np.ndarray, float, np.ndarray]:
    """(beta_S, RSS_S, inverse of A_SS) of the reduced least-squares problem on the columns keep."""
    sub = a[np.ix_(keep, keep)]
    d = 1.0 / np.sqrt(np.maximum(np.diag(sub), 1e-300))
    inv = np.linalg.pinv(sub * d[:, None] * d[None, :], hermitian=True) * d[:, None] * d[None, :]
    beta = inv @ rhs[keep]
    return beta, max(float(c - rhs[keep] @ beta), 0.0), inv


def essential_parameters(ne: NormalEquations, names: list[str], weights: np.ndarray | None = None,
                         alpha: float = 0.05, found=None, scores: np.ndarray | None = None,
                         why: str = "the residuals' correlation in time not measured") -> dict:
    """Backward elimination of Pham & Gautier with the F-test (E1), or with ``scores`` (n, b, b),
    the fit's per-joint long-run score covariances (``Estimator.score_covariance_``), its
    correlated-residual form (E2). Returns the result.json block: essential names, values and
    std, the elimination steps with their F and p, and "uncertainty" (which covariance; ``why``
    the white one). ``found`` (``undetermined.find_undetermined``): parameters held at their
    prior (docstring)."""
    import scipy.stats

    from dynid.identify.estimators import sandwich
    from dynid.identify.residual_correlation import white

    held = []
    if scores is not None and np.shape(scores)[1:] != (ne.b, ne.b):
        scores, why = None, "the fit's score covariances are not of these parameters"
    if found:
        keep_index = np.setdiff1d(np.arange(len(names)), found.index)
        held = [names[k] for k in found.index]
        ne = ne.reduce(found.index, found.prior[found.index])
        names = [names[k] for k in keep_index]
        if scores is not None:
            scores = np.asarray(scores)[:, keep_index][:, :, keep_index]
    w = np.ones(ne.n) if weights is None else np.asarray(weights, dtype=float)
    a, rhs = ne.totals(w)
    c = float(w @ ne.C)
    b = a.shape[0]
    r = int(ne.rows.sum())
    dof = r - b
    keep = np.arange(b)
    current = _fit(a, rhs, c, keep)  # (beta_S, RSS_S, inverse) on keep, carried along the elimination
    rss_full = current[1]
    s2_full = rss_full / max(dof, 1)

    def covariance(fit, s: np.ndarray) -> np.ndarray:
        """The covariance of the reduced fit on the columns s: s^2 A_SS^-1, or (E2)'s C_S."""
        if scores is None:
            return fit[2] * (fit[1] / max(r - s.size, 1))
        return sandwich(fit[2], w, scores[:, s][:, :, s])

    full_beta, full_cov = current[0], covariance(current, keep)
    steps = []
    while keep.size > 1:
        beta, rss_now, inv = current
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = 100.0 * np.sqrt(np.maximum(np.diag(covariance(current, keep)), 0.0)) / np.abs(beta)
        rel = np.where(np.isfinite(rel), rel, np.inf)
        worst = int(np.argmax(rel))
        trial = np.delete(keep, worst)
        trial_fit = _fit(a, rhs, c, trial)
        rss = trial_fit[1]
        k = b - trial.size
        if scores is None:
            f = ((rss - rss_full) / k) / max(s2_full, 1e-300)  # (E1)
        else:  # (E2): the removed parameters' Wald statistic at the full fit
            gone = np.setdiff1d(np.arange(b), trial)
            f = float(full_beta[gone] @ np.linalg.pinv(full_cov[np.ix_(gone, gone)], hermitian=True)
                      @ full_beta[gone]) / k
        p = float(scipy.stats.f.sf(f, k, max(dof, 1)))
        if p < alpha:
            break
        steps.append({"removed": names[keep[worst]], "relative_std": float(rel[worst]), "F": float(f), "p": p,
                      "relative_rss_increase": float(rss / max(rss_full, 1e-300) - 1.0)})
        keep, current = trial, trial_fit
    beta, rss, inv = current
    std = np.sqrt(np.maximum(np.diag(covariance(current, keep)), 0.0))
    test = "nested models, weighted residual" if scores is None else \
        "Wald form with the residuals' correlation in time"
    return {"method": "Pham & Gautier 1991: backward elimination of the base parameter with the largest %sigma; "
                      f"stop at the first F-test ({test}) with p < {alpha:g}",
            "uncertainty": {"covariance": "correlated"} if scores is not None else white(why),
            "count": int(keep.size), "of": b, "held": held,
            "parameters": [{"name": names[k], "value": float(v), "std": float(s),
                            "relative_std": float(100 * s / abs(v)) if v != 0 else None}
                           for k, v, s in zip(keep, beta, std)],
            "eliminated": steps,
            "relative_error": {"base": float(np.sqrt(rss_full / max(c, 1e-300))),
                               "essential": float(np.sqrt(rss / max(c, 1e-300)))}}
