"""Chunked reading and preprocessing of very long logs in bounded memory.

``raw_chunks`` reads a CSV (``pyarrow.csv.open_csv``, streaming) or Parquet file
(``ParquetFile.iter_batches``) ``chunk_rows`` rows at a time and maps/cleans each chunk.
``prepared_chunks`` runs ``prepare`` on overlapping windows: each window carries ``margin``
raw rows of context on both sides, and only samples away from the window edges are
emitted, so the zero-phase filter and the differences see the signal as if it were whole
(the filter's edge transient decays over ~ fs / cutoff samples; the default margin is
20 fs / cutoff, at least 200 rows). Memory is O(chunk_rows + margin).

A log of several segments (``data.segments``: gaps, time resets, a ``segment`` column) gets
one such window per segment, so nothing is filtered or differentiated across a boundary;
``with_edges`` marks the edge samples at both ends of every segment for fits and scores.

Nothing depends on ``chunk_rows`` beyond rounding: every segment's rate, resampling and edge
trim come from its time base (``data.timing``), which ``log_timing`` finds in a first pass over
the time column (cached per file) before the windows start; the segmenter's gap threshold
comes from the file's first ``STEP_SAMPLES`` steps, which ``raw_chunks`` puts in its first chunk.
"""

from __future__ import annotations

import math

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from dynid.data.angles import AngleUnwrap
from dynid.data.arrays import ArrayLog
from dynid.data.bags import is_bag, robot_tables
from dynid.data.columns import TIME_UNITS, ColumnMapping, JointData
from dynid.data.io import (
    BadRows, arrow_errors, check_bad_rows, clean_rows, column_check, csv_read_options, data_file, is_parquet,
    map_columns, recorded_robot_check,
)
from dynid.data.plausibility import LogChecks
from dynid.data.preprocess import Preprocessing, edge_samples, prepare_segment, prepared_rate, too_short
from dynid.data.segments import Segmenter, concat, describe, segment_ranges
from dynid.data.still import REST_WINDOW, context_samples
from dynid.data.timing import STEP_SAMPLES, LogTiming, SegmentTiming, TimingPass, segment_timing
from dynid.errors import DataError


def _batches(path: Path, mapping: ColumnMapping, chunk_rows: int, bad: BadRows) -> Iterator[pa.Table]:
    """Tables of exactly ``chunk_rows`` rows (the last one shorter)."""
    if is_parquet(path):
        # pre_buffer=False: the default keeps every column chunk read so far (memory grows with the file)
        source = pq.ParquetFile(path, pre_buffer=False).iter_batches(batch_size=chunk_rows)
    else:
        block = int(min(max(chunk_rows * 64, 1 << 16), 1 << 24))  # bytes per parsed block
        source = pacsv.open_csv(path, read_options=csv_read_options(mapping, block_size=block),
                                parse_options=pacsv.ParseOptions(invalid_row_handler=bad),
                                convert_options=pacsv.ConvertOptions(strings_can_be_null=True))
    pending, rows = [], 0
    for batch in source:
        pending.append(batch)
        rows += batch.num_rows
        while rows >= chunk_rows:
            table = pa.Table.from_batches(pending)
            yield table.slice(0, chunk_rows)
            rest = table.slice(chunk_rows)
            pending, rows = rest.to_batches(), rest.num_rows
    if rows:
        yield pa.Table.from_batches(pending)


def _first_rows(tables: Iterator[pa.Table], rows: int) -> Iterator[pa.Table]:
    """The tables, the first ones joined until it holds at least ``rows`` rows (or the file ends)."""
    head = []
    for table in tables:
        if head is not None:
            head.append(table)
            if sum(t.num_rows for t in head) < rows:
                continue
            table, head = pa.concat_tables(head), None
        yield table
    if head:
        yield pa.concat_tables(head)


def _guarded(batches: Iterator[pa.Table], path: Path) -> Iterator[pa.Table]:
    """The batches, with pyarrow's errors raised while reading turned into DataError (``arrow_errors``)."""
    while True:
        with arrow_errors(path):
            table = next(batches, None)
        if table is None:
            return
        yield table


def raw_chunks(path: str | Path, robot, mapping: ColumnMapping = ColumnMapping(), chunk_rows: int = 50_000,
               nan: str = "drop", prep: Preprocessing | None = None) -> Iterator[JointData]:
    """Mapped, cleaned chunks of a joint data file (rows named by their place in the file), each
    row labelled with its segment (``data.segments``: ``prep.segments`` and ``prep.max_gap``).
    The segmenter's median step comes from ``log_timing``'s first pass; when there is none (a ROS
    bag, a FIFO) the first chunk holds at least the file's first ``STEP_SAMPLES`` + 1 rows (the
    step's rows: ``data.timing``), the others ``chunk_rows``.

    A malformed line other than the last one is reported when the stream reaches its end.
    """
    if not isinstance(chunk_rows, int) or chunk_rows < 1:
        raise DataError(f"--chunk-rows {chunk_rows}: expected a positive number of rows")
    bad, bag_notes = BadRows(), []
    if isinstance(path, ArrayLog):  # arrays in memory (data/arrays.py): the same chunks as a file's
        tables = path.tables(chunk_rows)
    elif is_bag(path):  # a ROS bag or MCAP file: its JointState topic as tables (data/bags.py)
        path = Path(path)
        tables = robot_tables(path, robot, mapping, chunk_rows, nan, bag_notes)
    else:
        path = data_file(path)
        recorded_robot_check(path, robot, mapping)
        tables = _guarded(_batches(path, mapping, chunk_rows, bad), path)
    plan = log_timing(path, mapping, prep)
    if plan is None or plan.step is None:
        tables = _first_rows(tables, STEP_SAMPLES + 1)
    offset, kept = 0, 0
    segmenter = Segmenter.for_preprocessing(str(path), prep, None if plan is None else plan.step)
    checks = LogChecks(robot, str(path))
    unwrap = AngleUnwrap(robot.is_revolute, str(path))  # angles logged within one turn (data.angles)
    columns_notes: list[str] = []
    for table in tables:
        if offset == 0:
            columns_notes = column_check(table, mapping, robot, str(path))
        part = mapping.keep_rows(offset + 1, table.num_rows)  # --rows, before cleaning: rows as numbered
        if part.stop > part.start:
            data = clean_rows(map_columns(table.slice(part.start, part.stop - part.start), mapping, robot,
                                          str(path)), nan, row_offset=offset + part.start, segmenter=segmenter)
            inside = mapping.in_time_range(data.t)  # --time-range, on the stamps in seconds
            if inside is not None:
                data = data.select(inside)
            data = unwrap(data)
            checks.update(data)
            kept += len(data)
            if len(data):
                yield data
        offset += table.num_rows
        if mapping.rows is not None and offset >= mapping.rows[1]:
            break  # past the last row asked for
    if offset == 0:
        raise DataError(f"{path}: no data rows")
    if kept == 0 and mapping.part():
        raise DataError(f"{path}: no data row within {mapping.part()} ({offset} rows read)")
    checks.finish()
    notes = columns_notes + check_bad_rows(bad, offset, str(path), final=True) + bag_notes
    if mapping.part():
        notes.append(f"{kept} rows within {mapping.part()} read")
    if segmenter.summary():
        notes.append(segmenter.summary())
    if unwrap.summary():
        notes.append(unwrap.summary())
    if notes:
        yield JointData(np.empty(0), np.empty((0, robot.n)), source=str(path), notes=notes)


_TIMINGS: dict[tuple, LogTiming | None] = {}  # first passes of this process, by file state and options


def log_timing(path: str | Path, mapping: ColumnMapping = ColumnMapping(), prep: Preprocessing | None = None,
               chunk_rows: int = 200_000) -> LogTiming | None:
    """The time base of every segment of a file (``data.timing``) from its time and ``segment``
    columns alone: a cheap first pass (a CSV is tokenized but only these columns are converted;
    a Parquet file reads them alone), cached per file (path, size, modification time) and
    segmentation options. Rows with a time stamp are seen whether or not cleaning later drops
    them for NaN in other columns (``LogTiming.find`` copes). None for a ROS bag (its messages
    would be decoded twice), a file that cannot be read twice (a FIFO), a file without a time
    column, or one the full pass will report as broken."""
    if isinstance(path, ArrayLog):
        return _first_pass(path, mapping, prep, chunk_rows)
    if is_bag(path):
        return None
    path = data_file(path)
    if not path.is_file():
        return None
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns, mapping, None if prep is None else
           (prep.segments, prep.max_gap, prep.bridge_gap))
    if key not in _TIMINGS:
        if len(_TIMINGS) >= 64:
            _TIMINGS.clear()
        _TIMINGS[key] = _first_pass(path, mapping, prep, chunk_rows)
    return _TIMINGS[key]


def _first_pass(path: Path | ArrayLog, mapping: ColumnMapping, prep: Preprocessing | None,
                chunk_rows: int) -> LogTiming | None:
    segmenter = Segmenter.for_preprocessing(str(path), prep)
    timing, offset, scale = TimingPass(), 0, TIME_UNITS[mapping.time_unit]
    try:
        if mapping.names:
            raw = list(mapping.names)
        elif isinstance(path, ArrayLog):
            raw = path.column_names
        else:
            from dynid.data.sources import header_names
            raw = header_names(path, ColumnMapping())  # the file's own names
        wanted = {mapping.contract_name(c): c for c in raw if mapping.contract_name(c) in ("t", "segment")}
        if "t" not in wanted:
            return None
        with arrow_errors(path):
            if isinstance(path, ArrayLog):
                batches = (b for table in path.tables(chunk_rows, list(wanted.values())) for b in table.to_batches())
            elif is_parquet(path):
                batches = pq.ParquetFile(path, pre_buffer=False).iter_batches(batch_size=chunk_rows,
                                                                              columns=list(wanted.values()))
            else:  # 1 MB blocks: pyarrow's streaming reader holds ~30 blocks (16 MB blocks peaked at 0.5 GB)
                batches = pacsv.open_csv(path, read_options=csv_read_options(mapping, block_size=1 << 20),
                                         parse_options=pacsv.ParseOptions(invalid_row_handler=lambda row: "skip"),
                                         convert_options=pacsv.ConvertOptions(include_columns=list(wanted.values()),
                                                                              strings_can_be_null=True))
            for batch in _first_rows(iter(pa.Table.from_batches([b]) for b in batches), STEP_SAMPLES + 1):
                t = batch.column(wanted["t"]).to_numpy(zero_copy_only=False).astype(float) * scale
                labels = (np.asarray(batch.column(wanted["segment"]).to_pylist(), dtype=object)
                          if "segment" in wanted else None)
                rows = offset + 1 + np.arange(t.size)
                finite = np.isfinite(t)
                if not finite.all():
                    t, rows, labels = t[finite], rows[finite], None if labels is None else labels[finite]
                ids, duplicate = segmenter(t, labels, rows)
                timing.add(t[~duplicate], ids[~duplicate])
                offset += batch.num_rows
    except (DataError, ValueError, TypeError):
        return None  # time going backwards, a malformed file, text in the time column...: the full pass reports it
    return LogTiming(tuple(timing.timings()), segmenter.step)


def count_segments(path: str | Path, mapping: ColumnMapping = ColumnMapping(), prep: Preprocessing | None = None,
                   robot=None, chunk_rows: int = 200_000) -> int | None:
    """Segments of a file (``data.segments``) from its time and ``segment`` columns alone
    (``log_timing``'s first pass), for writers that must know before streaming whether a file
    has several segments; a ROS bag's messages are read again (this needs ``robot``). Rows that
    cleaning drops for NaN in other columns are not seen (their gap is not counted). None when
    the file cannot be read twice (a FIFO), has no time column, or the full pass will report an
    error."""
    if not is_bag(path):
        timing = log_timing(path, mapping, prep, chunk_rows)
        return None if timing is None else len(timing.segments)
    if robot is None:
        return None
    segmenter = Segmenter.for_preprocessing(str(path), prep)
    offset = 0
    try:
        for batch in robot_tables(Path(path), robot, mapping, chunk_rows, "drop", []):
            t = batch.column("t").to_numpy(zero_copy_only=False).astype(float)
            segmenter(t, None, offset + 1 + np.arange(t.size))
            offset += batch.num_rows
    except DataError:
        return None
    return segmenter.last_id + 1


def default_margin(fs: float, prep: Preprocessing) -> int:
    """Context rows on each side of a window: 20 fs / (lowest cutoff in use), at least 200 (and
    what a still flag depends on, ``data.still.context_samples``), rounded up to a multiple of
    the decimation factor."""
    cutoffs = [c for c in (prep.cutoff(fs), 0.8 * fs / (2.0 * prep.decimate) if prep.decimate > 1 else 0.0) if c > 0]
    rows = int(max(200, 20 * fs / min(cutoffs))) if cutoffs else 200
    if prep.rest_band and math.isfinite(fs):  # data.still's windows, runs and their sides
        rows = max(rows, context_samples(fs, prep.rest_window or REST_WINDOW))
    return -(-rows // prep.decimate) * prep.decimate


class _SegmentWindow:
    """The overlapping-window preparation of one segment (module docstring) on the segment's time
    base ``timing`` (``data.timing``); without one (a bag, a FIFO) the window waits for the
    segment's first ``STEP_SAMPLES`` steps and decides on them."""

    def __init__(self, segment: int, prep: Preprocessing, margin: int | None, joint_columns,
                 timing: SegmentTiming | None):
        self.segment, self.prep, self.margin, self.joint_columns = segment, prep, margin, joint_columns
        self.timing = timing
        self.window: JointData | None = None
        self.t0: float | None = None
        self.emitted_to = -np.inf
        self.emitted = False

    def _prepare(self) -> JointData:
        return prepare_segment(self.window, self.prep, grid_t0=self.t0, joint_columns=self.joint_columns,
                               timing=self.timing)

    def _start(self) -> None:
        """Fix the grid origin, the time base and the margin (once, before the first window)."""
        window = self.window
        self.t0 = float(window.t[0])
        if self.timing is None:
            self.timing = segment_timing(window.t[:STEP_SAMPLES + 1], self.segment)
        self.margin = self.margin or default_margin(self.timing.rate, self.prep)

    def add(self, piece: JointData) -> Iterator[JointData]:
        """Take raw rows of the segment; emit what is prepared for good."""
        self.window = piece if self.window is None else concat([self.window, piece])
        window = self.window
        if self.t0 is None:
            if len(window) < 3 or (self.timing is None and len(window) <= STEP_SAMPLES):
                return
            self._start()
        if len(window) < 3 * self.margin:
            return
        done = self._prepare()
        edge = float(window.t[len(window) - self.margin])
        lo, hi = np.searchsorted(done.t, self.emitted_to, "right"), np.searchsorted(done.t, edge, "left")
        if hi > lo:  # a slice: views, no copies
            yield done.select(slice(lo, hi))
            self.emitted_to, self.emitted = float(done.t[hi - 1]), True
        self.window = window.select(slice(len(window) - 2 * self.margin, None))
        self.window.notes = []

    def finish(self, only: bool, keep_short: bool = False) -> tuple[JointData | None, str | None]:
        """(the rest of the segment, prepared, and a note or None) or (None, why it is dropped).
        A segment shorter than its two ``edge_samples`` is dropped unless it is the file's ``only``
        one (fits then find no sample) or ``keep_short`` (predictions: every row is an edge row,
        predicted from the filter's edge polynomials, ``data.edges``); either way a note says so."""
        note = None
        if not self.emitted:
            reason = too_short(self.window, self.prep)
            if reason and not (only or keep_short):
                return None, f"{describe(self.window, self.segment)} dropped: {reason}"
            if reason:
                note = (f"{describe(self.window, self.segment)}: every row is within the filter's edges ({reason}); "
                        "its rows are predicted from the edge polynomials and left out of fits and validation figures")
        if self.t0 is None:
            self._start()
        done = self._prepare()
        done = done.select(slice(np.searchsorted(done.t, self.emitted_to, "right"), None))
        if note:
            done.notes = list(done.notes) + [note]
        return done, None


def prepared_chunks(path: str | Path, robot, mapping: ColumnMapping = ColumnMapping(),
                    prep: Preprocessing = Preprocessing(), chunk_rows: int = 50_000,
                    margin: int | None = None, nan: str = "drop", joint_columns=None,
                    keep_short: bool = False) -> Iterator[JointData]:
    """Preprocessed chunks whose concatenation equals ``prepare`` of the whole file (up to
    the filter transient over ``margin`` rows, which decays below rounding for the default),
    whatever ``chunk_rows`` (module docstring).

    Every chunk lies inside one segment (``chunk.segment`` holds its index; ``chunk.rate`` its
    rate after preparation); each segment is prepared on its own. A chunk of length 0 carries
    only notes. A file none of whose segments is long enough for the filter is an error
    (``preprocess.too_short``). ``keep_short``: a segment shorter than its filter edges is
    prepared whole, with a note, instead of dropped (``predict``: every row gets a torque)."""
    current: _SegmentWindow | None = None
    notes, dropped, kept = [], [], 0
    plan = log_timing(path, mapping, prep)

    def close(window: _SegmentWindow, only: bool):
        nonlocal kept
        last, why = window.finish(only, keep_short)
        if why:
            dropped.append(why)
            return None
        kept += 1
        return last

    for raw in raw_chunks(path, robot, mapping, chunk_rows, nan, prep):
        notes.extend(raw.notes)
        raw.notes = []
        if len(raw) == 0:  # only notes (a truncated last line, the segments)
            continue
        for segment, rows in segment_ranges(raw):
            if current is not None and current.segment != segment:
                last = close(current, only=False)
                if last is not None and len(last):
                    yield _with_notes(last, notes)
                current = None
            if current is None:
                timing = None if plan is None else plan.find(segment, float(raw.t[rows.start]))
                current = _SegmentWindow(segment, prep, margin, joint_columns, timing)
            for done in current.add(raw.select(rows)):
                yield _with_notes(done, notes)
    if current is not None:
        last = close(current, only=kept == 0 and not dropped)
        if last is not None:
            yield _with_notes(last, notes)
    if kept == 0:
        raise DataError(f"{path}: no segment is long enough for the filter ({'; '.join(dropped[:3])})")
    if notes or dropped:
        yield JointData(np.empty(0), np.empty((0, robot.n)), source=str(path), notes=notes + dropped)


def _with_notes(chunk: JointData, pending: list[str]) -> JointData:
    """``chunk`` carrying the notes gathered so far (``pending`` is emptied)."""
    chunk.notes = pending[:] + chunk.notes
    pending.clear()
    return chunk


def with_edges(chunks: Iterator[JointData], prep: Preprocessing) -> Iterator[tuple[JointData, np.ndarray, bool]]:
    """(chunk, keep (N,), last) for each prepared chunk: keep is False for the ``edge_samples``
    at the start and the end of every segment (at the segment's rate, ``chunk.rate``), however
    short its chunks; last: the chunk ends its segment. A chunk is held back until ``trim``
    samples of its segment follow it (its tail is then known not to be an edge). Chunks of
    length 0 (notes only) pass through with an empty mask."""
    held: list[JointData] = []
    head = trim = 0
    current: object = _NO_SEGMENT

    def release(count: int, ends: bool) -> Iterator[tuple[JointData, np.ndarray, bool]]:
        """The first ``count`` held chunks; ``ends``: they are all that is left of the segment."""
        nonlocal head
        out = held[:count]
        del held[:count]
        after = sum(len(c) for c in out)
        for k, chunk in enumerate(out):
            after -= len(chunk)  # samples of the segment after this chunk
            keep = np.ones(len(chunk), dtype=bool)
            keep[:head] = False
            head = max(head - len(chunk), 0)
            tail = trim - after
            if ends and tail > 0:
                keep[max(len(chunk) - tail, 0):] = False
            yield chunk, keep, ends and k == len(out) - 1

    for chunk in chunks:
        if len(chunk) == 0:
            yield chunk, np.zeros(0, dtype=bool), False
            continue
        index = None if chunk.segment is None else int(chunk.segment[0])
        if index != current:
            yield from release(len(held), ends=True)
            trim = edge_samples(prep, prepared_rate(chunk)) if chunk.rate or len(chunk) > 2 else 2
            head, current = trim, index
        held.append(chunk)
        behind = np.cumsum([len(c) for c in held][::-1])[::-1]  # samples from each held chunk to the end
        ready = int(np.sum(behind[1:] >= trim))  # chunks followed by at least trim samples
        if ready:
            yield from release(ready, ends=False)
    yield from release(len(held), ends=True)


_NO_SEGMENT = object()
