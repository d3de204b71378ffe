"""Converting foreign logs into the contract's joint data format, streaming.

``dynid convert`` reads a source chunk by chunk and writes CSV or Parquet
(docs/formats.md section 3, with the ``segment`` column of docs/formats.md) without ever holding
the whole log: a long log needs memory for one chunk only. Sources:

- a **directory of per-signal text files** (``text_signal_chunks``): one file per signal,
  one row per sample, whitespace-separated numbers (the layout of the KUKA iiwa logs of
  ``shared/real/kuka_iiwa14``: ``cur_traj_time_s.txt``, ``joint_position_measured.txt``...).
  ``signals`` says which file holds which signal (``t=cur_traj_time_s.txt,q=...``); a file
  of k columns gives ``q1..qk``. The files must have the same number of rows. Where the
  time restarts (a new plan), a ``segment`` column labels the pieces, so the written file
  keeps the contract's strictly increasing time inside each segment;
- a ROS bag or MCAP file (``data.bags``).

Nothing is converted: signs, units and names stay as logged (the layout options of
``identify`` apply them, e.g. ``--negate tau``), so the written file is the log.
"""

from __future__ import annotations

import itertools
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


def text_signal_chunks(directory, signals: list[tuple[str, str]], chunk_rows: int = 50_000) -> Iterator[dict]:
    """{contract column: array} chunks of a directory of per-signal text files (module docstring),
    with a ``segment`` column counting the time resets."""
    from dynid.files.inputs import input_file

    directory = Path(directory)
    handles, widths = {}, {}
    try:
        for name, file in signals:
            path = input_file(directory / file, f"'{name}' signal file")
            handles[name] = (path, open(path, encoding="utf-8", errors="replace"))
        row, segment, last_t = 1, 0, None
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
                return
            out = {}
            for name, lines in block.items():
                values = _rows(lines, handles[name][0], row)
                if widths.setdefault(name, values.shape[1]) != values.shape[1]:
                    raise DataError(f"{handles[name][0]}: {values.shape[1]} columns from row {row}, {widths[name]} before")
                if name == "t":
                    if values.shape[1] != 1:
                        raise DataError(f"{handles[name][0]}: the time file has {values.shape[1]} columns, expected 1")
                    t = values[:, 0]
                    prev = np.concatenate([[last_t if last_t is not None else t[0]], t[:-1]])
                    labels = segment + np.cumsum(t < prev)
                    segment, last_t = int(labels[-1]), float(t[-1])
                    out["t"] = t
                else:
                    out.update({f"{name}{j + 1}": values[:, j] for j in range(values.shape[1])})
            out["segment"] = labels
            row += count
            yield out
    finally:
        for _, fh in handles.values():
            fh.close()


def bag_chunks(path, joints: list[str] | None, topic: str, stamp: str = "header", chunk_rows: int = 50_000,
               effort_as: str = "tau", nan: str = "drop", notes: list[str] | None = None) -> Iterator[dict]:
    """{contract column: array} chunks of a ROS bag's JointState topic (``data.bags``); joints:
    the names to keep, in column order (None: those of the first message)."""
    from dynid.data.bags import bag_joint_names, bag_tables

    names = list(joints) if joints else bag_joint_names(path, topic)
    for table in bag_tables(path, names, topic, stamp, chunk_rows, effort_as, nan, notes):
        yield {name: table.column(name).to_numpy() for name in table.column_names}


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
