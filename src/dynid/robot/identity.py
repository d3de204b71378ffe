"""The identity of a robot description, stored with every result identified on it.

``robot_identity`` gives its name, the joint names (data column order) and a SHA-256 of the
kinematic description: per joint its type, parent, placement (rotation, translation), axis and
link offset, rounded to 1e-9 (so the same robot read from a URDF or a YAML table, or on another
machine, hashes alike) and the gravity vector, plus mimic relations and a coupled transmission
matrix when the robot has them. Inertial parameters, limits and drives are not part
of it: they are what identification changes or what does not alter the regressor.
``identity_differences`` names what differs between a stored identity and a robot.
"""

from __future__ import annotations

import hashlib

import numpy as np


def _rounded(values) -> list[float]:
    a = np.round(np.asarray(values, dtype=float).ravel(), 9)
    return [float(x) + 0.0 for x in a]  # + 0.0: -0.0 and 0.0 hash alike


def kinematics_hash(robot) -> str:
    rows = [(j.type, j.parent, _rounded(j.placement_rotation), _rounded(j.placement_translation),
             _rounded(j.axis), _rounded(j.offset_rotation), _rounded(j.offset_translation)) for j in robot.joints]
    text = repr((rows, _rounded(robot.gravity)))
    # mimic relations and a coupled transmission change the regressor too; added only when
    # present, so the hashes of robots without them stay what they were
    mimic = [(j.name, j.mimic.leader, _rounded([j.mimic.multiplier, j.mimic.offset]))
             for j in robot.joints if j.mimic is not None]
    if mimic:
        text += repr(("mimic", mimic))
    if robot.is_coupled:
        text += repr(("transmission", _rounded(robot.transmission_matrix)))
    return hashlib.sha256(text.encode()).hexdigest()


def robot_identity(robot) -> dict:
    """{"name", "joints": [names], "kinematics_sha256"} of a Robot."""
    return {"name": robot.name, "joints": [j.name for j in robot.joints], "kinematics_sha256": kinematics_hash(robot)}


def identity_differences(stored: dict, robot) -> list[str]:
    """What differs between a stored identity and ``robot`` (empty when they match)."""
    now = robot_identity(robot)
    out = []
    if stored.get("name") != now["name"]:
        out.append(f"robot name '{stored.get('name')}' vs '{now['name']}'")
    if stored.get("joints") != now["joints"]:
        out.append(f"joint names {stored.get('joints')} vs {now['joints']}")
    if stored.get("kinematics_sha256") != now["kinematics_sha256"]:
        out.append("kinematics (joint placements, axes or gravity) differ")
    return out
