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
(a fold's or a time block's end, ``close=True``). Its S and s come from the pass that builds
the Gram matrices (``RestRuns`` labels each chunk's rests, ``gram.RegressorGram`` sums the
regressor rows it makes over each of them), so the rests cost no regressor of their own.
``remove_levels`` applies (H1) to in-memory rows directly (the mean of each rest subtracted
from its rows).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynid.identify.normal_equations import NormalEquations


def runs(flags: np.ndarray) -> list[tuple[int, int]]:
    """[(start, stop), ...] of the runs of True in flags (N,)."""
    padded = np.concatenate([[False], flags, [False]]).astype(np.int8)
    edges = np.flatnonzero(np.diff(padded))
    return list(zip(edges[::2].tolist(), edges[1::2].tolist()))


@dataclass
class RestRuns:
    """The rests of a chunk (N rows): the runs of its fitted rows at rest, joint by joint.

    label: (N, n) the rest each row of joint j belongs to (-1: none), numbered joint by joint
    in time order; joint, start, stop: (R,) each rest's joint and rows [start, stop)."""

    label: np.ndarray
    joint: np.ndarray
    start: np.ndarray
    stop: np.ndarray

    @classmethod
    def of(cls, rest: np.ndarray) -> "RestRuns":
        """The runs of rest (N, n): the fitted rows of joints at rest (``pipeline.fitted_rest``)."""
        count, n = rest.shape
        padded = np.zeros((count + 2, n), dtype=np.int8)
        padded[1:-1] = rest
        step = np.diff(padded, axis=0)  # (N + 1, n): +1 where a rest starts, -1 after it stops
        joint, start = np.nonzero(step.T == 1)  # joint by joint, in time order
        stop = np.nonzero(step.T == -1)[1]
        begun = np.cumsum(step[:-1] == 1, axis=0)  # rests begun up to each row, per joint
        first = np.concatenate([[0], np.cumsum((step == 1).sum(axis=0))[:-1]])  # first label of each joint
        label = np.where(rest, begun - 1 + first, -1).astype(np.int64)
        return cls(label, joint.astype(np.int64), start, stop)

    @property
    def count(self) -> int:
        return int(self.joint.size)


class RestLevels:
    """(H1) accumulated over chunks in time order (module docstring); ``take`` returns the terms
    to subtract (a ``NormalEquations``) and starts afresh. n: joints; b: base parameters."""

    def __init__(self, n: int, b: int):
        self.n, self.b = n, b
        self.open: list[list | None] = [None] * n  # per joint: [S, s, m] of a rest reaching the chunk's end
        self.terms = NormalEquations(n, b)

    def add(self, rests: RestRuns, y_sum: np.ndarray, tau_sum: np.ndarray, rows: int, close: bool) -> None:
        """The rests of a prepared chunk of ``rows`` rows: their summed base regressor rows
        y_sum (R, b) and torques tau_sum (R,) (``RegressorGram.run_totals``); ``close``: the
        chunk ends a segment (or a fold, a block), so every rest still open ends with it."""
        for j in range(self.n):  # loop over joints and their rests, not samples
            mine = np.flatnonzero(rests.joint == j)
            if self.open[j] is not None and (not mine.size or rests.start[mine[0]] != 0):
                self._end(j)  # the open rest ended before this chunk's first row
            for r in mine:
                start, stop = int(rests.start[r]), int(rests.stop[r])
                total = [y_sum[r], float(tau_sum[r]), stop - start]
                if start == 0 and self.open[j] is not None:
                    total = [a + b for a, b in zip(self.open[j], total)]
                self.open[j] = total
                if stop < rows or close:
                    self._end(j)
        if close:
            for j in range(self.n):
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
        out, self.terms = self.terms, NormalEquations(self.n, self.b)
        return out


def rest_runs(flags: np.ndarray, breaks: np.ndarray | None = None) -> list[tuple[int, int]]:
    """[(start, stop), ...] of the rests in flags (N,) (a joint's fitted rows at rest, in time
    order): its runs, each cut where ``breaks`` (N,) is True (a row that does not follow the one
    before: ``data.segments.piece_starts``; a rest does not go on across it)."""
    cuts = np.zeros(0, dtype=np.int64) if breaks is None else np.flatnonzero(breaks)
    out = []
    for start, stop in runs(flags):
        inner = cuts[(cuts > start) & (cuts < stop)].tolist()
        out += list(zip([start, *inner], [*inner, stop]))
    return out


def remove_levels(y: np.ndarray, tau: np.ndarray, rest: np.ndarray,
                  breaks: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(H1) on in-memory rows: y (N, n, b) and tau (N, n) with each rest's mean subtracted
    from its rows, joint by joint (rest (N, n): fitted rows of joints at rest, in time order;
    breaks: ``rest_runs``, so a run across a segment's first row is two rests, as ``RestLevels``
    ends a rest at a segment's end). Returns new arrays."""
    y, tau = y.copy(), tau.copy()
    for j in range(tau.shape[1]):  # loop over joints and their rests
        for start, stop in rest_runs(rest[:, j], breaks):
            y[start:stop, j] -= y[start:stop, j].mean(axis=0)
            tau[start:stop, j] -= tau[start:stop, j].mean()
    return y, tau
