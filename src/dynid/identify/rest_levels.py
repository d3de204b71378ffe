"""The torque static friction holds at rest: one unknown constant per joint and rest.

Where a joint stands still (``data.rest``: its velocity set to 0) its torque is the model's
(no friction at zero velocity) plus what static friction holds, h_{j,k}: constant over the
rest k, anywhere within +-Fs, different from one rest to the next (the real iiwa's rests
differ by 0.1-0.4 N m). Fitted as measured, h biases the parameters that can mimic a
constant (gravity); left out, the rest rows lose what they do carry: a joint held still
while the others move sees their coupling and gravity change. So each rest gets an unknown
level of its own, eliminated from the normal equations (Frisch-Waugh: the rows of a rest
enter through their variation about its mean only):

    A_j -= S S^T / m,   B_j -= S s / m,   C_j -= s^2 / m,   rows_j -= 1               (H1)

with S = sum y_j(t) (b,) and s = sum tau_j(t) over the m fitted rows t of rest k of joint j
(y_j: joint j's row of the base regressor). A rest of the whole robot (nothing moves) thus
gives nothing; a joint held still through a segment gives what a per-segment offset would
leave. With a coupled transmission a row of joint i holds the static friction of every
motor at rest that acts on it (``pipeline.rest_rows``); its rests are the runs of such rows.

``RestLevels`` accumulates (H1) over a stream of chunks in time order (a rest that goes on
into the next chunk is continued, so the terms do not depend on how a log is cut into
chunks); a rest ends with its run, at the end of a segment, or where the caller closes it
(a fold's or a time block's end, ``close=True``). ``remove_levels`` applies (H1) to
in-memory rows directly (the mean of each rest subtracted from its rows).
"""

from __future__ import annotations

import numpy as np

from dynid.identify.model import identification_regressor, place_motor_columns
from dynid.identify.normal_equations import NormalEquations

BLOCK = 2048  # rows of the regressor evaluated at a time


def runs(flags: np.ndarray) -> list[tuple[int, int]]:
    """[(start, stop), ...] of the runs of True in flags (N,)."""
    padded = np.concatenate([[False], flags, [False]]).astype(np.int8)
    edges = np.flatnonzero(np.diff(padded))
    return list(zip(edges[::2].tolist(), edges[1::2].tolist()))


def base_rows(robot, data, rows: np.ndarray, options, base) -> np.ndarray:
    """(m, n, b) base regressor at the samples ``rows`` of prepared ``data`` (its exactly
    filtered own columns when decimation made them), BLOCK rows at a time."""
    out = np.empty((rows.size, robot.n, base.rank))
    for s in range(0, rows.size, BLOCK):
        pick = rows[s:s + BLOCK]
        y = identification_regressor(robot, data.q[pick], data.dq[pick], data.ddq[pick], options)
        if data.own is not None:
            place_motor_columns(robot, options, data.own[pick], y)
        out[s:s + pick.size] = y[..., base.independent]
    return out


class RestLevels:
    """(H1) accumulated over chunks in time order (module docstring); ``take`` returns the terms
    to subtract (a ``NormalEquations``) and starts afresh."""

    def __init__(self, robot, options, base):
        self.robot, self.options, self.base = robot, options, base
        self.open: list[list | None] = [None] * robot.n  # per joint: [S, s, m] of a rest reaching the chunk's end
        self.terms = NormalEquations(robot.n, base.rank)

    def add(self, data, rest: np.ndarray, close: bool) -> None:
        """Rows of a prepared chunk: rest (N, n) the fitted rows of joints at rest; ``close``: the
        chunk ends a segment (or a fold, a block), so every rest still open ends with it."""
        from_start = [(self.open[j] is not None) for j in range(self.robot.n)]
        rows = np.flatnonzero(rest.any(axis=1))
        y = base_rows(self.robot, data, rows, self.options, self.base) if rows.size else None
        where = np.full(rest.shape[0], -1)
        where[rows] = np.arange(rows.size)
        for j in range(self.robot.n):  # loop over joints and their rests, not samples
            pieces = runs(rest[:, j])
            if from_start[j] and (not pieces or pieces[0][0] != 0):
                self._end(j)  # the open rest ended before this chunk's first row
            for start, stop in pieces:
                k = where[start:stop]
                total = [y[k, j].sum(axis=0), float(data.tau[start:stop, j].sum()), stop - start]
                if start == 0 and self.open[j] is not None:
                    total = [a + b for a, b in zip(self.open[j], total)]
                self.open[j] = total
                if stop < rest.shape[0] or close:
                    self._end(j)
        if close:
            for j in range(self.robot.n):
                self._end(j)

    def _end(self, j: int) -> None:
        if self.open[j] is None:
            return
        s_y, s_tau, m = self.open[j]
        self.terms.A[j] += np.outer(s_y, s_y) / m
        self.terms.B[j] += s_y * (s_tau / m)
        self.terms.C[j] += s_tau**2 / m
        self.terms.rows[j] += 1
        self.terms.tau_sum[j] += s_tau
        self.open[j] = None

    def take(self) -> NormalEquations:
        """The (H1) terms of the rests ended so far (open ones stay open); resets them."""
        out, self.terms = self.terms, NormalEquations(self.robot.n, self.base.rank)
        return out


def remove_levels(y: np.ndarray, tau: np.ndarray, rest: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(H1) on in-memory rows: y (N, n, b) and tau (N, n) with each rest's mean subtracted
    from its rows, joint by joint (rest (N, n): fitted rows of joints at rest, in time order
    within one piece of a log). Returns new arrays."""
    y, tau = y.copy(), tau.copy()
    for j in range(tau.shape[1]):  # loop over joints and their rests
        for start, stop in runs(rest[:, j]):
            y[start:stop, j] -= y[start:stop, j].mean(axis=0)
            tau[start:stop, j] -= tau[start:stop, j].mean()
    return y, tau
