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
                         alpha: float = 0.05, found=None) -> dict:
    """Backward elimination of Pham & Gautier with the F-test (E1). Returns the result.json
    block: essential names, values and std, and the elimination steps with their F and p.
    ``found`` (``undetermined.find_undetermined``): parameters held at their prior (docstring)."""
    import scipy.stats

    held = []
    if found:
        keep_index = np.setdiff1d(np.arange(len(names)), found.index)
        held = [names[k] for k in found.index]
        ne = ne.reduce(found.index, found.prior[found.index])
        names = [names[k] for k in keep_index]
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
    steps = []
    while keep.size > 1:
        beta, rss_now, inv = current
        s2 = rss_now / max(r - keep.size, 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = 100.0 * np.sqrt(np.maximum(np.diag(inv) * s2, 0.0)) / np.abs(beta)
        rel = np.where(np.isfinite(rel), rel, np.inf)
        worst = int(np.argmax(rel))
        trial = np.delete(keep, worst)
        trial_fit = _fit(a, rhs, c, trial)
        rss = trial_fit[1]
        k = b - trial.size
        f = ((rss - rss_full) / k) / max(s2_full, 1e-300)
        p = float(scipy.stats.f.sf(f, k, max(dof, 1)))
        if p < alpha:
            break
        steps.append({"removed": names[keep[worst]], "relative_std": float(rel[worst]), "F": float(f), "p": p,
                      "relative_rss_increase": float(rss / max(rss_full, 1e-300) - 1.0)})
        keep, current = trial, trial_fit
    beta, rss, inv = current
    s2 = rss / max(r - keep.size, 1)
    std = np.sqrt(np.maximum(np.diag(inv) * s2, 0.0))
    return {"method": "Pham & Gautier 1991: backward elimination of the base parameter with the largest %sigma; "
                      f"stop at the first F-test (nested models, weighted residual) with p < {alpha:g}",
            "count": int(keep.size), "of": b, "held": held,
            "parameters": [{"name": names[k], "value": float(v), "std": float(s),
                            "relative_std": float(100 * s / abs(v)) if v != 0 else None}
                           for k, v, s in zip(keep, beta, std)],
            "eliminated": steps,
            "relative_error": {"base": float(np.sqrt(rss_full / max(c, 1e-300))),
                               "essential": float(np.sqrt(rss / max(c, 1e-300)))}}
