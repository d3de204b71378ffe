"""Streaming normal equations, kept per joint, for identification in bounded memory.

For the stacked system tau = W beta (rows = samples x joints) least squares needs only

    A_j = W_j^T W_j,   B_j = W_j^T tau_j,   C_j = tau_j^T tau_j,   r_j = rows of joint j

for each joint j (thesis eq. 2.9 written with sums). They add up chunk by chunk, so hours of
1 kHz data need O(n b^2) memory. Keeping them per joint gives, for any beta, the residual sum
of squares of each joint, RSS_j = C_j - 2 B_j^T beta + beta^T A_j beta, which the weighted
(per-joint variance) and physically consistent estimators use. Row j of the regressor of a
serial chain has zeros in the columns of the links before j (``RegressorGram`` in
gram.py uses that to accumulate long logs fast).
"""

from __future__ import annotations

import numpy as np


class NormalEquations:
    """Accumulator of per-joint normal equations.

    n: joints; b: unknowns; columns[j]: indices into the last axis of the regressor given to
    ``add`` that can be non-zero in joint j's rows; positions[j]: where those unknowns sit
    in the (b,) parameter vector.
    """

    def __init__(self, n: int, b: int, columns: list[np.ndarray] | None = None,
                 positions: list[np.ndarray] | None = None):
        self.n, self.b = n, b
        self.columns = columns or [np.arange(b)] * n
        self.positions = positions or [np.arange(b)] * n
        self.A = np.zeros((n, b, b))
        self.B = np.zeros((n, b))
        self.C = np.zeros(n)
        self.rows = np.zeros(n, dtype=np.int64)
        self.tau_sum = np.zeros(n)

    def add(self, y: np.ndarray, tau: np.ndarray, mask: np.ndarray | None = None) -> None:
        """Add samples: y (N, n, p_in) regressor, tau (N, n) torques, mask (N, n) rows to keep."""
        for j in range(self.n):  # loop over joints; each joint's rows are one BLAS product
            cols, pos = self.columns[j], self.positions[j]
            wj = y[:, j, cols] if len(cols) != y.shape[2] else y[:, j, :]
            tj = tau[:, j]
            if mask is not None:
                wj, tj = wj[mask[:, j]], tj[mask[:, j]]
            gram = wj.T @ wj
            self.A[j][np.ix_(pos, pos)] += gram
            self.B[j, pos] += wj.T @ tj
            self.C[j] += tj @ tj
            self.rows[j] += tj.shape[0]
            self.tau_sum[j] += tj.sum()

    def merge(self, other: "NormalEquations") -> "NormalEquations":
        self.A += other.A
        self.B += other.B
        self.C += other.C
        self.rows += other.rows
        self.tau_sum += other.tau_sum
        return self

    def leading(self, b: int) -> "NormalEquations":
        """The normal equations of the first ``b`` unknowns alone (the others' columns dropped, not
        solved for): e.g. the static model's part of a model with friction drift terms."""
        out = NormalEquations(self.n, b)
        out.A, out.B = self.A[:, :b, :b].copy(), self.B[:, :b].copy()
        out.C, out.rows, out.tau_sum = self.C.copy(), self.rows.copy(), self.tau_sum.copy()
        return out

    def totals(self, weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(A, B) summed over joints, each joint weighted by weights[j] (e.g. 1 / sigma_j^2)."""
        w = np.ones(self.n) if weights is None else np.asarray(weights, dtype=float)
        return np.tensordot(w, self.A, axes=1), w @ self.B

    def residual_ss(self, beta: np.ndarray) -> np.ndarray:
        """RSS_j (n,) = ||tau_j - W_j beta||^2 from the sums (>= 0 up to rounding)."""
        rss = self.C - 2.0 * self.B @ beta + np.einsum("jab,a,b->j", self.A, beta, beta)
        return np.maximum(rss, 0.0)

    def active_counts(self) -> np.ndarray:
        """(n,) number of unknowns that enter each joint's rows."""
        # columns that are rounding noise (|w| ~ 1e-16 |largest|) have squared norms ~1e-32
        return np.array([int(np.sum(np.diag(a) > 1e-20 * max(float(np.diag(a).max()), 1e-300))) for a in self.A])

    def tau_variance(self) -> np.ndarray:
        """(n,) variance of the measured torque of each joint."""
        rows = np.maximum(self.rows, 1)
        mean = self.tau_sum / rows
        return np.maximum(self.C / rows - mean**2, 0.0)
