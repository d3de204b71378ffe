"""The robot description: an immutable kinematic tree of actuated joints and their links.

Each actuated joint ``i`` moves exactly one link ``i`` (fixed joints are merged when a
description is loaded). The transform from the parent link frame to link frame ``i`` is

    T_{p,i}(q_i) = P_i · M_i(q_i) · E_i

with ``P_i`` the fixed placement of the joint in the parent frame, ``M_i`` a rotation about
(revolute) or a translation along (prismatic) the unit ``axis`` through the joint frame
origin, and ``E_i`` a fixed offset from the joint frame to the link frame (identity for URDF
and modified DH; ``TransZ(d) TransX(a) RotX(alpha)`` for standard DH, whose link frame i
sits at the far end of link i). Inertial parameters are expressed in link frames.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np

from dynid.errors import ModelError
from dynid.robot.inertia import PARAMETER_NAMES, consistency_problems

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
    """

    gear_ratio: float = 1.0
    rotor_inertia: float = 0.0
    torque_constant: float = math.nan
    rated_torque: float = math.nan

    @property
    def joint_rotor_inertia(self) -> float:
        """Rotor inertia seen at the joint, I_a = N^2 J_m (thesis eq. 3.12) [kg m^2]."""
        return self.gear_ratio**2 * self.rotor_inertia


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
    inertial: np.ndarray  # (10,) standard parameters, CONTRACTS.md order

    def __post_init__(self):
        value = np.asarray(self.inertial, dtype=float)
        if value.shape != (10,) or not np.all(np.isfinite(value)):
            raise ModelError(f"link '{self.name}': inertial must be 10 finite numbers {PARAMETER_NAMES}")
        object.__setattr__(self, "inertial", _frozen(value, (10,)))
        problems = consistency_problems(value)
        if problems:
            raise ModelError(f"link '{self.name}': " + "; ".join(problems))


@dataclass(frozen=True, eq=False)
class Robot:
    """Immutable robot: joints (actuated, parents before children), their links, gravity."""

    name: str
    joints: tuple[Joint, ...]
    links: tuple[Link, ...]
    gravity: np.ndarray = field(default_factory=lambda: _frozen([0.0, 0.0, -9.81], (3,)))
    description: str = ""
    source: str = "builtin"

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

    # -- sizes and parameters -------------------------------------------------------------
    @property
    def n(self) -> int:
        """Number of actuated joints (data columns follow this order)."""
        return len(self.joints)

    def parameters(self) -> np.ndarray:
        """Standard inertial parameters (10 n,), link by link, CONTRACTS.md order."""
        return np.concatenate([link.inertial for link in self.links])

    def parameter_names(self) -> list[str]:
        return [f"{p}{i + 1}" for i in range(self.n) for p in PARAMETER_NAMES]

    def with_parameters(self, theta: np.ndarray) -> "Robot":
        """A copy with new standard parameters (10 n,) (checked for physical consistency)."""
        theta = np.asarray(theta, dtype=float).reshape(self.n, 10)
        links = tuple(Link(link.name, theta[i]) for i, link in enumerate(self.links))
        return replace(self, links=links)

    def with_gravity(self, gravity) -> "Robot":
        return replace(self, gravity=np.asarray(gravity, dtype=float))

    # -- tree structure -------------------------------------------------------------------
    @cached_property
    def parents(self) -> np.ndarray:
        return np.array([j.parent for j in self.joints], dtype=np.int64)

    @cached_property
    def ancestors(self) -> tuple[tuple[int, ...], ...]:
        """Per joint, the joints from the root to itself (inclusive)."""
        chains = []
        for i, joint in enumerate(self.joints):
            chains.append((chains[joint.parent] if joint.parent >= 0 else ()) + (i,))
        return tuple(chains)

    @cached_property
    def is_revolute(self) -> np.ndarray:
        return np.array([j.type == "revolute" for j in self.joints])

    @cached_property
    def screw_axes(self) -> np.ndarray:
        """(n, 6) motion subspaces in link frames (angular, linear)."""
        return np.array([j.screw_axis for j in self.joints])

    # -- limits and drives as arrays ------------------------------------------------------
    def limit_array(self, name: str) -> np.ndarray:
        """(n,) array of one JointLimits field: q_min, q_max, dq_max, ddq_max or tau_max."""
        return np.array([getattr(j.limits, name) for j in self.joints], dtype=float)

    @property
    def gear_ratios(self) -> np.ndarray:
        return np.array([j.drive.gear_ratio for j in self.joints])

    @property
    def rotor_inertias(self) -> np.ndarray:
        """(n,) joint-side rotor inertias I_a = N^2 J_m [kg m^2]."""
        return np.array([j.drive.joint_rotor_inertia for j in self.joints])
