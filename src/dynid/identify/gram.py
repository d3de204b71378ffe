"""Fast accumulation of per-joint normal equations from the two-part identification regressor.

The identification regressor of a sample splits into the rigid-body regressor R (n, 10 n)
(``dynid.regressor``) and each joint's own columns O (n, e) (friction, rotor inertia,
offset: ``model.joint_columns``). Row j of R is zero before column 10 j (a joint carries
only the links after it, thesis eq. 3.17a), so joint j's Gram matrix lives on its *span*,
the columns 10 j .. 10 n of R plus its e own columns:

    G_j = [R_j  O_j]^T [R_j  O_j],   h_j = [R_j  O_j]^T tau_j

by one BLAS product per joint. Only the span's columns that belong to independent (base) parameters and can be
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
        """rigid (N, n, 10 n), own (N, n, e), tau (N, n); mask (N, n) rows to keep.

        Per joint, M = [R_j  O_j  tau_j] (its base columns only) and one symmetric product
        M^T M gives G_j, h_j and tau_j^T tau_j together."""
        for j in range(self.n):  # one gather and one BLAS product per joint
            m = np.concatenate([rigid[:, j, 10 * j:][:, self.rigid_sel[j]], own[:, j, self.own_sel[j]],
                                tau[:, j, None]], axis=1)
            if mask is not None and not mask[:, j].all():
                m = m[mask[:, j]]
            product = m.T @ m
            self.G[j] += product[:-1, :-1]
            self.h[j] += product[:-1, -1]
            self.C[j] += product[-1, -1]
            self.rows[j] += m.shape[0]
            self.tau_sum[j] += m[:, -1].sum()

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
