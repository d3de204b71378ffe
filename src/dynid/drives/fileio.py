"""Drive logs from files and the result.json section of an acceleration-free identification."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dynid.data.columns import ColumnMapping, parse_pairs
from dynid.data.io import read_table, recorded_robot_check, table_to_columns
from dynid.errors import DataError


def read_drive_log(path: str | Path, robot) -> dict:
    """{t (N,), q, dq, u, i (N, n) or None} from a joint data file (docs/formats.md section 3).

    dq is required (measured speed: the method does not differentiate); rows with NaN in the
    used columns are dropped."""
    table, _ = read_table(path, ColumnMapping())
    recorded_robot_check(path, robot)
    cols = table_to_columns(table, ColumnMapping(), str(path))
    n = robot.n

    def block(prefix, required=False):
        names = [f"{prefix}{j + 1}" for j in range(n)]
        if not all(c in cols for c in names):
            if required:
                raise DataError(f"{path}: columns {names} are needed (found {sorted(cols)[:20]})")
            return None
        return np.column_stack([cols[c] for c in names]).astype(float)

    if "t" not in cols:
        raise DataError(f"{path}: no time column 't'")
    out = {"t": np.asarray(cols["t"], dtype=float), "q": block("q", True), "dq": block("dq", True),
           "u": block("u"), "i": block("i"), "tau": block("tau")}
    arrays = [a for a in out.values() if a is not None]
    finite = np.all([np.all(np.isfinite(a.reshape(a.shape[0], -1)), axis=1) for a in arrays], axis=0)
    return {k: (None if v is None else v[finite]) for k, v in out.items()}


def parse_known(text: str | None) -> dict[str, float]:
    """'m5=1.0,gain2=0.8' -> {'m5': 1.0, 'gain2': 0.8} (``data.columns.parse_pairs``)."""
    known = {}
    for name, value in parse_pairs(text, "--known", "NAME=VALUE pairs"):
        try:
            known[name] = float(value)
        except ValueError as exc:
            raise DataError(f"--known {name}: '{value}' is not a number") from exc
    return known
