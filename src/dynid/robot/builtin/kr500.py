"""The KR500 model of the seed papers (Cheng et al. 2021, 2022): six homogeneous steel cylinders."""

from __future__ import annotations

import math

import numpy as np

from dynid.robot.inertia import from_mass_com_inertia, solid_cylinder
from dynid.robot.model import Joint, Link, Robot

# seed 000 (cheng2021), Table 2: cylinder lengths and radii of B1..B6 [m]
LENGTHS = (1.045, 1.245, 1.21, 0.315, 0.29, 0.3)
RADII = (0.5, 0.3, 0.2, 0.2, 0.2, 0.3)
# Steel density that reproduces Table 2's masses and principal moments to 4 decimals [kg/m^3]
DENSITY = 7801.0
# seed 000, section 3: g = 9.80665 along -e3^(0)
GRAVITY = 9.80665
# joint axes in body axes e^(i): e1, e2, e2, e1, e2, e1 (seed 000, Figure 2)
AXES = (0, 1, 1, 0, 1, 0)
# body axes of B1 in world coordinates at q = 0: e1 vertical (cylinder axis), e2 = x, e3 = y
B1_AXES = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])


def cylinder_mass(i: int) -> float:
    """Mass of body B_{i+1}: rho pi r^2 l [kg]."""
    return DENSITY * math.pi * RADII[i] ** 2 * LENGTHS[i]


def principal_moments(i: int) -> np.ndarray:
    """(J11, J22, J33) of B_{i+1} about its centre of mass, e1 along the cylinder axis [kg m^2]."""
    return solid_cylinder(cylinder_mass(i), RADII[i], LENGTHS[i])


def _bodies(first_parent: int, first_placement: tuple[np.ndarray, np.ndarray]):
    joints, links = [], []
    for i in range(6):
        axis = np.eye(3)[AXES[i]]
        if i == 0:
            rot, trans = first_placement
            parent = first_parent
        else:
            rot = B1_AXES.T if i == 1 else np.eye(3)
            trans = np.array([LENGTHS[i - 1], 0.0, 0.0])
            parent = len(joints) - 1 + (0 if first_parent < 0 else 1)
        joints.append(Joint(f"joint{i + 1}", "revolute", parent, rot, trans, axis))
        j11, j22, j33 = principal_moments(i)
        links.append(Link(f"B{i + 1}", from_mass_com_inertia(
            cylinder_mass(i), [LENGTHS[i] / 2, 0.0, 0.0], [j11, 0.0, 0.0, j22, 0.0, j33])))
    return joints, links


def kr500() -> Robot:
    """KUKA KR500 of the seed papers: six homogeneous steel cylinders, joints at their ends.

    Link frame i sits at joint point O_i with the axes of body-fixed base e^(i); the centre of
    mass is at +l_i/2 e1 (body-joint vectors +-l_i/2 e1). At q = 0, B1 stands vertical on O_1 at
    the world origin (e1^(1) = z) and B2..B6 lie along the world x axis (e^(i) = world axes).
    Lengths and radii: seed 000 Table 2; density 7801 kg/m^3 reproduces its masses and
    principal moments (J11 = m r^2/2 about the cylinder axis, J22 = J33 = m(3r^2 + l^2)/12).
    """
    joints, links = _bodies(-1, (B1_AXES, np.zeros(3)))
    return Robot("kr500", tuple(joints), tuple(links), gravity=np.array([0.0, 0.0, -GRAVITY]),
                 description="KR500 of the seed papers: six steel cylinders (Cheng 2021 Table 2)")


def kr500_rail() -> Robot:
    """KR500 on a prismatic rail along world x (seed 000's experiment moves B1 along the rail).

    Joint 1 is the rail (a massless carriage); joints 2..7 are the six revolute joints of kr500.
    """
    rail = Joint("rail", "prismatic", -1, np.eye(3), np.zeros(3), np.array([1.0, 0.0, 0.0]))
    joints, links = _bodies(0, (B1_AXES, np.zeros(3)))
    return Robot("kr500-rail", (rail, *joints), (Link("carriage", np.zeros(10)), *links),
                 gravity=np.array([0.0, 0.0, -GRAVITY]),
                 description="KR500 of the seed papers on a prismatic rail along x")
