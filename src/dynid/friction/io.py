"""Reading what the friction analysis needs beyond ``JointData``: joint temperatures, and plots.

Temperatures (docs/formats.md section 3: optional columns temp1..tempn, deg C) are read from
the same file and interpolated onto the (possibly cleaned or resampled) time stamps of the
joint data, so they stay aligned whatever the preprocessing did.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dynid.data.columns import TIME_UNITS, ColumnMapping
from dynid.data.io import atomic_write_bytes, read_table, table_to_columns
from dynid.errors import DataError


def read_temperatures(path, n: int, t: np.ndarray, mapping: ColumnMapping = ColumnMapping(),
                      required: bool = True) -> np.ndarray | None:
    """(N, n) temperatures temp1..tempn of ``path`` at times t (N,) [s]; None when absent and not required."""
    table, _ = read_table(path, mapping)
    cols = table_to_columns(table, mapping, str(path))
    names = [f"temp{j + 1}" for j in range(n)]
    missing = [c for c in names if c not in cols]
    if missing:
        if not required and len(missing) == n:
            return None
        raise DataError(f"{path}: missing column(s) {missing} for a temperature drift model "
                        f"(found {sorted(cols)[:20]})")
    raw_t = np.asarray(cols["t"], dtype=float) * TIME_UNITS[mapping.time_unit]
    temp = np.column_stack([np.asarray(cols[c], dtype=float) for c in names])
    ok = np.isfinite(raw_t) & np.all(np.isfinite(temp), axis=1)
    if ok.sum() < 2:
        raise DataError(f"{path}: columns {names[0]}..{names[-1]} hold fewer than 2 finite rows")
    raw_t, temp = raw_t[ok], temp[ok]
    order = np.argsort(raw_t, kind="stable")
    return np.column_stack([np.interp(t, raw_t[order], temp[order, j]) for j in range(n)])


def _save(fig, path: Path) -> None:
    atomic_write_bytes(path, lambda tmp: fig.savefig(tmp, dpi=110, format="png"))


def plot_analysis(analysis, directory) -> list[Path]:
    """friction_velocity.png (curves per cycle, thesis Figure 5.20) and friction_drift.png (eq. 5.4
    fits per level, Figure 5.22) in ``directory``; returns the paths written."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    n = analysis.n
    cols = min(3, n)
    rows = int(np.ceil(n / cols))
    written = []
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.2 * rows), squeeze=False)
    for j in range(n):
        ax = axes[j // cols, j % cols]
        curves = analysis.curves(j)
        cmap = plt.get_cmap("coolwarm_r")
        for k, (c, (v, f)) in enumerate(sorted(curves.items())):
            ax.plot(v, f, "o-", ms=3, color=cmap(k / max(1, len(curves) - 1)), label=f"cycle {c}" if k in (0, len(curves) - 1) else None)
        ax.set_title(f"joint {j + 1}" + (" (gravity removed)" if j in analysis.gravity else ""))
        ax.set_xlabel("speed [rad/s]")
        ax.set_ylabel("friction [N m]")
        if curves:
            ax.legend(fontsize=7)
    fig.tight_layout()
    path = directory / "friction_velocity.png"
    _save(fig, path)
    plt.close(fig)
    written.append(path)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.2 * rows), squeeze=False)
    for j in range(n):
        ax = axes[j // cols, j % cols]
        for lv in range(len(analysis.levels[j])):
            t, y = analysis.drift_points(j, lv)
            line, = ax.plot(t / 60.0, y, "o", ms=3)
            fit = analysis.drift.get((j, lv))
            if fit is not None:
                tt = np.linspace(0.0, t.max(), 200)
                ax.plot(tt / 60.0, fit.predict(tt), "-", color=line.get_color(), lw=1)
        ax.set_title(f"joint {j + 1}: friction per level over time")
        ax.set_xlabel("operating time [min]")
        ax.set_ylabel("friction [N m]")
    fig.tight_layout()
    path = directory / "friction_drift.png"
    _save(fig, path)
    plt.close(fig)
    written.append(path)
    return written


def read_friction_analysis(path) -> dict:
    """A friction analysis JSON (``dynid friction analyze``), checked field by field: DataError
    naming the file and the field when it is not one."""
    from dynid.files.inputs import read_json_document

    d = read_json_document(path, "friction analysis")
    if not isinstance(d, dict) or d.get("format") != "dynid-friction-analysis":
        raise DataError(f"{path}: not a friction analysis (write one with 'dynid friction analyze')")
    n = d.get("n")
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise DataError(f"{path}: field 'n' must be a positive number of joints, got {n!r}")
    levels = d.get("levels")
    if not isinstance(levels, list) or not all(
            isinstance(lv, dict) and lv.get("joint") in range(1, n + 1) and isinstance(lv.get("speeds"), list)
            and all(_number(s) for s in lv["speeds"]) for lv in levels):
        raise DataError(f"{path}: field 'levels' must list {{\"joint\": 1..{n}, \"speeds\": [numbers]}}")
    friction = d.get("friction")
    keys = ("joint", "level", "time", "friction")
    if not isinstance(friction, dict) or not all(isinstance(friction.get(k), list) for k in keys):
        raise DataError(f"{path}: field 'friction' must hold the lists {list(keys)}")
    if len({len(friction[k]) for k in keys}) != 1 or not all(_number(v) for k in keys for v in friction[k]):
        raise DataError(f"{path}: the lists of field 'friction' must be numbers, all of one length")
    return d


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
