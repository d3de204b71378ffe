"""Segments of a joint data log: pieces of continuous motion, filtered and differentiated alone.

Real logs come in pieces: a controller restarts its clock at every new plan, a logger drops
a second of samples, a file concatenates several runs. A log splits into segments at

- a change of the ``segment`` column's label (docs/formats.md, "segment column");
- a time reset (t going backwards): a new segment with ``Preprocessing.segments == "auto"``
  (``--segments auto``), an error naming the row otherwise (the default ``"gaps"``);
- a gap: a time step longer than ``Preprocessing.max_gap`` x the median step of the file
  (``--max-gap``, default 5) and longer than ``Preprocessing.bridge_gap`` (``--bridge-gap``,
  default 20 ms). Shorter irregular steps (dropped samples, a real-time controller's missed
  cycles of a few ms) stay inside the segment and are resampled (``preprocess.resample``): a
  cubic spline over 20 ms of a motion of bandwidth 2 Hz errs by 1e-5 of its amplitude, far
  below what the low-pass removes, while splitting there would cost two filter edges per
  dropped cycle (issue 22: a 1 kHz log with a handful of 9 ms drops kept 16 121 of 20 544
  samples). The summary note counts the bridged steps and the gaps.

How long a step may be bridged depends on the motion, not on the clock. ``identify`` (and the
``Identification`` API) by default take it from the motion's bandwidth B measured on the log
(``data.bandwidth.choose_bridge_gap``): cubic interpolation of a band-limited motion errs over
a step g by about

    e / A = (2 pi B g)^4 / 384                                                          (S1)

of its amplitude A (the remainder of cubic Hermite interpolation, max |q''''| g^4 / 384, with
|q''''| <= A (2 pi B)^4; the spline's is of the same order), so a step is bridged while
e / A <= ``SPLINE_TOLERANCE`` = 1e-5 (the 20 ms at B = 2 Hz above):

    g_max = (384 x 1e-5)^(1/4) / (2 pi B) = 0.0396 / B                                   (S2)

clipped to [``DEFAULT_BRIDGE_GAP``, ``MAX_BRIDGE_GAP``]: 20 ms stays the floor (at 20 ms, (S1) is
1.7e-4 of the amplitude even at B = 4 Hz, while a split costs two filter edges, whose rows
predict 2-5 x worse than interior ones on a jittered 250 Hz log), and 0.1 s the ceiling (a
logger silent for a tenth of a second has stopped, not missed a few cycles). A UR10 log at
250 Hz of a motion up to 0.6 Hz (B measured 0.59 Hz) that drops up to 6 cycles in a row (steps
up to 28 ms) was cut into 11 segments by the fixed 20 ms; with (S2), 67 ms, it stays whole
(``bench/real_defaults.py --cases ur10deg``, README).

Nothing is ever interpolated, filtered or differentiated across a boundary; the first and
last ``edge_samples`` of every segment are left out of fits and scores; a segment that has
no sample left after that is dropped with a note (an error when nothing is left at all).

``Segmenter`` labels rows chunk by chunk (its state carries over chunk boundaries), so a
streamed file and a file read whole get the same segments.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from dynid.data.columns import JointData
from dynid.data.timing import STEP_SAMPLES
from dynid.errors import DataError

DEFAULT_MAX_GAP = 5.0
DEFAULT_BRIDGE_GAP = 0.02  # s: steps up to this long never split a log (module docstring)
MAX_BRIDGE_GAP = 0.1  # s: the longest step a motion's bandwidth may bridge (S2)
SPLINE_TOLERANCE = 1e-5  # (S1): interpolation error over a bridged step, relative to the motion's amplitude
SEGMENT_MODES = ("gaps", "auto")


def check_segmentation(mode: str, max_gap: float, bridge_gap: float = DEFAULT_BRIDGE_GAP) -> None:
    if not bridge_gap >= 0.0:
        raise DataError(f"--bridge-gap must be >= 0 (seconds), got {bridge_gap}")
    if mode not in SEGMENT_MODES:
        raise DataError(f"--segments '{mode}' unknown, expected one of {list(SEGMENT_MODES)} "
                        "(gaps: split at gaps and 'segment' labels; auto: also at time resets)")
    if not max_gap > 1.0:
        raise DataError(f"--max-gap must be > 1 (a multiple of the median time step), got {max_gap}")


class Segmenter:
    """Segment index of each row, chunk after chunk (module docstring).

    source: file name for messages; resets: a time reset starts a segment (else an error);
    max_gap, bridge_gap: steps longer than max_gap x the median step and than bridge_gap [s]
    start a segment (shorter ones are bridged: resampled inside it). The median step is
    that of the file's first ``STEP_SAMPLES`` steps (inside segments; ``data.timing``), kept in
    ``step`` (or given: a first pass's, ``data.stream.log_timing``); without it the first chunk
    must hold rows 1 .. STEP_SAMPLES + 1 (``data.stream.raw_chunks`` then makes its first chunk
    that long) for the threshold not to depend on the chunking.
    """

    def __init__(self, source: str, resets: bool = False, max_gap: float = DEFAULT_MAX_GAP,
                 step: float | None = None, bridge_gap: float = DEFAULT_BRIDGE_GAP):
        self.source, self.resets, self.max_gap, self.bridge_gap = source, resets, max_gap, bridge_gap
        self.step: float | None = step
        self.bridged = 0
        self.longest_bridged = 0.0
        self.last_t: float | None = None
        self.last_label = None
        self.last_id = -1
        self.gaps = 0
        self.resets_seen = 0
        self.labels_seen = 0

    @classmethod
    def for_preprocessing(cls, source: str, prep=None, step: float | None = None) -> "Segmenter":
        """The segmenter a ``Preprocessing``'s ``segments`` and ``max_gap`` ask for (defaults when
        None); ``step``: the file's median step when a first pass found it (``data.timing``)."""
        if prep is None:
            return cls(source, step=step)
        return cls(source, resets=prep.segments == "auto", max_gap=prep.max_gap, step=step,
                   bridge_gap=prep.bridge_gap)

    def __call__(self, t: np.ndarray, labels: np.ndarray | None, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(ids (N,) int64, duplicate (N,) bool: same time stamp as the previous row of its segment).

        t (N,) time stamps [s]; labels (N,) ``segment`` column or None; rows (N,) row numbers."""
        count = t.shape[0]
        if count == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool)
        prev_t = np.concatenate([[np.nan if self.last_t is None else self.last_t], t[:-1]])
        dt = t - prev_t
        new_label = np.zeros(count, dtype=bool)
        if labels is not None:
            labels = np.asarray(labels, dtype=object)
            empty = np.array([v is None or (isinstance(v, float) and v != v) for v in labels])
            if np.any(empty):
                k = int(np.flatnonzero(empty)[0])
                raise DataError(f"{self.source}: row {rows[k]} has an empty 'segment' label; "
                                "expected a label on every row")
            first = labels[:1] if self.last_t is None else np.array([self.last_label], dtype=object)
            new_label = labels != np.concatenate([first, labels[:-1]])
            self.last_label = labels[-1]
        reset = (dt < 0) & ~new_label
        if np.any(reset) and not self.resets:
            k = int(np.flatnonzero(reset)[0])
            raise DataError(f"{self.source}: time goes backwards at row {rows[k]} (t = {float(t[k]):.15g} after "
                            f"{float(prev_t[k]):.15g}); expected strictly increasing t. A log whose clock restarts "
                            "holds several segments: use --segments auto (or a 'segment' column)")
        if self.step is None:
            inside = (dt > 0) & ~new_label
            early = inside & (rows <= STEP_SAMPLES + 1)  # the file's first steps (data.timing)
            if np.any(inside):
                self.step = float(np.median(dt[early if np.any(early) else inside]))
        self._check_resolution(t, rows)
        if self.step:
            inside = ~new_label & ~reset
            gap = (dt > self.threshold()) & inside
            bridged = (dt > 2.0 * self.step) & inside & ~gap  # a dropped sample or more, resampled
            if np.any(bridged):
                self.bridged += int(bridged.sum())
                self.longest_bridged = max(self.longest_bridged, float(dt[bridged].max()))
        else:
            gap = np.zeros(count, dtype=bool)
        start = new_label | reset | gap
        if self.last_t is None:
            start[0] = True
        self.gaps += int(gap.sum())
        self.resets_seen += int(reset.sum())
        self.labels_seen += int(new_label.sum())
        ids = self.last_id + np.cumsum(start)
        self.last_id, self.last_t = int(ids[-1]), float(t[-1])
        return ids.astype(np.int64), (dt == 0) & ~start

    RESOLUTION = 0.01  # time stamps must resolve a hundredth of the step

    def _check_resolution(self, t: np.ndarray, rows: np.ndarray) -> None:
        """Refuse time stamps so large that 64-bit floats cannot tell samples apart (an absolute clock
        of 1e15 s keeps steps of 0.125 s: most samples would fall together and be dropped)."""
        largest = float(np.max(np.abs(t[np.isfinite(t)]), initial=0.0))
        resolution = float(np.spacing(largest))
        # no step yet: every stamp of the chunk equal, at a magnitude where floats step by a microsecond or more
        collapsed = self.step is None and len(t) > 1 and resolution >= 1e-6 and np.all(t == t[0])
        if collapsed or (self.step and resolution > self.RESOLUTION * self.step):
            step = f"samples {self.step:.3g} s apart" if self.step else "the samples of this log"
            k = int(np.argmax(np.abs(np.where(np.isfinite(t), t, 0.0))))
            raise DataError(f"{self.source}: time stamps near {t[k]:.6g} s (row {rows[k]}) are stored to "
                            f"{resolution:.3g} s only (64-bit floats), too coarse for {step}: an absolute clock or "
                            "another unit? Subtract the first time stamp (or give --time-unit)")

    def threshold(self) -> float:
        """The longest step [s] that does not split the log (the median step must be known)."""
        return max(self.max_gap * self.step, self.bridge_gap)

    def summary(self) -> str | None:
        """One note on how the log was split and on the dropped samples bridged (None when it is
        one segment without bridged steps)."""
        bridged = (f"{self.bridged} step(s) of dropped samples (up to {self.longest_bridged * 1e3:.4g} ms) bridged "
                   "by resampling" if self.bridged else None)
        if self.last_id <= 0:
            return None if bridged is None else f"{bridged} ({self.rule()})"
        causes = [f"{k} {what}" for k, what in ((self.labels_seen, "'segment' label change(s)"),
                                               (self.resets_seen, "time reset(s)"),
                                               (self.gaps, "gap(s)")) if k]
        return (f"{self.last_id + 1} segments, split at {', '.join(causes)}; each is filtered and "
                f"differentiated on its own" + (f"; {bridged}" if bridged else "") + f" ({self.rule()})")

    def rule(self) -> str:
        return gap_rule(self.step, self.max_gap, self.bridge_gap)


def bridge_for_motion(bandwidth: float | None) -> float:
    """The longest step [s] a motion of bandwidth ``bandwidth`` [Hz] bridges by cubic interpolation
    within ``SPLINE_TOLERANCE`` of its amplitude (S2), clipped to [DEFAULT_BRIDGE_GAP,
    MAX_BRIDGE_GAP]; DEFAULT_BRIDGE_GAP when the bandwidth is unknown."""
    if bandwidth is None or not bandwidth > 0.0:
        return DEFAULT_BRIDGE_GAP
    g = (384.0 * SPLINE_TOLERANCE) ** 0.25 / (2.0 * np.pi * bandwidth)  # (S2)
    return float(min(max(g, DEFAULT_BRIDGE_GAP), MAX_BRIDGE_GAP))


def gap_rule(step: float | None, max_gap: float, bridge_gap: float = DEFAULT_BRIDGE_GAP) -> str:
    """The threshold between a resampled dropout and a gap that splits the log, in words."""
    if not step:
        return f"steps longer than {max_gap:g} x the median step and {bridge_gap * 1e3:.4g} ms split the log"
    limit = max(max_gap * step, bridge_gap)
    return (f"steps up to max({max_gap:g} x the median step {step * 1e3:.4g} ms, {bridge_gap * 1e3:.4g} ms) = "
            f"{limit * 1e3:.4g} ms are resampled, longer gaps split the log into segments")


def segment_ranges(data: JointData) -> list[tuple[int, slice]]:
    """(segment id, slice of rows) of each segment of ``data``, in order (one when unlabelled)."""
    if data.segment is None or len(data) == 0:
        return [(0, slice(0, len(data)))]
    ids = np.asarray(data.segment)
    cuts = np.flatnonzero(ids[1:] != ids[:-1]) + 1
    bounds = np.concatenate([[0], cuts, [ids.size]])
    return [(int(ids[a]), slice(int(a), int(b))) for a, b in zip(bounds[:-1], bounds[1:])]


def concat(parts: list[JointData]) -> JointData:
    """Rows of several JointData one after the other (optional signals kept when all have them;
    empty parts, which may carry only notes, add their notes)."""
    notes = [note for p in parts for note in p.notes]
    parts = [p for p in parts if len(p)] or parts[:1]
    if len(parts) == 1:
        parts[0].notes = list(dict.fromkeys(notes))
        return parts[0]

    def cat(name):
        arrays = [getattr(p, name) for p in parts]
        return None if any(a is None for a in arrays) else np.concatenate(arrays)

    first = parts[0]
    rate = first.rate if all(p.rate == first.rate for p in parts) else None  # segments at different rates
    filled = None
    if any(p.filled is not None for p in parts):  # samples put where the log has none (preprocess.resample)
        filled = np.concatenate([np.zeros(len(p), bool) if p.filled is None else p.filled for p in parts])
    return replace(first, t=cat("t"), q=cat("q"), dq=cat("dq"), ddq=cat("ddq"), tau=cat("tau"),
                   cycle=cat("cycle"), stage=cat("stage"), own=cat("own"), segment=cat("segment"),
                   notes=list(dict.fromkeys(notes)), rate=rate, filled=filled)


def segment_edge_mask(data: JointData, trim: int) -> np.ndarray:
    """(N,) False for the ``trim`` samples at both ends of every segment of ``data``."""
    keep = np.ones(len(data), dtype=bool)
    for _, rows in segment_ranges(data):
        count = rows.stop - rows.start
        keep[rows.start:rows.start + min(trim, count)] = False
        if trim > 0:
            keep[max(rows.stop - trim, rows.start):rows.stop] = False
    return keep


def piece_starts(data: JointData) -> np.ndarray:
    """(N,) True at a sample that does not follow the one before it: the first of a segment
    (its label changes, or time steps back), or the first after samples left out (a selection
    of cycles apart: a time step above 1.5 x the median step)."""
    out = np.zeros(len(data), dtype=bool)
    if len(data) < 2:
        return out
    dt = np.diff(data.t)
    out[1:] = (dt <= 0) | (dt > 1.5 * np.median(dt))
    if data.segment is not None:
        out[1:] |= data.segment[1:] != data.segment[:-1]
    return out


def describe(data: JointData, segment: int) -> str:
    """'segment 3 (t 12.5 .. 12.7 s)' for notes."""
    if len(data) == 0:
        return f"segment {segment}"
    return f"segment {segment} (t {data.t[0]:.6g} .. {data.t[-1]:.6g} s)"
