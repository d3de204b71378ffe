"""Collision-free excitation from the command line (issue 16 §2, §3, §5 and "done when").

A short optimization of the xArm7 description (7 DoF, capsules fitted to its collision
meshes) with the floor and one box, from command-line options only; the clearance of the
result is checked independently with Pinocchio's collision library (coal) at dense instants,
and the evaluation's guaranteed bound against the same requirement.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from cli_helpers import runner
from robot_files import example_robot_urdf

import dynid
from dynid.cli.main import app
from dynid.excite.fileio import load_trajectory

coal = pytest.importorskip("coal")

XARM = example_robot_urdf("xarm_description/urdf/xarm7.urdf")
CLEARANCE = 0.05
BOX = "table=0.5,0.0,0.2,0.3,0.5,0.4"


@pytest.fixture(scope="module")
def optimized(tmp_path_factory):
    d = tmp_path_factory.mktemp("collision")
    out = d / "xarm.json"
    run = runner.invoke(app, ["excite", "optimize", "-r", str(XARM), "--out", str(out), "-N", "3",
                              "--generations", "3", "--polish-iterations", "15", "--clearance", str(CLEARANCE),
                              "--box", BOX, "--workspace=-0.9,-0.9,0.05:0.9,0.9,1.4"])
    assert run.exit_code == 0, run.output
    report = d / "eval.json"
    evaluation = runner.invoke(app, ["excite", "evaluate", "-r", str(XARM), "--trajectory", str(out),
                                     "--json", str(report)])
    assert evaluation.exit_code == 0, evaluation.output
    return {"out": out, "output": run.output, "file": json.loads(out.read_text()),
            "evaluation": json.loads(report.read_text())}


def capsule_object(p0, p1, radius):
    d = p1 - p0
    length = float(np.linalg.norm(d))
    z = d / length if length > 1e-12 else np.array([0.0, 0.0, 1.0])
    x = np.cross(z, [1.0, 0.0, 0.0] if abs(z[0]) < 0.9 else [0.0, 1.0, 0.0])
    x /= np.linalg.norm(x)
    return coal.Capsule(radius, length), coal.Transform3s(np.column_stack([x, np.cross(z, x), z]), 0.5 * (p0 + p1))


def test_clearance_kept_checked_by_coal(optimized):
    from dynid.dynamics import forward_kinematics
    from dynid.excite.geometry.setup import geometry_from_description
    from dynid.excite.limit_sources import limits_from_dict, robot_with_limits

    stored = optimized["file"]
    robot = dynid.load_robot(XARM)
    robot = robot_with_limits(robot, limits_from_dict(robot, stored["limits"], "file"))
    geometry = geometry_from_description(robot, stored["geometry"], "file")
    c = geometry.constraints
    assert c.scene.floor == 0.0 and [b.name for b in c.scene.boxes] == ["table"]
    traj = load_trajectory(str(optimized["out"]), robot.n)
    t = np.linspace(0.0, traj.period, 1500, endpoint=False) + 0.37 * traj.period / 1500  # not the file's instants
    rot, org = forward_kinematics(robot, traj.derivative(t, 0))
    p0, p1 = c.capsules.world_segments(rot, org)
    r = c.capsules.radius
    box = c.scene.boxes[0]
    box_shape, box_tf = coal.Box(*box.size), coal.Transform3s(box.rotation, box.center)
    floor = coal.Halfspace(np.array([0.0, 0.0, 1.0]), 0.0)
    request = coal.DistanceRequest()
    smallest = np.inf
    for m in range(0, t.size, 3):
        shapes = [capsule_object(p0[m, k], p1[m, k], r[k]) for k in range(len(r))]
        for i, j in c.self_pairs:
            smallest = min(smallest, coal.distance(*shapes[i], *shapes[j], request, coal.DistanceResult()))
        for k in c.floor_capsules:
            smallest = min(smallest, coal.distance(*shapes[k], floor, coal.Transform3s(), request,
                                                   coal.DistanceResult()))
        for _, k in c.box_pairs:
            smallest = min(smallest, coal.distance(*shapes[k], box_shape, box_tf, request, coal.DistanceResult()))
    assert smallest >= CLEARANCE - 1e-7, smallest
    clearance = optimized["evaluation"]["clearance"]
    assert clearance["ok"] is True and clearance["guaranteed_min_distance"] >= CLEARANCE
    assert clearance["min_distance"] <= smallest + 1e-6  # 10 000 instants find at least as close a point
    assert optimized["evaluation"]["workspace"]["ok"] is True
    assert optimized["evaluation"]["limits_ok"] is True
    # the flange stays in the workspace box (own check on the sampled frames)
    flange = org[:, robot.n - 1]
    assert np.all(flange >= [-0.9, -0.9, 0.05]) and np.all(flange <= [0.9, 0.9, 1.4])
    assert "keeps 0.05 m" in " ".join(optimized["output"].split())


def test_geometry_stored_in_the_trajectory_file(optimized):
    g = optimized["file"]["geometry"]
    assert g["clearance"] == CLEARANCE and g["scene"]["floor"] == 0.0
    assert g["scene"]["boxes"][0]["size"] == [0.3, 0.5, 0.4]
    assert all(c["source"].startswith("mesh") for c in g["capsules"])  # xArm7 has collision meshes
    assert g["workspace"]["low"] == [-0.9, -0.9, 0.05]


@pytest.mark.parametrize("args, words", [
    (["--box", "pillar=0,0,0.5,0.1,0.1,0.2"], ["obstacle 'pillar'", "start posture"]),
    (["--clearance", "1.5"], ["floor", "start posture", "clearance 1.5"]),
    (["--clearance", "0.05", "--workspace=-1,-1,2.0:1,1,2.5"], ["workspace", "start posture"]),  # out of reach
    (["--box", "t=0,0,0,1,1"], ["--box", "expected 6 numbers"]),
])
def test_bad_geometry_one_line(tmp_path, args, words):
    out = tmp_path / "t.json"
    run = runner.invoke(app, ["excite", "optimize", "-r", str(XARM), "--out", str(out), *args])
    assert run.exit_code == 2, run.output
    lines = [line for line in run.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and all(w in lines[0] for w in words), run.output
    assert not out.exists()
