"""The time base of each segment of a log: its rate and whether it must be resampled.

Preprocessing decides per segment (``data.segments``) at which rate it filters and
differentiates, whether it resamples irregular time stamps (``preprocess.prepare``, step 1), how
far the filter's edge effects reach (``preprocess.edge_samples``) and how wide the streaming
windows are (``data.stream``). These decisions must come from the segment, never from how a
long log happens to be cut into chunks (``--chunk-rows``): a rate taken from the first chunk
moved the edge trim by a sample or two and resampled jittered logs at the first window's rate.
The rules, the same for a file read whole and a file streamed in chunks of any size:

- a segment's **step** is the median of its first ``STEP_SAMPLES`` time steps (all of them when
  it is shorter), its **rate** 1 / step; the first steps are enough for a robust median and
  the rule needs bounded memory on a log of any length;
- a segment is **irregular** (resampled on the grid t_0 + k / rate) when any of its steps, over
  the whole segment, differs from the step by more than ``IRREGULAR_TOLERANCE`` of it (a
  jittered clock, a few dropped samples shorter than a gap).

A streamed file learns both before its first window from a cheap first pass over its time
(and ``segment``) column (``data.stream.log_timing``: time stamps only, about 0.06 CPU us per
row for Parquet and 0.6 for CSV); a source that cannot be read twice (a FIFO) or a ROS bag
(whose messages would be decoded twice) decides each segment on its first ``STEP_SAMPLES``
steps instead (its irregularity then from them too). The segmenter's gap threshold
(``data.segments.Segmenter``) takes its median step by the same prefix rule.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

STEP_SAMPLES = 1 << 14  # 16 384 steps: the median's spread is under 1 % of the jitter's
IRREGULAR_TOLERANCE = 1e-3


@dataclass(frozen=True)
class SegmentTiming:
    """The time base of one segment (module docstring).

    segment: its index in the file; t_start, t_end [s]: its first and last time stamps; rows:
    its samples; step [s]: the median of its first STEP_SAMPLES steps (nan for one sample);
    min_step, max_step [s]: its shortest and longest step."""

    segment: int
    t_start: float
    t_end: float
    rows: int
    step: float
    min_step: float
    max_step: float

    @property
    def rate(self) -> float:
        """1 / step [Hz]."""
        return 1.0 / self.step

    @property
    def irregular(self) -> bool:
        """Some step differs from the median step by more than IRREGULAR_TOLERANCE of it."""
        if not self.step > 0:
            return False
        return max(self.max_step - self.step, self.step - self.min_step) > IRREGULAR_TOLERANCE * self.step


class _Steps:
    """One segment's time stamps seen so far (bounded: the first STEP_SAMPLES steps are kept)."""

    def __init__(self, segment: int, t0: float):
        self.segment, self.t_start, self.t_end, self.rows = segment, t0, t0, 1
        self.first: list[np.ndarray] = []
        self.kept = 0
        self.min_step, self.max_step = np.inf, -np.inf

    def add(self, t: np.ndarray) -> None:
        """Further time stamps (N,) of the segment, in order."""
        if t.size == 0:
            return
        steps = np.diff(t, prepend=self.t_end)
        if self.kept < STEP_SAMPLES:
            take = steps[:STEP_SAMPLES - self.kept]
            self.first.append(take)
            self.kept += take.size
        self.min_step, self.max_step = min(self.min_step, float(steps.min())), max(self.max_step, float(steps.max()))
        self.t_end, self.rows = float(t[-1]), self.rows + t.size

    def timing(self) -> SegmentTiming:
        steps = np.concatenate(self.first) if self.first else np.zeros(0)
        step = float(np.median(steps)) if steps.size else float("nan")
        low, high = (self.min_step, self.max_step) if steps.size else (step, step)
        return SegmentTiming(self.segment, self.t_start, self.t_end, self.rows, step, low, high)


class TimingPass:
    """``SegmentTiming`` of every segment of a log fed in pieces of any size (the result does
    not depend on the pieces): ``add(t, ids)`` with the cleaned time stamps and segment indices
    of consecutive rows, then ``timings()``."""

    def __init__(self):
        self.done: list[SegmentTiming] = []
        self.current: _Steps | None = None

    def add(self, t: np.ndarray, ids: np.ndarray | None = None) -> None:
        if t.size == 0:
            return
        if ids is None:
            runs = [(0, slice(0, t.size))]
        else:
            cuts = np.flatnonzero(ids[1:] != ids[:-1]) + 1
            bounds = np.concatenate([[0], cuts, [t.size]])
            runs = [(int(ids[a]), slice(int(a), int(b))) for a, b in zip(bounds[:-1], bounds[1:])]
        for segment, rows in runs:
            if self.current is not None and self.current.segment != segment:
                self.done.append(self.current.timing())
                self.current = None
            piece = t[rows]
            if self.current is None:
                self.current, piece = _Steps(segment, float(piece[0])), piece[1:]
            self.current.add(piece)

    def timings(self) -> list[SegmentTiming]:
        if self.current is not None:
            self.done.append(self.current.timing())
            self.current = None
        return self.done


def segment_timing(t: np.ndarray, segment: int = 0) -> SegmentTiming:
    """``SegmentTiming`` of one segment's time stamps t (N,) held in memory."""
    timing = TimingPass()
    timing.add(np.asarray(t, dtype=float), None)
    return replace(timing.timings()[0], segment=segment)


@dataclass(frozen=True)
class LogTiming:
    """``SegmentTiming`` of every segment of a file, from a first pass (``data.stream.log_timing``),
    and the file's median step [s] that splits it at gaps (``data.segments.Segmenter.step``)."""

    segments: tuple[SegmentTiming, ...]
    step: float | None = None

    def find(self, segment: int, t: float) -> SegmentTiming | None:
        """The timing of segment ``segment`` starting at time t in another pass over the same file:
        the first pass's segment of that index when it spans t, else the only one that spans t
        (the other pass split it where rows with NaN were dropped), else None."""
        if 0 <= segment < len(self.segments):
            same = self.segments[segment]
            if same.t_start <= t <= same.t_end:
                return same
        spans = [s for s in self.segments if s.t_start <= t <= s.t_end]
        return spans[0] if len(spans) == 1 else None
