"""The 5-DoF redundant SCARA of Urrea & Pascal (2021), Appendix A (model of Urrea & Kern 2016)."""

from __future__ import annotations

import numpy as np

from dynid.robot.inertia import from_mass_com_inertia
from dynid.robot.model import Drive, Joint, JointLimits, Link, Robot

# The appendix gives the model's form (eqs. 67-88) but no numbers: these are chosen plausibly
# for a table-top redundant SCARA and are the values the tests use.
MASSES = (6.0, 4.0, 3.0, 2.0, 1.0)  # m1..m5 [kg]
LENGTHS = (0.40, 0.35, 0.30, 0.20)  # column height l1, arm lengths l2, l3, l4 [m]
COM = (0.175, 0.15, 0.10)  # l_c2, l_c3, l_c4 [m]
TOOL_LENGTH = 0.25  # link 5 is a thin vertical rod [m]
SCREW_RATIO = 2 * np.pi / 0.01  # ball screw of 10 mm lead: motor rad per metre


def scara5() -> Robot:
    """5-DoF redundant SCARA (Urrea 2021 appendix): prismatic z, three revolute about z, prismatic -z.

    q1 lifts the arm (+z), q2..q4 turn the three arm links about vertical axes, q5 lowers the
    tool (-z), matching M15 = -m5 and G = [(sum m) g, 0, 0, 0, -m5 g] of eqs. 70 and 88.
    Links 2-4 are uniform bars (I_k = m_k l_k^2 / 12 about the centre of mass, COM at l_ck);
    link 5 is a thin rod on the q5 axis at distance l4 from joint 4. Numbers are plausible
    choices (the paper gives none), documented in this module.
    """
    z = np.array([0.0, 0.0, 1.0])
    m1, m2, m3, m4, m5 = MASSES
    l1, l2, l3, l4 = LENGTHS
    lc2, lc3, lc4 = COM
    bar = lambda m, l: [m * 0.03**2 / 6, 0.0, 0.0, m * l**2 / 12, 0.0, m * l**2 / 12]  # noqa: E731
    thetas = [
        from_mass_com_inertia(m1, [0.0, 0.0, 0.0], [0.05, 0.0, 0.0, 0.05, 0.0, 0.02]),
        from_mass_com_inertia(m2, [lc2, 0.0, 0.0], bar(m2, l2)),
        from_mass_com_inertia(m3, [lc3, 0.0, 0.0], bar(m3, l3)),
        from_mass_com_inertia(m4, [lc4, 0.0, 0.0], bar(m4, 2 * lc4)),
        from_mass_com_inertia(m5, [0.0, 0.0, 0.0], [m5 * TOOL_LENGTH**2 / 12, 0.0, 0.0,
                                                    m5 * TOOL_LENGTH**2 / 12, 0.0, 0.0]),
    ]
    lift = JointLimits(0.0, 0.3, 0.5, 3.0, 300.0)
    turn = JointLimits(-2.6, 2.6, 3.0, 15.0, 30.0)
    joints = (
        Joint("lift", "prismatic", -1, np.eye(3), np.zeros(3), z, limits=lift, drive=Drive(gear_ratio=SCREW_RATIO)),
        Joint("shoulder", "revolute", 0, np.eye(3), np.array([0.0, 0.0, l1]), z, limits=turn, drive=Drive(gear_ratio=50.0)),
        Joint("elbow", "revolute", 1, np.eye(3), np.array([l2, 0.0, 0.0]), z, limits=turn, drive=Drive(gear_ratio=50.0)),
        Joint("wrist", "revolute", 2, np.eye(3), np.array([l3, 0.0, 0.0]), z, limits=turn, drive=Drive(gear_ratio=30.0)),
        Joint("tool", "prismatic", 3, np.eye(3), np.array([l4, 0.0, 0.0]), -z,
              limits=JointLimits(0.0, 0.15, 0.5, 3.0, 100.0), drive=Drive(gear_ratio=SCREW_RATIO)),
    )
    links = tuple(Link(f"link{i + 1}", th) for i, th in enumerate(thetas))
    return Robot("scara5", joints, links, description="5-DoF redundant SCARA (Urrea 2021 appendix)")
