"""The identification pipeline: data -> preprocessing -> base regressor -> estimator.

Two paths give the same numbers:

- ``accumulate_sources`` streams files in chunks (``data.stream``); worker threads (one per
  core) evaluate the regressor ``BLOCK`` samples at a time and add them to per-joint Gram
  matrices (``gram.py``) while the main thread reads and filters the next chunk, so any log
  length runs in bounded memory (OLS, WLS and PC need nothing else). Several recordings are
  one least-squares problem: each file, and each segment of a file (``data.segments``), is
  preprocessed on its own (filters and derivatives never cross a boundary) and the normal
  equations of all of them are summed (thesis eq. 2.9 written with sums);
- ``regressor_arrays`` builds the base regressor of an in-memory ``JointData`` (IRLS and
  per-cycle identification need the samples).

Samples of a joint moving slower than ``Preprocessing.min_velocity`` are left out of the fit
(thesis 5.1.3: friction is least accurate at low velocity), and so are ``edge_samples`` at
both ends of a log, where filtered derivatives are distorted.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace

import numpy as np

from dynid.data.columns import ColumnMapping, JointData
from dynid.data.preprocess import Preprocessing, edge_samples, prepare, prepared_rate, segments, velocity_mask
from dynid.data.reversals import reversal_rows
from dynid.data.segments import piece_starts, segment_edge_mask, segment_ranges
from dynid.data.stream import prepared_chunks, with_edges
from dynid.errors import DataError, DynidError
from dynid.identify.threads import single_blas_thread
from dynid.identify.base import BaseParameters, identifiability_table
from dynid.identify.estimators import ESTIMATORS, Estimator
from dynid.identify.gram import RegressorGram
from dynid.identify.model import ModelOptions, log_regressor, motor_columns, own_columns
from dynid.identify.normal_equations import NormalEquations
from dynid.identify.rest_levels import RestLevels, RestRuns, remove_levels

ESTIMATOR_NAMES = ("ols", "wls", "irls", "pc")
BLOCK = 2048  # samples per regressor evaluation: its scratch stays in cache for the Gram


def make_estimator(name: str, robot, options: ModelOptions, base: BaseParameters, names: list | None = None,
                   **kw) -> Estimator:
    """An estimator by name: ols | wls | irls | pc, for the base parameters ``base`` (``names``:
    of the unknowns when they are more than the base parameters, e.g. a friction drift's; keyword
    options passed through: ``fixed``, ``prior``, ``max_condition``..., ``bound`` for pc; pc with
    ``regularize=WEIGHT`` is regularized toward the prior, identify/regularized.py)."""
    if name == "pc":
        weight = kw.pop("regularize", None)
        if weight is not None:
            from dynid.identify.regularized import EntropicPhysicallyConsistent
            return EntropicPhysicallyConsistent(names or base.names, robot=robot, options=options, base=base,
                                                weight=weight, **kw)
        from dynid.identify.physical import PhysicallyConsistent
        return PhysicallyConsistent(names or base.names, robot=robot, options=options, base=base, **kw)
    if name not in ESTIMATORS:
        raise DataError(f"estimator '{name}' unknown, expected one of {list(ESTIMATOR_NAMES)}")
    return ESTIMATORS[name](names or base.names, **kw)


@dataclass
class SegmentCount:
    """One segment of a source in a streaming pass: its index in the file (``data.segments``),
    its time span [s], the samples it gave the fit, and its own normal equations when asked
    (``accumulate_sources(per_segment=True)``: folds for cross-validation)."""

    segment: int
    t_start: float
    t_end: float
    samples: int = 0
    ne: NormalEquations | None = None

    def to_dict(self) -> dict:
        return {"segment": self.segment, "t_start": self.t_start, "t_end": self.t_end, "samples": self.samples}


@dataclass
class SourceCount:
    """One source (file) of a streaming pass: samples used in the fit, per segment, and notes."""

    path: str
    samples: int = 0
    segments: list[SegmentCount] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    blocks: list[NormalEquations] | None = None  # per time block (``accumulate_sources(cuts=)``)

    def to_dict(self) -> dict:
        return {"path": self.path, "samples": self.samples, "segments": [s.to_dict() for s in self.segments]}


@dataclass
class Accumulated:
    """Result of a streaming pass: the summed normal equations, the sample count, the rate,
    the notes, and what each source (and segment) contributed."""

    ne: NormalEquations
    samples: int
    fs: float
    notes: list[str]
    sources: list[SourceCount] = field(default_factory=list)
    q_min: np.ndarray | None = None  # (n,) joint position range over the fitted samples
    q_max: np.ndarray | None = None

    def copy(self) -> "Accumulated":
        """An independent copy (its normal equations copied)."""
        return replace(self, ne=self.ne.copy(), notes=list(self.notes), sources=list(self.sources))

    def merge(self, other: "Accumulated") -> "Accumulated":
        """Add another pass over other sources (same robot, model and base parameters) in place."""
        self.ne.merge(other.ne)
        self.q_min = np.fmin(self.q_min, other.q_min) if self.q_min is not None else other.q_min
        self.q_max = np.fmax(self.q_max, other.q_max) if self.q_max is not None else other.q_max
        self.samples += other.samples
        self.fs = self.fs if np.isfinite(self.fs) else other.fs
        self.notes = list(dict.fromkeys(self.notes + other.notes))
        self.sources += other.sources
        return self


def row_mask(dq: np.ndarray, keep: np.ndarray | None, prep: Preprocessing) -> np.ndarray | None:
    """(N, n) rows used in a fit: away from the log's ends, not slower than min_velocity and, with
    ``reversal_span``, away from velocity reversals (``data.reversals``; dq (N, n) rows that
    follow each other on the prepared grid)."""
    mask = None if keep is None else np.repeat(keep[:, None], dq.shape[1], axis=1)
    if prep.min_velocity > 0:
        moving = velocity_mask(dq, prep.min_velocity)
        mask = moving if mask is None else mask & moving
    if any(prep.reversal_span):
        away = ~reversal_rows(dq, prep.reversal_span, prep.reversal_velocity)
        mask = away if mask is None else mask & away
    return mask


def fitted_rest(robot, dq: np.ndarray, keep: np.ndarray | None, prep: Preprocessing) -> np.ndarray | None:
    """(N, n) the fitted rows (``row_mask``) that hold a motor at rest (``rest_rows``), whose
    levels ``identify.rest_levels`` eliminates; None without rest detection."""
    if not prep.rest_band:
        return None
    rest = rest_rows(robot, dq)
    mask = row_mask(dq, keep, prep)
    return rest if mask is None else rest & mask


def friction_fit_rows(robot, ready: JointData, prep: Preprocessing) -> np.ndarray:
    """(N, n) the rows of prepared data ``ready`` that a friction model is fitted and scored on:
    the fitted rows (``row_mask``: settled filter, velocity mask, reversal rows) without the fit's
    rests (``fitted_rest``: a held torque up to Fs, friction columns 0 for every model)."""
    mask = row_mask(ready.dq, segment_edge_mask(ready, edge_samples(prep, prepared_rate(ready))), prep)
    mask = np.ones(ready.dq.shape, dtype=bool) if mask is None else mask
    return mask & ~rest_rows(robot, ready.dq) if prep.rest_band else mask  # fitted_rest is rest_rows & mask


def rest_rows(robot, dq: np.ndarray) -> np.ndarray:
    """(N, n) True where joint i's torque holds a motor at rest: R_k . dq == 0 exactly (rest
    detection sets a still joint's dq to 0, ``data.rest``) for a motor k with R_ki != 0 (R = 1
    without a coupled transmission, identify/model.py C1): its torque holds static friction."""
    if robot is None or not robot.is_coupled:
        return dq == 0.0
    r = robot.motor_rows
    still = (dq @ r.T) == 0.0  # (N, motors)
    return (still.astype(np.int64) @ (r != 0).astype(np.int64)) > 0


def add_samples(robot, data: JointData, options: ModelOptions, prep: Preprocessing,
                gram: RegressorGram, buffer: np.ndarray, keep: np.ndarray | None = None,
                run: np.ndarray | None = None, run_sums: np.ndarray | None = None) -> int:
    """Add prepared samples (those with ``keep``, (N,), when given) to ``gram`` block by block;
    returns the number of samples added. ``buffer``: ``gram.new_buffer(BLOCK)``, reused. ``run``
    (N, n): the rest of each row (``RestRuns.label``) whose regressor rows and torques are summed
    into ``run_sums`` (``gram.new_run_sums``) on the way (identify/rest_levels.py, H1).
    Runs without the GIL in its heavy parts."""
    if data.tau is None:
        raise DataError(f"{data.source}: no torques (tau1..taun) or currents (i1..in) to identify from")
    count, mask = 0, row_mask(data.dq, keep, prep)  # all rows at once: a reversal's rows span blocks
    for s in range(0, len(data), BLOCK):
        sl = slice(s, s + BLOCK)
        own = data.own[sl] if data.own is not None else motor_columns(robot, data.dq[sl], data.ddq[sl], options,
                                                                      q=data.q[sl])
        tau, dq, kb = data.tau[sl], data.dq[sl], None if keep is None else keep[sl]
        gram.add_motion(robot, np.ascontiguousarray(data.q[sl]), np.ascontiguousarray(dq),
                        np.ascontiguousarray(data.ddq[sl]), own, tau, None if mask is None else mask[sl], buffer,
                        None if run is None else run[sl], run_sums)
        count += tau.shape[0] if kb is None else int(kb.sum())
    return count


def add_with_rests(robot, data: JointData, options: ModelOptions, prep: Preprocessing, gram: RegressorGram,
                   buffer: np.ndarray, keep: np.ndarray | None, levels: RestLevels | None, close: bool) -> int:
    """``add_samples`` in this thread, each rest's sums taken on the way into ``levels`` (None:
    no rest detection); ``close``: the data end a segment, fold or block (every rest ends)."""
    rest = None if levels is None else fitted_rest(robot, data.dq, keep, prep)
    if rest is None:
        return add_samples(robot, data, options, prep, gram, buffer, keep)
    rests = RestRuns.of(rest)
    sums = gram.new_run_sums(rests.count)
    count = add_samples(robot, data, options, prep, gram, buffer, keep, rests.label, sums)
    levels.add(rests, *gram.run_totals(rests.joint, sums), len(data), close)
    return count


def sample_equations(robot, data: JointData, options: ModelOptions, base: BaseParameters,
                     prep: Preprocessing) -> NormalEquations:
    """The normal equations of prepared in-memory data, each rest's level eliminated (H1), made
    as the streaming pass makes them (``RegressorGram``): what ``regressor_arrays`` and
    ``NormalEquations.add`` give, without the (N, n, b) regressor."""
    keep = segment_edge_mask(data, edge_samples(prep, prepared_rate(data)))
    gram = RegressorGram(robot, options, base, identifiability_table(robot, options))
    levels = RestLevels(robot.n, base.rank) if prep.rest_band else None
    buffer = gram.new_buffer(min(BLOCK, max(len(data), 1)))
    bounds = [0, *np.flatnonzero(piece_starts(data)).tolist(), len(data)]
    for a, b in zip(bounds[:-1], bounds[1:]):  # rows that follow each other: a rest ends with its piece
        add_with_rests(robot, data.select(slice(a, b)), options, prep, gram, buffer, keep[a:b], levels, close=True)
    ne = gram.to_normal_equations(base)
    return ne if levels is None else ne - levels.take()


class _Workers:
    """Worker threads that each own a Gram accumulator and a regressor buffer; a chunk is cut
    into one contiguous share per worker. At most one chunk is in flight while the caller
    reads and filters the next one, so memory stays bounded. With rest detection the workers
    also sum each rest's rows, and ``levels`` takes them in time order (rest_levels.py, H1)."""

    def __init__(self, robot, options, base, prep, count: int):
        table = self.table = identifiability_table(robot, options)
        self.robot, self.options, self.prep = robot, options, prep
        self.grams = [RegressorGram(robot, options, base, table) for _ in range(count)]
        self.buffers = [gram.new_buffer(BLOCK) for gram in self.grams]
        self.pool = ThreadPoolExecutor(max_workers=count)
        self.running: list = []
        self.samples = 0
        self.levels = RestLevels(robot.n, base.rank) if prep.rest_band else None  # each rest's held torque
        self.resting: tuple | None = None  # the rests of the chunk in flight: (runs, per-worker sums, rows, close)

    def submit(self, chunk: JointData, keep: np.ndarray, close: bool = False) -> None:
        """Add a prepared chunk (``keep`` (N,): rows away from the edges); ``close``: it ends a
        segment, fold or block, and with it every rest still open."""
        self.wait()
        count = len(self.grams)
        share = -(-len(chunk) // (count * BLOCK)) * BLOCK  # whole blocks per worker
        rest = fitted_rest(self.robot, chunk.dq, keep, self.prep)
        rests = None if rest is None else RestRuns.of(rest)
        sums = []
        for w in range(count):
            part = slice(w * share, (w + 1) * share)
            if part.start >= len(chunk):
                break
            sums.append(None if rests is None else self.grams[w].new_run_sums(rests.count))
            self.running.append(self.pool.submit(add_samples, self.robot, chunk.select(part), self.options,
                                                 self.prep, self.grams[w], self.buffers[w], keep[part],
                                                 None if rests is None else rests.label[part], sums[-1]))
        if rests is not None:
            self.resting = (rests, sums, len(chunk), close)

    def wait(self) -> None:
        for future in self.running:
            self.samples += future.result()
        self.running = []
        if self.resting is not None:  # in time order: a rest goes on into the next chunk
            rests, sums, rows, close = self.resting
            self.levels.add(rests, *self.grams[0].run_totals(rests.joint, sum(sums)), rows, close)
            self.resting = None

    def take(self, base) -> NormalEquations:
        """The normal equations of everything submitted since the last ``take``, the levels of
        the rests ended since eliminated (H1); starts afresh."""
        self.wait()
        total = self.grams[0]
        for other in self.grams[1:]:
            total.merge(other)
        self.grams = [RegressorGram(self.robot, self.options, base, self.table) for _ in self.grams]
        ne = total.to_normal_equations(base)
        if self.levels is not None:
            ne -= self.levels.take()
        return ne


def stream_workers() -> int:
    """Worker threads of the streaming accumulation: the number of cores (at most 4)."""
    return max(1, min(4, os.cpu_count() or 1))


def accumulate_sources(robot, sources, options: ModelOptions, base: BaseParameters,
                       mapping: ColumnMapping = ColumnMapping(), prep: Preprocessing = Preprocessing(),
                       chunk_rows: int = 50_000, nan: str = "drop", workers: int | None = None,
                       per_segment: bool = False, cuts: list | None = None) -> Accumulated:
    """Stream every source (a joint data file; ``data.sources.expand_sources`` turns globs and
    directories into files) through its own preprocessing into one set of summed per-joint
    normal equations (``workers`` threads, default one per core, compute regressors and Gram
    matrices meanwhile). Each file and each segment of a file is filtered and differentiated
    alone, its edge samples left out.

    Returns the sums with ``sources``: per file and per segment the samples used (and with
    ``per_segment`` each segment's own normal equations, whose sum is ``ne``). ``cuts``: per
    source, ascending times [s] that cut it into len + 1 blocks of time (samples at or after
    cut k belong to block k + 1); each source's ``blocks`` are then their normal equations,
    whose sum is ``ne`` (held-out validation by subtraction: ``fleet.validation``); the
    preprocessing does not see the cuts. A file with no usable sample is an error naming it."""
    sources = list(sources)
    if cuts is not None and (per_segment or len(cuts) != len(sources)):
        raise ValueError("cuts: one sequence of times per source, and not with per_segment")
    pool = _Workers(robot, options, base, prep, workers or stream_workers())
    total = NormalEquations(robot.n, base.rank)
    counts, notes, fs = [], [], float("nan")
    q_min, q_max = np.full(robot.n, np.inf), np.full(robot.n, -np.inf)
    columns = own_columns(robot, options)
    # single BLAS thread: the workers are the parallelism (BLAS threads would contend)
    with single_blas_thread():
        try:
            for i, path in enumerate(sources):
                count, segment = SourceCount(str(path)), None
                times = None if cuts is None else np.asarray(cuts[i], dtype=float)
                if times is not None:
                    count.blocks = []
                chunks = prepared_chunks(path, robot, mapping, prep, chunk_rows, nan=nan, joint_columns=columns)
                for chunk, keep, last in with_edges(chunks, prep):
                    count.notes.extend(chunk.notes)
                    if len(chunk) == 0:
                        continue
                    if not np.isfinite(fs):
                        fs = prepared_rate(chunk)
                    index = 0 if chunk.segment is None else int(chunk.segment[0])
                    if segment is None or segment.segment != index:
                        segment = SegmentCount(index, float(chunk.t[0]), float(chunk.t[-1]))
                        count.segments.append(segment)
                    used = int(keep.sum())
                    if used:
                        q_min, q_max = np.fmin(q_min, chunk.q[keep].min(axis=0)), np.fmax(q_max, chunk.q[keep].max(axis=0))
                    segment.t_end, segment.samples, count.samples = float(chunk.t[-1]), segment.samples + used, \
                        count.samples + used
                    if times is None:
                        pool.submit(chunk, keep, close=last)  # rests go on across chunks, end with a segment
                    else:
                        _submit_blocks(pool, chunk, keep, times, count.blocks, base)
                    if last and per_segment:
                        segment.ne = pool.take(base)
                        total.merge(segment.ne)
                if count.samples == 0:
                    raise DataError(f"{path}: no samples left after preprocessing")
                if times is not None:
                    while len(count.blocks) <= times.size:
                        count.blocks.append(pool.take(base))
                    for ne in count.blocks:
                        total.merge(ne)
                prefix = f"{path}: " if len(sources) > 1 else ""
                notes.extend(prefix + note for note in dict.fromkeys(count.notes))
                counts.append(count)
            total.merge(pool.take(base))
        finally:
            pool.pool.shutdown(wait=True, cancel_futures=True)
    if not counts:
        raise DataError("no data sources given")
    return Accumulated(total, sum(c.samples for c in counts), fs, notes, counts, q_min, q_max)


def _submit_blocks(pool: _Workers, chunk: JointData, keep: np.ndarray, times: np.ndarray,
                   done: list[NormalEquations], base: BaseParameters) -> None:
    """Submit a chunk's rows block by block (``accumulate_sources(cuts=)``); a block ends when
    rows of a later one arrive: its equations (the levels of its rests, each piece's closed at
    its end, eliminated) are taken into ``done``."""
    block = np.searchsorted(times, chunk.t, side="right")  # non-decreasing: time increases in a source
    for b in range(int(block[0]), int(block[-1]) + 1):
        lo, hi = np.searchsorted(block, b, side="left"), np.searchsorted(block, b, side="right")
        if hi == lo:
            continue
        while len(done) < b:
            done.append(pool.take(base))
        pool.submit(chunk.select(slice(lo, hi)), keep[lo:hi], close=True)


def accumulate_file(robot, path, options: ModelOptions, base: BaseParameters,
                    mapping: ColumnMapping = ColumnMapping(), prep: Preprocessing = Preprocessing(),
                    chunk_rows: int = 50_000, nan: str = "drop", workers: int | None = None,
                    cuts=None) -> Accumulated:
    """``accumulate_sources`` of one file (``cuts``: its block times, or None)."""
    return accumulate_sources(robot, [path], options, base, mapping, prep, chunk_rows, nan, workers,
                              cuts=None if cuts is None else [cuts])


def source_counts(ready: JointData, mask: np.ndarray | None) -> SourceCount:
    """What an in-memory prepared file gives a fit (mask (N, n) rows kept, None = all)."""
    count = SourceCount(ready.source)
    used = np.ones(len(ready), dtype=bool) if mask is None else mask.any(axis=1)
    for index, rows in segment_ranges(ready):
        segment = SegmentCount(index, float(ready.t[rows][0]), float(ready.t[rows][-1]), int(used[rows].sum()))
        count.segments.append(segment)
        count.samples += segment.samples
    return count


def regressor_arrays(robot, data: JointData, options: ModelOptions, base: BaseParameters,
                     prep: Preprocessing) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(Y_b (N, n, b), tau (N, n), mask (N, n)) of prepared in-memory data (mask: rows to fit)."""
    if data.tau is None:
        raise DataError(f"{data.source}: no torques (tau1..taun) or currents (i1..in) to identify from")
    y = log_regressor(robot, data, slice(None), options)
    tau, dq = data.tau, data.dq
    keep = segment_edge_mask(data, edge_samples(prep, prepared_rate(data)))
    y = y[..., base.independent]
    rest = fitted_rest(robot, dq, keep, prep)
    if rest is not None:  # each rest's unknown held torque eliminated (identify/rest_levels.py, H1)
        y, tau = remove_levels(y, tau, rest, piece_starts(data))
    return np.ascontiguousarray(y), tau, row_mask(dq, keep, prep)


def fit_data(robot, data: JointData, options: ModelOptions, base: BaseParameters,
             estimator: Estimator, prep: Preprocessing = Preprocessing(), prepared: bool = False) -> Estimator:
    """Prepare (unless ``prepared``) in-memory data and fit ``estimator`` to it: from its normal
    equations (``sample_equations``) when the estimator fits from them, else from the samples (IRLS)."""
    ready = data if prepared else prepare(data, prep, joint_columns=own_columns(robot, options))
    if type(estimator)._fit_samples is Estimator._fit_samples:  # it would only sum the samples' normal equations
        if ready.tau is None:
            raise DataError(f"{ready.source}: no torques (tau1..taun) or currents (i1..in) to identify from")
        return estimator.fit_normal_equations(sample_equations(robot, ready, options, base, prep))
    y, tau, mask = regressor_arrays(robot, ready, options, base, prep)
    return estimator.fit(y, tau, mask)


def prepared_sources(robot, paths, options: ModelOptions, mapping: ColumnMapping = ColumnMapping(),
                     prep: Preprocessing = Preprocessing(), nan: str = "drop") -> list[JointData]:
    """Each file read whole and prepared segment by segment (the in-memory paths: IRLS, per cycle)."""
    from dynid.data.io import load_joint_data
    columns = own_columns(robot, options)
    return [prepare(load_joint_data(p, robot, mapping, nan, prep), prep, joint_columns=columns) for p in paths]


def stacked_regressor(robot, readies: list[JointData], options: ModelOptions, base: BaseParameters,
                      prep: Preprocessing) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[SourceCount], tuple]:
    """``regressor_arrays`` of several prepared files stacked: (Y_b, tau, mask, per-file counts,
    (q_min, q_max) joint position range over the fitted samples)."""
    parts = [regressor_arrays(robot, ready, options, base, prep) for ready in readies]
    counts = [source_counts(ready, mask) for ready, (_, _, mask) in zip(readies, parts)]
    used = np.concatenate([ready.q[mask.any(axis=1)] for ready, (_, _, mask) in zip(readies, parts)])
    span = (used.min(axis=0), used.max(axis=0)) if len(used) else (np.zeros(robot.n), np.zeros(robot.n))
    return (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
            np.concatenate([p[2] for p in parts]), counts, span)


def per_cycle(robot, data: JointData | list[JointData], options: ModelOptions, base: BaseParameters, make,
              by: str = "cycle", prep: Preprocessing = Preprocessing(), prepared: bool = False) -> dict:
    """Identify each cycle (or stage, or segment) separately; cross-cycle mean, std and %spread
    (thesis 5.1.5). Several files (a list): labels are 'file:label'.

    make(): a fresh estimator; prepared: ``data`` is already preprocessed (e.g. a selection of
    cycles of a prepared log). Returns {"labels", "values" (cycles, b), "mean", "std",
    "relative_spread" (100 std / |mean|), "failed": {label: reason}}.
    """
    datas = data if isinstance(data, list) else [data]
    values, labels, failed = [], [], {}
    for one in datas:
        ready = one if prepared else prepare(one, prep, joint_columns=own_columns(robot, options))
        prefix = f"{one.source}:" if len(datas) > 1 else ""
        for label, idx in segments(ready, by):
            try:
                est = fit_data(robot, ready.select(idx), options, base, make(), prep, prepared=True)
            except (DynidError, np.linalg.LinAlgError) as exc:  # a short or static cycle: reported, not fatal
                failed[prefix + label] = str(exc)
                continue
            values.append(est.coef_)
            labels.append(prefix + label)
    if not values:
        raise DataError(f"{', '.join(d.source for d in datas)}: no {by} could be identified: {failed}")
    v = np.array(values)
    mean, std = v.mean(axis=0), v.std(axis=0, ddof=1) if len(v) > 1 else np.zeros(v.shape[1])
    with np.errstate(divide="ignore", invalid="ignore"):
        spread = 100.0 * std / np.abs(mean)
    return {"by": by, "labels": labels, "values": v, "mean": mean, "std": std,
            "relative_spread": spread, "failed": failed}
