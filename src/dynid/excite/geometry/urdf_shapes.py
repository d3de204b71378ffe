"""Collision geometry of a URDF description as capsules in the frames of the robot's links.

The robot (``dynid.robot``) keeps only its moving joints; every URDF link is carried by the
nearest moving joint above it (its *owner*; -1 for the base). ``link_frames`` walks the
URDF tree and places each URDF link in its owner's frame through the joints the robot does
not move: fixed joints by their origin, locked joints at their lock value (``Robot.locked``,
the values their bodies' inertia was merged at), any other (a held floating base) at its
origin. ``collision_capsules`` turns each
``<collision>`` element (sphere, cylinder, box, capsule, mesh) into a capsule that contains
it (``capsules``); a mesh it cannot find or read is skipped with a note, and its link then
falls back to the kinematic chain.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from dynid.errors import ModelError
from dynid.excite.geometry import capsules as cap
from dynid.excite.geometry.mesh import read_vertices, resolve_package_path
from dynid.robot.transforms import axis_angle, rpy_matrix


def _floats(text, count, default):
    if text is None:
        return np.asarray(default, dtype=float)
    values = [float(x) for x in text.split()]
    if len(values) != count or not all(math.isfinite(v) for v in values):
        raise ValueError(text)
    return np.asarray(values)


def _origin(element) -> tuple[np.ndarray, np.ndarray]:
    origin = element.find("origin") if element is not None else None
    if origin is None:
        return np.eye(3), np.zeros(3)
    return rpy_matrix(*_floats(origin.get("rpy"), 3, [0, 0, 0])), _floats(origin.get("xyz"), 3, [0, 0, 0])


def parse(path) -> ET.Element:
    try:
        return ET.parse(path).getroot()
    except (OSError, ET.ParseError) as exc:
        raise ModelError(f"{path}: cannot read the URDF for its collision geometry ({exc})") from None


def held_motion(element, value: float) -> tuple[np.ndarray, np.ndarray]:
    """(rotation, translation) of a URDF joint's child frame in its parent's at q = value:
    origin, then a rotation about (revolute, continuous) or a translation along (prismatic) <axis>."""
    r, t = _origin(element)
    if value == 0.0 or element.get("type") not in ("revolute", "continuous", "prismatic"):
        return r, t
    axis_el = element.find("axis")
    axis = _floats(axis_el.get("xyz") if axis_el is not None else None, 3, [1, 0, 0])
    axis = axis / np.linalg.norm(axis)
    if element.get("type") == "prismatic":
        return r, t + r @ (value * axis)
    return r @ axis_angle(axis, value), t


def link_frames(robot, root: ET.Element) -> dict[str, tuple[int, np.ndarray, np.ndarray]]:
    """{URDF link name: (owner link index or -1, rotation (3, 3), translation (3,) in the
    owner's frame)}."""
    actuated = {j.name: i for i, j in enumerate(robot.joints)}
    held = robot.lock_values
    children: dict[str, list] = {}
    has_parent = set()
    for el in root.findall("joint"):
        parent, child = el.find("parent"), el.find("child")
        if parent is None or child is None:
            continue
        children.setdefault(parent.get("link"), []).append(el)
        has_parent.add(child.get("link"))
    frames = {}
    stack = [(el.get("name"), -1, np.eye(3), np.zeros(3)) for el in root.findall("link")
             if el.get("name") not in has_parent]
    while stack:
        name, owner, rot, trans = stack.pop()
        frames[name] = (owner, rot, trans)
        for el in children.get(name, []):
            child = el.find("child").get("link")
            if el.get("name") in actuated:
                stack.append((child, actuated[el.get("name")], np.eye(3), np.zeros(3)))
            else:
                r, t = held_motion(el, held.get(el.get("name"), 0.0))
                stack.append((child, owner, rot @ r, trans + rot @ t))
    return frames


def collision_capsules(robot, path, root: ET.Element, frames) -> tuple[list, list[str]]:
    """Capsules of every <collision> element, in owner frames, and notes on skipped ones."""
    path = Path(path)
    out, notes = [], []
    for link in root.findall("link"):
        name = link.get("name")
        if name not in frames:
            continue
        owner, rot_l, trans_l = frames[name]
        for collision in link.findall("collision"):
            geometry = collision.find("geometry")
            shape = next(iter(geometry), None) if geometry is not None else None
            if shape is None:
                continue
            try:
                rot_c, trans_c = _origin(collision)
                rot, trans = rot_l @ rot_c, trans_l + rot_l @ trans_c
                if shape.tag == "sphere":
                    out.append(cap.sphere_capsule(owner, rot, trans, float(shape.get("radius")), name))
                elif shape.tag in ("cylinder", "capsule"):
                    c = cap.cylinder_capsule(owner, rot, trans, float(shape.get("radius")),
                                             float(shape.get("length")), name)
                    out.append(c if shape.tag == "cylinder" else
                               cap.Capsule(c.link, c.a, c.b, c.radius, name, "capsule"))
                elif shape.tag == "box":
                    out.append(cap.box_capsule(owner, rot, trans, _floats(shape.get("size"), 3, None), name))
                elif shape.tag == "mesh":
                    file = resolve_package_path(shape.get("filename", ""), path)
                    scale = _floats(shape.get("scale"), 3, [1, 1, 1])
                    v = np.unique(read_vertices(file), axis=0) * scale
                    out.append(cap.enclosing_capsule(owner, v @ rot.T + trans, name, f"mesh {file.name}"))
                else:
                    notes.append(f"link '{name}': collision <{shape.tag}> not read")
            except (ModelError, ValueError, TypeError) as exc:
                notes.append(f"link '{name}': collision geometry skipped ({exc})")
    return out, notes


def fixed_frame_points(frames) -> dict[int, list[np.ndarray]]:
    """Per owner link, the origins of the URDF links fixed to it (flanges, tool frames)."""
    points: dict[int, list[np.ndarray]] = {}
    for owner, _, trans in frames.values():
        if np.linalg.norm(trans) > 1e-9:
            points.setdefault(owner, []).append(trans)
    return points
