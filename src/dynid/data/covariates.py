"""Slow signals beside the joint data: the operating time since the robot's cold start and the
joint temperatures, read from a log and put onto the (prepared) samples' time stamps.

A friction that drifts from cold to warm (thesis eq. 5.4) is a function of the time since the
robot started cold, or of the joints' temperatures. A log says which, in this order:

1. ``--since-cold SECONDS`` (the time since the cold start at the log's first sample; ``warm``:
   fully warm, long after any cold start) given to the command;
2. a ``since_cold`` column [s] (docs/formats.md), for logs that record it;
3. for the logs a model was identified on, what the identification used (result.json).

``temp1..tempn`` [deg C] are the temperatures. These columns are read alone (``t`` and the
wanted ones: Parquet reads only those, CSV parses only those) and, for long logs, thinned to
at most ``MAX_ROWS`` rows (a slow signal: linear interpolation between every k-th row), then
interpolated onto the time stamps of the prepared samples, so they follow resampling,
decimation and dropped rows.
"""

from __future__ import annotations

import math

import numpy as np

from dynid.data.columns import TIME_UNITS, ColumnMapping
from dynid.errors import DataError

SINCE_COLD = "since_cold"  # column: operating time since the cold start [s]
MAX_ROWS = 200_000  # rows kept of a slow column (every k-th)
WARM = math.inf  # --since-cold warm


def parse_since_cold(text: str | None) -> float | None:
    """``--since-cold``: None (not given), a number of seconds >= 0, or ``warm`` (inf)."""
    if text is None:
        return None
    word = str(text).strip().lower()
    if word in ("warm", "inf"):
        return WARM
    try:
        value = float(word)
    except ValueError:
        value = float("nan")
    if not value >= 0.0 or not math.isfinite(value):
        raise DataError(f"--since-cold {text}: expected the seconds since the robot's cold start at the log's first "
                        "sample (a number >= 0; 0 = the log starts cold) or 'warm'")
    return value


def _file_columns(path, mapping: ColumnMapping) -> dict[str, str]:
    """{contract name: name in the file} of a CSV or Parquet file's columns (header only), or of
    an in-memory log's (``data.arrays.ArrayLog``)."""
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    from dynid.data.arrays import ArrayLog
    from dynid.data.io import arrow_errors, csv_read_options, is_parquet

    if isinstance(path, ArrayLog):
        return {mapping.contract_name(name): name for name in path.column_names}
    with arrow_errors(path):
        if is_parquet(path):
            names = pq.ParquetFile(path).schema_arrow.names
        else:
            reader = pacsv.open_csv(path, read_options=csv_read_options(mapping, block_size=1 << 16))
            names = reader.schema.names
            reader.close()
    return {mapping.contract_name(name): name for name in names}


def has_columns(path, mapping: ColumnMapping, names: list[str]) -> bool:
    """Whether a CSV or Parquet log has every column of ``names`` (contract names); False for a bag."""
    from dynid.data.arrays import ArrayLog
    from dynid.data.bags import is_bag
    from dynid.data.io import data_file

    if is_bag(path):
        return False
    have = _file_columns(path if isinstance(path, ArrayLog) else data_file(path), mapping)
    return all(name in have for name in names)


def read_slow_columns(path, mapping: ColumnMapping, names: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(t (K,) [s], values (K, len(names))) of the named slow columns of a log, rows with a
    non-finite value dropped, sorted by time, thinned to at most ``MAX_ROWS`` rows."""
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    from dynid.data.arrays import ArrayLog
    from dynid.data.bags import is_bag
    from dynid.data.io import arrow_errors, csv_read_options, data_file, is_parquet

    if is_bag(path):
        raise DataError(f"{path}: a ROS bag holds no {names[0]} column; give the value on the command line "
                        "(--since-cold) or convert the bag and add the column")
    path = path if isinstance(path, ArrayLog) else data_file(path)
    have = _file_columns(path, mapping)
    missing = [c for c in ["t"] + list(names) if c not in have]
    if missing:
        raise DataError(f"{path}: missing column(s) {missing} (found {sorted(have)[:20]})")
    wanted = [have[c] for c in ["t"] + list(names)]
    with arrow_errors(path):
        if isinstance(path, ArrayLog):
            table = path.table.select(wanted)
        elif is_parquet(path):
            table = pq.read_table(path, columns=wanted)
        else:
            table = pacsv.read_csv(path, read_options=csv_read_options(mapping),
                                   parse_options=pacsv.ParseOptions(invalid_row_handler=lambda row: "skip"),
                                   convert_options=pacsv.ConvertOptions(include_columns=wanted,
                                                                        strings_can_be_null=True))
    try:
        columns = [table.column(name).to_numpy(zero_copy_only=False).astype(float) for name in wanted]
    except (ValueError, TypeError) as exc:
        raise DataError(f"{path}: columns {wanted} must be numeric ({exc})") from None
    t = columns[0] * TIME_UNITS[mapping.time_unit]
    values = np.column_stack(columns[1:])
    ok = np.isfinite(t) & np.all(np.isfinite(values), axis=1)
    if ok.sum() < 2:
        raise DataError(f"{path}: columns {names[0]}..{names[-1]} hold fewer than 2 finite rows")
    t, values = t[ok], values[ok]
    order = np.argsort(t, kind="stable")
    t, values = t[order], values[order]
    if t.size > MAX_ROWS:
        keep = np.unique(np.append(np.arange(0, t.size, -(-t.size // MAX_ROWS)), t.size - 1))
        t, values = t[keep], values[keep]
    return t, values


def interpolate(t_table: np.ndarray, values: np.ndarray, t: np.ndarray) -> np.ndarray:
    """(N, m) ``values`` (K, m) at times t (N,), linear; constant beyond the table's ends."""
    t = np.asarray(t, dtype=float)
    return np.column_stack([np.interp(t, t_table, values[:, j]) for j in range(values.shape[1])])
