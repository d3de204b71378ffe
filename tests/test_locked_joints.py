"""A locked joint is held at its lock value for everything below it: the merged inertia (the
dynamics) and the collision geometry (excite) equal the unlocked robot's at that joint value."""

from __future__ import annotations

import numpy as np

import dynid
from dynid.dynamics import forward_kinematics
from dynid.excite.geometry.robot_capsules import robot_capsules

FINGER = "panda_finger_joint1"  # its follower panda_finger_joint2 mimics it (multiplier 1)
OPEN = 0.02  # m, each finger


def _postures(n: int, count: int = 4) -> np.ndarray:
    return np.random.default_rng(8).uniform(-1.5, 1.5, (count, n))


def test_panda_with_locked_fingers_places_them_at_the_lock_value():
    free = dynid.load_robot("example:panda")
    locked = dynid.load_robot("example:panda", lock={FINGER: OPEN})
    assert locked.lock_values == {FINGER: OPEN, "panda_finger_joint2": OPEN}
    finger = free.joint_names.index(FINGER)
    q = _postures(locked.n)
    q_free = np.insert(q, finger, OPEN, axis=1)

    # collision geometry: every capsule of the locked robot where the unlocked one puts it
    caps_locked, caps_free = robot_capsules(locked), robot_capsules(free)
    ends_locked = caps_locked.world_segments(*forward_kinematics(locked, q))
    ends_free = caps_free.world_segments(*forward_kinematics(free, q_free))
    # (a capsule now inside another one of its new owner link is dropped: the hand holds the fingers)
    fingers = 0
    for k, capsule in enumerate(caps_locked.capsules):
        same = [j for j, c in enumerate(caps_free.capsules) if c.name == capsule.name and c.radius == capsule.radius]
        gaps = [max(np.abs(ends_locked[0][:, k] - ends_free[0][:, j]).max(),
                    np.abs(ends_locked[1][:, k] - ends_free[1][:, j]).max()) for j in same]
        assert gaps and min(gaps) < 1e-12, capsule.name
        fingers += "finger" in capsule.name
    assert fingers >= 4
    assert not any("origin" in note for note in caps_locked.notes)

    # dynamics: the merged finger bodies weigh on the arm as the unlocked fingers held at OPEN
    dq, ddq = _postures(locked.n), _postures(locked.n)
    tau_locked = dynid.inverse_dynamics(locked, q, dq, ddq)
    tau_free = dynid.inverse_dynamics(free, q_free, np.insert(dq, finger, 0.0, axis=1),
                                      np.insert(ddq, finger, 0.0, axis=1))
    np.testing.assert_allclose(tau_locked, np.delete(tau_free, finger, axis=1), rtol=0, atol=1e-10)
    # and not as fingers closed at 0 (the test can tell the difference)
    shut = dynid.load_robot("example:panda", lock={FINGER: 0.0})
    assert np.abs(dynid.inverse_dynamics(shut, q, dq, ddq) - tau_locked).max() > 1e-6
