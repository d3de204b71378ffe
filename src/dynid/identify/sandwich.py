"""Standard deviations that the residuals support: clusters of the motion's states, two halves.

Khalil and Gautier's covariance s^2 (W^T S W)^-1 (``estimators``) holds for residuals that
are white. A log's are not: a drive's torque ripple is a function of the position, a model
that misses an effect (friction at low speed, a cogging torque) leaves a residual that is a
function of the state, and an excitation repeats its motion, so the same error comes back
every period and does not average out as white noise would. On simulated 100 Hz logs with
drive ripple the mass of a payload was off by up to 7 of its white-noise standard deviations;
on the real iiwa logs a load of zero came out 8-52 of them away from 0 (docs/identification.md,
"Payload uncertainty"). Two checks make the reported spread honest without modelling those
errors:

1. **Clusters of states.** The rows are grouped by the state s = [q, dq] they were measured in
   (k-means on the standardized states of every log together, ``StateClusters``, seeded): an
   error that is a function of the state falls in one cluster every time the motion passes
   there, in every period and in every log of the same motion. With the per-joint normal
   equations of each cluster c (A_cj, B_cj) and weights w_j, the estimate without cluster c
   is x_(-c) = (A - A_c)^+ (B - B_c) (a subtraction of normal equations), and the cluster
   jackknife

       C_clusters = (G - 1) / G sum_c (x_(-c) - mean_c x_(-c)) (x_(-c) - mean_c x_(-c))^T     (S1)

   is right for any error correlated within clusters (Bell & McCaffrey's CR3; unlike the
   plain cluster "sandwich", the shrinkage of the residuals by the fit of many unknowns does not
   bias it low). The reported covariance is C_clusters with each variance raised to at least
   Khalil-Gautier's (a congruence by a diagonal, so it stays a covariance): the white-noise
   figure stays a floor.
2. **Halves** (the data checked against themselves). x_1 and x_2, fitted to the first and the
   second half of every log, differ by d = x_1 - x_2. A half carries about half of the scores'
   covariance M = A C A of the whole, so C_h = A_h^+ (M / 2) A_h^+ and

       z_k = |d_k| / sqrt((C_1 + C_2)_kk)                                                   (S2)

   for the unknowns compared (a payload's mass and first moments). Each z_k is about a standard
   normal; beyond ``HALVES_LIMIT`` = 3.5 the halves disagree by more than the clusters allow
   (the robot changed within the log: friction warming up, a drifting offset) and the
   covariance is scaled by (z / 2)^2, so that the halves differ by two of their standard
   deviations; a note says so. (A chi-square of all unknowns against a covariance estimated
   from some twenty clusters would be inflated by Hotelling's nu / (nu - p - 1): twice as large
   for ten unknowns.)

An error common to the whole data set (a drive gain that is off, a wrong gravity) leaves no
trace in either: it needs knowledge from outside the log (``payload``'s ``gain_std``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynid.identify.normal_equations import NormalEquations

MIN_BLOCKS = 8  # fewer clusters give no usable spread: the white-noise covariance is kept
CLUSTERS = 24  # clusters of the motion's states (``StateClusters``)
CLUSTER_ROWS = 20_000  # at most this many states are clustered (the rest are assigned to them)
HALVES_LIMIT = 3.5  # |z| of a halves' difference beyond which the log disagrees with itself


@dataclass
class StateClusters:
    """Clusters of the motion's states s = [q, dq] (standardized by ``center`` and ``scale``,
    (2 n,) each), ``centroids`` (k, 2 n): k-means (seeded) on at most ``CLUSTER_ROWS`` states."""

    center: np.ndarray
    scale: np.ndarray
    centroids: np.ndarray

    @classmethod
    def fit(cls, states: list[np.ndarray], count: int = CLUSTERS, seed: int = 0) -> "StateClusters":
        """From (N_i, 2 n) states of every log (each log's rows evenly thinned to its share)."""
        from scipy.cluster.vq import kmeans2

        share = max(CLUSTER_ROWS // max(len(states), 1), 1)
        rows = [x[np.linspace(0, len(x) - 1, min(share, len(x))).astype(int)] for x in states if len(x)]
        data = np.concatenate(rows)
        center, scale = data.mean(axis=0), data.std(axis=0)
        scale = np.where(scale > 0, scale, 1.0)
        count = max(1, min(count, len(data) // 4))
        centroids, _ = kmeans2((data - center) / scale, count, seed=seed, minit="++")
        return cls(center, scale, centroids)

    def labels(self, states: np.ndarray) -> np.ndarray:
        """(N,) the cluster of each state (the nearest centroid)."""
        from scipy.cluster.vq import vq

        return vq((states - self.center) / self.scale, self.centroids, check_finite=False)[0]


def jackknife_covariance(blocks: list[NormalEquations], weights: np.ndarray, solve) -> np.ndarray | None:
    """C_clusters (S1) of the clusters' normal equations ``blocks``, weights w_j; ``solve(a, rhs)``
    -> x. None with fewer than MIN_BLOCKS clusters."""
    used = [ne for ne in blocks if ne.rows.sum() > 0]
    if len(used) < MIN_BLOCKS:
        return None
    parts = [(np.tensordot(weights, ne.A, axes=1), weights @ ne.B) for ne in used]
    a = sum(p[0] for p in parts)
    rhs = sum(p[1] for p in parts)
    xs = np.array([solve(a - a_c, rhs - r_c) for a_c, r_c in parts])  # loop over the G clusters
    d = xs - xs.mean(axis=0)
    return d.T @ d * (len(used) - 1.0) / len(used)


def floored(clustered: np.ndarray | None, white: np.ndarray) -> np.ndarray:
    """``clustered`` with each variance raised to at least ``white``'s (D C D, D diagonal >= 1)."""
    if clustered is None:
        return white
    vc, vw = np.diag(clustered), np.diag(white)
    d = np.where(vc > 0, np.sqrt(np.maximum(vw / np.where(vc > 0, vc, 1.0), 1.0)), 1.0)
    out = clustered * d[:, None] * d[None, :]
    zero = ~(vc > 0)
    out[zero, :], out[:, zero] = white[zero, :], white[:, zero]
    return out


@dataclass
class HalvesCheck:
    """(S2): the largest |z| of the compared unknowns' halves difference, how many were compared,
    the limit; beyond it ``scale`` = (z / 2)^2 multiplies the covariance (else 1)."""

    largest: float
    compared: int
    limit: float = HALVES_LIMIT

    @property
    def exceeded(self) -> bool:
        return self.largest > self.limit

    @property
    def scale(self) -> float:
        return (self.largest / 2.0) ** 2 if self.exceeded else 1.0

    def to_dict(self) -> dict:
        return {"largest_z": float(self.largest), "compared": int(self.compared), "limit": float(self.limit),
                "exceeded": bool(self.exceeded)}


def halves_check(halves: tuple[list[NormalEquations], list[NormalEquations]], weights: np.ndarray, solve,
                 covariance: np.ndarray, keep: np.ndarray) -> HalvesCheck | None:
    """(S2) for the normal equations of two halves; ``solve(a, rhs)`` -> (x, A^+) of a weighted
    total; ``covariance``: that of the estimate from everything; ``keep``: the unknowns compared.
    None when a half is empty or nothing is compared."""
    parts = [[ne for ne in part if ne.rows.sum() > 0] for part in halves]
    if not all(parts) or not len(keep):
        return None
    totals = [(sum(np.tensordot(weights, ne.A, axes=1) for ne in part), sum(weights @ ne.B for ne in part))
              for part in parts]
    a = totals[0][0] + totals[1][0]
    meat = a @ covariance @ a  # the scores' covariance of the whole; a half holds about half of it
    (x1, inv1), (x2, inv2) = [solve(a_h, rhs_h) for a_h, rhs_h in totals]
    c = 0.5 * (inv1 @ meat @ inv1 + inv2 @ meat @ inv2)
    keep = np.asarray(keep)
    sd = np.sqrt(np.maximum(np.diag(c)[keep], 1e-300))
    z = np.abs(x1 - x2)[keep] / sd
    return HalvesCheck(float(np.max(z)), int(keep.size))
