"""Reading and writing joint data files (docs/formats.md section 3): CSV or Parquet.

Real logs are messy; each defect is handled or rejected with the row named (rows are
counted from 1 after the header, so CSV row k is file line k + 1):

- truncated last line (too few fields): dropped, with a note; a short line elsewhere: rejected
- NaN / empty fields in t, q, dq, ddq, tau, i: the row is dropped (``nan="drop"``, default,
  with a note) or rejected (``nan="reject"``)
- duplicated time stamps: the later rows are dropped, with a note
- revolute angles logged within one turn (a step beyond pi between two samples): made
  continuous again (``data.angles``, W1), with a note
- time going backwards: rejected, unless ``--segments auto`` makes it a new segment
- gaps longer than ``--max-gap`` x the median step, a ``segment`` column: segments
  (``data.segments``)
- columns of joints the robot does not have (q7 of a 6-joint robot): a warning; columns outside
  the format: a note (several files of different joint counts in one fit are refused by
  ``data.sources``)
- a Parquet log whose ``dynid`` metadata names another robot or other joints: a warning
  (``data.provenance``)
- implausible values (``data.plausibility.LogChecks``): refused (1e300) or warned with the
  likely cause (degrees, ms, spikes, wrapped angles, interpolated gaps)
"""

from __future__ import annotations

import contextlib
import json
import re
import warnings
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from dynid.data.angles import AngleUnwrap
from dynid.data.arrays import ArrayLog
from dynid.data.bags import is_bag, read_bag
from dynid.data.columns import ColumnMapping, JointData, check_header
from dynid.files.inputs import input_file
from dynid.files.outputs import write_output
from dynid.data.plausibility import LogChecks, column_messages
from dynid.data.provenance import recorded_robot_message
from dynid.data.segments import Segmenter
from dynid.errors import DataError, DynidWarning

SIGNAL_PREFIXES = ("q", "dq", "ddq", "tau", "i", "u")


def atomic_write_bytes(path: str | Path, write) -> None:
    """Call write(tmp_path), then put the file at path without destroying anything
    (``dynid.files.outputs.write_output``: atomic rename, usual permissions, links written
    through, inputs never overwritten, temporaries cleaned)."""
    write_output(path, write)


def atomic_write_text(path: str | Path, text: str) -> None:
    atomic_write_bytes(path, lambda tmp: Path(tmp).write_text(text))


def is_parquet(path: str | Path) -> bool:
    return str(path).lower().endswith((".parquet", ".pq"))


def csv_read_options(mapping: ColumnMapping, block_size: int | None = None) -> pacsv.ReadOptions:
    kwargs = {"use_threads": False}
    if block_size:
        kwargs["block_size"] = block_size
    if mapping.names:
        kwargs["column_names"] = list(mapping.names)
    return pacsv.ReadOptions(**kwargs)


class BadRows:
    """Collects CSV rows with the wrong number of fields (pyarrow invalid_row_handler)."""

    def __init__(self):
        self.rows: list[tuple[int | None, int, int, str]] = []

    def __call__(self, row) -> str:
        try:
            text = row.text
        except UnicodeDecodeError:  # pyarrow decodes the line's bytes as UTF-8
            text = "<not UTF-8 text>"
        self.rows.append((row.number, row.expected_columns, row.actual_columns, text))
        return "skip"


def table_to_columns(table: pa.Table, mapping: ColumnMapping, source: str) -> dict[str, np.ndarray]:
    """Arrow table -> {contract name: numpy array}; NaN for nulls in numeric columns. A
    ``--rename`` of a column the file does not have is an error naming the file's columns."""
    absent = [(a, b) for a, b in mapping.rename if a not in table.column_names]
    if absent:
        a, b = absent[0]
        raise DataError(f"{source}: --rename {a}={b}: no column '{a}' in the file (its columns: "
                        f"{', '.join(table.column_names[:20])}{', ...' if table.num_columns > 20 else ''})")
    out, origin = {}, {}
    for name in table.column_names:
        key = mapping.contract_name(name)
        if key in origin:
            same = f"'{name}'" if origin[key] == name else f"'{origin[key]}' and '{name}' (both mapped to '{key}')"
            raise DataError(f"{source}: column {same} appears twice in the header; expected each column once")
        origin[key] = name
    for index, name in enumerate(table.column_names):
        key = mapping.contract_name(name)
        col = table.column(index)
        if pa.types.is_integer(col.type) or pa.types.is_floating(col.type) or pa.types.is_null(col.type):
            arr = col.to_numpy(zero_copy_only=False)
            out[key] = arr.astype(float) if key not in ("cycle",) else arr
        elif key in ("stage", "segment"):
            out[key] = np.asarray(col.to_pylist(), dtype=object)
        elif key.rstrip("0123456789") in SIGNAL_PREFIXES or key in ("t", "cycle"):
            values = col.to_pylist()
            bad = next((k for k, v in enumerate(values) if v is not None and not _is_number(v)), None)
            raise DataError(f"{source}: column '{name}' must be numeric; row {bad + 1 if bad is not None else '?'} "
                            f"holds {values[bad] if bad is not None else '?'!r}")
    return out


def joint_count(names) -> int:
    """Joints of a file from its contract column names: the largest k of a q{k} column (0 if none)."""
    ks = [int(m.group(1)) for m in (re.fullmatch(r"q(\d+)", str(c)) for c in names) if m]
    return max(ks, default=0)


def map_columns(table: pa.Table, mapping: ColumnMapping, robot, source: str) -> JointData:
    """Arrow table -> JointData in SI on the joint side (``ColumnMapping.apply``); a header of
    numbers (a CSV without one) is an error naming --columns (``columns.check_header``)."""
    check_header(list(table.column_names), mapping, robot.n, source)
    return mapping.apply(robot, table_to_columns(table, mapping, source), source)


def column_check(table: pa.Table, mapping: ColumnMapping, robot, source: str) -> list[str]:
    """Warn about columns of joints the robot does not have; return notes naming the columns not
    read (``plausibility.column_messages``)."""
    warns, notes = column_messages([mapping.contract_name(c) for c in table.column_names], robot, source)
    for text in warns:
        warnings.warn(DynidWarning(text), stacklevel=2)
    return notes


def recorded_robot_check(path: str | Path, robot, mapping: ColumnMapping = ColumnMapping()) -> None:
    """Warn when a Parquet log's ``dynid`` metadata names another robot or other joints than
    ``robot`` (``data.provenance``); joint names are not compared when ``--rename`` maps q columns."""
    renamed = any(re.fullmatch(r"q\d+", new) for _, new in mapping.rename)
    text = recorded_robot_message(file_metadata(path), robot, str(path), compare_joints=not renamed)
    if text:
        warnings.warn(DynidWarning(text), stacklevel=2)


def _is_number(v) -> bool:
    try:
        float(v)
        return True
    except (TypeError, ValueError):
        return False


def read_table(path: str | Path, mapping: ColumnMapping = ColumnMapping()) -> tuple[pa.Table, list[str]]:
    """The whole file as an Arrow table, plus notes about dropped malformed lines."""
    path = data_file(path)
    bad = BadRows()
    with arrow_errors(path):
        if is_parquet(path):
            return pq.read_table(path), []
        table = pacsv.read_csv(path, read_options=csv_read_options(mapping),
                               parse_options=pacsv.ParseOptions(invalid_row_handler=bad),
                               convert_options=pacsv.ConvertOptions(strings_can_be_null=True))
    return table, check_bad_rows(bad, table.num_rows, str(path))


def data_file(path: str | Path) -> Path:
    """A joint data file to read: a regular file (a FIFO for CSV, e.g. ``--data <(zcat log.csv.gz)``)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"data file not found: {path}")
    path = input_file(path, "joint data file (CSV or Parquet)", fifo=not is_parquet(path))
    if not is_parquet(path) and path.is_file():
        check_text(path)
    return path


_BINARY = {b"\x1f\x8b": ("gzip-compressed file", "decompress it or name it {name}.gz"),
           b"BZh": ("bzip2-compressed file", "decompress it or name it {name}.bz2"),
           b"\xfd7zXZ": ("xz-compressed file", "decompress it or name it {name}.xz"),
           b"\x28\xb5\x2f\xfd": ("zstd-compressed file", "decompress it or name it {name}.zst"),
           b"PK\x03\x04": ("zip archive", "unzip it"),
           b"PAR1": ("Parquet file", "name it .parquet")}


def check_text(path: Path, what: str = "CSV joint data file") -> None:
    """A text input (a CSV, a signal file) must start as text: a compressed or binary file is named
    as such, not left to a parser that would read its bytes as rows."""
    if path.suffix.lower() in (".gz", ".bz2", ".xz", ".zst", ".lz4"):
        return  # pyarrow decompresses by extension
    with open(path, "rb") as fh:
        head = fh.read(4096)
    for magic, (kind, hint) in _BINARY.items():
        if head.startswith(magic):
            raise DataError(f"{path}: a {kind}, not a {what}; {hint.format(name=path.name)}")
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # not a multi-byte character cut at the end of the block
            raise DataError(f"{path}: not UTF-8 text (binary byte {head[exc.start:exc.start + 1]!r} at offset "
                            f"{exc.start}); expected a {what}") from None
    if b"\x00" in head:
        raise DataError(f"{path}: holds NUL bytes, a binary file; expected a {what}")


@contextlib.contextmanager
def arrow_errors(path: Path):
    """pyarrow's errors on a malformed file (empty, binary, truncated, CSV named .parquet...) as a
    DataError naming the file and what was expected."""
    kind = "Parquet" if is_parquet(path) else "CSV"
    try:
        yield
    except (pa.ArrowException, OSError, UnicodeDecodeError) as exc:
        if isinstance(exc, (FileNotFoundError, PermissionError)):
            raise
        detail = " ".join(str(exc).split())[:200]
        raise DataError(f"{path}: not a readable {kind} joint data file ({detail}); expected a header line "
                        "t,q1,...,tau1,... and one row per sample (docs/formats.md section 3)") from None


def check_bad_rows(bad: BadRows, good_rows: int, source: str, final: bool = True) -> list[str]:
    """A malformed last line is a truncated write (dropped with a note); elsewhere it is an error."""
    notes = []
    total = good_rows + len(bad.rows)
    for number, expected, actual, text in bad.rows:
        row = (number - 1) if number is not None else None  # pyarrow counts the header line
        if final and (row is None or row >= total) and (number, expected, actual, text) == bad.rows[-1]:
            notes.append(f"row {row if row is not None else total} (last line) is truncated "
                         f"({actual} of {expected} fields): dropped")
            continue
        raise DataError(f"{source}: row {row} (file line {number}) has {actual} fields, expected "
                        f"{expected}: {text[:60]!r}")
    return notes


def clean_rows(data: JointData, nan: str = "drop", row_offset: int = 0,
               segmenter: Segmenter | None = None) -> JointData:
    """Drop NaN rows and duplicated time stamps, label segments (``data.segments``), reject
    time going backwards inside a segment (rows named). ``segmenter`` carries the state of a
    stream from chunk to chunk; a new one (no resets, default gaps) when None."""
    rows = np.arange(len(data)) + 1 + row_offset
    signals = [a for a in (data.q, data.dq, data.ddq, data.tau) if a is not None]
    finite = np.isfinite(data.t)
    for a in signals:  # column by column: np.all(axis=1) over a few columns is ~5x slower
        for j in range(a.shape[1]):
            finite &= np.isfinite(a[:, j])
    notes = []
    if not np.all(finite):
        bad = rows[~finite]
        if nan == "reject":
            raise DataError(f"{data.source}: row {bad[0]} holds NaN or an empty field "
                            f"({bad.size} such rows); use --nan drop to skip them")
        notes.append(f"{bad.size} row(s) with NaN dropped (first: row {bad[0]})")
        data, rows = data.select(finite), rows[finite]
    segmenter = segmenter or Segmenter(data.source)
    data.segment, duplicate = segmenter(data.t, data.segment, rows)
    if np.any(duplicate):
        dup = rows[duplicate]
        notes.append(f"{dup.size} row(s) with a duplicated time stamp dropped (first: row {dup[0]})")
        data = data.select(~duplicate)
    data.notes.extend(notes)
    return data


def load_joint_data(path: str | Path, robot, mapping: ColumnMapping = ColumnMapping(),
                    nan: str = "drop", prep=None) -> JointData:
    """Read a whole joint data file (CSV or Parquet) into a cleaned JointData in SI units.

    prep: the ``Preprocessing`` whose ``segments`` and ``max_gap`` split the log (defaults)."""
    if isinstance(path, ArrayLog):  # arrays in memory (data/arrays.py)
        table, notes = path.table, []
    elif is_bag(path):  # a ROS bag or MCAP file (data/bags.py)
        table, notes = read_bag(path, robot, mapping, nan)
    else:
        table, notes = read_table(path, mapping)
        recorded_robot_check(path, robot, mapping)
    part = mapping.keep_rows(1, table.num_rows)  # --rows: rows as numbered, before cleaning
    data = map_columns(table.slice(part.start, part.stop - part.start), mapping, robot, str(path))
    data.notes[:0] = notes + column_check(table, mapping, robot, str(path))
    del table
    segmenter = Segmenter.for_preprocessing(str(path), prep)
    data = clean_rows(data, nan, row_offset=part.start, segmenter=segmenter)
    inside = mapping.in_time_range(data.t)  # --time-range, on the stamps in seconds
    if inside is not None:
        data = data.select(inside)
    unwrap = AngleUnwrap(robot.is_revolute, str(path))  # angles logged within one turn (data.angles)
    data = unwrap(data)
    if unwrap.summary():
        data.notes.append(unwrap.summary())
    if mapping.part():
        data.notes.append(f"{len(data)} rows within {mapping.part()} read")
    if segmenter.summary():
        data.notes.append(segmenter.summary())
    if len(data) < 3:
        raise DataError(f"{path}: {len(data)} usable rows; at least 3 are needed")
    checks = LogChecks(robot, str(path))
    checks.update(data)
    checks.finish()
    return data


def joint_data_columns(data: JointData) -> dict[str, np.ndarray]:
    """JointData -> ordered {contract column: array} for writing."""
    cols = {"t": data.t}
    for prefix, arr in (("q", data.q), ("dq", data.dq), ("ddq", data.ddq), ("tau", data.tau)):
        if arr is not None:
            cols.update({f"{prefix}{j + 1}": arr[:, j] for j in range(arr.shape[1])})
    if data.cycle is not None:
        cols["cycle"] = data.cycle
    if data.stage is not None:
        cols["stage"] = np.asarray(data.stage, dtype=str)
    if data.segment is not None:
        cols["segment"] = np.asarray(data.segment.tolist())
    return cols


def write_columns(path: str | Path, columns: dict[str, np.ndarray], metadata: dict | None = None) -> None:
    """Write named columns as CSV (shortest round-trip float text) or Parquet, atomically.

    metadata: stored in a Parquet file's schema under the key ``dynid`` (JSON), e.g.
    {"robot": name, "joints": [...]} (``file_metadata`` reads it back); CSV has no place for it."""
    table = pa.table({k: pa.array(np.asarray(v)) for k, v in columns.items()})
    if metadata:
        table = table.replace_schema_metadata({"dynid": json.dumps(metadata)})
    if is_parquet(path):
        atomic_write_bytes(path, lambda tmp: pq.write_table(table, tmp))
    else:
        atomic_write_bytes(path, lambda tmp: _write_csv(tmp, table))


def _write_csv(tmp: str, table: pa.Table) -> None:
    with open(tmp, "wb") as fh:  # a plain header line, then Arrow's writer for the rows
        fh.write((",".join(table.column_names) + "\n").encode())
        pacsv.write_csv(table, fh, write_options=pacsv.WriteOptions(include_header=False))


def write_joint_data(path: str | Path, data: JointData) -> None:
    write_columns(path, joint_data_columns(data))


def file_metadata(path: str | Path) -> dict:
    """The ``dynid`` metadata of a Parquet joint data file ({} for CSV, bags or none stored)."""
    if not is_parquet(path) or is_bag(path):
        return {}
    path = data_file(path)
    with arrow_errors(path):
        meta = pq.read_schema(path).metadata or {}
    try:
        value = json.loads(meta.get(b"dynid", b"{}"))
    except ValueError as exc:
        raise DataError(f"{path}: its 'dynid' metadata is not JSON ({exc})") from None
    return value if isinstance(value, dict) else {}
