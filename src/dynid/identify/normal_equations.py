"""Streaming normal equations, kept per joint, for identification in bounded memory.

For the stacked system tau = W beta (rows = samples x joints) least squares needs only

    A_j = W_j^T W_j,   B_j = W_j^T tau_j,   C_j = tau_j^T tau_j,   r_j = rows of joint j

for each joint j (thesis eq. 2.9 written with sums). They add up chunk by chunk, so hours of
1 kHz data need O(n b^2) memory. Keeping them per joint gives, for any beta, the residual sum
of squares of each joint, RSS_j = C_j - 2 B_j^T beta + beta^T A_j beta, which the weighted
(per-joint variance) and physically consistent estimators use. Row j of the regressor of a
serial chain has zeros in the columns of the links before j (``RegressorGram`` in
gram.py uses that to accumulate long logs fast).

The sums are a value with its algebra: ``a + b`` (two sets of samples), ``a - fold`` (a fold
left out: held-out validation by subtraction, ``crossval``, ``fleet.validation``), ``copy``,
``reduce`` (some parameters held at known values, ``identify.undetermined``), and
``normalized_spectrum`` (the conditioning and the solve of every estimator, thesis eq. 2.13).
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
        """Add ``other``'s samples in place (``self += other``); returns self."""
        self.A += other.A
        self.B += other.B
        self.C += other.C
        self.rows += other.rows
        self.tau_sum += other.tau_sum
        return self

    __iadd__ = merge

    def __isub__(self, other: "NormalEquations") -> "NormalEquations":
        """Remove terms added before, in place (e.g. the rests' levels of
        ``identify.rest_levels``, H1)."""
        self.A -= other.A
        self.B -= other.B
        self.C -= other.C
        self.rows -= other.rows
        self.tau_sum -= other.tau_sum
        return self

    def copy(self) -> "NormalEquations":
        """An independent copy (same layout)."""
        out = NormalEquations(self.n, self.b, self.columns, self.positions)
        return out.merge(self)

    def __add__(self, other: "NormalEquations") -> "NormalEquations":
        """The equations of both sets of samples."""
        return self.copy().merge(other)

    def __sub__(self, other: "NormalEquations") -> "NormalEquations":
        """The equations without ``other``'s samples (``other`` a part of these: a fold)."""
        out = NormalEquations(self.n, self.b, self.columns, self.positions)
        out.A, out.B, out.C = self.A - other.A, self.B - other.B, self.C - other.C
        out.rows, out.tau_sum = self.rows - other.rows, self.tau_sum - other.tau_sum
        return out

    def reduce(self, fixed: np.ndarray, values: np.ndarray) -> "NormalEquations":
        """The equations of the other unknowns with ``fixed`` (k,) ones held at ``values`` (k,):
        tau' = tau - W_U beta_U = W_D beta_D, per joint (A_DD, B_D - A_DU beta_U,
        C - 2 B_U beta_U + beta_U A_UU beta_U). The torque sums are kept (they only scale WLS's floor)."""
        fixed, values = np.asarray(fixed, dtype=np.int64), np.asarray(values, dtype=float)
        keep = np.setdiff1d(np.arange(self.b), fixed)
        out = NormalEquations(self.n, keep.size)
        a_du = self.A[:, keep][:, :, fixed]
        out.A = self.A[:, keep][:, :, keep].copy()
        out.B = self.B[:, keep] - a_du @ values
        out.C = (self.C - 2.0 * self.B[:, fixed] @ values
                 + np.einsum("jab,a,b->j", self.A[:, fixed][:, :, fixed], values, values))
        out.rows, out.tau_sum = self.rows.copy(), self.tau_sum.copy()
        return out

    def scaled(self, scale: np.ndarray) -> "NormalEquations":
        """The equations of the samples with joint j's rows (regressor and torque) multiplied by
        ``scale[j]`` (n,): weighted least squares with weights w_j = scale_j^2."""
        s = np.asarray(scale, dtype=float)
        out = NormalEquations(self.n, self.b, self.columns, self.positions)
        out.A, out.B, out.C = self.A * (s**2)[:, None, None], self.B * (s**2)[:, None], self.C * s**2
        out.rows, out.tau_sum = self.rows.copy(), self.tau_sum * s
        return out

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

    def normalized_spectrum(self, weights: np.ndarray | None = None) -> "Spectrum":
        """``spectrum`` of the joint-weighted normal matrix (``totals(weights)``)."""
        return spectrum(self.totals(weights)[0])

    def active_counts(self) -> np.ndarray:
        """(n,) number of unknowns that enter each joint's rows."""
        # columns that are rounding noise (|w| ~ 1e-16 |largest|) have squared norms ~1e-32
        return np.array([int(np.sum(np.diag(a) > 1e-20 * max(float(np.diag(a).max()), 1e-300))) for a in self.A])

    def tau_variance(self) -> np.ndarray:
        """(n,) variance of the measured torque of each joint."""
        rows = np.maximum(self.rows, 1)
        mean = self.tau_sum / rows
        return np.maximum(self.C / rows - mean**2, 0.0)


RANK_TOL = 1e-14  # eigenvalue of the normalized matrix below this x the largest: a lost direction
# (cond = sqrt(lam_max / lam_min), so this is a condition number of 1e7, identify's default refusal limit)


class Spectrum:
    """Eigendecomposition of a column-normalized normal matrix (thesis eq. 2.13-2.16).

    For A (b, b) >= 0 with diagonal a_kk: D = diag(1 / sqrt(a_kk)) over the columns with
    a_kk > 0 (``live``; the others, ``dead``, are columns the data do not excite), and
    D A D = V diag(lam) V^T over the live ones, lam ascending. The condition number of the
    normalized regressor is sqrt(lam_max / lam_min) (infinite with a dead column); its rank
    counts the eigenvalues above ``RANK_TOL`` x the largest. Every estimator's conditioning
    and solve, the physically consistent least-squares form and the payload's determined
    parameters read this one decomposition.
    """

    def __init__(self, a: np.ndarray):
        diag = np.diag(a)
        self.b = a.shape[0]
        self.dead = np.flatnonzero(~(diag > 0))
        self.live = np.flatnonzero(diag > 0)
        self.d = np.zeros(self.b)
        self.d[self.live] = 1.0 / np.sqrt(diag[self.live])
        dl = self.d[self.live]
        if self.live.size:
            self.lam, self.vec = np.linalg.eigh(a[np.ix_(self.live, self.live)] * dl[:, None] * dl[None, :])
        else:
            self.lam, self.vec = np.zeros(1), np.zeros((0, 1))

    @property
    def cond(self) -> float:
        """sqrt(lam_max / lam_min) of the normalized matrix; inf with a dead column or lam_min <= 0."""
        return float(np.sqrt(self.lam[-1] / self.lam[0])) if self.dead.size == 0 and self.lam[0] > 0 else float("inf")

    def kept(self, tol: float = RANK_TOL) -> np.ndarray:
        """(live,) True for the eigen-directions above ``tol`` x the largest eigenvalue."""
        return self.lam > tol * max(float(self.lam[-1]), 1e-300)

    @property
    def rank(self) -> int:
        return int(np.sum(self.kept())) if self.live.size else 0

    def inverse(self) -> np.ndarray:
        """A^-1 = D (V diag(1/lam) V^T) D (all columns live and lam > 0)."""
        d = self.d
        return ((self.vec / self.lam) @ self.vec.T) * d[:, None] * d[None, :]

    def pseudo_inverse(self, tol: float = RANK_TOL) -> np.ndarray:
        """A^+ = D (V_k diag(1/lam_k) V_k^T) D over the directions above ``tol`` x the largest
        eigenvalue (``kept``); the rows and columns of dead columns are 0."""
        keep, d = self.kept(tol), self.d[self.live]
        out = np.zeros((self.b, self.b))
        out[np.ix_(self.live, self.live)] = (d[:, None] * self.vec[:, keep] / self.lam[keep]) @ (self.vec[:, keep].T
                                                                                                * d[None, :])
        return out

    def null_directions(self, tol: float = RANK_TOL) -> np.ndarray:
        """(b, k) eigen-directions (in the full parameter space, normalized units) at or below
        ``tol`` x the largest eigenvalue, zero on the dead columns."""
        out = np.zeros((self.b, int(np.sum(~self.kept(tol)))))
        out[self.live] = self.vec[:, ~self.kept(tol)]
        return out

    def least_squares_form(self, rhs: np.ndarray, tol: float = RANK_TOL) -> tuple[np.ndarray, np.ndarray]:
        """(G, c) with ||G beta - c||^2 = beta^T A beta - 2 rhs^T beta + const, on the directions
        above ``tol`` (those below: the data say nothing about them): G = Lambda^1/2 V^T D^-1."""
        keep = self.kept(tol)
        root = np.sqrt(self.lam[keep])
        g = np.zeros((int(keep.sum()), self.b))
        g[:, self.live] = (root[:, None] * self.vec[:, keep].T) * (1.0 / self.d[self.live])[None, :]
        c = (self.vec[:, keep].T @ (self.d[self.live] * rhs[self.live])) / root
        return g, c


def spectrum(a: np.ndarray) -> Spectrum:
    """The ``Spectrum`` of a normal matrix A (b, b)."""
    return Spectrum(a)
