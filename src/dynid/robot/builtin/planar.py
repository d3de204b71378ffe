"""Planar serial arms moving in the vertical x-y plane (revolute joints about z, gravity -y)."""

from __future__ import annotations

import numpy as np

from dynid.robot.inertia import from_mass_com_inertia, solid_cylinder
from dynid.robot.model import Joint, JointLimits, Link, Robot

G = 9.81

# planar6_manipulator_dynamics_appendix.txt (Zhang & Zhang 2013 arm), "Specifically speaking":
PLANAR6_MASSES = (7.887, 5.730, 3.198, 3.020, 2.773, 0.337)  # m_i [kg]
PLANAR6_LENGTHS = (0.301, 0.290, 0.230, 0.225, 0.214, 0.103)  # l_i [m]


def planar_chain(name: str, lengths, thetas: list[np.ndarray], description: str,
                 limits: JointLimits = JointLimits()) -> Robot:
    """Revolute joints about z; joint i+1 sits at (l_i, 0, 0) of link frame i."""
    joints, links = [], []
    for i, theta in enumerate(thetas):
        offset = np.array([lengths[i - 1], 0.0, 0.0]) if i else np.zeros(3)
        joints.append(Joint(f"joint{i + 1}", "revolute", i - 1, np.eye(3), offset,
                            np.array([0.0, 0.0, 1.0]), limits=limits))
        links.append(Link(f"link{i + 1}", theta))
    return Robot(name, tuple(joints), tuple(links), gravity=np.array([0.0, -G, 0.0]),
                 description=description)


def planar6() -> Robot:
    """Planar 6-link arm of the planar-6 appendix: point masses at the link tips, vertical plane.

    Masses m_i and lengths l_i from planar6_manipulator_dynamics_appendix.txt (its closed-form
    H, c_tau, g_tau, eq. 1). Joint angles are relative; theta_1 is measured from the horizontal
    x axis and gravity g = 9.81 m/s^2 acts along -y, so g_tau1 = (sum m_i) l_1 g cos(theta_1) + ...
    """
    thetas = [from_mass_com_inertia(m, [l, 0.0, 0.0], np.zeros(6))
              for m, l in zip(PLANAR6_MASSES, PLANAR6_LENGTHS)]
    return planar_chain("planar6", PLANAR6_LENGTHS, thetas,
                        "planar 6-link arm, point masses at link tips (planar-6 appendix)")


def planar2() -> Robot:
    """Two-link planar arm in the vertical plane (uniform rods 0.5 m / 0.4 m, 2.0 kg / 1.5 kg).

    A textbook test robot: links are solid rods of radius 2 cm, joints about z, gravity -y.
    Limits are plausible for a small lab arm (±2.8 rad, 3 rad/s, 15 rad/s^2, 40 N m).
    """
    lengths, masses, radius = (0.5, 0.4), (2.0, 1.5), 0.02
    thetas = []
    for m, l in zip(masses, lengths):
        axial, transverse, _ = solid_cylinder(m, radius, l)  # rod along x
        thetas.append(from_mass_com_inertia(m, [l / 2, 0.0, 0.0],
                                            [axial, 0.0, 0.0, transverse, 0.0, transverse]))
    return planar_chain("planar2", lengths, thetas, "2-link planar arm, vertical plane",
                        JointLimits(-2.8, 2.8, 3.0, 15.0, 40.0))
