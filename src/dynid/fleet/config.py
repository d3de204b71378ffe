"""fleet.yaml: which robot model (and data layout) each ``robot=<id>`` partition uses.

    # ROOT/fleet.yaml
    robots:
      r000: er3a                          # short form: builtin name, .urdf or .yaml path
      r001: {robot: models/r001.urdf}     # paths are relative to this file
      r002: {robot: er3a, current_gain: drive, motor_side: false}

Per robot, besides ``robot`` (required), the data layout keys of ``dynid identify``
(``data.columns.ColumnMapping``) are allowed: ``rename`` ('time=t,pos1=q1'), ``time_unit``,
``degrees``, ``motor_side`` (gear ratios of the model apply) and ``current_gain`` (torque
constants: N m/A per joint, or ``drive`` for the model's drive data), plus a free
``description``. Any other key is an error that names it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from dynid.data.columns import ColumnMapping
from dynid.errors import DataError

LAYOUT_KEYS = ("rename", "time_unit", "degrees", "motor_side", "current_gain")
ENTRY_KEYS = ("robot", "description") + LAYOUT_KEYS


@dataclass(frozen=True)
class RobotEntry:
    """One robot of the fleet: its model spec (as ``dynid.load_robot`` takes it) and data layout."""

    robot_id: str
    spec: str
    mapping: ColumnMapping = ColumnMapping()
    description: str = ""

    def to_dict(self) -> dict:
        return {"robot": self.spec, "mapping": self.mapping.to_dict(), "description": self.description}


@dataclass
class FleetConfig:
    """The parsed fleet.yaml; ``source`` names the file in error messages."""

    robots: dict[str, RobotEntry]
    source: str = "fleet.yaml"
    extra: dict = field(default_factory=dict)

    def entry(self, robot_id: str) -> RobotEntry:
        try:
            return self.robots[robot_id]
        except KeyError:
            raise DataError(f"partition robot={robot_id} has no model in {self.source}; add a line "
                            f"'  {robot_id}: er3a' (builtin name, .urdf or .yaml) under 'robots:'") from None


def _resolve(spec: str, base: Path | None) -> str:
    """A model path relative to fleet.yaml's folder; builtin names stay as they are."""
    if base is not None and spec.lower().endswith((".urdf", ".yaml", ".yml")) and not Path(spec).is_absolute():
        return str((base / spec).resolve())
    return spec


def written_spec(spec: str, base: Path | None) -> str:
    """The model spec to write into a fleet.yaml in folder ``base``: a model file path relative to
    ``base`` (as ``_resolve`` reads it back), absolute when ``base`` is not a local folder."""
    if not spec.lower().endswith((".urdf", ".yaml", ".yml")) or Path(spec).is_absolute():
        return spec
    if base is None:
        return str(Path(spec).resolve())
    return os.path.relpath(Path(spec).resolve(), Path(base).resolve())


def parse_config(document, source: str, base: Path | None = None) -> FleetConfig:
    """FleetConfig from the loaded YAML ``document``; ``base``: folder of relative model paths."""
    if not isinstance(document, dict) or not isinstance(document.get("robots"), dict) or not document["robots"]:
        raise DataError(f"{source}: expected a mapping 'robots:' of robot id -> model "
                        "(e.g. 'robots: {r000: er3a}')")
    robots = {}
    for rid, value in document["robots"].items():
        rid = str(rid)
        if isinstance(value, str):
            value = {"robot": value}
        if not isinstance(value, dict) or not isinstance(value.get("robot"), str):
            raise DataError(f"{source}: robots.{rid}: expected a model name/path or {{robot: NAME, ...}}, got {value!r}")
        unknown = sorted(set(value) - set(ENTRY_KEYS))
        if unknown:
            raise DataError(f"{source}: robots.{rid}: unknown key(s) {unknown}, expected some of {list(ENTRY_KEYS)}")
        rename = value.get("rename")
        if isinstance(rename, dict):
            rename = ",".join(f"{k}={v}" for k, v in rename.items())
        gain = value.get("current_gain")
        if isinstance(gain, (list, tuple)):
            gain = ",".join(str(g) for g in gain)
        mapping = ColumnMapping.from_options(rename, None, str(value.get("time_unit", "s")),
                                             bool(value.get("degrees", False)), bool(value.get("motor_side", False)),
                                             None if gain is None else str(gain))
        robots[rid] = RobotEntry(rid, _resolve(value["robot"], base), mapping, str(value.get("description", "")))
    extra = {k: v for k, v in document.items() if k != "robots"}
    return FleetConfig(robots, source, extra)


def is_local(fs) -> bool:
    """True for fsspec's local file system (paths are then plain paths)."""
    from fsspec.implementations.local import LocalFileSystem

    return isinstance(fs, LocalFileSystem)


def load_config(path: str) -> FleetConfig:
    """Read fleet.yaml (a local path or any fsspec URL)."""
    import fsspec
    import yaml

    fs, local = fsspec.core.url_to_fs(str(path))
    if not fs.exists(local):
        raise FileNotFoundError(f"fleet description not found: {path} (write one with a 'robots:' mapping, "
                                "or give --fleet FILE)")
    with fs.open(local, "r") as fh:
        try:
            document = yaml.safe_load(fh)
        except yaml.YAMLError as exc:
            raise DataError(f"{path}: not valid YAML ({' '.join(str(exc).split())})") from exc
    base = Path(local).parent if is_local(fs) else None
    return parse_config(document, str(path), base)


def config_text(entries: dict[str, str], header: str = "") -> str:
    """fleet.yaml text for robot id -> model spec (what ``fleet simulate`` writes)."""
    lines = [f"# {line}" for line in header.splitlines()] if header else []
    lines.append("robots:")
    lines += [f"  {rid}: {spec}" for rid, spec in entries.items()]
    return "\n".join(lines) + "\n"
