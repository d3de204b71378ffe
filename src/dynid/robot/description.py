"""A robot YAML file that points at a URDF and adds what URDFs lack (docs/formats.md).

    urdf: panda.urdf             # a path relative to this file, or example:NAME
    name: panda-arm              # optional
    gravity: [0, 0, -9.81]       # optional
    joints: [j1, j2, ...]        # optional: keep these actuated joints, lock the others
    lock: {finger_joint1: 0.02}  # optional: hold joints at a value [rad | m]
    drives:                      # optional, by joint name (or a list, one per kept joint)
      j1: {gear_ratio: 100, rotor_inertia: 1.2e-4, torque_constant: 0.3, rated_torque: 1.3}
    transmission:                # optional: a coupled transmission (robot/transmission.py)
      coupling: [{motor: j6, joint: j5, ratio: 32}]

The ``drives`` and ``transmission`` blocks also go in a DH/MDH table file (robot/dh.py).
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np

from dynid.errors import ModelError
from dynid.robot.model import Drive, Robot
from dynid.robot.transmission import check_transmission, transmission_from_document
from dynid.robot.validation import check_gravity, text_field

DRIVE_KEYS = ("gear_ratio", "rotor_inertia", "torque_constant", "rated_torque", "zero_offset")
_KEYS = {"urdf", "name", "gravity", "joints", "lock", "drives", "transmission", "description"}


def _drive(entry, base: Drive, where: str) -> Drive:
    if not isinstance(entry, dict) or set(entry) - set(DRIVE_KEYS):
        raise ModelError(f"{where}: expected a mapping with some of {list(DRIVE_KEYS)}, got {entry!r}")
    values = {}
    for key, value in entry.items():
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
            raise ModelError(f"{where}: field '{key}' must be a finite number, got {value!r}")
        values[key] = float(value)
    try:
        return replace(base, **values)  # Drive checks its values
    except ModelError as exc:
        raise ModelError(f"{where}: {exc}") from None


def with_drives(robot: Robot, drives, where: str) -> Robot:
    """Drives by actuated joint name ({name: {gear_ratio: ...}}) or as a list, one per joint."""
    names = robot.joint_names
    if isinstance(drives, list):
        if len(drives) != robot.n:
            raise ModelError(f"{where}: a list needs one entry per actuated joint ({robot.n}: {', '.join(names)})")
        drives = dict(zip(names, drives))
    if not isinstance(drives, dict):
        raise ModelError(f"{where}: expected a mapping joint name -> drive fields, or a list")
    unknown = [k for k in drives if k not in names]
    if unknown:
        raise ModelError(f"{where}: {unknown} are not actuated joints ({', '.join(names)})")
    joints = tuple(replace(j, drive=_drive(drives[j.name], j.drive, f"{where}: {j.name}"))
                   if j.name in drives else j for j in robot.joints)
    return replace(robot, joints=joints)


def with_transmission(robot: Robot, block, where: str) -> Robot:
    """Apply a YAML ``transmission:`` block. A full ``matrix`` sets the gear ratios from its
    diagonal when the drives give none (all 1), else its diagonal must equal them."""
    if isinstance(block, dict) and "matrix" in block and np.all(robot.gear_ratios == 1.0):
        try:
            diagonal = np.diag(np.array(block["matrix"], dtype=float))
        except (TypeError, ValueError):
            diagonal = np.array([])
        if diagonal.size == robot.n and np.all(np.isfinite(diagonal)) and np.all(diagonal != 0):
            robot = with_drives(robot, {name: {"gear_ratio": float(d)} for name, d in
                                        zip(robot.joint_names, diagonal)}, where)
    t = transmission_from_document(block, robot, where)
    return replace(robot, transmission=check_transmission(t, robot.gear_ratios, robot.joint_names, where))


def robot_from_description(doc: dict, path: Path, joints=None, lock=None) -> Robot:
    """The robot of a YAML file with a ``urdf:`` key (module docstring); ``joints``/``lock`` of the
    command line add to the file's."""
    from dynid.robot.example import PREFIX, example_urdf
    from dynid.robot.urdf import load_urdf

    where = str(path)
    unknown = set(doc) - _KEYS
    if unknown:
        raise ModelError(f"{where}: unknown field(s) {sorted(unknown)}, expected some of {sorted(_KEYS)}")
    source = doc["urdf"]
    if not isinstance(source, str) or not source:
        raise ModelError(f"{where}: 'urdf' must be a file path or example:NAME")
    urdf = example_urdf(source) if source.startswith(PREFIX) else (path.parent / source)
    file_joints = doc.get("joints")
    if file_joints is not None and (not isinstance(file_joints, list)
                                    or not all(isinstance(x, str) for x in file_joints)):
        raise ModelError(f"{where}: 'joints' must be a list of joint names")
    file_lock = doc.get("lock") or {}
    if not isinstance(file_lock, dict) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in file_lock.values()):
        raise ModelError(f"{where}: 'lock' must map joint names to finite numbers [rad | m]")
    if joints is not None and file_joints is not None and set(joints) != set(file_joints):
        raise ModelError(f"{where}: the file keeps joints {file_joints}; --joints {joints} differs")
    robot = load_urdf(urdf, name=text_field(doc, "name", where, None), joints=joints or file_joints,
                      lock={**file_lock, **(lock or {})})
    if "drives" in doc:
        robot = with_drives(robot, doc["drives"], f"{where}: drives")
    if "transmission" in doc:
        robot = with_transmission(robot, doc["transmission"], f"{where}: transmission")
    if "gravity" in doc:
        g = doc["gravity"]
        if not isinstance(g, list) or len(g) != 3 or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in g):
            raise ModelError(f"{where}: 'gravity' must be a list of 3 finite numbers [m/s^2], got {g!r}")
        robot = robot.with_gravity(g)
        check_gravity(robot, where)
    return replace(robot, source=str(path),
                   description=text_field(doc, "description", where, f"{robot.description} via {path.name}"))
