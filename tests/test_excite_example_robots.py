"""`dynid excite optimize` on example-robot-data's fixed-base robots from the command line only
(issue 16, "done when"). A short optimization (few counts) per robot, each a different case:
mimic fingers (Panda), continuous joints and COLLADA meshes (Kinova), a middle posture below
the floor (UR5: the start posture is searched), a URDF without velocity limits (double
pendulum, given on the command line), a finger hanging below its base (finger_edu). The whole
catalogue: bench/excite_robots.py (docs/excitation.md).
"""

from __future__ import annotations

import json

import pytest
from cli_helpers import runner

from dynid.cli.main import app

SHORT = ["-N", "2", "--generations", "1", "--popsize", "1", "--polish-iterations", "0", "--clearance", "0.02"]
CASES = {
    "panda": [],
    "kinova": [],
    "ur5": [],
    "double_pendulum": ["--dq-max", "5"],
    "finger_edu": [],
}


@pytest.mark.parametrize("name", list(CASES))
def test_optimize_every_kind_of_example_robot(tmp_path, name):
    from dynid.robot.example import robots_directory

    try:
        robots_directory()
    except Exception as exc:  # noqa: BLE001 - the reason is the message
        pytest.skip(str(exc))
    out = tmp_path / f"{name}.json"
    run = runner.invoke(app, ["excite", "optimize", "-r", f"example:{name}", "--out", str(out), *SHORT,
                              *CASES[name]])
    assert run.exit_code == 0, run.output
    written = json.loads(out.read_text())
    meta = written["metadata"]
    assert meta["limits_ok"] is True and meta["clearance"]["ok"] is True
    if meta["clearance"]["pairs"]:  # the double pendulum has no pair more than two joints apart
        assert meta["clearance"]["guaranteed_min_distance"] >= 0.02
    limits = written["limits"]
    assert all(v is not None for key in ("q_min", "q_max", "dq_max", "ddq_max") for v in limits[key])
    text = " ".join(run.output.split())
    if name == "kinova":  # three continuous joints, excited within one turn
        assert sum(s.startswith("default: 1 turn") for s in limits["source"]["q_max"]) == 3
        assert "1 turn" in text
    if name == "double_pendulum":
        assert limits["source"]["dq_max"] == ["option", "option"]
    if name == "ur5":  # its middle posture hangs the wrist below the mounting plane
        assert "start posture" in text
