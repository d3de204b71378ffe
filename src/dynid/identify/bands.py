"""Prediction bands: the standard deviation of each predicted torque.

The model torque of a sample is tau_hat = Y_b beta (Y_b (n, b) the base regressor rows of the
sample). With the covariance C_beta of the estimate (Khalil-Gautier: C = sigma^2 (W^T W)^-1,
sigma^2 the residual variance of the fit, stored in result.json as "covariance"), first-order
propagation gives, joint by joint,

    var(tau_hat_j) = y_j^T C_beta y_j          (y_j: row j of Y_b)                     (B1)

the uncertainty of the model's torque, so tau_true lies in tau_hat +- 2 sqrt(B1) about 95 % of
the time when the model structure is right and the noise white (the confidence band). A new
*measurement* adds the residual variance sigma_j^2 of joint j (``fit.sigma`` in result.json):

    var(tau_meas_j - tau_hat_j) = y_j^T C_beta y_j + sigma_j^2                           (B2)

(the prediction band). Neither accounts for effects the model lacks (an unmodeled friction
regime, a wrong low-pass that distorts the motion): a band that misses measured torques far
more than 5 % of the time says so.
"""

from __future__ import annotations

import numpy as np

from dynid.errors import DataError

KINDS = ("model", "measurement")


def parameter_covariance(result: dict) -> np.ndarray:
    """(b, b) covariance of the base parameters stored in a result (DataError when absent)."""
    b = len(result["base_parameters"])
    cov = result.get("covariance")
    if cov is None:
        raise DataError("the result holds no parameter covariance ('covariance'): identify again with this dynid "
                        "(a physically consistent fit whose unconstrained problem was ill-conditioned has none)")
    return checked_covariance(cov, b, "result field 'covariance'")


def checked_covariance(value, b: int, where: str) -> np.ndarray:
    """``value`` as a (b, b) covariance matrix, or a DataError naming what is wrong with it: not a
    matrix of numbers, another shape, a NaN or infinite entry, not symmetric, or not positive
    semidefinite (a negative variance: the bands would be the square root of a negative number)."""
    try:
        cov = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise DataError(f"{where}: expected a {b} x {b} matrix of numbers, found {str(value)[:40]!r}") from None
    if cov.shape != (b, b):
        raise DataError(f"{where} has shape {cov.shape}, expected ({b}, {b}) (one row and column per base parameter)")
    bad = np.argwhere(~np.isfinite(cov))
    if bad.size:
        i, j = bad[0]
        raise DataError(f"{where}: entry [{i}, {j}] is {cov[i, j]} ({len(bad)} entries not finite); expected "
                        "finite numbers")
    scale = float(np.max(np.abs(cov), initial=0.0))
    asym = np.abs(cov - cov.T)
    if asym.max(initial=0.0) > 1e-9 * scale:
        i, j = np.unravel_index(np.argmax(asym), asym.shape)
        raise DataError(f"{where} is not symmetric: [{i}, {j}] = {cov[i, j]:.6g} but [{j}, {i}] = {cov[j, i]:.6g}; "
                        "expected a covariance matrix")
    negative = np.flatnonzero(np.diag(cov) < 0)
    if negative.size:
        k = int(negative[0])
        raise DataError(f"{where}: the variance of base parameter {k + 1} is negative ({cov[k, k]:.6g}); expected a "
                        "positive semidefinite covariance matrix")
    smallest = float(np.linalg.eigvalsh(cov)[0]) if b else 0.0
    if smallest < -1e-9 * scale:
        raise DataError(f"{where} is not positive semidefinite (eigenvalue {smallest:.3g}, largest entry "
                        f"{scale:.3g}); expected a covariance matrix")
    return cov


def torque_std(y_base: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """(N, n) sqrt(B1) for base regressor rows y_base (N, n, b) and covariance cov (b, b)."""
    return np.sqrt(np.maximum(np.einsum("inb,bc,inc->in", y_base, cov, y_base), 0.0))


def band_std(model_std: np.ndarray, result: dict, kind: str = "model") -> np.ndarray:
    """(N, n) standard deviation of the ``kind`` band: "model" (B1) or "measurement" (B2)."""
    if kind not in KINDS:
        raise DataError(f"--std {kind}: expected one of {list(KINDS)}")
    if kind == "model":
        return model_std
    sigma = np.array([np.nan if s is None else s for s in result.get("fit", {}).get("sigma", [])], dtype=float)
    if sigma.shape != (model_std.shape[1],) or not np.all(np.isfinite(sigma)):
        raise DataError("the result holds no residual standard deviation per joint ('fit.sigma')")
    return np.sqrt(model_std**2 + sigma**2)


def coverage(tau: np.ndarray, tau_hat: np.ndarray, std: np.ndarray, k: float = 2.0) -> np.ndarray:
    """(n,) share of samples with |tau - tau_hat| <= k std, per joint."""
    return np.mean(np.abs(tau - tau_hat) <= k * std, axis=0)
