"""Robots for the multibody tests: builtins plus a seeded branched robot with a prismatic joint
and link inertias whose principal axes are not the link axes."""

from __future__ import annotations

import numpy as np

import dynid
from dynid.robot.inertia import from_mass_com_inertia
from dynid.robot.model import Joint, Link, Robot
from dynid.robot.transforms import rpy_matrix


def _random_link(rng, name) -> Link:
    moments = rng.uniform(1.0, 1.9, 3)  # two of them always exceed the third: a physical body
    rot = rpy_matrix(*rng.uniform(-np.pi, np.pi, 3))
    inertia = rot @ np.diag(moments) @ rot.T
    return Link(name, from_mass_com_inertia(rng.uniform(1.0, 5.0), rng.uniform(-0.2, 0.2, 3), inertia))


def branched_robot(seed: int = 7) -> Robot:
    """Trunk (revolute z) with two branches: revolute-prismatic-revolute and revolute-revolute."""
    rng = np.random.default_rng(seed)
    spec = [  # (type, parent, axis)
        ("revolute", -1, [0, 0, 1]), ("revolute", 0, [0, 1, 0]), ("prismatic", 1, [1, 0, 0]),
        ("revolute", 2, [0.0, 0.6, 0.8]), ("revolute", 0, [1, 0, 0]), ("revolute", 4, [0, 1, 1]),
    ]
    joints, links = [], []
    for k, (kind, parent, axis) in enumerate(spec):
        joints.append(Joint(f"j{k + 1}", kind, parent, rpy_matrix(*rng.uniform(-1, 1, 3)),
                            rng.uniform(-0.4, 0.4, 3), np.asarray(axis, dtype=float)))
        links.append(_random_link(rng, f"L{k + 1}"))
    return Robot("branched", tuple(joints), tuple(links), gravity=np.array([0.0, 0.0, -9.81]))


def make_robot(name: str) -> Robot:
    return branched_robot() if name == "branched" else dynid.load_robot(name)


def random_motion(robot, samples: int, seed: int):
    rng = np.random.default_rng(seed)
    shape = (samples, robot.n)
    return rng.uniform(-2.0, 2.0, shape), rng.normal(0.0, 1.0, shape), rng.normal(0.0, 2.0, shape)
