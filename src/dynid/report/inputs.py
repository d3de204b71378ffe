"""The files a report is made of, found in a directory (the names ``dynid demo`` writes) or
given one by one. A file named explicitly must exist; a file looked up in the directory may
be missing: its sections then show a note instead."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

from dynid.errors import DataError

# role -> file name in a demo directory (dynid demo --out DIR)
DEMO_FILES = {
    "result": "result_ols.json",        # dynid identify (least squares), with --per cycle
    "pc_result": "result_pc.json",      # dynid identify --estimator pc
    "drift_result": "result_drift.json",  # dynid identify --friction-drift time
    "trajectory": "excitation.json",    # dynid excite optimize
    "data": "train.csv",                # the training log (protocol, several cycles)
    "validation": "validation.csv",     # a separate log for cross-validation (the demo: right after the test)
    "validation_cold": "validation_cold.csv",  # the demo: the same motion at a cold start
    "friction": "friction.json",        # dynid friction analysis
    "multibody": "multibody.json",      # dynid multibody identify
    "summary": "summary.json",          # key figures of dynid demo
    "cycle_validation": "cycle_validation.json",  # dynid validate --per cycle --json
    "groups": "groups.json",            # dynid cycles groups --out
    "drift_table": "friction_drift.json",  # dynid friction drift --json
    "protocol": "protocol.json",        # dynid excite protocol (summary: levels, poses)
    "diagnosis": "diagnosis.json",      # dynid diagnose --json
    "payload": "payload.json",          # dynid payload identify --out
}

ROLE_HELP = {
    "result": "identify result.json (least squares or any estimator)",
    "pc_result": "identify result.json of the physically consistent estimator",
    "drift_result": "identify result.json with a drifting friction (--friction-drift)",
    "trajectory": "excitation trajectory JSON",
    "data": "training joint data log (CSV/Parquet)",
    "validation": "validation joint data log (CSV/Parquet)",
    "friction": "friction drift analysis JSON",
    "multibody": "multibody identify JSON",
    "summary": "demo summary JSON",
    "cycle_validation": "per-cycle validation JSON (validate --per cycle --json)",
    "groups": "groups of cycles JSON (cycles groups --out)",
    "drift_table": "per-sample friction drift JSON (friction drift --json)",
    "protocol": "protocol summary JSON (excite protocol)",
    "diagnosis": "diagnosis JSON (dynid diagnose --json)",
    "payload": "payload JSON (dynid payload identify --out)",
}


@dataclass
class ReportInputs:
    """Paths by role (None: not available) and the reason a role is missing."""

    result: Path | None = None
    pc_result: Path | None = None
    drift_result: Path | None = None
    trajectory: Path | None = None
    data: Path | None = None
    validation: Path | None = None
    friction: Path | None = None
    multibody: Path | None = None
    summary: Path | None = None
    cycle_validation: Path | None = None
    groups: Path | None = None
    drift_table: Path | None = None
    protocol: Path | None = None
    diagnosis: Path | None = None
    payload: Path | None = None
    robot: str | None = None
    missing: dict = field(default_factory=dict)

    @classmethod
    def gather(cls, directory: Path | None = None, robot: str | None = None, **explicit) -> "ReportInputs":
        """Explicit paths (must exist) override the files found in ``directory``."""
        if directory is not None and not Path(directory).is_dir():
            raise FileNotFoundError(f"report input directory not found: {directory}")
        found = cls(robot=robot)
        for f in fields(cls):
            role = f.name
            if role not in DEMO_FILES:
                continue
            given = explicit.get(role)
            if given is not None:
                if not Path(given).is_file():
                    raise FileNotFoundError(f"--{role.replace('_', '-')}: file not found: {given}")
                found = replace(found, **{role: Path(given)})
            elif directory is not None and (Path(directory) / DEMO_FILES[role]).is_file():
                found = replace(found, **{role: Path(directory) / DEMO_FILES[role]})
            else:
                where = f"{DEMO_FILES[role]} not in {directory}" if directory is not None else "not given"
                found.missing[role] = f"{ROLE_HELP[role]}: {where}"
        if directory is not None and all(getattr(found, f.name) is None for f in fields(cls) if f.name in DEMO_FILES):
            raise DataError(f"--from {directory}: none of the files a report is made of is there (expected some of "
                            f"{', '.join(list(DEMO_FILES.values())[:6])}, ...: a 'dynid demo --out' directory)")
        if found.result is None and found.pc_result is not None:
            found.result = found.pc_result  # a PC result alone still gives torques and parameters
        from dynid.files.outputs import note_input

        for f in fields(cls):  # every file found is an input: no output of the report may replace it
            if isinstance(getattr(found, f.name), Path):
                note_input(getattr(found, f.name))
        return found

    def robot_spec(self, result: dict | None) -> str | None:
        """The robot: given explicitly, else the one stored in the result."""
        if self.robot:
            return self.robot
        return None if result is None else result.get("robot")


def load_json(path: Path | None, what: str) -> dict | None:
    if path is None:
        return None
    from dynid.files.inputs import read_json_document

    value = read_json_document(path, what)
    if not isinstance(value, dict):
        raise DataError(f"{path}: expected a JSON object ({what}), found {type(value).__name__}")
    return value
