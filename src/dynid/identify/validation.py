"""Validation figures: RMSD per joint (thesis eq. 5.1), relative RMSD and relative error.

    RMSD_j          = sqrt(1/N sum_k (tau_hat_kj - tau_kj)^2)            (thesis eq. 5.1)
    relative RMSD_j = RMSD_j / sqrt(1/N sum_k tau_kj^2)   (RMSD over the RMS of the measured torque)
    relative error  = ||tau - tau_hat||_F / ||tau||_F     (all joints)

The thesis (5.1.3) also reports the figures without low-velocity samples, where the friction
model is least accurate: ``validation_report`` gives both when a velocity threshold is set
(a sample of joint j is left out when |dq_j| < min_velocity).
"""

from __future__ import annotations

import numpy as np


def rmsd(tau: np.ndarray, tau_hat: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """(n,) root-mean-square deviation per joint (thesis eq. 5.1); mask (N, n) selects samples."""
    err2 = (np.asarray(tau_hat) - np.asarray(tau)) ** 2
    if mask is None:
        return np.sqrt(err2.mean(axis=0))
    count = np.maximum(mask.sum(axis=0), 1)
    return np.sqrt(np.where(mask, err2, 0.0).sum(axis=0) / count)


def relative_rmsd(tau: np.ndarray, tau_hat: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """(n,) RMSD_j / RMS(tau_j); NaN for a joint whose measured torque is identically zero."""
    rms = rmsd(np.zeros_like(tau), tau, mask)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(rms > 0, rmsd(tau, tau_hat, mask) / rms, np.nan)


def relative_error(tau: np.ndarray, tau_hat: np.ndarray) -> float:
    """||tau - tau_hat||_F / ||tau||_F over all joints and samples."""
    tau, tau_hat = np.asarray(tau), np.asarray(tau_hat)
    return float(np.linalg.norm(tau - tau_hat) / np.linalg.norm(tau))


def _list(values) -> list:
    """Floats for JSON (None where not finite)."""
    return [float(v) if np.isfinite(v) else None for v in np.asarray(values, dtype=float)]


def validation_report(tau: np.ndarray, tau_hat: np.ndarray, dq: np.ndarray | None = None,
                      min_velocity: float = 0.0) -> dict:
    """RMSD, relative RMSD and relative error, also without low-velocity samples when asked."""
    out = {"samples": int(tau.shape[0]),
           "rmsd": _list(rmsd(tau, tau_hat)),
           "relative_rmsd": _list(relative_rmsd(tau, tau_hat)),
           "relative_error": relative_error(tau, tau_hat)}
    if dq is not None and min_velocity > 0:
        mask = np.abs(dq) >= min_velocity
        out["min_velocity"] = min_velocity
        out["moving"] = {"samples_per_joint": mask.sum(axis=0).tolist(),
                         "rmsd": _list(rmsd(tau, tau_hat, mask)),
                         "relative_rmsd": _list(relative_rmsd(tau, tau_hat, mask))}
    return out
