"""Selecting the arm out of a larger description: lock joints, keep a list of joints.

A locked joint is held at a constant value q_i = v: its transform P_i M_i(v) E_i becomes a
constant, so it is a fixed joint and is merged like one. Its link's inertial parameters are
expressed in the frame of the nearest moving ancestor (``inertia.move_inertial``) and added to
that body (a body locked onto the base no longer moves and drops out of the dynamics); the
joints below it hang on that ancestor with their placements composed through the locked
transform. Followers of a locked mimic leader are locked with it, at multiplier v + offset.

``--joints a,b,c`` keeps those actuated joints and locks every other one at its ``--lock``
value, or at 0 clipped into its position limits. Data columns keep the description's
depth-first order whatever the order of the list.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from dynid.errors import ModelError, refuse_repeated
from dynid.robot.inertia import move_inertial
from dynid.robot.model import Link, Robot
from dynid.robot.transforms import axis_angle


def parse_lock(text: str | None) -> dict[str, float]:
    """'NAME=VALUE,NAME=VALUE' (CLI --lock, may be repeated with ',') -> {name: value}."""
    out: dict[str, float] = {}
    for item in (text or "").split(","):
        if not item.strip():
            continue
        name, sep, value = item.partition("=")
        try:
            number = float(value) if sep else math.nan
        except ValueError:
            number = math.nan
        if not sep or not name.strip() or not math.isfinite(number):
            raise ModelError(f"--lock: expected NAME=VALUE pairs like 'finger_joint1=0.02', got '{item}'")
        if name.strip() in out:
            raise ModelError(f"--lock: '{name.strip()}' is given twice ({out[name.strip()]:g} and {number:g}); "
                             "give each joint once")
        out[name.strip()] = number
    return out


def parse_joints(text: str | None) -> list[str] | None:
    """'a,b,c' (CLI --joints) -> ['a', 'b', 'c'] (None when not given)."""
    if text is None or not text.strip():
        return None
    names = [name.strip() for name in text.split(",") if name.strip()]
    refuse_repeated(names, "--joints", error=ModelError)
    return names


def _joint_transform(joint, value: float) -> tuple[np.ndarray, np.ndarray]:
    """T_{p,i}(q_i = value) = P_i M_i(value) E_i as (rotation, translation) in the parent frame."""
    rp, tp = joint.placement_rotation, joint.placement_translation
    re, te = joint.offset_rotation, joint.offset_translation
    if joint.type == "revolute":
        rm, tm = axis_angle(joint.axis, value), np.zeros(3)
    else:
        rm, tm = np.eye(3), value * joint.axis
    return rp @ rm @ re, tp + rp @ (tm + rm @ te)


def lock_joints(robot: Robot, values: dict[str, float]) -> Robot:
    """The robot with the joints of ``values`` (name -> q [rad | m]) held fixed (module docstring)."""
    if not values:
        return robot
    index = {j.name: i for i, j in enumerate(robot.joints)}
    unknown = [name for name in values if name not in index]
    if unknown:
        raise ModelError(f"robot '{robot.name}': cannot lock {unknown}: no such moving joint "
                         f"(moving joints: {', '.join(index)})")
    for name, value in values.items():
        joint = robot.joints[index[name]]
        if joint.mimic is not None:
            raise ModelError(f"robot '{robot.name}': joint '{name}' mimics '{joint.mimic.leader}': "
                             f"lock '{joint.mimic.leader}' instead (its followers are locked with it)")
        low, high = joint.limits.q_min, joint.limits.q_max
        if not low <= value <= high:
            unit = "rad" if joint.type == "revolute" else "m"
            hint = " (degrees? dynid reads radians)" if joint.type == "revolute" and abs(value) > 2 * math.pi else ""
            raise ModelError(f"robot '{robot.name}': --lock {name}={value:g} is outside the joint's limits "
                             f"[{low:g}, {high:g}] {unit}{hint}; lock it at a reachable value")
    g, o = robot.mimic_map
    column_value = np.full(robot.n, np.nan)
    for c, i in enumerate(robot.actuated):
        column_value[c] = values.get(robot.joints[i].name, np.nan)
    locked_columns = np.isfinite(column_value)
    tree_value = g @ np.where(locked_columns, column_value, 0.0) + o  # (M1) of dynamics/mimic.py
    locked = [bool(np.any(locked_columns[np.flatnonzero(g[i])])) for i in range(robot.n_bodies)]

    joints, thetas, names = [], [], []
    frame_of: list[tuple[int, np.ndarray, np.ndarray]] = []  # owner (new index), pose in owner
    for i, joint in enumerate(robot.joints):
        if joint.parent >= 0:
            owner, r_po, t_po = frame_of[joint.parent]
        else:
            owner, r_po, t_po = -1, np.eye(3), np.zeros(3)
        if locked[i]:
            r_i, t_i = _joint_transform(joint, float(tree_value[i]))
            r, t = r_po @ r_i, t_po + r_po @ t_i
            if owner >= 0:
                thetas[owner] = thetas[owner] + move_inertial(robot.links[i].inertial, r, t)
            frame_of.append((owner, r, t))
            continue
        joints.append(replace(joint, parent=owner, placement_rotation=r_po @ joint.placement_rotation,
                              placement_translation=t_po + r_po @ joint.placement_translation))
        thetas.append(robot.links[i].inertial.copy())
        names.append(robot.links[i].name)
        frame_of.append((len(joints) - 1, np.eye(3), np.zeros(3)))
    if not joints:
        raise ModelError(f"robot '{robot.name}': every joint is locked; keep at least one")
    kept_columns = np.flatnonzero(~locked_columns)
    transmission = None
    if robot.transmission is not None:
        transmission = robot.transmission[np.ix_(kept_columns, kept_columns)]
    links = []
    for name, theta in zip(names, thetas):
        try:
            links.append(Link(name, theta))
        except ModelError as exc:  # rounding of merged bodies is far below these checks
            raise ModelError(f"robot '{robot.name}': merging locked bodies: {exc}") from None
    held = ", ".join(f"{k}={v:g}" for k, v in values.items())
    # the values the bodies were merged at (followers of a locked leader at theirs): what hangs
    # below these joints (collision geometry: excite/geometry/urdf_shapes.py) is placed at them too
    at = tuple((robot.joints[i].name, float(tree_value[i])) for i in range(robot.n_bodies) if locked[i])
    return replace(robot, joints=tuple(joints), links=tuple(links), transmission=transmission,
                   description=f"{robot.description}; locked {held}".lstrip("; "), locked=robot.locked + at)


def default_lock_value(joint) -> float:
    """0 clipped into the joint's position limits."""
    return float(min(max(0.0, joint.limits.q_min), joint.limits.q_max))


def select_joints(robot: Robot, joints: list[str] | None = None, lock: dict[str, float] | None = None) -> Robot:
    """Keep the actuated ``joints`` (all when None), lock the others (``lock`` value or 0 in limits)."""
    lock = dict(lock or {})
    if joints is not None:
        actuated = robot.joint_names
        followers = {j.name: j.mimic.leader for j in robot.joints if j.mimic is not None}
        for name in joints:
            if name in followers:
                raise ModelError(f"--joints: '{name}' mimics '{followers[name]}'; list '{followers[name]}'")
            if name not in actuated:
                raise ModelError(f"--joints: robot '{robot.name}' has no actuated joint '{name}' "
                                 f"(actuated joints: {', '.join(actuated)})")
        both = sorted(set(joints) & set(lock))
        if both:
            raise ModelError(f"--joints and --lock both name {both}: a joint is either kept or locked")
        for joint in robot.actuated_joints:
            if joint.name not in joints and joint.name not in lock:
                lock[joint.name] = default_lock_value(joint)
    return lock_joints(robot, lock)
