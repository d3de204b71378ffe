"""Serial robots from a DH or modified-DH (Craig) table, and the YAML file format of docs/formats.md section 2.

MDH (Craig):  T_{i-1,i} = RotX(alpha_{i-1}) TransX(a_{i-1}) RotZ(theta_i + q_i) TransZ(d_i)
DH (standard): T_{i-1,i} = RotZ(theta_i + q_i) TransZ(d_i) TransX(a_i) RotX(alpha_i)
(for a prismatic joint q adds to d instead). The link frame of joint i is frame i.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
from dynid.files.inputs import read_yaml_document
from dynid.errors import DynidWarning, ModelError
from dynid.robot.inertia import from_mass_com_inertia
from dynid.robot.model import Drive, Joint, JointLimits, Link, Robot
from dynid.robot.transforms import rot_x, rot_z
from dynid.robot.validation import (
    angle_warning, check_convention, check_inertials, check_limits, check_scale, check_unique, text_field,
)

CONVENTIONS = ("mdh", "dh")
_JOINT_KEYS = {"type", "a", "alpha", "d", "theta", "name"}
_LINK_KEYS = {"mass", "com", "inertia", "name"}
_LIMIT_KEYS = {"q_min", "q_max", "dq_max", "ddq_max", "tau_max"}
_DRIVE_KEYS = {"gear_ratio", "rotor_inertia", "torque_constant", "rated_torque", "zero_offset"}
_TOP_KEYS = {"name", "convention", "gravity", "joints", "links", "limits", "drives", "description", "transmission"}


def dh_joint(kind: str, a: float, alpha: float, d: float, theta: float, convention: str,
             name: str, parent: int, limits: JointLimits = JointLimits(), drive: Drive = Drive()) -> Joint:
    """One joint of a DH/MDH table as a Joint (placement, axis z, link offset)."""
    z = np.array([0.0, 0.0, 1.0])
    if convention == "mdh":
        rot = rot_x(alpha) @ rot_z(theta)
        trans = np.array([a, 0.0, 0.0]) + rot_x(alpha) @ np.array([0.0, 0.0, d])
        return Joint(name, kind, parent, rot, trans, z, limits=limits, drive=drive)
    # standard DH: P = RotZ(theta), M(q) about/along z, E = TransZ(d) TransX(a) RotX(alpha)
    return Joint(name, kind, parent, rot_z(theta), np.zeros(3), z,
                 offset_rotation=rot_x(alpha), offset_translation=np.array([a, 0.0, d]),
                 limits=limits, drive=drive)


def _number(entry: dict, key: str, where: str, default=None) -> float:
    if key not in entry:
        if default is None:
            raise ModelError(f"{where}: missing field '{key}' (a number)")
        return default
    value = entry[key]
    is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
    infinite_ok = key in _LIMIT_KEYS and is_number and not math.isnan(value)  # "no limit"
    if not is_number or not (math.isfinite(value) or infinite_ok):
        raise ModelError(f"{where}: field '{key}' must be a finite number, got {value!r}")
    return float(value)


def _vector(entry: dict, key: str, size: int, where: str, default=None) -> np.ndarray:
    if key not in entry:
        if default is None:
            raise ModelError(f"{where}: missing field '{key}' (a list of {size} numbers)")
        return np.asarray(default, dtype=float)
    value = entry[key]
    if (not isinstance(value, list) or len(value) != size
            or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in value)):
        raise ModelError(f"{where}: field '{key}' must be a list of {size} numbers, got {value!r}")
    return np.asarray(value, dtype=float)


def _check_keys(entry, allowed: set, where: str):
    if not isinstance(entry, dict):
        raise ModelError(f"{where}: expected a mapping with fields {sorted(allowed)}, got {entry!r}")
    unknown = set(entry) - allowed
    if unknown:
        raise ModelError(f"{where}: unknown field(s) {sorted(unknown)}, expected some of {sorted(allowed)}")


_MISSING_MEANS = {"links": "no mass or inertia", "limits": "no limits", "drives": "a direct drive without rotor"}


def _entries(doc: dict, key: str, count: int, where: str) -> list:
    """The list ``key`` of one entry per joint, base to tip. A shorter list gives its entries to the first
    joints and nothing to the rest (as the example of docs/formats.md section 2, one link and one limit for
    two joints), with a warning naming the joints left out; a longer list is refused."""
    value = doc.get(key)
    if value is None:
        return [{}] * count
    if not isinstance(value, list) or len(value) > count:
        raise ModelError(f"{where}: '{key}' must be a list with one entry per joint ({count}), base to tip")
    if len(value) < count:
        first = len(value) + 1
        joints = f"joint {first} gets" if first == count else f"joints {first}..{count} get"
        entries = "1 entry" if len(value) == 1 else f"{len(value)} entries"
        warnings.warn(DynidWarning(f"{where}: '{key}' has {entries} for {count} joints: {joints} "
                                   f"{_MISSING_MEANS[key]}"), stacklevel=3)
    return list(value) + [{}] * (count - len(value))


def robot_from_dh_document(doc: dict, where: str, source: str = "yaml") -> Robot:
    """Build a Robot from the parsed YAML document (docs/formats.md section 2)."""
    _check_keys(doc, _TOP_KEYS, where)
    convention = check_convention(doc, where, CONVENTIONS)
    joints_doc = doc.get("joints")
    if not isinstance(joints_doc, list) or not joints_doc:
        raise ModelError(f"{where}: 'joints' must be a non-empty list")
    n = len(joints_doc)
    links_doc = _entries(doc, "links", n, where)
    limits_doc = _entries(doc, "limits", n, where)
    drives_doc = _entries(doc, "drives", n, where)
    joints, links = [], []
    for i in range(n):
        jw = f"{where}: joints[{i}]"
        entry = joints_doc[i]
        _check_keys(entry, _JOINT_KEYS, jw)
        kind = entry.get("type", "revolute")
        if kind not in ("revolute", "prismatic"):
            raise ModelError(f"{jw}: unknown joint type '{kind}', expected 'revolute' or 'prismatic'")
        lw = f"{where}: limits[{i}]"
        _check_keys(limits_doc[i], _LIMIT_KEYS, lw)
        lim = JointLimits(*(_number(limits_doc[i], k, lw, d) for k, d in (
            ("q_min", -math.inf), ("q_max", math.inf), ("dq_max", math.inf),
            ("ddq_max", math.inf), ("tau_max", math.inf))))
        name = text_field(entry, "name", jw, f"joint{i + 1}")
        check_limits(lim, f"{where}: joint '{name}' limits[{i}]", kind)
        dw = f"{where}: drives[{i}]"
        _check_keys(drives_doc[i], _DRIVE_KEYS, dw)
        try:
            drive = Drive(*(_number(drives_doc[i], k, dw, d) for k, d in (
                ("gear_ratio", 1.0), ("rotor_inertia", 0.0), ("torque_constant", math.nan),
                ("rated_torque", math.nan), ("zero_offset", 0.0))))
        except ModelError as exc:
            raise ModelError(f"{dw}: {exc}") from None
        alpha, theta = _number(entry, "alpha", jw), _number(entry, "theta", jw, 0.0)
        angle_warning(alpha, "alpha", jw)
        angle_warning(theta, "theta", jw)
        joints.append(dh_joint(kind, _number(entry, "a", jw), alpha, _number(entry, "d", jw), theta,
                               convention, name, i - 1, lim, drive))
        kw = f"{where}: links[{i}]"
        _check_keys(links_doc[i], _LINK_KEYS, kw)
        mass = _number(links_doc[i], "mass", kw, 0.0)
        if mass < 0:
            raise ModelError(f"{kw}: field 'mass' must be >= 0 kg, got {mass:g}")
        com = _vector(links_doc[i], "com", 3, kw, [0, 0, 0])
        inertia = _vector(links_doc[i], "inertia", 6, kw, [0] * 6)
        try:
            links.append(Link(text_field(links_doc[i], "name", kw, f"link{i + 1}"),
                              from_mass_com_inertia(mass, com, inertia)))
        except ModelError as exc:
            raise ModelError(f"{kw}: {exc}") from None
    check_unique([j.name for j in joints], "joint", where)
    check_unique([link.name for link in links], "link", where)
    gravity = _vector(doc, "gravity", 3, where, [0.0, 0.0, -9.81])
    robot = Robot(name=text_field(doc, "name", where, "robot"), joints=tuple(joints), links=tuple(links),
                  gravity=gravity, description=text_field(doc, "description", where, f"{convention.upper()} table"),
                  source=source)
    check_scale(robot, where)
    check_inertials(robot, where)
    if "transmission" in doc:  # a coupled transmission (robot/transmission.py, docs/formats.md)
        from dynid.robot.description import with_transmission
        robot = with_transmission(robot, doc["transmission"], f"{where}: transmission")
    return robot


def read_yaml(path: str | Path) -> dict:
    """The top-level mapping of a robot YAML file; errors name the file."""
    path = Path(path)
    try:
        doc = read_yaml_document(path, "robot file", error=ModelError)
    except FileNotFoundError:
        raise ModelError(f"{path}: no such file") from None
    if not isinstance(doc, dict):
        raise ModelError(f"{path}: expected a mapping with 'joints' (a DH/MDH table) or 'urdf' at the top level")
    return doc


def load_dh_yaml(path: str | Path) -> Robot:
    """Read a DH/MDH YAML robot file; errors name the file, the entry and the field."""
    doc = read_yaml(path)
    doc.setdefault("name", Path(path).stem)
    return robot_from_dh_document(doc, str(path), source=str(path))
