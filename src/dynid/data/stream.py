"""Chunked reading and preprocessing of very long logs in bounded memory.

``raw_chunks`` reads a CSV (``pyarrow.csv.open_csv``, streaming) or Parquet file
(``ParquetFile.iter_batches``) ``chunk_rows`` rows at a time and maps/cleans each chunk.
``prepared_chunks`` runs ``prepare`` on overlapping windows: each window carries ``margin``
raw rows of context on both sides, and only samples away from the window edges are
emitted, so the zero-phase filter and the differences see the signal as if it were whole
(the filter's edge transient decays over ~ fs / cutoff samples; the default margin is
20 fs / cutoff, at least 200 rows). Memory is O(chunk_rows + margin).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from dynid.data.columns import ColumnMapping, JointData
from dynid.data.io import (BadRows, arrow_errors, check_bad_rows, clean_rows, csv_read_options, data_file, is_parquet,
                           table_to_columns)
from dynid.data.plausibility import PositionRange
from dynid.data.preprocess import Preprocessing, is_irregular, prepare, sample_rate
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


def _guarded(batches: Iterator[pa.Table], path: Path) -> Iterator[pa.Table]:
    """The batches, with pyarrow's errors raised while reading turned into DataError (``arrow_errors``)."""
    while True:
        with arrow_errors(path):
            table = next(batches, None)
        if table is None:
            return
        yield table


def _concat(a: JointData, b: JointData) -> JointData:
    cat = lambda x, y: None if x is None or y is None else np.concatenate([x, y])  # noqa: E731
    return JointData(cat(a.t, b.t), cat(a.q, b.q), cat(a.dq, b.dq), cat(a.ddq, b.ddq), cat(a.tau, b.tau),
                     cat(a.cycle, b.cycle), cat(a.stage, b.stage), a.source, a.notes + b.notes)


def raw_chunks(path: str | Path, robot, mapping: ColumnMapping = ColumnMapping(), chunk_rows: int = 50_000,
               nan: str = "drop") -> Iterator[JointData]:
    """Mapped, cleaned chunks of a joint data file (rows named by their place in the file).

    A malformed line other than the last one is reported when the stream reaches its end.
    """
    path = data_file(path)
    if not isinstance(chunk_rows, int) or chunk_rows < 1:
        raise DataError(f"--chunk-rows {chunk_rows}: expected a positive number of rows")
    bad = BadRows()
    offset, last_t = 0, -np.inf
    positions = PositionRange(robot.n)
    for table in _guarded(_batches(path, mapping, chunk_rows, bad), path):
        data = mapping.apply(robot, table_to_columns(table, mapping, str(path)), str(path))
        data = clean_rows(data, nan, row_offset=offset)
        positions.update(data.q)
        if len(data) and data.t[0] < last_t:
            raise DataError(f"{path}: time goes backwards near row {offset + 1} "
                            f"(t = {data.t[0]!r} after {last_t!r}); expected strictly increasing t")
        if len(data) and data.t[0] == last_t:
            data = data.select(slice(1, None))
            data.notes.append(f"row {offset + 1}: duplicated time stamp dropped")
        offset += table.num_rows
        if len(data):
            last_t = float(data.t[-1])
            yield data
    if offset == 0:
        raise DataError(f"{path}: no data rows")
    positions.warn(robot, str(path))
    notes = check_bad_rows(bad, offset, str(path), final=True)
    if notes:
        yield JointData(np.empty(0), np.empty((0, robot.n)), source=str(path), notes=notes)


def default_margin(fs: float, prep: Preprocessing) -> int:
    """Context rows on each side of a window: 20 fs / (lowest cutoff in use), at least 200,
    rounded up to a multiple of the decimation factor."""
    cutoffs = [c for c in (prep.cutoff(fs), 0.8 * fs / (2.0 * prep.decimate) if prep.decimate > 1 else 0.0) if c > 0]
    rows = int(max(200, 20 * fs / min(cutoffs))) if cutoffs else 200
    return -(-rows // prep.decimate) * prep.decimate


def prepared_chunks(path: str | Path, robot, mapping: ColumnMapping = ColumnMapping(),
                    prep: Preprocessing = Preprocessing(), chunk_rows: int = 50_000,
                    margin: int | None = None, nan: str = "drop", joint_columns=None) -> Iterator[JointData]:
    """Preprocessed chunks whose concatenation equals ``prepare`` of the whole file (up to
    the filter transient over ``margin`` rows, which decays below rounding for the default)."""
    window, emitted_to, t0 = None, -np.inf, None
    notes = []
    for raw in raw_chunks(path, robot, mapping, chunk_rows, nan):
        if len(raw) == 0:  # only notes (a truncated last line)
            notes.extend(raw.notes)
            continue
        if t0 is None:
            t0 = float(raw.t[0])
            if prep.resample_hz is None and len(raw) > 2 and is_irregular(raw.t):
                prep = replace(prep, resample_hz=sample_rate(raw.t))
                raw.notes.append(f"irregular time stamps: resampled to a uniform {prep.resample_hz:.6g} Hz grid")
            margin = margin or default_margin(sample_rate(raw.t), prep)
        window = raw if window is None else _concat(window, raw)
        if len(window) < 3 * margin:
            continue
        done = prepare(window, prep, grid_t0=t0, joint_columns=joint_columns)
        edge = float(window.t[len(window) - margin])
        lo, hi = np.searchsorted(done.t, emitted_to, "right"), np.searchsorted(done.t, edge, "left")
        if hi > lo:  # a slice: views, no copies
            yield done.select(slice(lo, hi))
            emitted_to = float(done.t[hi - 1])
        window = window.select(slice(len(window) - 2 * margin, None))
        window.notes = []
    if window is not None:
        done = prepare(window, prep, grid_t0=t0, joint_columns=joint_columns)
        last = done.select(slice(np.searchsorted(done.t, emitted_to, "right"), None))
        last.notes.extend(notes)
        yield last
