"""Revolute angles logged within one turn, made continuous again.

Many drivers and absolute encoders log a revolute joint's angle wrapped into one turn, (-pi, pi]
or [0, 2 pi): a joint that turns past the wrap point jumps by 2 pi between two samples.
Differentiated, the jump is a velocity spike of 2 pi fs and an acceleration of the order of
2 pi fs^2 spread over the filter's length; fitted, it ruins every parameter (example:ur5 at
500 Hz with q1 crossing +-pi: 30 % held-out error with the defaults or any hand setting,
``bench/real_defaults.py --cases wrap``). A joint cannot turn by pi or more between two
samples (pi rad per sample at 100 Hz is 314 rad/s, some hundred times a robot joint's speed
limit), so a step beyond pi is a wrap (of one turn: two angles within one turn differ by less
than 2 pi, so a step of several turns is a corrupt sample, left to ``data.plausibility``), and with

    m_k = m_{k-1} - round((q_k - q_{k-1}) / (2 pi)),   m = 0 at a segment's first sample     (W1)

q_k + 2 pi m_k is the continuous angle: phase unwrapping, exact whenever the continuous angle
moves by less than pi between two samples (K. Itoh, "Analysis of the phase unwrapping
algorithm", Applied Optics 21(14), 2470, 1982). The rigid-body model, the friction signs and the
rest bands are 2 pi-periodic in a revolute angle (the same pose), so each segment may start again
from m = 0; a file read in chunks carries m and its last raw sample from chunk to chunk, so the
result does not depend on ``--chunk-rows``. Prismatic joints are left as logged.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

TURN = 2.0 * np.pi


class AngleUnwrap:
    """(W1) over the chunks of one log, in order: ``unwrap(chunk)`` returns the chunk with its
    revolute angles continuous; ``summary()`` the note of what it changed (None: nothing).

    revolute: (n,) bool, the joints whose angles may be wrapped; source: the log's name."""

    def __init__(self, revolute, source: str = "log"):
        self.revolute = np.flatnonzero(np.asarray(revolute, dtype=bool))
        self.source = source
        self.last_q: np.ndarray | None = None  # the previous chunk's last raw angles (revolute joints)
        self.last_segment = None
        self.turns = np.zeros(self.revolute.size)  # m at the previous chunk's last sample
        self.wraps = np.zeros(self.revolute.size, dtype=np.int64)  # wraps undone, per joint

    def __call__(self, data):
        """``data`` (JointData, rows cleaned and labelled with their segments) with (W1) applied."""
        if not self.revolute.size or not len(data):
            return data
        raw = data.q[:, self.revolute]
        segment = np.zeros(len(data), dtype=np.int64) if data.segment is None else np.asarray(data.segment)
        previous = np.vstack([raw[:1] if self.last_q is None else self.last_q[None, :], raw[:-1]])
        starts = np.concatenate([[self.last_q is None or segment[0] != self.last_segment],
                                 segment[1:] != segment[:-1]])
        step = -np.round((raw - previous) / TURN)  # (W1): nonzero only where a step exceeds pi
        step[starts] = 0.0
        step[~(np.abs(step) == 1.0)] = 0.0  # two angles within one turn differ by less than 2 pi: a step of
        # several turns (or not finite) is no wrap but a corrupt sample, left to the plausibility checks
        self.wraps += np.count_nonzero(step, axis=0)
        m = np.cumsum(step, axis=0)
        first = np.flatnonzero(starts)
        carried = np.zeros(raw.shape)
        if first.size == 0 or first[0] > 0:  # rows before the chunk's first new segment continue the last one
            carried[: first[0] if first.size else len(raw)] = self.turns
        for k, start in enumerate(first):  # a new segment starts again from m = 0 (few per chunk)
            end = first[k + 1] if k + 1 < first.size else len(raw)
            carried[start:end] = -m[start - 1] if start > 0 else 0.0
        m += carried
        self.last_q, self.last_segment, self.turns = raw[-1].copy(), segment[-1], m[-1].copy()
        if not np.any(m):
            return data
        q = data.q.copy()
        q[:, self.revolute] = raw + TURN * m
        return replace(data, q=q)

    def summary(self) -> str | None:
        """One note naming the joints whose angles were unwrapped, or None."""
        if not np.any(self.wraps):
            return None
        joints = ", ".join(f"q{j + 1} ({int(w)})" for j, w in zip(self.revolute, self.wraps) if w)
        return (f"{self.source}: revolute angles logged within one turn made continuous (a step beyond pi "
                f"between two samples is a wrap of 2 pi, data/angles.py W1): {joints} wrap(s) undone")
