"""Drive logs from files and the result.json section of an acceleration-free identification."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import numpy as np

from dynid.data.columns import ColumnMapping, parse_pairs
from dynid.data.io import read_table, recorded_robot_check, table_to_columns
from dynid.errors import DataError


def read_drive_log(path: str | Path, robot, mapping: ColumnMapping = ColumnMapping()) -> dict:
    """{t (N,), q, dq, u, i (N, n) or None} from a joint data file (docs/formats.md section 3),
    its layout mapped by ``mapping`` as ``identify`` maps it (``--rename``, ``--columns``,
    ``--time-unit``, ``--degrees``, ``--motor-side``, ``--negate``; ``ColumnMapping.apply``): t,
    q, dq in SI on the joint side, u and i as logged (signs negated when asked).

    dq is required (measured speed: the method does not differentiate); rows with NaN in the
    used columns are dropped."""
    if "dq" in mapping.ignore:
        raise DataError("--ignore dq: not with --drive (the acceleration-free identification needs the measured "
                        "speeds dq1..dqn; it does not differentiate q)")
    table, _ = read_table(path, mapping)
    recorded_robot_check(path, robot, mapping)
    cols = table_to_columns(table, mapping, str(path))
    n = robot.n
    if mapping.negate or mapping.ignore:
        cols = mapping.conventions(cols, n, str(path))

    def block(prefix, required=False):
        names = [f"{prefix}{j + 1}" for j in range(n)]
        if not all(c in cols for c in names):
            if required:
                raise DataError(f"{path}: columns {names} are needed (found {sorted(cols)[:20]})")
            return None
        return np.column_stack([cols[c] for c in names]).astype(float)

    if "t" not in cols:
        raise DataError(f"{path}: no time column 't'")
    block("dq", True)
    motion = {k: v for k, v in cols.items() if not re.fullmatch(r"[iu]\d+", k)}  # currents read as logged
    joint = replace(mapping, negate=(), ignore=()).apply(robot, motion, str(path))  # units, degrees, motor side
    out = {"t": joint.t, "q": joint.q, "dq": joint.dq, "u": block("u"), "i": block("i"), "tau": joint.tau}
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
