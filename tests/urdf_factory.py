"""Random URDF robots written as text, for checks against Pinocchio (an independent parser)."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def _inertial(rng) -> str:
    m = rng.uniform(0.5, 5.0)
    # random principal moments satisfying the triangle inequality, in a rotated frame
    a, b = rng.uniform(0.01, 0.2, 2)
    c = rng.uniform(abs(a - b) + 1e-3, a + b)
    xyz = rng.uniform(-0.2, 0.2, 3)
    rpy = rng.uniform(-np.pi, np.pi, 3)
    return (
        f'<inertial><origin xyz="{xyz[0]} {xyz[1]} {xyz[2]}" rpy="{rpy[0]} {rpy[1]} {rpy[2]}"/>'
        f'<mass value="{m}"/><inertia ixx="{a}" ixy="0" ixz="0" iyy="{b}" iyz="0" izz="{c}"/></inertial>'
    )


def random_urdf(path: Path, rng: np.random.Generator, parents: list[int], types: list[str],
                mimic: dict[int, tuple[int, float, float]] | None = None) -> Path:
    """Tree of links: link k+1 hangs on link parents[k] (0 is the base) by a joint of types[k].

    Joint origins, axes (unaligned) and inertials are random; fixed joints make the loader merge.
    mimic: {k: (leader k', multiplier, offset)}: joint j{k+1} mimics j{k'+1} (0-based k).
    """
    mimic = mimic or {}
    lines = ['<?xml version="1.0"?>', '<robot name="random">', '<link name="link0"/>']
    for k, (p, jt) in enumerate(zip(parents, types)):
        child = f"link{k + 1}"
        lines.append(f'<link name="{child}">{_inertial(rng)}</link>')
        xyz = rng.uniform(-0.4, 0.4, 3)
        rpy = rng.uniform(-np.pi, np.pi, 3)
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        if k % 3 == 0:  # some joints along a frame axis, as in most real URDFs
            axis = np.eye(3)[k % 3]
        limit = '<limit lower="-3" upper="3" effort="100" velocity="5"/>' if jt in ("revolute", "prismatic") else ""
        lines.append(
            f'<joint name="j{k + 1}" type="{jt}"><parent link="link{p}"/><child link="{child}"/>'
            f'<origin xyz="{xyz[0]} {xyz[1]} {xyz[2]}" rpy="{rpy[0]} {rpy[1]} {rpy[2]}"/>'
            f'<axis xyz="{axis[0]} {axis[1]} {axis[2]}"/>{limit}{_mimic(mimic.get(k))}</joint>'
        )
    lines.append("</robot>")
    path.write_text("\n".join(lines))
    return path


# three test robots: a serial 6R arm with a fixed tool, a branched tree with prismatic and
# continuous joints and fixed links, a serial chain mixing prismatic and revolute joints
ROBOTS = {
    "serial6": ([0, 1, 2, 3, 4, 5, 6], ["revolute"] * 6 + ["fixed"]),
    "branched": (
        [0, 1, 2, 3, 2, 5, 6, 1, 8, 9],
        ["prismatic", "revolute", "continuous", "fixed", "revolute", "revolute", "fixed",
         "revolute", "prismatic", "continuous"],
    ),
    "mixed7": ([0, 1, 2, 3, 4, 5, 6], ["prismatic", "revolute", "prismatic", "revolute",
                                      "continuous", "revolute", "prismatic"]),
}


def _mimic(entry) -> str:
    if entry is None:
        return ""
    leader, multiplier, offset = entry
    return f'<mimic joint="j{leader + 1}" multiplier="{multiplier}" offset="{offset}"/>'


def write_robot(tmp_path: Path, name: str, seed: int = 0) -> Path:
    parents, types = ROBOTS[name]
    return random_urdf(tmp_path / f"{name}.urdf", np.random.default_rng(seed), parents, types)
