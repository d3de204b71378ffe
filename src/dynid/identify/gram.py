"""Fast accumulation of per-joint normal equations from the two-part identification regressor.

The identification regressor of a sample splits into the rigid-body regressor R (n, 10 n)
(``dynid.regressor``) and each joint's own columns O (n, e) (friction, rotor inertia,
offset: ``model.joint_columns``). Row j of R is zero before column 10 j (a joint carries
only the links after it, thesis eq. 3.17a), so joint j's Gram matrix lives on its *span*,
the columns 10 j .. 10 n of R plus its e own columns:

    G_j = [R_j  O_j]^T [R_j  O_j],   h_j = [R_j  O_j]^T tau_j

by BLAS. Only the span's columns that belong to independent (base) parameters and can be
non-zero in joint j's rows are gathered (for the er3a this more than halves the products);
they are exactly the base regressor's columns, Y_b = Y[..., independent], so G_j are the
base-parameter normal equations of joint j (``to_normal_equations``).
"""

from __future__ import annotations

import numpy as np

from dynid.identify.model import joint_column_indices
from dynid.identify.normal_equations import NormalEquations


class RegressorGram:
    """Per-joint base-parameter Gram matrices (module docstring).

    table: (n, p) identifiability table (``base.identifiability_table``): which full
    parameters can act on each joint."""

    def __init__(self, robot, options, base, table: np.ndarray):
        n = robot.n
        own = joint_column_indices(robot, options)
        independent = np.zeros(table.shape[1], dtype=bool)
        independent[base.independent] = True
        self.n, self.rank = n, base.rank
        self.rigid_sel, self.own_sel, self.span = [], [], []
        for j in range(n):
            rigid = np.arange(10 * j, 10 * n)
            rigid = rigid[independent[rigid] & table[j, rigid]]
            mine = np.flatnonzero(independent[own[j]] & table[j, own[j]])
            self.rigid_sel.append(rigid - 10 * j)  # local to the view rigid[:, j, 10 j:]
            self.own_sel.append(mine)
            self.span.append(np.concatenate([rigid, own[j][mine]]))
        self.G = [np.zeros((s.size, s.size)) for s in self.span]
        self.h = [np.zeros(s.size) for s in self.span]
        self.C = np.zeros(n)
        self.rows = np.zeros(n, dtype=np.int64)
        self.tau_sum = np.zeros(n)

    def add(self, rigid: np.ndarray, own: np.ndarray, tau: np.ndarray, mask: np.ndarray | None = None) -> None:
        """rigid (N, n, 10 n), own (N, n, e), tau (N, n); mask (N, n) rows to keep."""
        n = self.n
        for j in range(n):  # one set of BLAS products per joint
            r = rigid[:, j, 10 * j:][:, self.rigid_sel[j]]  # gathers the base columns only
            o = own[:, j, self.own_sel[j]]
            t = tau[:, j]
            if mask is not None and not mask[:, j].all():
                keep = mask[:, j]
                r, o, t = r[keep], o[keep], t[keep]
            k = r.shape[1]
            g = self.G[j]
            g[:k, :k] += r.T @ r
            ro = r.T @ o
            g[:k, k:] += ro
            g[k:, :k] += ro.T
            g[k:, k:] += o.T @ o
            self.h[j][:k] += r.T @ t
            self.h[j][k:] += o.T @ t
            self.C[j] += t @ t
            self.rows[j] += t.shape[0]
            self.tau_sum[j] += t.sum()

    def merge(self, other: "RegressorGram") -> "RegressorGram":
        """Add another accumulator of the same robot and model (e.g. another thread's)."""
        for j in range(self.n):
            self.G[j] += other.G[j]
            self.h[j] += other.h[j]
        self.C += other.C
        self.rows += other.rows
        self.tau_sum += other.tau_sum
        return self

    def to_normal_equations(self, base) -> NormalEquations:
        """Normal equations of the base regressor Y[..., base.independent], per joint."""
        position = np.full(base.K.shape[1], -1)
        position[base.independent] = np.arange(base.rank)
        ne = NormalEquations(self.n, base.rank)
        for j, span in enumerate(self.span):
            pos = position[span]
            ne.A[j][np.ix_(pos, pos)] = self.G[j]
            ne.B[j, pos] = self.h[j]
        ne.C[:], ne.rows[:], ne.tau_sum[:] = self.C, self.rows, self.tau_sum
        return ne
