"""Converting foreign logs into the contract's joint data format, streaming.

``dynid convert`` reads a source chunk by chunk and writes CSV or Parquet
(docs/formats.md section 3, with the ``segment`` column of docs/formats.md) without ever holding
the whole log: a long log needs memory for one chunk only. Sources:

- a **directory of per-signal text files** (``text_signal_chunks``): one file per signal,
  one row per sample, whitespace-separated numbers (the layout of the KUKA iiwa logs of
  ``shared/real/kuka_iiwa14``: ``cur_traj_time_s.txt``, ``joint_position_measured.txt``...).
  ``signals`` says which file holds which signal (``t=cur_traj_time_s.txt,q=...``); a file
  of k columns gives ``q1..qk`` (every per-joint file has the same k; a ``.gz``, ``.bz2`` or
  ``.xz`` file is decompressed). The files must have the same number of rows; rows with NaN
  are dropped with a note (``--nan reject``: refused), and a time that never advances is refused. Where the
  time restarts (a new plan), a ``segment`` column labels the pieces, so the written file
  keeps the contract's strictly increasing time inside each segment;
- a ROS bag or MCAP file (``data.bags``).

Nothing is converted: signs, units and names stay as logged (the layout options of
``identify`` apply them, e.g. ``--negate tau``), so the written file is the log.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from dynid.errors import DataError

SIGNALS = ("t", "q", "dq", "ddq", "tau", "i", "u", "temp")


def parse_signals(text: str) -> list[tuple[str, str]]:
    """'t=time.txt,q=pos.txt' -> [("t", "time.txt"), ("q", "pos.txt")] (t required)."""
    from dynid.data.columns import parse_pairs

    pairs = parse_pairs(text, "--signals", "SIGNAL=FILE pairs like 't=time.txt'")
    for name, _ in pairs:
        if name not in SIGNALS:
            raise DataError(f"--signals: signal '{name}' unknown, expected one of {list(SIGNALS)}")
    if "t" not in dict(pairs) or "q" not in dict(pairs):
        raise DataError("--signals: needs at least the time and the positions, e.g. 't=time.txt,q=positions.txt'")
    return pairs


def _rows(lines: list[str], path: Path, first_row: int) -> np.ndarray:
    """Whitespace-separated numbers of ``lines`` as a (rows, k) array, rows named on error."""
    try:
        values = [[float(v) for v in line.split()] for line in lines]
    except ValueError:
        for k, line in enumerate(lines):
            try:
                [float(v) for v in line.split()]
            except ValueError:
                raise DataError(f"{path}: row {first_row + k} is not numbers: {line.strip()[:60]!r}") from None
    widths = {len(v) for v in values}
    if len(widths) > 1:
        k = next(i for i, v in enumerate(values) if len(v) != len(values[0]))
        raise DataError(f"{path}: row {first_row + k} has {len(values[k])} values, row {first_row} has "
                        f"{len(values[0])}; expected the same number on every row")
    return np.array(values, dtype=float).reshape(len(values), -1)


def signal_files(directory, signals: list[tuple[str, str]]) -> list[tuple[str, Path]]:
    """The signal files of ``parse_signals`` pairs below ``directory``, each checked as an input
    (registered, so that no output may overwrite it) and as text: a compressed or binary file is
    named as such (``io.check_text``)."""
    from dynid.data.io import check_text
    from dynid.files.inputs import input_file

    out = []
    for name, file in signals:
        path = input_file(Path(directory) / file, f"'{name}' signal file")
        check_text(path, "text file of numbers (one row per sample)")
        out.append((name, path))
    return out


def text_signal_chunks(directory, signals: list[tuple[str, str]], chunk_rows: int = 50_000, nan: str = "drop",
                       notes: list[str] | None = None) -> Iterator[dict]:
    """{contract column: array} chunks of a directory of per-signal text files (module docstring),
    with a ``segment`` column counting the time resets. Rows with NaN in any signal are dropped
    (counted in ``notes``) or, with ``nan="reject"``, refused. Per-joint signals must have one
    column per joint each (the same number in every file); a time that never advances is refused."""
    handles, widths = {}, {}
    dropped, first_dropped, t_range = 0, None, [math.inf, -math.inf]
    restarts = Restarts()
    try:
        for name, path in signal_files(directory, signals):
            handles[name] = (path, _open_text(path))
        row = 1
        while True:
            block = {name: [line for line in itertools.islice(fh, chunk_rows) if line.strip()]
                     for name, (_, fh) in handles.items()}
            sizes = {name: len(lines) for name, lines in block.items()}
            if len(set(sizes.values())) > 1:
                short = min(sizes, key=sizes.get)
                raise DataError(f"{handles[short][0]}: {row - 1 + sizes[short]} rows, but "
                                f"{handles[max(sizes, key=sizes.get)][0]} has more; the signal files of one log "
                                "must have one row per sample each")
            count = next(iter(sizes.values()))
            if count == 0:
                break
            values = {name: _rows(lines, handles[name][0], row) for name, lines in block.items()}
            for name, v in values.items():
                if widths.setdefault(name, v.shape[1]) != v.shape[1]:
                    raise DataError(f"{handles[name][0]}: {v.shape[1]} columns from row {row}, {widths[name]} before")
            _check_widths(values, handles)
            finite = np.ones(count, dtype=bool)
            for v in values.values():
                finite &= ~np.isnan(v).any(axis=1)
            if not finite.all():
                bad = row + int(np.flatnonzero(~finite)[0])
                if nan == "reject":
                    raise DataError(f"{handles[_nan_signal(values, ~finite)][0]}: row {bad} holds NaN "
                                    f"({int((~finite).sum())} such rows here); use --nan drop to skip them")
                dropped += int((~finite).sum())
                first_dropped = first_dropped or bad
                values = {name: v[finite] for name, v in values.items()}
            row += count
            if not finite.any():
                continue
            out = {}
            t = values["t"][:, 0]
            t_range = [min(t_range[0], float(t.min())), max(t_range[1], float(t.max()))]
            labels = restarts(t)
            out["t"] = t
            for name, v in values.items():
                if name != "t":
                    out.update({f"{name}{j + 1}": v[:, j] for j in range(v.shape[1])})
            out["segment"] = labels
            yield out
    finally:
        for _, fh in handles.values():
            fh.close()
    if math.isfinite(t_range[0]) and t_range[1] <= t_range[0]:
        raise DataError(f"{handles['t'][0]}: every time stamp is {t_range[0]:g}: not a time signal (expected time "
                        "stamps that advance from row to row)")
    if dropped and notes is not None:
        notes.append(f"{dropped} row(s) with NaN dropped (first: row {first_dropped})")


def _open_text(path: Path):
    """A signal file as text; .gz, .bz2 and .xz files are decompressed on the fly."""
    import bz2
    import gzip
    import lzma

    opener = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}.get(path.suffix.lower(), open)
    return opener(path, "rt", encoding="utf-8", errors="replace")


def _check_widths(values: dict[str, np.ndarray], handles: dict) -> None:
    """One column in the time file; every per-joint signal with the same number of columns (joints)."""
    if values["t"].shape[1] != 1:
        raise DataError(f"{handles['t'][0]}: the time file has {values['t'].shape[1]} columns, expected 1")
    joints = {name: v.shape[1] for name, v in values.items() if name != "t"}
    if len(set(joints.values())) > 1:
        (a, na), (b, nb) = sorted(joints.items(), key=lambda kv: kv[1])[0], sorted(joints.items(),
                                                                                  key=lambda kv: kv[1])[-1]
        raise DataError(f"{handles[b][0]} has {nb} columns but {handles[a][0]} has {na}: every signal file of one "
                        "log has one column per joint")


def _nan_signal(values: dict[str, np.ndarray], rows: np.ndarray) -> str:
    return next(name for name, v in values.items() if np.isnan(v[rows]).any())


class Restarts:
    """Segment labels of a time column read chunk after chunk: a time stamp below the one before
    starts a new segment (a clock that restarts: a new plan of the iiwa logs, a ROS driver restarted)."""

    def __init__(self):
        self.segment, self.last_t = 0, None

    def __call__(self, t: np.ndarray) -> np.ndarray:
        if len(t) == 0:
            return np.zeros(0, dtype=np.int64)
        prev = np.concatenate([[self.last_t if self.last_t is not None else t[0]], t[:-1]])
        labels = self.segment + np.cumsum(t < prev)
        self.segment, self.last_t = int(labels[-1]), float(t[-1])
        return labels


def bag_chunks(path, joints: list[str] | None, topic: str, stamp: str = "header", chunk_rows: int = 50_000,
               effort_as: str = "tau", nan: str = "drop", notes: list[str] | None = None) -> Iterator[dict]:
    """{contract column: array} chunks of a ROS bag's JointState topic (``data.bags``); joints:
    the names to keep, in column order (None: those of the first message). Where the time
    restarts, a ``segment`` column labels the pieces (as for text signal files)."""
    from dynid.data.bags import bag_joint_names, bag_tables

    names = list(joints) if joints else bag_joint_names(path, topic)
    restarts = Restarts()
    for table in bag_tables(path, names, topic, stamp, chunk_rows, effort_as, nan, notes):
        columns = {name: table.column(name).to_numpy() for name in table.column_names}
        columns["segment"] = restarts(columns["t"])
        yield columns


def write_stream(out, chunks: Iterator[dict], metadata: dict | None = None) -> int:
    """Write column chunks to CSV or Parquet (by ``out``'s suffix) atomically, one chunk in
    memory at a time; returns the rows written. Nothing is written when the source fails or
    has no rows (the temporary file is removed)."""
    import json

    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    from dynid.data.io import is_parquet
    from dynid.files.outputs import write_output

    rows = [0]

    def write(tmp):
        with open(tmp, "wb") as fh:
            writer, names, schema = None, None, None
            try:
                for cols in chunks:
                    table = pa.table({k: pa.array(np.asarray(v)) for k, v in cols.items()})
                    if writer is None:
                        names, schema = table.column_names, table.schema
                        if is_parquet(out):
                            meta = {"dynid": json.dumps(metadata)} if metadata else None
                            writer = pq.ParquetWriter(fh, table.schema.with_metadata(meta) if meta else table.schema)
                        else:  # a plain header line, then Arrow's writer for the rows (as io.write_columns)
                            fh.write((",".join(names) + "\n").encode())
                            writer = pacsv.CSVWriter(fh, table.schema, write_options=pacsv.WriteOptions(
                                include_header=False))
                    if table.column_names != names:
                        raise DataError(f"{out}: the source's columns changed from {names} to {table.column_names}")
                    writer.write_table(table.cast(schema))
                    rows[0] += table.num_rows
            finally:
                if writer is not None:
                    writer.close()
        if rows[0] == 0:
            raise DataError(f"{out}: the source holds no samples; nothing written")

    write_output(out, write)
    return rows[0]
