"""Results carry the robot they were identified on; predict, validate, export and report refuse
a result of another robot (--force overrides and says so); results without an identity load
with a warning (issue 14)."""

from __future__ import annotations

import json

import pytest

import dynid
from cli_helpers import run_ok, runner
from dynid.cli.main import app
from dynid.robot.identity import identity_differences, kinematics_hash, robot_identity

TWO = """name: two
convention: mdh
joints:
  - {type: revolute, a: 0.0, alpha: 0.0, d: 0.3, theta: 0.0}
  - {type: revolute, a: 0.4, alpha: 0.0, d: 0.0, theta: 0.0}
links:
  - {mass: 2.0, com: [0.1, 0.0, 0.0], inertia: [0.02, 0.0, 0.0, 0.02, 0.0, 0.01]}
  - {mass: 1.0, com: [0.1, 0.0, 0.0], inertia: [0.01, 0.0, 0.0, 0.01, 0.0, 0.005]}
"""


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("identity")
    run_ok("simulate", "-r", "planar6", "--out", d / "log6.csv", "--duration", "4")
    run_ok("identify", "-r", "planar6", "--data", d / "log6.csv", "--out", d / "r6.json")
    run_ok("identify", "-r", "planar6", "--data", d / "log6.csv", "--out", d / "pc6.json", "--estimator", "pc")
    return d


def test_identity_hash_is_kinematics_only(tmp_path):
    (tmp_path / "a.yaml").write_text(TWO)
    (tmp_path / "heavier.yaml").write_text(TWO.replace("mass: 2.0", "mass: 3.0"))
    (tmp_path / "longer.yaml").write_text(TWO.replace("a: 0.4", "a: 0.401"))
    a, heavier, longer = (dynid.load_robot(tmp_path / f) for f in ("a.yaml", "heavier.yaml", "longer.yaml"))
    assert kinematics_hash(a) == kinematics_hash(heavier)  # inertials are what identification changes
    assert kinematics_hash(a) != kinematics_hash(longer)  # a 1 mm longer link is another robot
    assert kinematics_hash(a) != kinematics_hash(a.with_gravity([0.0, 9.81, 0.0]))  # wall mounted
    assert identity_differences(robot_identity(heavier), a) == []
    assert identity_differences(robot_identity(longer), a) == ["kinematics (joint placements, axes or gravity) differ"]


def test_result_stores_the_identity(files):
    stored = json.loads((files / "r6.json").read_text())["robot_identity"]
    assert stored == robot_identity(dynid.load_robot("planar6"))


@pytest.mark.parametrize("command", [
    ["predict", "-r", "er3a", "--params", "{d}/r6.json", "--data", "{d}/log6.csv", "--out", "{d}/p.csv"],
    ["validate", "-r", "er3a", "--params", "{d}/r6.json", "--data", "{d}/log6.csv"],
    ["export", "-r", "er3a", "--params", "{d}/pc6.json", "--json", "{d}/m.json"],
    ["report", "-r", "er3a", "--result", "{d}/r6.json", "--out", "{d}/report.html"],
])
def test_a_result_of_another_robot_with_as_many_joints_is_refused(files, command):
    """planar6 and er3a both have 6 joints: before, predict wrote torques silently."""
    result = invoke(*(a.format(d=files) for a in command))
    assert result.exit_code == 2, result.output
    assert "identified on another robot than 'er3a'" in result.output and "--force" in result.output
    assert not any((files / f).exists() for f in ("p.csv", "m.json", "report.html"))


def test_force_overrides_and_says_so(files, tmp_path):
    result = invoke("validate", "-r", "er3a", "--params", files / "r6.json", "--data", files / "log6.csv",
                    "--json", tmp_path / "v.json", "--force")
    assert result.exit_code == 0, result.output
    assert "warning: --force: using" in result.output
    assert "identified on another robot" in json.loads((tmp_path / "v.json").read_text())["warnings"][0]
    result = invoke("export", "-r", "er3a", "--params", files / "pc6.json", "--json", tmp_path / "m.json", "--force")
    assert result.exit_code == 0, result.output
    assert "another robot" in json.loads((tmp_path / "m.json").read_text())["warnings"][0]


def test_a_result_written_before_identities_loads_with_a_warning(files, tmp_path):
    old = json.loads((files / "r6.json").read_text())
    del old["robot_identity"]
    (tmp_path / "old.json").write_text(json.dumps(old))
    result = invoke("predict", "-r", "planar6", "--params", tmp_path / "old.json", "--data", files / "log6.csv",
                    "--out", tmp_path / "p.csv")
    assert result.exit_code == 0, result.output
    assert "carries no robot identity" in result.output and (tmp_path / "p.csv").is_file()
    result = invoke("predict", "-r", "er3a", "--params", tmp_path / "old.json", "--data", files / "log6.csv",
                    "--out", tmp_path / "q.csv")  # the stored robot_name still tells it apart
    assert result.exit_code == 2 and "identified on robot 'planar6', not 'er3a'" in result.output
