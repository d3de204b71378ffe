"""URDF loader: revolute, continuous, prismatic and fixed joints; fixed joints are merged.

Actuated joints are numbered in depth-first order of the kinematic tree (children in the
order their joints appear in the file), the order Pinocchio's URDF parser uses. The link
frame of an actuated joint is its child link's frame; a link hanging on fixed joints adds
its inertia to the nearest actuated ancestor (or to the base, where it does not move).
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from dynid.errors import ModelError
from dynid.robot.inertia import from_mass_com_inertia, inertia_matrix
from dynid.robot.model import Drive, Joint, JointLimits, Link, Robot
from dynid.robot.transforms import rpy_matrix

_ACTUATED = {"revolute": "revolute", "continuous": "revolute", "prismatic": "prismatic"}


def _floats(text: str | None, count: int, where: str, default=None) -> np.ndarray:
    if text is None:
        if default is None:
            raise ModelError(f"{where}: missing, expected {count} numbers")
        return np.asarray(default, dtype=float)
    try:
        values = [float(x) for x in text.split()]
    except ValueError:
        raise ModelError(f"{where}: '{text}' is not {count} numbers") from None
    if len(values) != count or not all(math.isfinite(v) for v in values):
        raise ModelError(f"{where}: '{text}' is not {count} finite numbers")
    return np.asarray(values)


def _origin(element, where: str) -> tuple[np.ndarray, np.ndarray]:
    origin = element.find("origin") if element is not None else None
    if origin is None:
        return np.eye(3), np.zeros(3)
    xyz = _floats(origin.get("xyz"), 3, f"{where} <origin xyz>", default=[0, 0, 0])
    rpy = _floats(origin.get("rpy"), 3, f"{where} <origin rpy>", default=[0, 0, 0])
    return rpy_matrix(*rpy), xyz


def _number(element, attribute: str, where: str, default: float) -> float:
    text = element.get(attribute) if element is not None else None
    if text is None:
        return default
    try:
        value = float(text)
    except ValueError:
        raise ModelError(f"{where}: {attribute}='{text}' is not a number") from None
    if math.isnan(value):
        raise ModelError(f"{where}: {attribute} is NaN")
    return value


def _link_inertial(link, where: str) -> np.ndarray:
    """Standard parameters (10,) of a URDF <link> in its own frame (zeros if no <inertial>)."""
    inertial = link.find("inertial")
    if inertial is None:
        return np.zeros(10)
    mass_el = inertial.find("mass")
    if mass_el is None:
        raise ModelError(f"{where} <inertial>: missing <mass value=...>")
    mass = _number(mass_el, "value", f"{where} <mass>", math.nan)
    if math.isnan(mass):
        raise ModelError(f"{where} <mass>: missing value")
    if mass < 0:
        raise ModelError(f"{where} <mass>: negative mass {mass:g} kg, expected >= 0")
    rot, com = _origin(inertial, f"{where} <inertial>")
    el = inertial.find("inertia")
    if el is None:
        raise ModelError(f"{where} <inertial>: missing <inertia ixx=... ixy=... ...>")
    six = [_number(el, k, f"{where} <inertia>", 0.0) for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")]
    ic = rot @ inertia_matrix(np.array(six)) @ rot.T
    return from_mass_com_inertia(mass, com, ic)


def _move_inertial(theta: np.ndarray, rotation: np.ndarray, translation: np.ndarray) -> np.ndarray:
    """Express theta (10,) of a body given in frame B in frame A, with B = (rotation, translation) in A."""
    m = theta[0]
    h = theta[1:4]
    io = inertia_matrix(theta[4:10])
    h_a = rotation @ h
    # I_A = R I_B R^T + m(|t|^2 1 - t t^T) + (2 t.h_a 1 - t h_a^T - h_a t^T)  (shift of origin)
    t = translation
    i_a = rotation @ io @ rotation.T
    i_a += m * (t @ t * np.eye(3) - np.outer(t, t))
    i_a += 2 * (t @ h_a) * np.eye(3) - np.outer(t, h_a) - np.outer(h_a, t)
    return np.concatenate([[m], h_a + m * t, [i_a[0, 0], i_a[0, 1], i_a[0, 2], i_a[1, 1], i_a[1, 2], i_a[2, 2]]])


def load_urdf(path: str | Path, name: str | None = None) -> Robot:
    """Read a URDF file into a Robot (fixed base). Errors name the file and the element."""
    path = Path(path)
    try:
        root = ET.parse(path).getroot()
    except FileNotFoundError:
        raise ModelError(f"{path}: no such file") from None
    except ET.ParseError as exc:
        raise ModelError(f"{path}: malformed XML ({exc})") from None
    if root.tag != "robot":
        raise ModelError(f"{path}: root element is <{root.tag}>, expected <robot>")
    links = {}
    for el in root.findall("link"):
        lname = el.get("name")
        if not lname:
            raise ModelError(f"{path}: a <link> has no name")
        links[lname] = _link_inertial(el, f"{path}: link '{lname}'")
    gear = {}
    for tr in root.findall("transmission"):
        j, red = tr.find("joint"), tr.find(".//mechanicalReduction")
        if j is not None and red is not None and red.text:
            gear[j.get("name")] = float(red.text)
    children: dict[str, list] = {}
    child_of = {}
    for el in root.findall("joint"):
        jname, jtype = el.get("name"), el.get("type")
        where = f"{path}: joint '{jname}'"
        if jtype not in (*_ACTUATED, "fixed"):
            raise ModelError(
                f"{where}: unsupported type '{jtype}', expected revolute, continuous, prismatic or fixed"
            )
        if el.find("mimic") is not None:
            raise ModelError(f"{where}: <mimic> joints are not supported")
        parent, child = el.find("parent"), el.find("child")
        if parent is None or child is None:
            raise ModelError(f"{where}: needs <parent link=...> and <child link=...>")
        plink, clink = parent.get("link"), child.get("link")
        for role, lname in (("parent", plink), ("child", clink)):
            if lname not in links:
                raise ModelError(f"{where}: {role} link '{lname}' is not defined")
        if clink in child_of:
            raise ModelError(f"{where}: link '{clink}' already has parent joint '{child_of[clink]}'")
        child_of[clink] = jname
        children.setdefault(plink, []).append(el)
    roots = [lname for lname in links if lname not in child_of]
    if len(roots) != 1:
        raise ModelError(f"{path}: expected one root link, found {roots or 'none (a cycle)'}")

    joints: list[Joint] = []
    thetas: list[np.ndarray] = []
    names: list[str] = []

    def visit(link_name: str, owner: int, rot: np.ndarray, trans: np.ndarray):
        """Walk below link_name, whose frame is (rot, trans) in the frame of actuated joint owner."""
        for el in children.get(link_name, []):
            jname, jtype = el.get("name"), el.get("type")
            where = f"{path}: joint '{jname}'"
            r_j, t_j = _origin(el, where)
            r_c, t_c = rot @ r_j, trans + rot @ t_j  # child frame in owner's frame
            clink = el.find("child").get("link")
            if jtype == "fixed":
                if owner >= 0:
                    thetas[owner] = thetas[owner] + _move_inertial(links[clink], r_c, t_c)
                visit(clink, owner, r_c, t_c)
                continue
            axis = _floats(el.find("axis").get("xyz") if el.find("axis") is not None else None,
                           3, f"{where} <axis xyz>", default=[1, 0, 0])
            lim = el.find("limit")
            kind = _ACTUATED[jtype]
            if jtype in ("revolute", "prismatic") and lim is None:
                raise ModelError(f"{where}: a {jtype} joint needs a <limit> element")
            bounded = jtype != "continuous"
            lo = _number(lim, "lower", where + " <limit>", 0.0) if bounded else -math.inf
            hi = _number(lim, "upper", where + " <limit>", 0.0) if bounded else math.inf
            if bounded and lo == hi == 0.0:
                lo, hi = -math.inf, math.inf
            vel = _number(lim, "velocity", where + " <limit>", math.inf)
            eff = _number(lim, "effort", where + " <limit>", math.inf)
            joints.append(
                Joint(
                    name=jname, type=kind, parent=owner, placement_rotation=r_c,
                    placement_translation=t_c, axis=axis,
                    limits=JointLimits(lo, hi, vel if vel > 0 else math.inf, math.inf,
                                       eff if eff > 0 else math.inf),
                    drive=Drive(gear_ratio=gear.get(jname, 1.0)),
                )
            )
            thetas.append(links[clink].copy())
            names.append(clink)
            visit(clink, len(joints) - 1, np.eye(3), np.zeros(3))

    visit(roots[0], -1, np.eye(3), np.zeros(3))
    if not joints:
        raise ModelError(f"{path}: no revolute, continuous or prismatic joint")
    robot_name = name or root.get("name") or path.stem
    link_objs = []
    for i, (lname, theta) in enumerate(zip(names, thetas)):
        try:
            link_objs.append(Link(lname, theta))
        except ModelError as exc:
            raise ModelError(f"{path}: {exc}") from None
    return Robot(name=robot_name, joints=tuple(joints), links=tuple(link_objs),
                 description=f"URDF {path.name}", source=str(path))
