"""From user options to the geometric constraints of one robot, and back from a trajectory file.

``build_geometry`` gathers the capsules (``robot_capsules``), the scene (floor, boxes of an
obstacles file and of options), the workspace box of the flange and the start posture, and
checks them (``constraints.build_constraints``). The start posture defaults to the middle of
the joint ranges; if an obstacle or the floor is too close there, the zero posture (clipped
into the ranges), then the posture closest to the middle among 4096 seeded random ones that
keeps the obstacles at the clearance, are tried before giving up with the error of the
middle posture.

``describe`` stores everything used in the trajectory file (``geometry`` field,
docs/formats.md); ``geometry_from_description`` rebuilds the same constraints from it, so
``evaluate`` checks a trajectory against exactly the geometry it was designed for.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dynid.errors import ModelError
from dynid.excite.geometry.capsules import Capsule
from dynid.excite.geometry.constraints import SELF_EXEMPT_APART, build_constraints, link_label
from dynid.excite.geometry.robot_capsules import CapsuleSet, robot_capsules
from dynid.excite.geometry.scene import Box, Scene, Workspace, read_obstacles

DEFAULT_CLEARANCE = 0.05  # [m], when obstacles or a workspace are given without --clearance
START_FRACTION = 0.99  # the zero posture is clipped into this share of each range
START_SEARCH = 4096  # seeded random postures searched when neither the middle nor zero will do


@dataclass(frozen=True)
class GeometryOptions:
    """clearance [m] (None: off unless obstacles, boxes or a workspace are given);
    obstacles: YAML file; boxes: extra Box objects; floor: height [m], None = no floor,
    "default" = the file's or 0.0; capsules: auto | urdf | chain; link_radius: chain radius,
    scalar or {link index (-1 base): r}; workspace: (low (3,), high (3,)) of the flange;
    flange: URDF link name or 1-based link number (default: the last link); start: posture (n,)."""

    clearance: float | None = None
    obstacles: object = None
    boxes: tuple = ()
    floor: object = "default"
    capsules: str = "auto"
    link_radius: object = None
    self_exempt: int = SELF_EXEMPT_APART
    workspace: tuple | None = None
    flange: str | None = None
    start: tuple | None = None
    range_fraction: float = START_FRACTION  # the optimizer's limit fraction: defaults stay inside it

    @property
    def active(self) -> bool:
        return (self.clearance is not None or self.obstacles is not None or bool(self.boxes)
                or self.workspace is not None)


@dataclass(frozen=True, eq=False)
class Geometry:
    """The constraints, the start posture (n,) they hold at, and notes for the user."""

    constraints: object
    start: np.ndarray
    notes: tuple = field(default_factory=tuple)

    def describe(self) -> dict:
        c = self.constraints
        robot = c.robot
        labels = {i: cap.name for i, cap in enumerate(c.capsules.capsules)}
        return {"clearance": c.clearance, "scene": c.scene.describe(),
                "workspace": None if c.workspace is None else {**c.workspace.describe(), "link": int(c.workspace.link)},
                "self_exempt": c.exempt_apart, "start_posture": self.start.tolist(),
                "exempt_at_start": [[labels[i], labels[j]] for i, j in c.exempt],
                "exempt_at_start_index": [list(p) for p in c.exempt],
                "capsules": [{**d, "link_index": int(k)} for d, k in
                             zip(c.capsules.describe(robot), c.capsules.link)],
                "notes": list(self.notes)}


def flange_of(robot, capsules: CapsuleSet, flange) -> tuple[int, np.ndarray, str]:
    """(link index, point in its frame, name) of the flange: a URDF link name, a 1-based link
    number, or None for the origin of the last link."""
    if flange is None:
        last = int(robot.actuated[-1])  # the body of the last actuated joint
        return last, np.zeros(3), robot.links[last].name
    text = str(flange)
    if text in capsules.frames:
        owner, _, trans = capsules.frames[text]
        if owner < 0:
            raise ModelError(f"--flange: URDF link '{text}' is fixed to the base, it cannot move")
        return owner, np.asarray(trans, dtype=float), text
    names = [link.name for link in robot.links]
    if text in names:
        return names.index(text), np.zeros(3), text
    try:
        k = int(text)
    except ValueError:
        raise ModelError(f"--flange: no link '{text}' (links: {', '.join(names)})") from None
    if not 1 <= k <= robot.n_bodies:
        raise ModelError(f"--flange: link number {k} out of range 1..{robot.n_bodies}")
    return k - 1, np.zeros(3), names[k - 1]


def build_geometry(robot, limits, options: GeometryOptions) -> Geometry | None:
    """The geometric constraints the options ask for (None when none are asked)."""
    if not options.active:
        return None
    notes = []
    scene = read_obstacles(options.obstacles) if options.obstacles is not None else Scene(0.0)
    floor = scene.floor if options.floor == "default" else options.floor
    scene = Scene(None if floor is None else float(floor), tuple(scene.boxes) + tuple(options.boxes))
    clearance = DEFAULT_CLEARANCE if options.clearance is None else float(options.clearance)
    if options.clearance is None:
        notes.append(f"clearance {clearance:g} m (default; --clearance sets it)")
    capsules = robot_capsules(robot, options.capsules, options.link_radius)
    notes += list(capsules.notes)
    scene, dropped = within_reach(robot, limits, capsules, scene, clearance)
    if dropped:
        notes.append(f"{dropped} obstacle box(es) beyond the robot's reach ({reach(robot, limits, capsules):.3g} m "
                     f"from its base, plus the clearance) left out: no posture can come near them")
    if len(scene.boxes) > MAX_BOXES:
        raise ModelError(f"the obstacles hold {len(scene.boxes)} boxes within the robot's reach; at most {MAX_BOXES} "
                         "are supported (each box is checked against every link capsule at every sample of the "
                         "search): merge small boxes into fewer larger ones")
    workspace = None
    if options.workspace is not None:
        link, point, name = flange_of(robot, capsules, options.flange)
        workspace = Workspace(options.workspace[0], options.workspace[1], link, point, name)
    if options.start is not None:
        start = np.asarray(options.start, dtype=float)
        if start.shape != (robot.n,):
            raise ModelError(f"--start-posture: expected {robot.n} joint positions, got {start.size}")
        outside = [i for i in range(robot.n) if not limits.q_min[i] <= start[i] <= limits.q_max[i]]
        if outside:
            i = outside[0]
            raise ModelError(f"--start-posture: joint {i + 1} ({robot.joint_names[i]}) at {start[i]:g} is outside "
                             f"its range [{limits.q_min[i]:g}, {limits.q_max[i]:g}]")
        candidates = [start]
    else:
        half = options.range_fraction * 0.5 * (limits.q_max - limits.q_min)
        zero = np.clip(np.zeros(robot.n), limits.center - half, limits.center + half)
        candidates = [limits.center] + ([zero] if not np.allclose(zero, limits.center) else [])
        candidates.append(None)  # placeholder: the searched posture
    first_error = None
    for k, q_start in enumerate(candidates):
        if q_start is None:
            q_start = _searched_start(robot, limits, capsules, scene, clearance, workspace, options.self_exempt,
                                      options.range_fraction)
            if q_start is None:
                break
        try:
            constraints = build_constraints(robot, capsules, scene, clearance, q_start, workspace,
                                            options.self_exempt)
        except ModelError as exc:
            first_error = first_error or exc
            continue
        if k > 0:
            which = "the zero posture" if k == 1 and len(candidates) == 3 else (
                f"the posture closest to it that keeps the obstacles at the clearance among {START_SEARCH} "
                f"seeded random ones, {np.round(q_start, 3).tolist()}")
            notes.append(f"the middle of the ranges is too close to an obstacle: start posture = {which}")
        for i, j in constraints.exempt:
            notes.append(f"{link_label(robot, capsules.link[i])} and {link_label(robot, capsules.link[j])} are "
                         f"closer than {clearance:g} m at the start posture: not checked against each other")
        return Geometry(constraints, np.asarray(q_start, dtype=float), tuple(notes))
    raise first_error


MAX_BOXES = 500  # obstacle boxes within reach; a scene beyond is refused (merge boxes)


def reach(robot, limits, capsules) -> float:
    """An upper bound of the distance from the base origin of any point of any capsule [m] (inf
    when a prismatic joint has no range): each body's origin is at most the sum of the placements
    (and prismatic strokes) along its chain away from the base."""
    far = np.zeros(robot.n_bodies)
    stroke = dict(zip(robot.joint_names, np.maximum(np.abs(limits.q_min), np.abs(limits.q_max))))
    for i, joint in enumerate(robot.joints):
        d = (far[joint.parent] if joint.parent >= 0 else 0.0) + float(np.linalg.norm(joint.placement_translation)) \
            + float(np.linalg.norm(joint.offset_translation))
        if joint.type == "prismatic":
            d += float(stroke.get(joint.name, np.inf))
        far[i] = d
    if len(capsules) == 0:
        return 0.0
    at = np.where(capsules.link >= 0, far[np.maximum(capsules.link, 0)], 0.0)
    ends = np.maximum(np.linalg.norm(capsules.a, axis=1), np.linalg.norm(capsules.b, axis=1))
    return float(np.max(at + ends + capsules.radius))


def within_reach(robot, limits, capsules, scene: Scene, clearance: float) -> tuple[Scene, int]:
    """The scene without the boxes no capsule can come within ``clearance`` of (their nearest point
    is farther from the base origin than ``reach``), and how many were left out."""
    if not scene.boxes:
        return scene, 0
    bound = reach(robot, limits, capsules) + clearance
    near = tuple(b for b in scene.boxes if np.linalg.norm(b.center) - np.linalg.norm(b.half) <= bound)
    return Scene(scene.floor, near), len(scene.boxes) - len(near)


def _searched_start(robot, limits, capsules, scene, clearance, workspace, exempt_apart, fraction):
    """The posture closest to the middle of the ranges (in range units) among ``START_SEARCH``
    seeded random ones where the floor, the boxes and the workspace hold; None if none does."""
    from dynid.excite.geometry.constraints import GeometricConstraints

    probe = GeometricConstraints(robot, capsules, scene, float(clearance), workspace, (), int(exempt_apart))
    half = fraction * 0.5 * (limits.q_max - limits.q_min)
    u = np.random.default_rng(0).uniform(-1.0, 1.0, (START_SEARCH, robot.n))
    q = limits.center + u * half
    g = probe.margins(q)[:, len(probe.self_pairs):]  # obstacles and workspace only
    ok = np.flatnonzero(g.min(axis=1) >= 0.0) if g.shape[1] else np.arange(len(q))
    if ok.size == 0:
        return None
    return q[ok[np.argmin(np.abs(u[ok]).max(axis=1))]]


def geometry_from_description(robot, d: dict, source: str) -> Geometry:
    """The Geometry stored in a trajectory file (``Geometry.describe``)."""
    try:
        caps = CapsuleSet(tuple(Capsule(int(c["link_index"]), np.asarray(c["a"], float), np.asarray(c["b"], float),
                                        float(c["radius"]), str(c["name"]), str(c["source"]))
                                for c in d["capsules"]))
        scene_d = d["scene"]
        scene = Scene(scene_d["floor"], tuple(Box(b["name"], b["center"], b["size"], b["rotation"])
                                              for b in scene_d["boxes"]))
        ws = d.get("workspace")
        workspace = None if ws is None else Workspace(ws["low"], ws["high"], int(ws["link"]),
                                                      ws["point_in_link_frame"], ws["flange"])
        from dynid.excite.geometry.constraints import GeometricConstraints

        constraints = GeometricConstraints(robot, caps, scene, float(d["clearance"]), workspace,
                                           tuple(tuple(p) for p in d.get("exempt_at_start_index", [])),
                                           int(d.get("self_exempt", SELF_EXEMPT_APART)))
        start = np.asarray(d["start_posture"], dtype=float)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        raise ModelError(f"{source}: malformed 'geometry' section ({exc!r})") from None
    if caps.link.size and caps.link.max() >= robot.n_bodies:
        raise ModelError(f"{source}: 'geometry' refers to link {caps.link.max() + 1}, the robot has "
                         f"{robot.n_bodies}")
    return Geometry(constraints, start, tuple(d.get("notes", [])))
