"""The robot description: an immutable kinematic tree of actuated joints and their links.

Each actuated joint ``i`` moves exactly one link ``i`` (fixed joints are merged when a
description is loaded). The transform from the parent link frame to link frame ``i`` is

    T_{p,i}(q_i) = P_i · M_i(q_i) · E_i

with ``P_i`` the fixed placement of the joint in the parent frame, ``M_i`` a rotation about
(revolute) or a translation along (prismatic) the unit ``axis`` through the joint frame
origin, and ``E_i`` a fixed offset from the joint frame to the link frame (identity for URDF
and modified DH; ``TransZ(d) TransX(a) RotX(alpha)`` for standard DH, whose link frame i
sits at the far end of link i). Inertial parameters are expressed in link frames.

Mimic joints (URDF ``<mimic>``) keep their own body and their own coordinate in the kinematic
tree, but no coordinate of their own in the data: a follower moves as
``q_f = multiplier * q_leader + offset``. The tree has ``n_bodies`` moving joints, the data
``n`` actuated coordinates, and a constant linear map (Featherstone 2008, ch. 8 "gears")

    q_tree = G q + o,   dq_tree = G dq,   ddq_tree = G ddq,   tau = G^T tau_tree

takes one to the other (``Robot.mimic_map``). ``Robot.tree`` is the same tree with every
joint actuated (n == n_bodies): the compiled kernels only ever see trees.

A link's inertial must be a rigid body's, except that a central inertia missing the triangle
inequality J1 + J2 >= J3 by at most ``MAX_VIOLATION`` (20 % of J3) is loaded as written
(``Link.tolerated``; the loaders warn, robot/validation.py ``check_inertials``): CAD exports and
hand-edited URDFs carry such errors, Pinocchio loads them, and least squares never uses the
inertials. Where they serve as a prior or a starting point, ``Robot.physical`` is used instead:
each such link projected onto the nearest physical one. Negative mass, non-finite numbers and
larger violations are refused.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np

from dynid.errors import ModelError
from dynid.robot.inertia import (
    MAX_VIOLATION, PARAMETER_NAMES, consistency_problems, nearest_physical, triangle_violation,
)
from dynid.robot.transmission import check_transmission

JOINT_TYPES = ("revolute", "prismatic")


def _frozen(a, shape) -> np.ndarray:
    arr = np.array(a, dtype=float).reshape(shape)
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, eq=False)
class JointLimits:
    """Per-joint limits; ``inf`` (or -inf) where a limit is not given. SI units."""

    q_min: float = -math.inf
    q_max: float = math.inf
    dq_max: float = math.inf
    ddq_max: float = math.inf
    tau_max: float = math.inf


@dataclass(frozen=True, eq=False)
class Drive:
    """Drive train of one joint.

    gear_ratio: motor angle / joint angle [-]
    rotor_inertia: motor-side rotor inertia J_m [kg m^2]; joint side it is gear_ratio^2 J_m
    torque_constant: motor torque per current, motor side [N m / A]
    rated_torque: motor rated torque, motor side [N m]
    zero_offset: the joint's position [rad | m] where its motor encoder reads 0 (a drive zeroed
      away from the description's zero): a motor-side log gives q = q_m / N + zero_offset
      (q = T^-1 q_m + zero_offset with a coupled transmission; ``data.columns``)
    """

    gear_ratio: float = 1.0
    rotor_inertia: float = 0.0
    torque_constant: float = math.nan
    rated_torque: float = math.nan
    zero_offset: float = 0.0

    MAX_GEAR_RATIO = 1e6  # |N| beyond this is no gear (a ball screw of 1 um lead is 6e6 rad/m): a corrupt number

    def __post_init__(self):
        """Refuse drive data that cannot be right (loaders add the file and joint to the message)."""
        n, jm, kt, rated = self.gear_ratio, self.rotor_inertia, self.torque_constant, self.rated_torque
        if not (math.isfinite(n) and n != 0 and abs(n) <= self.MAX_GEAR_RATIO and abs(n) >= 1 / self.MAX_GEAR_RATIO):
            raise ModelError(f"gear_ratio {n:g}: expected a finite non-zero gear ratio of magnitude "
                             f"{1 / self.MAX_GEAR_RATIO:g} to {self.MAX_GEAR_RATIO:g}")
        if not (math.isfinite(jm) and jm >= 0):
            raise ModelError(f"rotor_inertia {jm:g}: expected a finite rotor inertia >= 0 kg m^2")
        if not (math.isnan(kt) or (math.isfinite(kt) and kt != 0)):
            raise ModelError(f"torque_constant {kt:g}: expected a finite non-zero motor torque constant [N m/A] "
                             "(0 would read every current as no torque); omit it when unknown")
        if not (math.isnan(rated) or (math.isfinite(rated) and rated > 0)):
            raise ModelError(f"rated_torque {rated:g}: expected a finite positive rated torque [N m]; omit it "
                             "when unknown")

    @property
    def joint_rotor_inertia(self) -> float:
        """Rotor inertia seen at the joint, I_a = N^2 J_m (thesis eq. 3.12) [kg m^2]."""
        return self.gear_ratio**2 * self.rotor_inertia


@dataclass(frozen=True, eq=False)
class Mimic:
    """URDF <mimic>: this joint follows ``leader`` as q = multiplier * q_leader + offset."""

    leader: str
    multiplier: float = 1.0
    offset: float = 0.0


@dataclass(frozen=True, eq=False)
class Joint:
    name: str
    type: str
    parent: int  # index of the parent joint (its link), -1 for the robot base
    placement_rotation: np.ndarray  # (3, 3) R of P_i
    placement_translation: np.ndarray  # (3,) t of P_i, in the parent link frame [m]
    axis: np.ndarray  # (3,) unit axis in the joint frame
    offset_rotation: np.ndarray = field(default_factory=lambda: _frozen(np.eye(3), (3, 3)))
    offset_translation: np.ndarray = field(default_factory=lambda: _frozen(np.zeros(3), (3,)))
    limits: JointLimits = JointLimits()
    drive: Drive = Drive()
    mimic: Mimic | None = None

    def __post_init__(self):
        if self.type not in JOINT_TYPES:
            raise ModelError(
                f"joint '{self.name}': unknown type '{self.type}', expected one of {JOINT_TYPES}"
            )
        for name, shape in (
            ("placement_rotation", (3, 3)),
            ("placement_translation", (3,)),
            ("axis", (3,)),
            ("offset_rotation", (3, 3)),
            ("offset_translation", (3,)),
        ):
            value = np.asarray(getattr(self, name), dtype=float)
            if value.size != int(np.prod(shape)) or not np.all(np.isfinite(value)):
                raise ModelError(f"joint '{self.name}': {name} must be {shape} finite numbers")
            object.__setattr__(self, name, _frozen(value, shape))
        norm = float(np.linalg.norm(self.axis))
        if norm < 1e-12:
            raise ModelError(f"joint '{self.name}': axis must be a non-zero vector")
        object.__setattr__(self, "axis", _frozen(self.axis / norm, (3,)))
        for name in ("placement_rotation", "offset_rotation"):
            r = getattr(self, name)
            if not np.allclose(r @ r.T, np.eye(3), atol=1e-9) or np.linalg.det(r) < 0:
                raise ModelError(f"joint '{self.name}': {name} is not a rotation matrix")

    @property
    def is_offset(self) -> bool:
        return bool(np.any(self.offset_translation != 0) or np.any(self.offset_rotation != np.eye(3)))

    @property
    def screw_axis(self) -> np.ndarray:
        """Motion subspace S_i (6,) = (angular, linear at the link origin) in link frame i."""
        re, te = self.offset_rotation, self.offset_translation
        a = re.T @ self.axis
        if self.type == "prismatic":
            return np.concatenate([np.zeros(3), a])
        r = -re.T @ te  # joint-frame origin (a point of the axis) in link coordinates
        return np.concatenate([a, np.cross(r, a)])


@dataclass(frozen=True, eq=False)
class Link:
    name: str
    inertial: np.ndarray  # (10,) standard parameters, docs/formats.md section 1 order

    def __post_init__(self):
        value = np.asarray(self.inertial, dtype=float)
        if value.shape != (10,) or not np.all(np.isfinite(value)):
            raise ModelError(f"link '{self.name}': inertial must be 10 finite numbers {PARAMETER_NAMES}")
        object.__setattr__(self, "inertial", _frozen(value, (10,)))
        problems = consistency_problems(value)
        if problems and not self.tolerated:
            beyond = (f"; no rigid body has these numbers (dynid loads a description whose inertia misses the "
                      f"triangle inequality by at most {100 * MAX_VIOLATION:g} % of J3, with a warning)"
                      if value[0] > 0 and triangle_violation(value) > 0 else "")
            raise ModelError(f"link '{self.name}': " + "; ".join(problems) + beyond)

    @property
    def violation(self) -> float:
        """``robot.inertia.triangle_violation`` of the link: 0 when physical."""
        return triangle_violation(self.inertial)

    @property
    def tolerated(self) -> bool:
        """Not physical, but loaded: a link with mass whose inertia violates the triangle inequality
        by at most ``MAX_VIOLATION`` (rounding, CAD exports, hand edits; module docstring)."""
        return bool(self.inertial[0] > 0 and 0.0 < self.violation <= MAX_VIOLATION
                    and consistency_problems(self.inertial))


@dataclass(frozen=True, eq=False)
class Robot:
    """Immutable robot: moving joints (parents before children), their links, gravity.

    ``joints`` and ``links`` are the kinematic tree (``n_bodies`` of each); the data columns are
    the ``n`` actuated joints, those without a ``mimic`` (module docstring). ``locked``: the
    description's joints held fixed (``--lock``, ``--joints``; robot/select.py) as (name, value
    [rad | m]) pairs, followers of a locked mimic leader included at their own value: their
    bodies are merged into the moving ancestor at these values, and whatever else hangs below
    them (collision geometry) is placed at them too (``lock_values``).
    """

    name: str
    joints: tuple[Joint, ...]
    links: tuple[Link, ...]
    gravity: np.ndarray = field(default_factory=lambda: _frozen([0.0, 0.0, -9.81], (3,)))
    description: str = ""
    source: str = "builtin"
    transmission: np.ndarray | None = None  # (n, n) coupling T, q_m = T q; None: diag(gear ratios)
    locked: tuple[tuple[str, float], ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "joints", tuple(self.joints))
        object.__setattr__(self, "links", tuple(self.links))
        g = np.asarray(self.gravity, dtype=float)
        if g.shape != (3,) or not np.all(np.isfinite(g)):
            raise ModelError(f"robot '{self.name}': gravity must be 3 finite numbers")
        object.__setattr__(self, "gravity", _frozen(g, (3,)))
        if len(self.joints) == 0:
            raise ModelError(f"robot '{self.name}': no actuated joint")
        if len(self.links) != len(self.joints):
            raise ModelError(f"robot '{self.name}': {len(self.joints)} joints but {len(self.links)} links")
        names = [j.name for j in self.joints]
        if len(set(names)) != len(names):
            raise ModelError(f"robot '{self.name}': duplicate joint names")
        for i, joint in enumerate(self.joints):
            if not -1 <= joint.parent < i:
                raise ModelError(
                    f"robot '{self.name}': joint '{joint.name}' has parent {joint.parent}; "
                    "parents must come before children"
                )
        if self.has_mimic:
            self.mimic_map  # noqa: B018 - resolves (and so checks) the mimic relations now
        if self.transmission is not None:
            t = check_transmission(self.transmission, self.gear_ratios, self.joint_names,
                                   f"robot '{self.name}': transmission")
            object.__setattr__(self, "transmission", _frozen(t, t.shape))

    @property
    def lock_values(self) -> dict[str, float]:
        """{name: value [rad | m]} of the description's joints held fixed (``locked``)."""
        return dict(self.locked)

    # -- sizes and parameters -------------------------------------------------------------
    @property
    def n(self) -> int:
        """Number of actuated joints (data columns follow this order)."""
        return len(self.actuated)

    @property
    def n_bodies(self) -> int:
        """Number of moving bodies of the tree (== n unless there are mimic joints)."""
        return len(self.joints)

    def parameters(self) -> np.ndarray:
        """Standard inertial parameters (10 n_bodies,), link by link, docs/formats.md section 1 order."""
        return np.concatenate([link.inertial for link in self.links])

    def parameter_names(self) -> list[str]:
        return [f"{p}{i + 1}" for i in range(self.n_bodies) for p in PARAMETER_NAMES]

    @cached_property
    def physical(self) -> "Robot":
        """The description with every tolerated link (``Link.tolerated``) replaced by the nearest
        physical one (``robot.inertia.nearest_physical``: same mass and centre of mass): the prior
        and starting point wherever dynid uses the description's inertials (pc and its prior
        bound, simulate, the excitation's torque limits); self when every link is physical."""
        if not any(link.tolerated for link in self.links):
            return self
        links = tuple(Link(link.name, nearest_physical(link.inertial)) if link.tolerated else link
                      for link in self.links)
        return replace(self, links=links)

    def with_parameters(self, theta: np.ndarray) -> "Robot":
        """A copy with new standard parameters (10 n_bodies,) (checked for physical consistency)."""
        theta = np.asarray(theta, dtype=float).reshape(self.n_bodies, 10)
        links = tuple(Link(link.name, theta[i]) for i, link in enumerate(self.links))
        return replace(self, links=links)

    def with_gravity(self, gravity) -> "Robot":
        return replace(self, gravity=np.asarray(gravity, dtype=float))

    # -- actuated coordinates and mimic joints ----------------------------------------------
    @cached_property
    def actuated(self) -> np.ndarray:
        """(n,) tree indices of the actuated joints (those without a mimic), in tree order."""
        return np.array([i for i, j in enumerate(self.joints) if j.mimic is None], dtype=np.int64)

    @property
    def actuated_joints(self) -> tuple[Joint, ...]:
        """The n actuated joints, in data-column order."""
        return tuple(self.joints[i] for i in self.actuated)

    @property
    def joint_names(self) -> list[str]:
        """Names of the n actuated joints (data columns q1..qn)."""
        return [j.name for j in self.actuated_joints]

    @cached_property
    def has_mimic(self) -> bool:
        return any(j.mimic is not None for j in self.joints)

    @cached_property
    def mimic_map(self) -> tuple[np.ndarray, np.ndarray]:
        """(G (n_bodies, n), o (n_bodies,)): q_tree = G q + o (module docstring).

        A follower of a follower is resolved to the actuated joint at the end of the chain."""
        index = {j.name: i for i, j in enumerate(self.joints)}
        column = {int(i): c for c, i in enumerate(self.actuated)}
        g = np.zeros((self.n_bodies, len(self.actuated)))
        o = np.zeros(self.n_bodies)
        done = np.zeros(self.n_bodies, dtype=bool)

        def resolve(i: int, chain: tuple[str, ...]) -> None:
            joint = self.joints[i]
            if done[i]:
                return
            if joint.mimic is None:
                g[i, column[i]] = 1.0
            else:
                leader = joint.mimic.leader
                if leader not in index:
                    raise ModelError(f"robot '{self.name}': joint '{joint.name}' mimics '{leader}', "
                                     "which is not a moving joint of the robot")
                if leader in chain:
                    raise ModelError(f"robot '{self.name}': mimic joints form a cycle "
                                     f"{' -> '.join(chain + (leader,))}")
                resolve(index[leader], chain + (leader,))
                g[i] = joint.mimic.multiplier * g[index[leader]]
                o[i] = joint.mimic.multiplier * o[index[leader]] + joint.mimic.offset
            done[i] = True

        for i, joint in enumerate(self.joints):
            resolve(i, (joint.name,))
        for a in (g, o):
            a.setflags(write=False)
        return g, o

    @cached_property
    def tree(self) -> "Robot":
        """The kinematic tree with every moving joint actuated (self when there is no mimic)."""
        if not self.has_mimic:
            return self
        joints = tuple(replace(j, mimic=None) for j in self.joints)
        return replace(self, joints=joints)

    def tree_coordinates(self, q=None, dq=None, ddq=None):
        """(q_tree, dq_tree, ddq_tree) (N, n_bodies) of actuated (N, n) arrays (None stays None)."""
        g, o = self.mimic_map
        return (None if q is None else q @ g.T + o, None if dq is None else dq @ g.T,
                None if ddq is None else ddq @ g.T)

    # -- tree structure -------------------------------------------------------------------
    @cached_property
    def parents(self) -> np.ndarray:
        """(n_bodies,) parent of each tree joint (-1: the base)."""
        return np.array([j.parent for j in self.joints], dtype=np.int64)

    @cached_property
    def ancestors(self) -> tuple[tuple[int, ...], ...]:
        """Per tree joint, the joints from the root to itself (inclusive)."""
        chains = []
        for i, joint in enumerate(self.joints):
            chains.append((chains[joint.parent] if joint.parent >= 0 else ()) + (i,))
        return tuple(chains)

    @cached_property
    def is_revolute(self) -> np.ndarray:
        """(n,) per actuated joint: revolute (rad) or prismatic (m)."""
        return np.array([j.type == "revolute" for j in self.actuated_joints])

    @cached_property
    def screw_axes(self) -> np.ndarray:
        """(n_bodies, 6) motion subspaces in link frames (angular, linear)."""
        return np.array([j.screw_axis for j in self.joints])

    # -- limits and drives as arrays (actuated joints) ------------------------------------
    def limit_array(self, name: str) -> np.ndarray:
        """(n,) array of one JointLimits field: q_min, q_max, dq_max, ddq_max or tau_max."""
        return np.array([getattr(j.limits, name) for j in self.actuated_joints], dtype=float)

    @property
    def gear_ratios(self) -> np.ndarray:
        return np.array([j.drive.gear_ratio for j in self.actuated_joints])

    @property
    def zero_offsets(self) -> np.ndarray:
        """(n,) joint positions [rad | m] where the motor encoders read 0 (``Drive.zero_offset``)."""
        return np.array([j.drive.zero_offset for j in self.actuated_joints])

    @property
    def rotor_inertias(self) -> np.ndarray:
        """(n,) joint-side rotor inertias I_a = N^2 J_m [kg m^2] (motor k through its own N_k)."""
        return np.array([j.drive.joint_rotor_inertia for j in self.actuated_joints])

    # -- transmission (robot/transmission.py) ---------------------------------------------
    @property
    def transmission_matrix(self) -> np.ndarray:
        """(n, n) T with q_m = T q: the coupling matrix, or diag(gear ratios) without one."""
        return np.diag(self.gear_ratios) if self.transmission is None else np.array(self.transmission)

    @property
    def is_coupled(self) -> bool:
        """True when a motor moves more than one joint (T has off-diagonal entries)."""
        t = self.transmission
        return t is not None and bool(np.any(t[~np.eye(t.shape[0], dtype=bool)] != 0))

    @property
    def motor_rows(self) -> np.ndarray:
        """(n, n) R = diag(N)^-1 T: motor k's velocity in units of joint k, dq_m,k / N_k = R_k . dq."""
        return self.transmission_matrix / self.gear_ratios[:, None]
