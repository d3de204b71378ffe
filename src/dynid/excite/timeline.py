"""A piecewise trajectory: motion segments one after the other, each with a stage label.

Consecutive segments must meet in position, velocity and acceleration (``append`` checks);
``blend_to`` inserts a quintic (``motion.Quintic``) of the shortest duration on a geometric
grid whose densely sampled motion stays within a share of the limits.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dynid.errors import DataError
from dynid.excite.limits import KinematicLimits, sample_ratios
from dynid.excite.motion import Hold, Quintic

BLEND_DURATIONS = 0.5 * 1.15 ** np.arange(36)  # 0.5 s .. ~66 s


def within_limits(segment, limits: KinematicLimits, samples: int = 400) -> bool:
    """All three ratios <= 1 at ``samples`` instants of the segment plus both ends."""
    tau = np.linspace(0.0, segment.duration, samples)
    ratios = sample_ratios(*segment.evaluate(tau), limits)
    return all(np.all(r <= 1.0) for r in ratios.values())


def quintic_blend(start, end, limits: KinematicLimits, samples: int = 400,
                  fallback: KinematicLimits | None = None) -> Quintic:
    """Shortest quintic on ``BLEND_DURATIONS`` from state ``start`` to ``end`` within ``limits``
    (or, when no duration fits them, e.g. because an end state uses more than that share of
    a limit, within ``fallback``)."""
    for bounds in (limits, fallback):
        if bounds is None:
            continue
        for duration in BLEND_DURATIONS:
            blend = Quintic(start, end, float(duration))
            if within_limits(blend, bounds, samples):
                return blend
    raise DataError("no blend between two segments stays within the limits (checked up to "
                    f"{BLEND_DURATIONS[-1]:.0f} s); start or end state violates them")


@dataclass
class Timeline:
    """Segments with stage labels; times are cumulative from 0."""

    segments: list = field(default_factory=list)
    stages: list = field(default_factory=list)

    @property
    def duration(self) -> float:
        return float(sum(s.duration for s in self.segments))

    @property
    def end_state(self):
        return self.segments[-1].end_state

    def append(self, segment, stage: str, tol: float = 1e-6) -> None:
        """Add a segment that starts where the timeline ends (q, dq, ddq continuous)."""
        if self.segments:
            for name, a, b in zip(("position", "velocity", "acceleration"), self.end_state, segment.start_state):
                if not np.allclose(a, b, atol=tol, rtol=0):
                    raise DataError(f"segment '{stage}' does not start at the previous end ({name}: "
                                    f"{np.round(a, 6).tolist()} vs {np.round(b, 6).tolist()})")
        self.segments.append(segment)
        self.stages.append(stage)

    def blend_to(self, state, limits: KinematicLimits, stage: str = "transition",
                 fallback: KinematicLimits | None = None) -> None:
        """Append a quintic from the current end state to ``state`` (q, dq, ddq), if they differ."""
        start = self.end_state
        if all(np.allclose(a, b, atol=1e-12, rtol=0) for a, b in zip(start, state)):
            return
        self.append(quintic_blend(start, state, limits, fallback=fallback), stage)

    def hold(self, duration: float, stage: str = "transition") -> None:
        self.append(Hold(self.end_state[0], duration), stage)

    def evaluate(self, t: np.ndarray):
        """q, dq, ddq (M, n) and stage labels (M,) at increasing times t in [0, duration]."""
        t = np.asarray(t, dtype=float)
        if t.size and (np.any(np.diff(t) < 0) or t[0] < 0):
            raise DataError("timeline times must be increasing and >= 0")
        n = len(self.end_state[0])
        q, dq, ddq = (np.empty((t.size, n)) for _ in range(3))
        labels = np.empty(t.size, dtype=object)
        edges = np.concatenate([[0.0], np.cumsum([s.duration for s in self.segments])])
        first = np.searchsorted(t, edges[:-1], side="left")
        last = np.searchsorted(t, edges[1:], side="left")
        last[-1] = t.size  # the final instant (and beyond) belongs to the last segment
        for k, segment in enumerate(self.segments):  # loop over segments, not samples
            sl = slice(first[k], last[k])
            if sl.start >= sl.stop:
                continue
            q[sl], dq[sl], ddq[sl] = segment.evaluate(t[sl] - edges[k])
            labels[sl] = self.stages[k]
        return q, dq, ddq, labels
