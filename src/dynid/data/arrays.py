"""Joint data held in memory, read exactly as a joint data file is read.

An ``ArrayLog`` is a log whose columns are NumPy arrays named as the columns of a joint data
file (``t``, ``q1..qn``, ``dq1..``, ``ddq1..``, ``tau1..``, ``i1..``, ``temp1..``, ``cycle``,
``stage``, ``segment``), in SI units on the joint side. The readers take it wherever they take
a file's path (``data.stream.raw_chunks`` and ``log_timing``, ``data.blocks``,
``data.io.load_joint_data``) and cut it into the same chunks of ``chunk_rows`` rows as a file,
so cleaning, segmentation, filtering, derivatives and the fit see the same numbers: identifying
from arrays (``dynid.Identification.fit``) and from the same samples in a file gives the same
parameters (a Parquet file, or a CSV written with round-trip float text, holds the same doubles).

    log = ArrayLog.from_signals(t, q, tau, dq=dq)        # t (N,), q/dq/tau (N, n)
    log.tables(50_000)                                   # Arrow tables of 50 000 rows each
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa

from dynid.errors import DataError

SIGNALS = ("q", "dq", "ddq", "tau", "i", "u", "temp")


class ArrayLog:
    """An in-memory log (module docstring). ``columns``: {column name: (N,) array}; ``name``:
    how messages, notes and result.json's "data" name it."""

    def __init__(self, columns: dict[str, np.ndarray], name: str = "arrays"):
        if "t" not in columns:
            raise DataError(f"{name}: no time column 't'")
        rows = {k: len(np.asarray(v)) for k, v in columns.items()}
        if len(set(rows.values())) != 1:
            raise DataError(f"{name}: the arrays differ in length ({rows}); expected one row per sample in each")
        self.name = name
        self.table = pa.table({k: _arrow_column(k, v, name) for k, v in columns.items()})

    @classmethod
    def from_signals(cls, t, q, tau=None, dq=None, ddq=None, columns: dict | None = None,
                     name: str = "arrays") -> "ArrayLog":
        """t (N,) [s]; q, tau, dq, ddq (N, n) [rad | m, N m | N, rad/s | m/s, rad/s^2 | m/s^2]
        (None: absent; dq, ddq are then estimated from q as for a file); ``columns``: further
        columns by their file names (``cycle``, ``stage``, ``segment``, ``temp1``..)."""
        t = np.asarray(t, dtype=float)
        q = np.asarray(q, dtype=float)
        if t.ndim != 1 or q.ndim != 2 or q.shape[0] != t.shape[0]:
            raise DataError(f"{name}: expected t (N,) and q (N, n), got {t.shape} and {q.shape}")
        out: dict[str, np.ndarray] = {"t": t}
        for prefix, block in (("q", q), ("dq", dq), ("ddq", ddq), ("tau", tau)):
            if block is None:
                continue
            block = np.asarray(block, dtype=float)
            if block.shape != q.shape:
                raise DataError(f"{name}: {prefix} has shape {block.shape}, expected {q.shape} like q")
            out.update({f"{prefix}{j + 1}": block[:, j] for j in range(block.shape[1])})
        for key, values in (columns or {}).items():
            if key in out:
                raise DataError(f"{name}: column '{key}' given twice")
            out[key] = values
        return cls(out, name)

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"ArrayLog({self.name!r}, {self.table.num_rows} rows, columns {self.table.column_names[:8]}...)"

    def __len__(self) -> int:
        return self.table.num_rows

    @property
    def column_names(self) -> list[str]:
        return list(self.table.column_names)

    def tables(self, chunk_rows: int, columns: list[str] | None = None) -> Iterator[pa.Table]:
        """Tables of exactly ``chunk_rows`` rows (the last one shorter), as a file is read;
        ``columns``: only these."""
        table = self.table if columns is None else self.table.select(columns)
        for start in range(0, table.num_rows, chunk_rows):
            yield table.slice(start, chunk_rows)


def _arrow_column(key: str, values, name: str) -> pa.Array:
    """A column as a file reader would give it: float64 signals and time, int64 cycles, strings."""
    values = np.asarray(values)
    if values.ndim != 1:
        raise DataError(f"{name}: column '{key}' has shape {values.shape}; expected one value per sample")
    if key == "t" or key.rstrip("0123456789") in SIGNALS:
        if not np.issubdtype(values.dtype, np.number):
            raise DataError(f"{name}: column '{key}' must be numeric, got {values.dtype}")
        return pa.array(values.astype(float))
    if key == "cycle":
        return pa.array(values.astype(np.int64))
    if values.dtype.kind in "OUS":
        return pa.array(values.astype(str).tolist())
    return pa.array(values)
