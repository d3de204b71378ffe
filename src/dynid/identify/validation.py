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

from dynid.files.outputs import json_floats


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


class ValidationSums:
    """Running sums of a validation, chunk by chunk (bounded memory: ``predict`` and ``validate``
    stream long logs): per joint the samples, sum (tau_hat - tau)^2 and sum tau^2, also over the
    samples not slower than ``min_velocity`` when it is set, and sum tau tau_hat, sum tau_hat^2 for
    the torque scale. ``report`` gives the figures of ``validation_report`` (thesis eq. 5.1, the
    module docstring's ratios) and ``torque_scale``: the least-squares c of tau ~ c tau_hat over all
    joints (1 for a right model; -1 for torques of opposite sign, 10 for a ten times larger robot)."""

    def __init__(self, n: int, min_velocity: float = 0.0):
        self.min_velocity = min_velocity
        self.samples = 0
        self.err2, self.tau2 = np.zeros(n), np.zeros(n)
        self.count_m, self.err2_m, self.tau2_m = np.zeros(n, dtype=np.int64), np.zeros(n), np.zeros(n)
        self.cross, self.model2 = np.zeros(n), np.zeros(n)

    def add(self, tau: np.ndarray, tau_hat: np.ndarray, dq: np.ndarray | None = None) -> None:
        """Samples (N, n) of measured and model torques (and velocities, for ``min_velocity``)."""
        err2 = (np.asarray(tau_hat) - np.asarray(tau)) ** 2
        tau2 = np.asarray(tau) ** 2
        self.samples += err2.shape[0]
        self.err2 += err2.sum(axis=0)
        self.tau2 += tau2.sum(axis=0)
        self.cross += (np.asarray(tau) * tau_hat).sum(axis=0)
        self.model2 += (np.asarray(tau_hat) ** 2).sum(axis=0)
        if dq is not None and self.min_velocity > 0:
            mask = np.abs(dq) >= self.min_velocity
            self.count_m += mask.sum(axis=0)
            self.err2_m += np.where(mask, err2, 0.0).sum(axis=0)
            self.tau2_m += np.where(mask, tau2, 0.0).sum(axis=0)

    def merge(self, other: "ValidationSums") -> "ValidationSums":
        for key in ("samples", "err2", "tau2", "count_m", "err2_m", "tau2_m", "cross", "model2"):
            setattr(self, key, getattr(self, key) + getattr(other, key))
        return self

    def report(self, moving: bool = True) -> dict:
        """The ``validation_report`` dictionary (``moving``: include the figures without slow samples)."""
        rows = max(self.samples, 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            relative = np.where(self.tau2 > 0, np.sqrt(self.err2 / np.where(self.tau2 > 0, self.tau2, 1)), np.nan)
            out = {"samples": int(self.samples), "rmsd": json_floats(np.sqrt(self.err2 / rows)),
                   "relative_rmsd": json_floats(relative),
                   "relative_error": float(np.sqrt(self.err2.sum()) / np.sqrt(self.tau2.sum())),
                   "torque_scale": float(self.cross.sum() / self.model2.sum()) if self.model2.sum() > 0 else None}
            if moving and self.min_velocity > 0:
                count = np.maximum(self.count_m, 1)
                rms = np.sqrt(self.tau2_m / count)
                rmsd_m = np.sqrt(self.err2_m / count)
                out["min_velocity"] = self.min_velocity
                out["moving"] = {"samples_per_joint": self.count_m.tolist(), "rmsd": json_floats(rmsd_m),
                                 "relative_rmsd": json_floats(np.where(rms > 0, rmsd_m / np.where(rms > 0, rms, 1), np.nan))}
        return out


def validation_report(tau: np.ndarray, tau_hat: np.ndarray, dq: np.ndarray | None = None,
                      min_velocity: float = 0.0) -> dict:
    """RMSD, relative RMSD and relative error, also without low-velocity samples when asked."""
    sums = ValidationSums(np.asarray(tau).shape[1], min_velocity)
    sums.add(tau, tau_hat, dq)
    return sums.report(moving=dq is not None)
