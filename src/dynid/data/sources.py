"""Data sources of one fit: the files that ``--data`` names, and whether they belong together.

``--data`` is repeatable; each value is a file, a glob pattern (quote it, so that the shell
leaves it to dynid: ``--data 'logs/run_*.parquet'``), a directory (its Parquet files) or a ROS
bag (a ``.bag``, ``.db3`` or ``.mcap`` file, or a ROS 2 bag directory: ``data.bags``).
Every source is preprocessed on its own and the normal equations are summed
(``identify.pipeline.accumulate_sources``), so the files must describe the same robot: the
same number of joints (``q1..qn`` columns) and, for Parquet files written by dynid, the same
robot name in their metadata (``io.file_metadata``).
"""

from __future__ import annotations

import glob
import os
import warnings
from pathlib import Path

from dynid.data.arrays import ArrayLog
from dynid.data.bags import is_bag
from dynid.data.columns import ColumnMapping
from dynid.data.io import arrow_errors, data_file, file_metadata, is_parquet, joint_count
from dynid.errors import DataError, DynidWarning
from dynid.files.outputs import note_data_set


def expand_sources(specs) -> list[Path]:
    """Files named by ``--data`` values, in the order given (each pattern's matches sorted);
    a file named twice (by the same name, another name, a link) is read once, with a warning.
    A value that names an existing file is that file even when it holds pattern characters
    (``log[1].csv``). A pattern that matches nothing, or a directory without Parquet files, is
    an error."""
    out: list[Path] = []
    seen: dict[tuple[int, int], Path] = {}
    for spec in specs:
        text = str(spec)
        if glob.has_magic(text) and not os.path.lexists(text):
            matches = sorted(Path(p) for p in glob.glob(text) if Path(p).is_file() or is_bag(p))
            if not matches:
                raise DataError(f"--data '{text}': the pattern matches no file")
        elif Path(text).is_dir() and not is_bag(text):
            note_data_set(text, recursive=False)  # no output of this command may land among its files
            matches = sorted(p for p in Path(text).iterdir() if p.is_file() and is_parquet(p))
            if not matches:
                others = sorted(p.name for p in Path(text).iterdir())[:5]
                raise DataError(f"--data {text} is a directory, read as its Parquet files (*.parquet), and it has "
                                f"none (found {others}); name CSV files with a pattern like '{text}/*.csv'")
        else:
            matches = [Path(text)]
        for m in matches:
            key = _identity(m)
            if m in out or key in seen:
                first = m if m in out else seen[key]
                if str(first) != str(m) or text == str(m):
                    warnings.warn(DynidWarning(f"--data: {m} is the same file as {first}, given before; it is read "
                                               "once"), stacklevel=2)
                continue
            out.append(m)
            if key is not None:
                seen[key] = m
    if not out:
        raise DataError("no data file given (--data)")
    return out


def _identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of a file after following links; None for what does not exist."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino) if not is_bag(path) or path.is_file() else None


def header_names(path: Path, mapping: ColumnMapping) -> list[str]:
    """Contract column names of a file (after ``--rename``/``--columns``), from its header only."""
    if mapping.names:
        return [mapping.contract_name(c) for c in mapping.names]
    if isinstance(path, ArrayLog):
        return [mapping.contract_name(c) for c in path.column_names]
    path = data_file(path)
    with arrow_errors(path):
        if is_parquet(path):
            import pyarrow.parquet as pq
            names = list(pq.read_schema(path).names)
        else:
            with open(path, newline="", encoding="utf-8", errors="replace") as fh:
                names = [c.strip().strip('"') for c in fh.readline(1 << 20).strip().split(",")]
    return [mapping.contract_name(c) for c in names]


def check_sources(paths: list[Path], mapping: ColumnMapping = ColumnMapping()) -> None:
    """Refuse files of different joint counts, or of different robots (Parquet metadata), in one fit."""
    if len(paths) < 2:
        return
    seen_joints: tuple[Path, int] | None = None
    seen_robot: tuple[Path, str] | None = None
    for path in paths:
        if is_bag(path):  # joints are matched by name (data/bags.py): a bag of another robot fails there
            continue
        count = joint_count(header_names(path, mapping))
        if seen_joints is None:
            seen_joints = (path, count)
        elif count != seen_joints[1]:
            raise DataError(f"files of different joint counts in one fit: {seen_joints[0]} has "
                            f"{seen_joints[1]} joints (q1..q{seen_joints[1]}), {path} has {count}")
        robot = None if isinstance(path, ArrayLog) else file_metadata(path).get("robot")
        if robot is None:
            continue
        if seen_robot is None:
            seen_robot = (path, robot)
        elif robot != seen_robot[1]:
            raise DataError(f"files of different robots in one fit: {seen_robot[0]} was recorded on "
                            f"'{seen_robot[1]}', {path} on '{robot}'")
