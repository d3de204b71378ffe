"""EFORT ER3A, the robot of the thesis (Hao, "Advanced dynamic model of serial robots")."""

from __future__ import annotations

import math

import numpy as np

from dynid.robot.dh import dh_joint
from dynid.robot.inertia import from_mass_com_inertia
from dynid.robot.model import Drive, JointLimits, Link, Robot

DEG = math.pi / 180.0

# thesis Table 2.2: MDH parameters (a_{i-1} [m], alpha_{i-1} [deg], d_i [m], theta_i [deg])
MDH = (
    (0.0, 0.0, 0.32, 0.0),
    (0.05, 90.0, 0.0, 90.0),
    (0.27, 0.0, 0.0, 0.0),
    (0.07, 90.0, 0.3, 180.0),
    (0.0, 90.0, 0.0, 180.0),
    (0.0, 90.0, 0.0785, 0.0),
)
# thesis Table 2.1: position range [deg], max velocity [deg/s], max acceleration [deg/s^2],
# motor rated torque [N m], gear ratio
TABLE_2_1 = (
    (-140, 140, 230, 510, 0.64, 121),
    (-130, 90, 230, 495, 0.64, 121),
    (-70, 100, 250, 510, 0.318, 101),
    (-180, 180, 320, 1080, 0.318, 75.48),
    (-110, 110, 320, 1080, 0.159, 81),
    (-360, 360, 420, 1080, 0.159, 50),
)
# Peak joint torque taken as 3x the rated motor torque through the gear (typical servo peak).
PEAK_FACTOR = 3.0

# Not published: plausible inertial parameters for a 3 kg-payload, ~27 kg arm (masses [kg],
# COM in MDH link frame i [m], central inertia [Ixx, Ixy, Ixz, Iyy, Iyz, Izz] [kg m^2]).
INERTIALS = (
    (7.0, (0.02, 0.0, -0.06), (0.045, 0.0, 0.002, 0.040, 0.0, 0.030)),
    (5.5, (0.135, 0.0, 0.03), (0.006, 0.0, 0.001, 0.040, 0.0, 0.038)),
    (3.0, (0.035, -0.06, 0.0), (0.012, 0.001, 0.0, 0.005, 0.0, 0.012)),
    (2.0, (0.0, 0.0, -0.10), (0.010, 0.0, 0.0, 0.010, 0.0, 0.002)),
    (0.8, (0.0, -0.02, 0.0), (0.0010, 0.0, 0.0, 0.0008, 0.0, 0.0010)),
    (0.3, (0.0, 0.0, -0.01), (0.0002, 0.0, 0.0, 0.0002, 0.0, 0.0003)),
)
# Not published: motor rotor inertias [kg m^2] and torque constants [N m / A] of 200/100/50 W
# class servo motors matching the rated torques of Table 2.1.
ROTOR_INERTIA = (1.7e-5, 1.7e-5, 0.9e-5, 0.9e-5, 0.45e-5, 0.45e-5)
TORQUE_CONSTANT = (0.36, 0.36, 0.33, 0.33, 0.30, 0.30)


def er3a() -> Robot:
    """EFORT ER3A, 6R with 3 kg payload (thesis Tables 2.1, 2.2); inertials are plausible guesses.

    Kinematics: MDH Table 2.2. Limits: Table 2.1 (positions, max velocity, max acceleration);
    tau_max = 3 x rated motor torque x gear ratio. Gear ratios and rated torques: Table 2.1.
    The thesis does not publish inertial parameters, rotor inertias or torque constants: the
    values in this module are plausible choices for a 3 kg-payload arm, not measured data.
    """
    joints, links = [], []
    for i, ((a, alpha, d, theta), row, (m, com, ic)) in enumerate(zip(MDH, TABLE_2_1, INERTIALS)):
        q_min, q_max, v, acc, rated, gear = row
        limits = JointLimits(q_min * DEG, q_max * DEG, v * DEG, acc * DEG, PEAK_FACTOR * rated * gear)
        drive = Drive(gear, ROTOR_INERTIA[i], TORQUE_CONSTANT[i], rated)
        joints.append(dh_joint("revolute", a, alpha * DEG, d, theta * DEG, "mdh",
                               f"joint{i + 1}", i - 1, limits, drive))
        links.append(Link(f"link{i + 1}", from_mass_com_inertia(m, com, ic)))
    return Robot("er3a", tuple(joints), tuple(links),
                 description="EFORT ER3A (thesis MDH Table 2.2, limits Table 2.1)")
