"""The fleet data set: Hive-partitioned Parquet joint data files and their groups.

    ROOT/robot=<id>/date=<yyyy-mm-dd>/*.parquet       (more key=value folders allowed)

ROOT is a local folder or any fsspec URL (``s3://bucket/fleet``, ``memory://f``...). Each
file holds the contract's joint data (docs/formats.md section 3). Files and folders whose
name starts with ``.`` or ``_`` are skipped (Hive/Spark convention: ``_truth.json``,
``.tmp`` files of a writer), and so is everything that does not end in ``.parquet``
(``fleet.yaml`` sits at ROOT). A file's identity for reruns is its size and modification
time (or the object store's ETag): ``fingerprint`` hashes them with the settings of a run.
The grouping keys are partition keys, plus ``file`` (the file's name) for one group per file.
"""

from __future__ import annotations

import datetime
import hashlib
import json
from dataclasses import dataclass

from dynid.errors import DataError

LAYOUT = "ROOT/robot=<id>/date=<yyyy-mm-dd>/*.parquet"


@dataclass(frozen=True)
class FleetFile:
    """One data file: ``url`` is what a worker opens (a local path or protocol://path),
    ``relpath`` its place below ROOT; ``version`` the modification time or ETag."""

    url: str
    relpath: str
    partitions: tuple[tuple[str, str], ...]
    size: int
    version: str

    @property
    def robot(self) -> str:
        return dict(self.partitions)["robot"]

    def key(self, by: tuple[str, ...]) -> tuple[str, ...]:
        values = dict(self.partitions)
        values.setdefault("file", self.relpath.rsplit("/", 1)[-1].removesuffix(".parquet"))
        try:
            return tuple(values[k] for k in by)
        except KeyError as exc:
            raise DataError(f"--by {','.join(by)}: file {self.relpath} has no '{exc.args[0]}=' partition "
                            f"(its keys: {[k for k, _ in self.partitions]})") from None


def _partitions(relpath: str) -> tuple[tuple[str, str], ...]:
    out = []
    for folder in relpath.split("/")[:-1]:
        if "=" not in folder:
            raise DataError(f"{relpath}: folder '{folder}' is not a partition key=value (expected {LAYOUT})")
        key, value = folder.split("=", 1)
        if not key or not value:
            raise DataError(f"{relpath}: partition '{folder}' needs a key and a value (expected {LAYOUT})")
        out.append((key, value))
    keys = [k for k, _ in out]
    if "robot" not in keys:
        raise DataError(f"{relpath}: no robot=<id> partition (expected {LAYOUT})")
    if len(set(keys)) != len(keys):
        raise DataError(f"{relpath}: a partition key appears twice")
    date = dict(out).get("date")
    if date is not None:
        try:
            datetime.date.fromisoformat(date)
        except ValueError:
            raise DataError(f"{relpath}: date={date} is not a yyyy-mm-dd date") from None
    return tuple(out)


def _version(info: dict) -> str:
    for key in ("mtime", "LastModified", "last_modified", "ETag", "etag", "created"):
        if info.get(key) is not None:
            return str(info[key])
    return ""


def discover(root: str) -> list[FleetFile]:
    """The Parquet files of a fleet data set, sorted by path (module docstring)."""
    import fsspec

    from dynid.fleet.config import is_local

    fs, base = fsspec.core.url_to_fs(str(root))
    if not fs.exists(base) or not fs.isdir(base):
        raise FileNotFoundError(f"fleet data set not found: {root} (expected a folder {LAYOUT})")
    if is_local(fs):
        from dynid.files.outputs import note_data_set
        note_data_set(root)  # an output of this command inside ROOT would be read as data next time
    base = base.rstrip("/")
    files = []
    for path, info in sorted(fs.find(base, detail=True).items()):
        rel = path[len(base):].lstrip("/")
        if not rel.endswith(".parquet") or any(part.startswith((".", "_")) for part in rel.split("/")):
            continue
        url = path if is_local(fs) else fs.unstrip_protocol(path)
        files.append(FleetFile(url, rel, _partitions(rel), int(info.get("size") or 0), _version(info)))
    if not files:
        raise DataError(f"{root}: no Parquet files in the fleet data set (expected {LAYOUT})")
    return files


def parse_by(text: str) -> tuple[str, ...]:
    """'robot,date' -> ('robot', 'date'); a group must hold one robot (one model)."""
    by = tuple(k.strip() for k in str(text).split(",") if k.strip())
    if "robot" not in by:
        raise DataError(f"--by {text}: the keys must include 'robot' (a group is identified with one model)")
    if len(set(by)) != len(by):
        raise DataError(f"--by {text}: a key appears twice")
    return by


def group_files(files: list[FleetFile], by: tuple[str, ...]) -> dict[tuple[str, ...], list[FleetFile]]:
    """Files per group key (keys sorted, files in path order)."""
    groups: dict[tuple[str, ...], list[FleetFile]] = {}
    for f in files:
        groups.setdefault(f.key(by), []).append(f)
    return dict(sorted(groups.items()))


def fingerprint(files: list[FleetFile], settings: dict) -> str:
    """sha256 of the group's files (path, size, version) and the run's settings."""
    payload = {"files": sorted((f.relpath, f.size, f.version) for f in files), "settings": settings}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()
