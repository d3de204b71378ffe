"""Mesh vertices from STL (binary or ASCII), OBJ and COLLADA (.dae) files, and ``package://``
file names of URDF descriptions.

Only the vertices matter here (a capsule is fitted around them, ``capsules.enclosing_capsule``).
COLLADA: positions of every ``<geometry>`` instantiated in the visual scene, moved by the
``<matrix>``/``<translate>``/``<scale>`` transforms of its nodes and scaled by ``<unit meter>``;
files whose ``up_axis`` is not Z_UP, or with ``<rotate>`` elements, are refused (the caller
then falls back to the kinematic chain).
"""

from __future__ import annotations

import os
import struct
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from dynid.errors import ModelError


def resolve_package_path(filename: str, urdf_path: Path) -> Path:
    """A URDF mesh file name as a path: ``package://PKG/rest`` is looked up in the ancestors
    of the URDF's directory named PKG and in ROS_PACKAGE_PATH; relative names are relative to
    the URDF's directory."""
    if filename.startswith("file://"):
        return Path(filename[len("file://"):])
    if not filename.startswith("package://"):
        path = Path(filename)
        return path if path.is_absolute() else urdf_path.parent / path
    package, _, rest = filename[len("package://"):].partition("/")
    candidates = [parent for parent in urdf_path.resolve().parents if parent.name == package]
    for root in os.environ.get("ROS_PACKAGE_PATH", "").split(os.pathsep):
        if root:
            candidates += [Path(root) / package, Path(root)]
    for base in candidates:
        if (base / rest).exists():
            return base / rest
    raise ModelError(f"{urdf_path}: mesh '{filename}': package '{package}' not found above the URDF "
                     "nor in ROS_PACKAGE_PATH")


def read_vertices(path: Path) -> np.ndarray:
    """(M, 3) vertices of an .stl, .obj or .dae file [file units]."""
    suffix = path.suffix.lower()
    try:
        if suffix == ".stl":
            return _stl(path)
        if suffix == ".obj":
            return _obj(path)
        if suffix == ".dae":
            return _dae(path)
    except (OSError, ValueError, struct.error, ET.ParseError) as exc:
        raise ModelError(f"{path}: unreadable mesh ({exc})") from None
    raise ModelError(f"{path}: mesh format '{suffix}' not read (expected .stl, .obj or .dae)")


def _stl(path: Path) -> np.ndarray:
    data = path.read_bytes()
    if len(data) >= 84:
        count = struct.unpack_from("<I", data, 80)[0]
        if len(data) == 84 + 50 * count:  # binary: 50 bytes per triangle
            rows = np.frombuffer(data, dtype=np.dtype([("n", "<f4", 3), ("v", "<f4", (3, 3)), ("a", "<u2")]),
                                 count=count, offset=84)
            return rows["v"].reshape(-1, 3).astype(float)
    vertices = [line.split()[1:4] for line in data.decode("ascii", "replace").splitlines()
                if line.strip().startswith("vertex")]
    if not vertices:
        raise ValueError("no vertices")
    return np.array(vertices, dtype=float)


def _obj(path: Path) -> np.ndarray:
    vertices = [line.split()[1:4] for line in path.read_text(errors="replace").splitlines() if line.startswith("v ")]
    if not vertices:
        raise ValueError("no vertices")
    return np.array(vertices, dtype=float)


def _dae(path: Path) -> np.ndarray:
    root = ET.parse(path).getroot()
    ns = root.tag[: root.tag.index("}") + 1] if root.tag.startswith("{") else ""
    up = root.find(f"{ns}asset/{ns}up_axis")
    if up is not None and (up.text or "").strip() not in ("", "Z_UP"):
        raise ValueError(f"up_axis {up.text.strip()} (only Z_UP is read)")
    unit = root.find(f"{ns}asset/{ns}unit")
    scale = float(unit.get("meter", "1")) if unit is not None else 1.0
    arrays = {el.get("id"): el.text for el in root.iter(f"{ns}float_array")}
    geometries = {}
    for geometry in root.iter(f"{ns}geometry"):
        vertices = geometry.find(f".//{ns}vertices/{ns}input[@semantic='POSITION']")
        if vertices is None:
            continue
        source = geometry.find(f".//{ns}source[@id='{vertices.get('source').lstrip('#')}']")
        array = source.find(f"{ns}float_array")
        geometries[geometry.get("id")] = np.array(arrays[array.get("id")].split(), dtype=float).reshape(-1, 3)
    out = []

    def walk(node, transform):
        for child in node:
            tag = child.tag[len(ns):]
            if tag == "matrix":
                transform = transform @ np.array(child.text.split(), dtype=float).reshape(4, 4)
            elif tag == "translate":
                step = np.eye(4)
                step[:3, 3] = np.array(child.text.split(), dtype=float)
                transform = transform @ step
            elif tag == "scale":
                transform = transform @ np.diag(np.r_[np.array(child.text.split(), dtype=float), 1.0])
            elif tag == "rotate":
                raise ValueError("<rotate> node transforms are not read")
        for child in node:
            tag = child.tag[len(ns):]
            if tag == "instance_geometry" and child.get("url", "").lstrip("#") in geometries:
                v = geometries[child.get("url").lstrip("#")]
                out.append(v @ transform[:3, :3].T + transform[:3, 3])
            elif tag == "node":
                walk(child, transform)

    scenes = list(root.iter(f"{ns}visual_scene"))
    for scene in scenes:
        walk(scene, np.eye(4))
    if not out:  # no scene graph: the geometries as they are
        out = list(geometries.values())
    if not out:
        raise ValueError("no vertices")
    return np.vstack(out) * scale
