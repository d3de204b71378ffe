"""The capsules of a whole robot and their world placement over many samples.

``robot_capsules`` chooses, link by link: the URDF's collision geometry when the robot came
from a URDF that has some for that link (``source="auto"`` or ``"urdf"``), otherwise the
kinematic chain with that link's radius (``source="chain"`` forces the chain everywhere).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dynid.errors import ModelError
from dynid.excite.geometry import capsules as cap

SOURCES = ("auto", "urdf", "chain")


@dataclass(frozen=True, eq=False)
class CapsuleSet:
    """C capsules: link (C,) (-1 = base), a, b (C, 3) in link frames, radius (C,), names."""

    capsules: tuple
    notes: tuple = ()
    frames: dict = field(default_factory=dict)  # URDF link name -> (owner, R, t), when from a URDF

    def __post_init__(self):
        object.__setattr__(self, "link", np.array([c.link for c in self.capsules], dtype=np.int64))
        object.__setattr__(self, "a", np.array([c.a for c in self.capsules], dtype=float).reshape(-1, 3))
        object.__setattr__(self, "b", np.array([c.b for c in self.capsules], dtype=float).reshape(-1, 3))
        object.__setattr__(self, "radius", np.array([c.radius for c in self.capsules], dtype=float))

    def __len__(self) -> int:
        return len(self.capsules)

    def world_segments(self, rotation: np.ndarray, origin: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Segment ends (N, C, 3) in the world from link poses (N, n, 3, 3), (N, n, 3)
        (``dynid.dynamics.forward_kinematics``); base capsules stay where they are."""
        count = rotation.shape[0]
        moving = self.link >= 0
        p0 = np.broadcast_to(self.a, (count,) + self.a.shape).copy()
        p1 = np.broadcast_to(self.b, (count,) + self.b.shape).copy()
        if moving.any():
            r, o = rotation[:, self.link[moving]], origin[:, self.link[moving]]
            p0[:, moving] = np.einsum("ncij,cj->nci", r, self.a[moving]) + o
            p1[:, moving] = np.einsum("ncij,cj->nci", r, self.b[moving]) + o
        return p0, p1

    def describe(self, robot) -> list[dict]:
        """JSON-ready list of the capsules (link name, ends in the link frame, radius, source)."""
        return [{"link": "base" if c.link < 0 else robot.links[c.link].name, "name": c.name,
                 "a": c.a.tolist(), "b": c.b.tolist(), "radius": c.radius, "source": c.source}
                for c in self.capsules]


def link_radii(robot, radius) -> dict[int, float]:
    """{link (-1..n-1): chain radius [m]} from None (default), a scalar or {link: radius}."""
    default = cap.chain_radius(robot)
    out = {i: default for i in range(-1, robot.n_bodies)}
    if radius is None:
        return out
    if isinstance(radius, dict):
        out.update({int(k): float(v) for k, v in radius.items()})
    else:
        out = {i: float(radius) for i in out}
    bad = {k: v for k, v in out.items() if not v > 0}
    if bad:
        k = next(iter(bad))
        label = "base" if k < 0 else f"link {k + 1} ({robot.links[k].name})"
        raise ModelError(f"--link-radius: {label} needs a positive radius, got {bad[k]:g}")
    return out


def urdf_of(robot) -> Path | None:
    """The URDF file a robot was read from: its source, or the ``urdf:`` of a robot YAML
    description (dynid.robot.description); None for builtin and DH robots."""
    path = Path(robot.source) if robot.source else None
    if path is None or not path.is_file():
        return None
    if path.suffix.lower() == ".urdf":
        return path
    if path.suffix.lower() not in (".yaml", ".yml"):
        return None
    import yaml

    try:
        doc = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError):
        return None
    target = doc.get("urdf") if isinstance(doc, dict) else None
    if not isinstance(target, str):
        return None
    from dynid.robot.example import PREFIX, example_urdf

    return example_urdf(target) if target.startswith(PREFIX) else path.parent / target


def robot_capsules(robot, source: str = "auto", radius=None) -> CapsuleSet:
    """Capsules of every link (module docstring); radius: chain radius, scalar or {link: r}."""
    if source not in SOURCES:
        raise ModelError(f"capsule source '{source}': expected one of {SOURCES}")
    radii = link_radii(robot, radius)
    path = urdf_of(robot)
    from_urdf, frames, notes = [], {}, []
    if source != "chain" and path is not None and path.exists():
        from dynid.excite.geometry import urdf_shapes

        root = urdf_shapes.parse(path)
        frames = urdf_shapes.link_frames(robot, root)
        from_urdf, notes = urdf_shapes.collision_capsules(robot, path, root, frames)
        moving, locked = {j.name for j in robot.joints}, robot.lock_values
        held = [el.get("name") for el in root.findall("joint")
                if el.get("type") not in (None, "fixed") and el.get("name") not in moving]
        if held:
            at = ", ".join(f"{name}={locked[name]:g}" if name in locked else f"{name} (at its origin)" for name in held)
            notes.append(f"joints not moved by the robot: the collision geometry below them is placed at {at}")
        from_urdf = cap.drop_contained(from_urdf)
    elif source == "urdf":
        raise ModelError(f"robot '{robot.name}' is not described by a URDF file: no collision geometry to read "
                         "(use the kinematic chain)")
    fixed_points = {}
    if frames:
        from dynid.excite.geometry.urdf_shapes import fixed_frame_points

        fixed_points = fixed_frame_points(frames)
    out = []
    chain_links = []
    for link in range(-1, robot.n_bodies):
        own = [c for c in from_urdf if c.link == link]
        if own:
            out += own
        else:
            out += cap.chain_capsules(robot, link, radii[link], fixed_points.get(link, ()))
            chain_links.append(link)
    if from_urdf and chain_links:
        names = ", ".join("base" if k < 0 else robot.links[k].name for k in chain_links)
        notes.append(f"no collision geometry for {names}: capsules along the kinematic chain")
    return CapsuleSet(tuple(out), tuple(notes), frames)
