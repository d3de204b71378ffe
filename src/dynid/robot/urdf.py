"""URDF loader: revolute, continuous, prismatic, fixed and mimic joints; fixed joints are merged.

Moving joints are numbered in depth-first order of the kinematic tree (children in the
order their joints appear in the file), the order Pinocchio's URDF parser uses; the data
columns are the moving joints without a ``<mimic>``, in the same order. The link frame of a
moving joint is its child link's frame; a link hanging on fixed joints adds its inertia to
the nearest moving ancestor (or to the base, where it does not move). Visual and collision
geometry (meshes, ``package://`` paths) is not read.

A ``floating`` or ``planar`` joint (a robot on a moving base) is refused with its name: dynid
models fixed-base robots; ``lock`` it (value 0: held at its ``<origin>``) to bolt it down.

Transmissions: ``<transmission>`` elements with one ``<joint>`` and a ``<mechanicalReduction>``
(in the element or its ``<actuator>``) give gear ratios (q_m = N q); the dynid extension
element ``<dynid_coupling motor="JOINT_OF_THE_MOTOR" joint="OTHER_JOINT" ratio="NUMBER"/>``
(children of ``<robot>``, ignored by other parsers) adds the off-diagonal entry
T[motor, joint] of a coupled transmission (robot/transmission.py, docs/formats.md).
"""

from __future__ import annotations

import math
import warnings
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import numpy as np

from dynid.files.inputs import input_file
from dynid.errors import DynidWarning, ModelError
from dynid.robot.inertia import from_mass_com_inertia, inertia_matrix, move_inertial
from dynid.robot.model import Drive, Joint, JointLimits, Link, Mimic, Robot
from dynid.robot.select import select_joints
from dynid.robot.transmission import coupled_matrix, joint_index
from dynid.robot.transforms import rpy_matrix
from dynid.robot.validation import check_inertials, check_limits, check_scale, check_unique

_ACTUATED = {"revolute": "revolute", "continuous": "revolute", "prismatic": "prismatic"}
_BASE_MOTION = ("floating", "planar")  # joints that would give the robot a moving base


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


def _gear_ratios(root, path) -> dict[str, float]:
    """Joint name -> <mechanicalReduction> of the standard single-joint <transmission> elements.
    An empty or impossible reduction and two transmissions of one joint are refused (the later
    would silently win); a transmission of a joint the file does not have warns (talos_left_arm of
    example-robot-data keeps the transmissions of the whole robot)."""
    names = {el.get("name") for el in root.findall("joint")}
    gear, owner = {}, {}
    for tr in root.findall("transmission"):
        joints, red = tr.findall("joint"), tr.find(".//mechanicalReduction")
        if len(joints) != 1 or red is None:
            continue  # differential or custom transmissions (e.g. PR2's wrist) carry no simple ratio
        where = f"{path}: transmission '{tr.get('name')}' <mechanicalReduction>"
        if not (red.text or "").strip():
            raise ModelError(f"{where}: empty; expected the gear ratio (motor angle / joint angle), e.g. 100")
        try:
            ratio = float(red.text)
        except ValueError:
            raise ModelError(f"{where}: '{red.text.strip()}' is not a number") from None
        try:
            Drive(gear_ratio=ratio)
        except ModelError as exc:
            raise ModelError(f"{where}: {exc}") from None
        joint = joints[0].get("name")
        if joint not in names:
            warnings.warn(DynidWarning(f"{path}: transmission '{tr.get('name')}' drives joint '{joint}', which the "
                                       "file does not have; its gear ratio is ignored"), stacklevel=2)
            continue
        if joint in gear:
            raise ModelError(f"{path}: transmissions '{owner[joint]}' and '{tr.get('name')}' both drive joint "
                             f"'{joint}' (ratios {gear[joint]:g} and {ratio:g}); expected one per joint")
        gear[joint], owner[joint] = ratio, tr.get("name")
    return gear


def _mimic(el, where: str) -> Mimic | None:
    mimic = el.find("mimic")
    if mimic is None:
        return None
    leader = mimic.get("joint")
    if not leader:
        raise ModelError(f"{where} <mimic>: needs joint=\"LEADER\" (the joint it follows)")
    return Mimic(leader, _number(mimic, "multiplier", f"{where} <mimic>", 1.0),
                 _number(mimic, "offset", f"{where} <mimic>", 0.0))


def _limits(el, jtype: str, where: str) -> JointLimits:
    lim = el.find("limit")
    if jtype in ("revolute", "prismatic") and lim is None:
        raise ModelError(f"{where}: a {jtype} joint needs a <limit> element (URDF spec); "
                         "use type='continuous' for an unlimited revolute joint")
    bounded = jtype != "continuous"
    lo = _number(lim, "lower", where + " <limit>", 0.0) if bounded else -math.inf
    hi = _number(lim, "upper", where + " <limit>", 0.0) if bounded else math.inf
    if bounded and lo == hi == 0.0:
        lo, hi = -math.inf, math.inf
    vel = _number(lim, "velocity", where + " <limit>", math.inf)
    eff = _number(lim, "effort", where + " <limit>", math.inf)
    # 0 is the URDF way of writing "no limit"; a negative value cannot be right (check_limits)
    limits = JointLimits(lo, hi, vel if vel != 0 else math.inf, math.inf, eff if eff != 0 else math.inf)
    check_limits(limits, where + " <limit>", "prismatic" if jtype == "prismatic" else "revolute")
    return limits


def load_urdf(path: str | Path, name: str | None = None, joints: list[str] | None = None,
              lock: dict[str, float] | None = None) -> Robot:
    """Read a URDF file into a Robot (fixed base). Errors name the file and the element.

    joints, lock: keep these actuated joints / hold these at a value (robot/select.py); a
    floating or planar joint can only be held at its <origin> (value 0).
    """
    path = Path(path)
    lock = dict(lock or {})
    held = {}
    try:
        root = ET.parse(input_file(path, "URDF file", error=ModelError)).getroot()
    except FileNotFoundError:
        raise ModelError(f"{path}: no such file") from None
    except ET.ParseError as exc:
        raise ModelError(f"{path}: malformed XML ({exc})") from None
    if root.tag != "robot":
        raise ModelError(f"{path}: root element is <{root.tag}>, expected <robot>")
    if root.find("link") is None:
        raise ModelError(f"{path}: no <link> elements (an empty or xacro-only description?)")
    check_unique([el.get("name") for el in root.findall("link") if el.get("name")], "<link>", str(path))
    check_unique([el.get("name") for el in root.findall("joint") if el.get("name")], "<joint>", str(path))
    links = {}
    for el in root.findall("link"):
        lname = el.get("name")
        if not lname:
            raise ModelError(f"{path}: a <link> has no name")
        links[lname] = _link_inertial(el, f"{path}: link '{lname}'")
    gear = _gear_ratios(root, path)
    children: dict[str, list] = {}
    child_of = {}
    for el in root.findall("joint"):
        jname, jtype = el.get("name"), el.get("type")
        where = f"{path}: joint '{jname}'"
        if jtype in _BASE_MOTION:
            if jname not in lock:
                raise ModelError(f"{where}: unsupported type '{jtype}' (a moving base); dynid models "
                                 f"fixed-base robots: hold it with --lock {jname}=0 (at its <origin>)")
            held[jname] = lock.pop(jname)
            if held[jname] != 0:
                raise ModelError(f"{where}: a {jtype} joint can only be held at its <origin>: "
                                 f"--lock {jname}=0, got {held[jname]:g}")
        if jtype not in (*_ACTUATED, "fixed", *_BASE_MOTION):
            raise ModelError(f"{where}: unsupported type '{jtype}', expected revolute, continuous, "
                             "prismatic or fixed (floating and planar only when locked)")
        parent, child = el.find("parent"), el.find("child")
        if parent is None or child is None:
            raise ModelError(f"{where}: needs <parent link=...> and <child link=...>")
        plink, clink = parent.get("link"), child.get("link")
        for role, lname in (("parent", plink), ("child", clink)):
            if lname not in links:
                raise ModelError(f"{where}: {role} link '{lname}' is not defined")
        if clink in child_of:
            raise ModelError(f"{where}: link '{clink}' already has parent joint '{child_of[clink]}' "
                             "(a closed kinematic loop: dynid needs a tree; remove one of the joints)")
        child_of[clink] = jname
        children.setdefault(plink, []).append(el)
    roots = [lname for lname in links if lname not in child_of]
    if len(roots) != 1:
        raise ModelError(f"{path}: expected one root link, found {roots or 'none (a cycle)'}")

    joints_kept, joints = joints, []  # the argument; the tree's moving joints
    thetas: list[np.ndarray] = []
    names: list[str] = []

    def visit(link_name: str, owner: int, rot: np.ndarray, trans: np.ndarray):
        """Walk below link_name, whose frame is (rot, trans) in the frame of moving joint owner."""
        for el in children.get(link_name, []):
            jname, jtype = el.get("name"), el.get("type")
            where = f"{path}: joint '{jname}'"
            r_j, t_j = _origin(el, where)
            r_c, t_c = rot @ r_j, trans + rot @ t_j  # child frame in owner's frame
            clink = el.find("child").get("link")
            if jtype == "fixed" or jtype in _BASE_MOTION:  # a held base joint is fixed at its origin
                if owner >= 0:
                    thetas[owner] = thetas[owner] + move_inertial(links[clink], r_c, t_c)
                visit(clink, owner, r_c, t_c)
                continue
            axis = _floats(el.find("axis").get("xyz") if el.find("axis") is not None else None,
                           3, f"{where} <axis xyz>", default=[1, 0, 0])
            joints.append(
                Joint(name=jname, type=_ACTUATED[jtype], parent=owner, placement_rotation=r_c,
                      placement_translation=t_c, axis=axis, limits=_limits(el, jtype, where),
                      drive=Drive(gear_ratio=gear.get(jname, 1.0)), mimic=_mimic(el, where))
            )
            thetas.append(links[clink].copy())
            names.append(clink)
            visit(clink, len(joints) - 1, np.eye(3), np.zeros(3))

    visit(roots[0], -1, np.eye(3), np.zeros(3))
    if not joints:
        raise ModelError(f"{path}: no revolute, continuous or prismatic joint")
    robot_name = name or root.get("name") or path.stem
    link_objs = []
    for lname, theta in zip(names, thetas):
        try:
            link_objs.append(Link(lname, theta))
        except ModelError as exc:
            raise ModelError(f"{path}: {exc}") from None
    try:
        robot = Robot(name=robot_name, joints=tuple(joints), links=tuple(link_objs),
                      description=f"URDF {path.name}", source=str(path))
        robot = select_joints(_with_couplings(robot, root, path), joints_kept, lock)
    except ModelError as exc:
        raise ModelError(f"{path}: {exc}") from None
    check_scale(robot, str(path))
    check_inertials(robot, str(path))
    return robot


def _with_couplings(robot: Robot, root, path) -> Robot:
    """Apply the <dynid_coupling motor=... joint=... ratio=.../> extension elements."""
    entries = []
    for i, el in enumerate(root.findall("dynid_coupling")):
        where = f"{path}: <dynid_coupling> {i + 1}"
        ratio = _number(el, "ratio", where, math.nan)
        if not math.isfinite(ratio):
            raise ModelError(f"{where}: needs ratio=\"NUMBER\" (motor radians per joint radian)")
        entries.append((joint_index(robot, el.get("motor"), f"{where} motor"),
                        joint_index(robot, el.get("joint"), f"{where} joint"), ratio))
    if not entries:
        return robot
    return replace(robot, transmission=coupled_matrix(robot, entries, f"{path}: <dynid_coupling>"))
