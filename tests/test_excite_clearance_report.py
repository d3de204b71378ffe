"""`dynid excite evaluate`'s clearance block (issue 16 §2): the smallest distance, the pair that
has it ('where') and the instant ('time'), checked against a brute-force search over the same
instants: the distance from a point running along one capsule's axis to the other axis (or to
the box) is convex in the running parameter, so a ternary search over it finds the smallest
(point to segment and point to box in closed form). Links within --self-exempt joints of each other are not
checked, the others are."""

from __future__ import annotations

import json

import numpy as np
from cli_helpers import run_ok

import dynid
from dynid.dynamics import forward_kinematics
from dynid.excite.fileio import write_trajectory
from dynid.excite.periodic import from_table
from dynid.excite.geometry.robot_capsules import robot_capsules

W_F = 2.0 * np.pi * 0.2  # 5 s period


def _along(p0, p1, distance) -> np.ndarray:
    """min over s in [0, 1] of distance(p0 + s (p1 - p0)) (arrays (..., 3)) for a distance convex
    in s: ternary search, the interval shrunk to (2/3)^40 ~ 1e-7 of the axis."""
    lo, hi = np.zeros(p0.shape[:-1]), np.ones(p0.shape[:-1])
    at = lambda s: distance(p0 + s[..., None] * (p1 - p0))  # noqa: E731
    for _ in range(40):
        a, b = lo + (hi - lo) / 3.0, hi - (hi - lo) / 3.0
        left = at(a) <= at(b)
        lo, hi = np.where(left, lo, a), np.where(left, b, hi)
    return at(0.5 * (lo + hi))


def _evaluate(tmp_path, robot, trajectory, *options) -> dict:
    write_trajectory(tmp_path / "traj.json", trajectory, robot)
    run_ok("excite", "evaluate", "-r", robot, "-t", tmp_path / "traj.json", "--no-floor", *options,
           "--json", tmp_path / "eval.json")
    return json.loads((tmp_path / "eval.json").read_text())["clearance"]


def _segments(robot, trajectory, samples):
    """Instants of the evaluation (k T / samples) and the capsules' world axes there."""
    t = np.arange(samples) * trajectory.period / samples
    capsules = robot_capsules(robot)
    p0, p1 = capsules.world_segments(*forward_kinematics(robot, trajectory.derivative(t, 0)))
    return t, capsules, p0, p1


def _label(robot, link: int) -> str:
    return "base" if link < 0 else f"link {link + 1} ({robot.links[link].name})"


def test_closest_approach_to_an_obstacle_names_the_link_and_the_instant(tmp_path):
    robot = dynid.load_robot("planar2")  # two adjacent links in the x-y plane: only the box pairs
    trajectory = from_table([[0.4, 0.3]], [[0.2, -0.5]], [0.3, 0.4], W_F)
    centre, half = np.array([0.1865, 0.235, 0.0]), np.full(3, 0.025)  # a post beside link 1's sweep
    report = _evaluate(tmp_path, "planar2", trajectory, "--clearance", "0.005",
                       "--box", "post=0.1865,0.235,0,0.05,0.05,0.05")
    t, capsules, p0, p1 = _segments(robot, trajectory, report["samples"])
    # the capsule axes never enter the box here: the distance of a point outside, in closed form
    box = lambda x: np.linalg.norm(np.maximum(np.abs(x - centre) - half, 0.0), axis=-1)  # noqa: E731
    distance = _along(p0, p1, box) - capsules.radius  # (N, capsules)
    distance[:, capsules.link < 0] = np.inf  # the base capsule does not move: not paired with obstacles
    k, c = np.unravel_index(np.argmin(distance), distance.shape)
    assert report["where"] == f"{_label(robot, capsules.link[c])} - obstacle 'post'"
    assert abs(report["time"] - t[k]) <= 0.002 * trajectory.period
    np.testing.assert_allclose(report["min_distance"], distance[k, c], atol=1e-5)
    assert 0.0 < report["min_distance"] < 0.05 and report["ok"] is (report["guaranteed_min_distance"] >= 0.005)
    np.testing.assert_allclose(report["q"], trajectory.derivative(np.array([report["time"]]), 0)[0], atol=1e-12)


def _self_distances(robot, trajectory, samples, apart: int):
    """Brute-force distances (N, pairs) of capsule pairs of a serial chain more than ``apart``
    joints apart (links i, j of a chain are |i - j| joints apart, the base is link -1)."""
    t, capsules, p0, p1 = _segments(robot, trajectory, samples)
    pairs = [(a, b) for a in range(len(capsules.link)) for b in range(a + 1, len(capsules.link))
             if abs(int(capsules.link[a]) - int(capsules.link[b])) > apart]
    a, b = (np.array(side) for side in zip(*pairs))
    start, axis = p0[:, b], p1[:, b] - p0[:, b]  # (N, pairs, 3)
    length2 = np.maximum(np.sum(axis**2, axis=-1), 1e-300)

    def to_b(x):  # point to segment b in closed form
        s = np.clip(np.sum((x - start) * axis, axis=-1) / length2, 0.0, 1.0)
        return np.linalg.norm(x - start - s[..., None] * axis, axis=-1)

    out = _along(p0[:, a], p1[:, a], to_b) - capsules.radius[a] - capsules.radius[b]
    return t, capsules, pairs, out


def test_links_within_self_exempt_joints_are_not_checked_the_others_are(tmp_path):
    """planar6 (links 0.301/0.29/0.23/0.225/0.214 m, capsules of radius 0.05 m): adjacent capsules
    share their joint (distance -0.1 m), so any checked adjacent pair would make the minimum
    negative. With --self-exempt 1 the pairs two joints apart are checked: the closest is
    link 4 - link 6 (the chain's last capsule is a sphere at joint 6), held at l5 - 2 r = 0.114 m
    by the link between them; with --self-exempt 2 only pairs three or more joints apart count."""
    robot = dynid.load_robot("planar6")
    trajectory = from_table([[0.3] * 6], [[0.2, -0.3, 0.2, 0.1, -0.2, 0.3]], [0.0, 0.9, 0.8, 0.8, 0.6, 0.5], W_F)
    limits = ("--dq-max", "5", "--ddq-max", "20", "--q-range=-3,3", "--clearance", "0.01")
    one = _evaluate(tmp_path, "planar6", trajectory, *limits, "--self-exempt", "1")
    links = 1 + robot.n  # the base and the six links, a capsule each
    assert one["pairs"] == links * (links - 1) // 2 - robot.n  # all but the six adjacent pairs
    np.testing.assert_allclose(one["min_distance"], 0.214 - 2 * 0.05, atol=1e-9)
    assert one["where"] == f"{_label(robot, 3)} - {_label(robot, 5)}"
    two = _evaluate(tmp_path, "planar6", trajectory, *limits, "--self-exempt", "2")
    t, capsules, pairs, distance = _self_distances(robot, trajectory, two["samples"], apart=2)
    assert two["pairs"] == len(pairs) == one["pairs"] - (robot.n - 1)  # and the five pairs two apart
    k, m = np.unravel_index(np.argmin(distance), distance.shape)
    a, b = pairs[m]
    assert two["where"] == f"{_label(robot, capsules.link[a])} - {_label(robot, capsules.link[b])}"
    assert abs(two["time"] - t[k]) <= 0.002 * trajectory.period
    np.testing.assert_allclose(two["min_distance"], distance[k, m], atol=1e-5)
    assert two["min_distance"] > one["min_distance"] > 0.0
