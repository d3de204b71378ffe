"""Contiguous blocks of a log, read in bounded memory (for choices made on part of a long log).

``read_blocks`` returns the whole log as one block when it has at most ``budget`` rows;
otherwise ``count`` contiguous blocks of ``budget // count`` rows, evenly spread over the log
(block k centred at (k + 1/2) / count of it), so a choice made on them sees the start, the
middle and the end of a long recording. Blocks are never random samples: neighbouring samples
of a log are correlated, and a block keeps its own time order for filters and derivatives.
Rows carry their segment (``data.segments``); ``pieces`` cuts blocks at segment boundaries,
so nothing downstream filters or differentiates across one.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dynid.data.arrays import ArrayLog
from dynid.data.columns import ColumnMapping, JointData
from dynid.data.io import data_file, is_parquet
from dynid.data.segments import concat, segment_ranges
from dynid.data.stream import log_timing, raw_chunks


def count_rows(path: str | Path, mapping: ColumnMapping = ColumnMapping()) -> int:
    """Data rows of a CSV or Parquet file (Parquet: from the metadata; CSV: newlines, minus
    the header line unless the file is headerless)."""
    from dynid.data.bags import is_bag, message_count

    if isinstance(path, ArrayLog):
        return len(path)
    if is_bag(path):  # a ROS bag: the topic's messages, from its index (data/bags.py)
        return message_count(path, mapping.topic)
    path = data_file(path)  # a regular, readable file (never a device or a FIFO)
    if is_parquet(path):
        import pyarrow.parquet as pq

        try:
            return int(pq.ParquetFile(path).metadata.num_rows)
        except Exception:  # noqa: BLE001 - not a readable Parquet file: raw_chunks names the problem
            return 0
    lines, last = 0, b"\n"
    with open(path, "rb") as fh:
        for piece in iter(lambda: fh.read(1 << 24), b""):
            lines += piece.count(b"\n")
            last = piece[-1:]
    lines += last != b"\n"  # a last line without its newline
    return max(lines - (0 if mapping.names else 1), 0)


def rows_read(path: str | Path, mapping: ColumnMapping = ColumnMapping(), prep=None) -> int:
    """The rows of a file that ``raw_chunks`` reads: all of them, or within ``mapping.rows``, or
    (estimated from the time base of its segments, ``data.stream.log_timing``) within
    ``mapping.time_range``."""
    total = count_rows(path, mapping)
    if mapping.rows is not None:
        total = int(max(0, min(total, mapping.rows[1]) - max(mapping.rows[0], 1) + 1))
    if mapping.time_range is not None:
        plan = log_timing(path, mapping, prep)
        if plan is not None and plan.segments:
            lo, hi = mapping.time_range
            inside = sum(max(0.0, min(s.t_end, hi) - max(s.t_start, lo)) / (s.t_end - s.t_start) * s.rows
                         for s in plan.segments if s.t_end > s.t_start)
            total = min(total, int(inside) + 1)
    return total


def read_blocks(path: str | Path, robot, mapping: ColumnMapping = ColumnMapping(), nan: str = "drop",
                budget: int = 240_000, count: int = 5, chunk_rows: int = 50_000, prep=None) -> list[JointData]:
    """The log as one block (at most ``budget`` rows) or ``count`` evenly spread blocks of
    ``budget // count`` contiguous rows (module docstring). Rows are counted after cleaning;
    ``prep`` (its ``segments`` and ``max_gap``) labels their segments."""
    total = rows_read(path, mapping, prep)
    if total <= budget:
        starts, size = np.array([0]), max(total, 1) + chunk_rows  # everything
    else:
        size = budget // count
        starts = np.rint((np.arange(count) + 0.5) * total / count - size / 2).astype(np.int64)
    blocks: list[list[JointData]] = [[] for _ in starts]
    seen, notes = 0, []
    for chunk in raw_chunks(path, robot, mapping, chunk_rows, nan, prep):
        if len(chunk) == 0:
            notes.extend(chunk.notes)
            continue
        for k, start in enumerate(starts):
            lo, hi = max(start - seen, 0), min(start + size - seen, len(chunk))
            if hi > lo:
                blocks[k].append(chunk.select(slice(lo, hi)))
        seen += len(chunk)
        if seen >= starts[-1] + size:
            break
    out = [concat(parts) for parts in blocks if parts]
    if out:
        out[0].notes.extend(notes)
    return out


def pieces(blocks: list[JointData]) -> list[JointData]:
    """The blocks cut at their segment boundaries: contiguous rows of one segment each, in order."""
    return [block.select(rows) for block in blocks for _, rows in segment_ranges(block)]
