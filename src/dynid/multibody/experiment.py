"""The seed papers' KR500 experiment (seed 000 section 3.1, seed 001 section 4).

Joints O_1 and O_2 accelerate at 9.5493 rad/s^2 (30 deg/s^2) from rest, all other joints are
locked; on the rail (kr500-rail, seed 000) the rail also accelerates at 2 m/s^2. The two
figures disagree (30 deg/s^2 = 0.5236 rad/s^2; 9.5493 = 30/pi): the seeds' Tables 3-4 come
from 9.5493 rad/s^2 (their errors, rms 0.009 and 0.006 kg or kg m^2, match the 7-digit rounding
of that motion, rms 0.005-0.007; at 0.5236 rad/s^2 it gives 0.0007-0.0009), so that is the
default; ``joint_acceleration`` runs the other reading (docs/thesis-chapter5.md). The seeds
simulate 2 s in 100 steps in ADAMS, whose output has 101 rows (t = 0, 0.02, ..., 2 s): we
write the same 101 samples. The motion is prescribed, so positions, velocities and
accelerations are exact; joint forces come from the recursive Newton-Euler algorithm.
"""

from __future__ import annotations

import numpy as np

from dynid.errors import DataError
from dynid.multibody.bodies import body_model
from dynid.multibody.bodydata import body_data_from_states, write_body_data
from dynid.multibody.states import body_states, joint_reactions

EXPERIMENTS = ("seed-kr500",)
JOINT_ACCELERATION = 9.5493  # rad/s^2, seed 000 sec. 3.1 / seed 001 sec. 4
RAIL_ACCELERATION = 2.0  # m/s^2, seed 000 sec. 3.1
DURATION = 2.0  # s
STEPS = 100


def seed_trajectory(robot, joint_acceleration: float | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """t (101,) and q, dq, ddq (101, n): constant accelerations from rest.

    The first two revolute joints get ``joint_acceleration`` (default 9.5493 rad/s^2), every
    prismatic joint before them (the rail) 2 m/s^2, all other joints are locked at 0.
    """
    revolute = [k for k, j in enumerate(robot.joints) if j.type == "revolute"]
    if len(revolute) < 2:
        raise DataError(f"experiment seed-kr500 needs a robot with two revolute joints; "
                        f"'{robot.name}' has {len(revolute)}")
    accel = np.zeros(robot.n)
    accel[revolute[:2]] = JOINT_ACCELERATION if joint_acceleration is None else float(joint_acceleration)
    for k, joint in enumerate(robot.joints[:revolute[0]]):
        if joint.type == "prismatic":
            accel[k] = RAIL_ACCELERATION
    t = np.linspace(0.0, DURATION, STEPS + 1)
    ddq = np.broadcast_to(accel, (len(t), robot.n)).copy()
    return t, 0.5 * t[:, None] ** 2 * accel, t[:, None] * accel, ddq


def experiment_body_data(robot, experiment: str = "seed-kr500", joint_acceleration: float | None = None):
    """BodyData of an experiment (full precision)."""
    if experiment not in EXPERIMENTS:
        raise DataError(f"--experiment: unknown experiment '{experiment}', expected one of {list(EXPERIMENTS)}")
    model = body_model(robot)
    t, q, dq, ddq = seed_trajectory(robot, joint_acceleration)
    force, moment = joint_reactions(model, q, dq, ddq)
    return body_data_from_states(t, body_states(model, q, dq, ddq), force, moment)


def write_experiment_body_data(robot, experiment: str, path, significant_digits: int | None = None,
                               joint_acceleration: float | None = None) -> dict:
    """Write the body data file (docs/formats.md section 5) of ``experiment`` to ``path``.

    significant_digits=7 rounds every value as ADAMS exports do; None keeps full precision.
    Returns a summary {experiment, robot, path, samples, bodies, duration, steps, ...}.
    """
    data = experiment_body_data(robot, experiment, joint_acceleration)
    write_body_data(path, data, significant_digits)
    return {"experiment": experiment, "robot": robot.name, "path": str(path), "samples": len(data.t),
            "bodies": data.n, "duration": DURATION, "steps": STEPS,
            "significant_digits": significant_digits,
            "joint_acceleration": JOINT_ACCELERATION if joint_acceleration is None else float(joint_acceleration)}
