"""The robot's surroundings: the floor plane, boxes, and a Cartesian box for the flange.

Obstacles file (``--obstacles obstacles.yaml``), base-frame coordinates [m]::

    floor: 0.0                     # height of the floor plane z = h (null or absent: no floor)
    boxes:
      - {name: table, center: [0.6, 0.0, 0.2], size: [0.8, 1.2, 0.4], rpy: [0, 0, 0]}

``size`` holds full edge lengths; ``rpy`` (optional) orients the box as URDF origins do.
The floor counts as part of the base: links attached to the base by one joint are exempt
from it, as they are from the base itself (they stand on it).

Workspace (``--workspace``): the flange point (origin of the last link's frame, or of a
named URDF link) must stay inside the axis-aligned box [low, high] of the base frame.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dynid.errors import ModelError
from dynid.robot.transforms import rpy_matrix


@dataclass(frozen=True, eq=False)
class Box:
    """An obstacle box: center (3,), size (3,) full edges [m], rotation (3, 3) box axes in the base frame."""

    name: str
    center: np.ndarray
    size: np.ndarray
    rotation: np.ndarray = field(default_factory=lambda: np.eye(3))

    def __post_init__(self):
        for key, shape in (("center", (3,)), ("size", (3,)), ("rotation", (3, 3))):
            value = np.asarray(getattr(self, key), dtype=float)
            if value.shape != shape or not np.all(np.isfinite(value)):
                raise ModelError(f"obstacle '{self.name}': {key} must be {shape} finite numbers")
            object.__setattr__(self, key, value)
        if not np.all(self.size > 0):
            raise ModelError(f"obstacle '{self.name}': size must be three positive lengths, got {self.size.tolist()}")

    @property
    def half(self) -> np.ndarray:
        return 0.5 * self.size

    def describe(self) -> dict:
        return {"name": self.name, "center": self.center.tolist(), "size": self.size.tolist(),
                "rotation": self.rotation.tolist()}


@dataclass(frozen=True, eq=False)
class Scene:
    """floor: height of the floor plane [m] (None: no floor); boxes: obstacle boxes."""

    floor: float | None = 0.0
    boxes: tuple = ()

    def __post_init__(self):
        names = [b.name for b in self.boxes]
        if len(set(names)) != len(names):
            raise ModelError(f"obstacles: box names must be unique, got {names}")

    def describe(self) -> dict:
        return {"floor": self.floor, "boxes": [b.describe() for b in self.boxes]}


@dataclass(frozen=True, eq=False)
class Workspace:
    """The flange point (``point`` (3,) in the frame of ``link``) stays in [low, high] (3,) [m]."""

    low: np.ndarray
    high: np.ndarray
    link: int
    point: np.ndarray
    name: str

    def __post_init__(self):
        low, high = np.asarray(self.low, dtype=float), np.asarray(self.high, dtype=float)
        if low.shape != (3,) or high.shape != (3,) or np.any(np.isnan(low)) or np.any(np.isnan(high)):
            raise ModelError("workspace: expected three lower and three upper bounds (x, y, z)")
        for axis, lo, hi in zip("xyz", low, high):
            if not lo < hi:
                raise ModelError(f"workspace: {axis} lower bound {lo:g} is not below the upper bound {hi:g}")
        object.__setattr__(self, "low", low)
        object.__setattr__(self, "high", high)
        object.__setattr__(self, "point", np.asarray(self.point, dtype=float))

    def describe(self) -> dict:
        return {"low": self.low.tolist(), "high": self.high.tolist(), "flange": self.name,
                "point_in_link_frame": self.point.tolist()}


def box_from_dict(entry, where: str, index: int) -> Box:
    if not isinstance(entry, dict) or not {"center", "size"} <= set(entry) or not set(entry) <= {
            "name", "center", "size", "rpy"}:
        raise ModelError(f"{where}: boxes[{index}]: expected {{name, center: [x, y, z], size: [sx, sy, sz], "
                         f"rpy (optional)}}, got {entry!r}")
    name = str(entry.get("name", f"box{index + 1}"))
    try:
        rpy = [float(v) for v in entry.get("rpy", [0, 0, 0])]
        return Box(name, [float(v) for v in entry["center"]], [float(v) for v in entry["size"]], rpy_matrix(*rpy))
    except (TypeError, ValueError) as exc:
        raise ModelError(f"{where}: boxes[{index}] ('{name}'): {exc}") from None


def read_obstacles(path) -> Scene:
    """A Scene from an obstacles YAML (module docstring)."""
    from dynid.excite.limit_sources import read_yaml

    path = Path(path)
    doc = read_yaml(path, "obstacles")
    if doc is None:
        doc = {}
    if not isinstance(doc, dict) or not set(doc) <= {"floor", "boxes"}:
        raise ModelError(f"{path}: expected a mapping with 'floor' and/or 'boxes'")
    floor = doc.get("floor")
    if floor is not None:
        try:
            floor = float(floor)
        except (TypeError, ValueError):
            raise ModelError(f"{path}: floor: expected a height [m] or null, got {floor!r}") from None
        if not math.isfinite(floor):
            raise ModelError(f"{path}: floor: expected a finite height [m]")
    boxes = doc.get("boxes") or []
    if not isinstance(boxes, list):
        raise ModelError(f"{path}: boxes: expected a list")
    return Scene(floor, tuple(box_from_dict(b, str(path), i) for i, b in enumerate(boxes)))
