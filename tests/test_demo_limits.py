"""dynid demo on robots whose descriptions lack limits (demo.workspace.demo_limits): every limit
the demo needs is finite, the description's own limits are kept, and the stated ones are named."""

from __future__ import annotations

import numpy as np

import dynid
from dynid.demo.workspace import DEMO_SPEED, DEMO_TRAVEL, demo_limits


def test_demo_states_the_limits_a_description_lacks():
    for name in ("planar6", "kr500-rail"):
        described = dynid.load_robot(name)
        robot, resolved = demo_limits(described)
        for key in ("q_min", "q_max", "dq_max", "ddq_max"):
            assert np.all(np.isfinite(robot.limit_array(key))), (name, key)
        stated = resolved.notes[0]
        assert stated.startswith("limits the description lacks, stated by the demo")
        for j in range(robot.n):
            if not np.isfinite(described.limit_array("dq_max")[j]):
                kind = "revolute" if robot.is_revolute[j] else "prismatic"
                assert robot.limit_array("dq_max")[j] == DEMO_SPEED[kind]
                assert f"joint {j + 1} ({robot.joint_names[j]}): {DEMO_SPEED[kind]:g}" in stated
    rail = robot  # kr500-rail: the prismatic rail travels DEMO_TRAVEL, in metres
    assert (rail.limit_array("q_min")[0], rail.limit_array("q_max")[0]) == DEMO_TRAVEL
    assert f"joint 1 (rail): {DEMO_TRAVEL[0]:g} .. {DEMO_TRAVEL[1]:g} m" in stated
    # a description with every limit (er3a, thesis Table 2.1) keeps them all and states none
    er3a = dynid.load_robot("er3a")
    robot, resolved = demo_limits(er3a)
    for key in ("q_min", "q_max", "dq_max"):
        np.testing.assert_array_equal(robot.limit_array(key), er3a.limit_array(key))
    assert not any("stated by the demo" in n for n in resolved.notes)
