"""Capsules that enclose the links: from collision primitives, meshes or the kinematic chain.

A capsule is a segment [a, b] in a link frame with a radius: every point within ``radius``
of the segment. Each primitive is replaced by a capsule that contains it:

- sphere (radius r): the point segment at its centre, radius r;
- cylinder (radius r, length l, along its z): the segment of length l on its axis, radius r;
- box (half extents h sorted h1 >= h2 >= h3): the segment of length 2 h1 on its longest
  axis, radius hypot(h2, h3) (every box point lies within that distance of the segment);
- mesh vertices: ``enclosing_capsule`` (principal axis, exact enclosing radius and ends).

Links without usable geometry get capsules along the kinematic chain: from the joint's
point to the origin of each child joint (and of each merged fixed frame, such as a flange),
with a radius per link (``chain_radius`` by default: ``CHAIN_RADIUS_SHARE`` of the robot's
reach, the summed lengths of its joint placements).

Link index -1 is the base (the root link and everything fixed to it); 0..n-1 are the links
moved by the actuated joints.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynid.errors import ModelError

CHAIN_RADIUS_SHARE = 0.04


@dataclass(frozen=True, eq=False)
class Capsule:
    """Segment [a, b] (3,) in the frame of ``link`` (-1: base) and radius [m]; ``name`` labels
    it in messages, ``source`` tells where it came from."""

    link: int
    a: np.ndarray
    b: np.ndarray
    radius: float
    name: str
    source: str

    def contains(self, points: np.ndarray, tol: float = 1e-9) -> np.ndarray:
        """(M,) whether points (M, 3), link frame, lie within the capsule."""
        d = self.b - self.a
        length2 = float(d @ d)
        s = np.clip((points - self.a) @ d / length2, 0.0, 1.0) if length2 > 0 else np.zeros(len(points))
        return np.linalg.norm(points - (self.a + s[:, None] * d), axis=1) <= self.radius + tol


def _placed(link, rotation, translation, a_local, b_local, radius, name, source) -> Capsule:
    return Capsule(link, rotation @ np.asarray(a_local, float) + translation,
                   rotation @ np.asarray(b_local, float) + translation, float(radius), name, source)


def sphere_capsule(link, rotation, translation, radius, name) -> Capsule:
    return _placed(link, rotation, translation, [0, 0, 0], [0, 0, 0], radius, name, "sphere")


def cylinder_capsule(link, rotation, translation, radius, length, name) -> Capsule:
    h = 0.5 * float(length)
    return _placed(link, rotation, translation, [0, 0, -h], [0, 0, h], radius, name, "cylinder")


def box_capsule(link, rotation, translation, size, name) -> Capsule:
    half = 0.5 * np.abs(np.asarray(size, dtype=float))
    order = np.argsort(half)[::-1]
    axis = np.zeros(3)
    axis[order[0]] = half[order[0]]
    return _placed(link, rotation, translation, -axis, axis, float(np.hypot(half[order[1]], half[order[2]])),
                   name, "box")


def enclosing_capsule(link, points: np.ndarray, name: str, source: str = "mesh") -> Capsule:
    """A capsule around points (M, 3): segment on their principal axis through the centroid,
    radius the largest distance from that axis; each end is pulled in as far as the points
    beyond it allow (a point at axial s and radial rho needs |s - end| <= sqrt(R^2 - rho^2))."""
    points = np.asarray(points, dtype=float)
    if points.ndim != 2 or points.shape[0] == 0 or points.shape[1] != 3:
        raise ModelError(f"{name}: no vertices to enclose")
    centroid = points.mean(axis=0)
    rel = points - centroid
    _, _, vt = np.linalg.svd(rel, full_matrices=False)
    axis = vt[0]
    s = rel @ axis
    rho = np.linalg.norm(rel - np.outer(s, axis), axis=1)
    radius = float(rho.max())
    reach = np.sqrt(np.maximum(radius**2 - rho**2, 0.0))
    hi, lo = float((s - reach).max()), float((s + reach).min())
    if lo > hi:  # short, wide shapes: a point segment at the middle, radius to the farthest point
        mid = 0.5 * (lo + hi)
        radius = float(np.sqrt((s - mid) ** 2 + rho**2).max())
        lo = hi = mid
    return Capsule(link, centroid + lo * axis, centroid + hi * axis, radius, name, source)


def _inside(inner: Capsule, outer: Capsule) -> bool:
    """inner within outer: both ends of inner's segment within outer.radius - inner.radius of
    outer's segment (the distance to a segment is convex along inner's segment)."""
    margin = outer.radius - inner.radius
    if margin < 0:
        return False
    probe = Capsule(outer.link, outer.a, outer.b, margin, outer.name, outer.source)
    return bool(probe.contains(np.vstack([inner.a, inner.b])).all())


def drop_contained(capsules: list[Capsule]) -> list[Capsule]:
    """Remove capsules that lie inside another capsule of the same link (e.g. the end spheres
    a description adds to a cylinder to draw a capsule); of two equal ones the first stays."""
    keep = []
    for i, c in enumerate(capsules):
        covered = any(j != i and other.link == c.link and _inside(c, other)
                      and not (j > i and _inside(other, c))
                      for j, other in enumerate(capsules))
        if not covered:
            keep.append(c)
    return keep


def chain_points(robot) -> dict[int, list[np.ndarray]]:
    """Per link (-1 = base): the points of its kinematic chain in its frame: the joint's
    point on its axis and the origins of the child joints (placements)."""
    points: dict[int, list[np.ndarray]] = {i: [] for i in range(-1, robot.n_bodies)}
    for i, joint in enumerate(robot.joints):
        # the joint frame origin seen from the link frame (identity offset: the link origin)
        points[i].append(-joint.offset_rotation.T @ joint.offset_translation)
        points[i].append(np.zeros(3))
        points[joint.parent].append(np.asarray(joint.placement_translation, dtype=float))
    points[-1].append(np.zeros(3))
    return points


def robot_reach(robot) -> float:
    """Sum of the lengths of all joint placements and offsets [m] (a size of the robot)."""
    return float(sum(np.linalg.norm(j.placement_translation) + np.linalg.norm(j.offset_translation)
                     for j in robot.joints))


def chain_radius(robot) -> float:
    """Default capsule radius of links without geometry [m], rounded to the millimetre."""
    return max(round(CHAIN_RADIUS_SHARE * robot_reach(robot), 3), 0.001)


def chain_capsules(robot, link: int, radius: float, extra_points=(), name: str = "") -> list[Capsule]:
    """Capsules of one link along its kinematic chain: from the joint's point (the first
    chain point) to every other point (child placements, merged fixed frames)."""
    points = chain_points(robot)[link] + [np.asarray(p, dtype=float) for p in extra_points]
    start = points[0]
    ends = [p for p in points[1:] if np.linalg.norm(p - start) > 1e-9]
    label = name or ("base" if link < 0 else robot.links[link].name)
    source = f"kinematic chain, radius {radius:g} m"
    if not ends:
        return [Capsule(link, start, start, float(radius), label, source)]
    return [Capsule(link, start, end, float(radius), label, source) for end in ends]
