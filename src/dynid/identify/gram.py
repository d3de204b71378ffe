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

With a coupled transmission the own columns O are the motors' (``model.motor_columns``):
joint j's row holds R_kj O_k for every motor k whose row of R touches it (model eq. C1). With
mimic joints a row of R is not zero before column 10 j, so the span starts at column 0.

``add_motion`` (a tree robot, the streaming path) never forms R: the regressor kernel writes
each joint's span columns as rows of a lane buffer X_j = [R_j O_j tau_j]^T (columns = samples,
``dynid.dynamics.regressor.regressor_rows_serial``) and ``gram_kernel.gram_block`` accumulates the
lower triangle of X_j X_j^T from it, all compiled and without the GIL (no gather, no copy).

Both paths also sum the rows of [R_j O_j tau_j] over each rest of joint j when given its rests
(``rest_levels.RestRuns``): the S and s of the rest levels (``identify.rest_levels``, H1), from
the regressor the Gram is made of (``run_totals`` puts them in base-parameter order).
"""

from __future__ import annotations

import numpy as np

from dynid.dynamics.lanes import kernel_arrays
from dynid.dynamics.regressor import regressor_rows_serial
from dynid.identify.block_regressor import rigid_regressor_block
from dynid.identify.gram_kernel import gram_block
from dynid.identify.model import joint_column_indices
from dynid.identify.normal_equations import NormalEquations


class RegressorGram:
    """Per-joint base-parameter Gram matrices (module docstring).

    table: (n, p) identifiability table (``base.identifiability_table``): which full
    parameters can act on each joint."""

    def __init__(self, robot, options, base, table: np.ndarray):
        n, bodies = robot.n, robot.n_bodies
        own = joint_column_indices(robot, options)
        r = robot.motor_rows
        independent = np.zeros(table.shape[1], dtype=bool)
        independent[base.independent] = True
        self.n, self.rank, self.bodies = n, base.rank, bodies
        self.start = [0 if robot.has_mimic else 10 * j for j in range(n)]
        self.rigid_sel, self.own_parts, self.span = [], [], []
        for j in range(n):
            rigid = np.arange(self.start[j], 10 * bodies)
            rigid = rigid[independent[rigid] & table[j, rigid]]
            self.rigid_sel.append(rigid - self.start[j])  # local to the view rigid[:, j, start:]
            parts, span = [], [rigid]
            for k in np.flatnonzero(r[:, j]):  # motors acting on joint j (k == j alone without coupling)
                mine = np.flatnonzero(independent[own[k]] & table[j, own[k]])
                parts.append((int(k), float(r[k, j]), mine))
                span.append(own[k][mine])
            self.own_parts.append(parts)
            self.span.append(np.concatenate(span))
        position = np.full(table.shape[1], -1)
        position[base.independent] = np.arange(base.rank)
        self.position = [position[span] for span in self.span]  # where the span's columns sit in the base vector
        self.tau_row = np.array([span.size for span in self.span], dtype=np.int64)  # tau_j follows its span
        self.transposed = not robot.has_mimic  # add_motion's lane buffer (module docstring)
        if self.transposed:
            self._lane_layout()
        self.G = [np.zeros((s.size, s.size)) for s in self.span]
        self.h = [np.zeros(s.size) for s in self.span]
        self.C = np.zeros(n)
        self.rows = np.zeros(n, dtype=np.int64)
        self.tau_sum = np.zeros(n)

    def add(self, rigid: np.ndarray, own: np.ndarray, tau: np.ndarray, mask: np.ndarray | None = None,
            run: np.ndarray | None = None, run_sums: np.ndarray | None = None) -> None:
        """rigid (N, n, 10 n), own (N, n, e), tau (N, n); mask (N, n) rows to keep; run (N, n) the
        rest of each row (``RestRuns.label``, -1: none; rows at rest are kept rows) whose rows of M
        are summed into run_sums (``new_run_sums``).

        Per joint, M = [R_j  O_j  tau_j] (its base columns only) and one symmetric product
        M^T M gives G_j, h_j and tau_j^T tau_j together."""
        for j in range(self.n):  # one gather and one BLAS product per joint
            motors = [own[:, k, mine] if ratio == 1.0 else ratio * own[:, k, mine]
                      for k, ratio, mine in self.own_parts[j]]
            m = np.concatenate([rigid[:, j, self.start[j]:][:, self.rigid_sel[j]], *motors,
                                tau[:, j, None]], axis=1)
            if run is not None:
                at_rest = np.flatnonzero(run[:, j] >= 0)
                if at_rest.size:  # a rest's rows are contiguous: one reduceat per joint
                    label = run[at_rest, j]
                    first = np.flatnonzero(np.diff(label, prepend=-1))
                    run_sums[label[first], :m.shape[1]] += np.add.reduceat(m[at_rest], first, axis=0)
            if mask is not None and not mask[:, j].all():
                m = m[mask[:, j]]
            product = m.T @ m
            self.G[j] += product[:-1, :-1]
            self.h[j] += product[:-1, -1]
            self.C[j] += product[-1, -1]
            self.rows[j] += m.shape[0]
            self.tau_sum[j] += m[:, -1].sum()

    def _lane_layout(self) -> None:
        """Rows of X_j in the lane buffer: the span's rigid columns, its own columns, tau_j, zero
        rows up to a multiple of 4 (the product's blocks), and row W for the columns not wanted."""
        n, sizes = self.n, [s.size for s in self.span]
        self.width = 4 * ((max(sizes) + 4) // 4)  # W
        self.row_of = np.full((n, 10 * self.bodies), self.width, dtype=np.int64)
        entries = max(sum(mine.size for _, _, mine in parts) for parts in self.own_parts)
        self.own_rows = np.full((n, max(entries, 1), 3), -1, dtype=np.int64)
        self.own_ratio = np.zeros((n, max(entries, 1)))
        for j, sel in enumerate(self.rigid_sel):
            self.row_of[j, self.start[j] + sel] = np.arange(sel.size)
            row, e = sel.size, 0
            for k, ratio, mine in self.own_parts[j]:
                for col in mine:
                    self.own_rows[j, e], self.own_ratio[j, e] = (row, k, col), ratio
                    row, e = row + 1, e + 1
        self.lower = np.zeros((n, self.width, self.width))

    def new_buffer(self, block: int) -> np.ndarray:
        """Scratch of ``add_motion`` for up to ``block`` samples (one per thread)."""
        if self.transposed:
            return np.zeros((self.n, self.width + 1, block))
        return np.zeros((block, self.n, 10 * self.bodies))

    def new_run_sums(self, count: int) -> np.ndarray:
        """Zeroed sums of ``count`` rests for ``add``/``add_motion`` (row r: the span's columns of
        its joint, then its torque at ``tau_row``)."""
        return np.zeros((count, int(self.tau_row.max()) + 1))

    def run_totals(self, joint: np.ndarray, run_sums: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(S (R, b) the summed base regressor rows, s (R,) the summed torque) of rests whose
        joints are ``joint`` (R,), from their ``run_sums``."""
        y_sum, tau_sum = np.zeros((joint.size, self.rank)), np.zeros(joint.size)
        for j in range(self.n):  # loop over joints, their rests at once
            mine = np.flatnonzero(joint == j)
            y_sum[np.ix_(mine, self.position[j])] = run_sums[mine, :self.tau_row[j]]
            tau_sum[mine] = run_sums[mine, self.tau_row[j]]
        return y_sum, tau_sum

    def add_motion(self, robot, q, dq, ddq, own: np.ndarray, tau: np.ndarray, mask: np.ndarray | None,
                   buffer: np.ndarray, run: np.ndarray | None = None, run_sums: np.ndarray | None = None) -> None:
        """Like ``add`` from the motion (N, n) C-contiguous q, dq, ddq instead of the rigid
        regressor, into ``buffer`` (``new_buffer``); the heavy parts run without the GIL."""
        count = q.shape[0]
        if not self.transposed:
            rigid = buffer[:count]
            self.add(rigid_regressor_block(robot, q, dq, ddq, rigid), own, tau, mask, run, run_sums)
            return
        keep = np.ones((count, self.n), dtype=bool) if mask is None else np.ascontiguousarray(mask)
        if run is None:
            run, run_sums = np.empty((0, self.n), dtype=np.int64), np.empty((0, 1))
        regressor_rows_serial(q, dq, ddq, *kernel_arrays(robot), self.row_of, buffer)
        gram_block(np.ascontiguousarray(own), self.own_rows, self.own_ratio, self.tau_row, np.ascontiguousarray(tau),
                   keep, buffer, self.lower, self.rows, self.tau_sum, np.ascontiguousarray(run), run_sums)

    def fold(self) -> "RegressorGram":
        """Move the lower triangles ``add_motion`` accumulated into G, h, C (``merge`` and
        ``to_normal_equations`` do it first: read G, h, C directly only after a fold)."""
        if self.transposed:
            for j, c in enumerate(self.tau_row):
                lower = np.tril(self.lower[j, :c + 1, :c + 1])  # (diagonal 4 x 4 blocks are whole)
                product = lower + np.tril(lower, -1).T  # the symmetric X_j X_j^T
                self.G[j] += product[:-1, :-1]
                self.h[j] += product[:-1, -1]
                self.C[j] += product[-1, -1]
            self.lower[:] = 0.0
        return self

    def merge(self, other: "RegressorGram") -> "RegressorGram":
        """Add another accumulator of the same robot and model (e.g. another thread's)."""
        self.fold(), other.fold()
        for j in range(self.n):
            self.G[j] += other.G[j]
            self.h[j] += other.h[j]
        self.C += other.C
        self.rows += other.rows
        self.tau_sum += other.tau_sum
        return self

    def to_normal_equations(self, base) -> NormalEquations:
        """Normal equations of the base regressor Y[..., base.independent], per joint."""
        self.fold()
        position = np.full(base.K.shape[1], -1)
        position[base.independent] = np.arange(base.rank)
        ne = NormalEquations(self.n, base.rank)
        for j, span in enumerate(self.span):
            pos = position[span]
            ne.A[j][np.ix_(pos, pos)] = self.G[j]
            ne.B[j, pos] = self.h[j]
        ne.C[:], ne.rows[:], ne.tau_sum[:] = self.C, self.rows, self.tau_sum
        return ne
