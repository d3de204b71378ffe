"""A Stäubli TX40-like 6R arm with the coupled wrist of the real robot (joints 5 and 6)."""

from __future__ import annotations

import math

import numpy as np

from dynid.robot.dh import dh_joint
from dynid.robot.inertia import from_mass_com_inertia
from dynid.robot.model import Drive, JointLimits, Link, Robot

DEG = math.pi / 180.0

# Public: the TX40's modified DH table in Khalil's notation (alpha_j, d_j, theta_j, r_j) as
# published in the identification papers of Gautier, Janot et al. on this robot: D3 = 0.225 m,
# RL3 = 0.035 m, RL4 = 0.225 m, frame 0 at the shoulder (r1 = 0). Khalil's (alpha_j, d_j,
# theta_j, r_j) are Craig's (alpha_{j-1}, a_{j-1}, theta_j, d_j); rows here are dynid's
# (a_{j-1} [m], alpha_{j-1} [deg], d_j [m], theta_j [deg]).
MDH = (
    (0.0, 0.0, 0.0, 0.0),
    (0.0, -90.0, 0.0, -90.0),
    (0.225, 0.0, 0.035, 90.0),
    (0.0, 90.0, 0.225, 0.0),
    (0.0, -90.0, 0.0, 0.0),
    (0.0, 90.0, 0.0, 0.0),
)
# Public (issue 10, after the same papers): gear ratios N_k = q_m,k / q_k and the wrist
# coupling q6 = q_m6 / N6 - q5, i.e. q_m6 = N6 (q5 + q6): row 6 of T is N6 (e5 + e6).
GEAR_RATIOS = (32.0, 32.0, 45.0, -48.0, 45.0, 32.0)
COUPLING = ((5, 4, 32.0),)  # (motor k, joint j, T[k][j]), 0-based: T[6][5] = N6
# Approximate datasheet values as we recall them (not checked against the current sheet):
# position range [deg] and maximum speed [deg/s].
RANGES = ((-180, 180), (-125, 125), (-138, 138), (-270, 270), (-120, 133.5), (-270, 270))
SPEEDS = (555, 475, 585, 1035, 1135, 1575)
# Plausible guesses (nothing published per link): masses [kg], COM in link frame i [m],
# central inertia [Ixx, Ixy, Ixz, Iyy, Iyz, Izz] [kg m^2] for a ~27 kg, 2 kg-payload arm;
# motor rotor inertias J_m [kg m^2], torque constants [N m / A], rated motor torques [N m].
INERTIALS = (  # small non-zero offsets and products of inertia, as a real casting has
    (6.0, (0.004, -0.02, -0.05), (0.040, 0.0011, 0.0012, 0.035, 0.0020, 0.030)),
    (5.0, (0.11, 0.006, -0.06), (0.010, -0.0008, 0.0030, 0.045, 0.0009, 0.040)),
    (2.5, (0.003, -0.004, 0.02), (0.008, 0.0004, -0.0003, 0.008, 0.0005, 0.004)),
    (2.0, (0.002, 0.003, -0.09), (0.012, -0.0002, 0.0004, 0.011, -0.0003, 0.002)),
    (0.7, (0.001, 0.01, 0.002), (0.0008, 0.00002, -0.00003, 0.0006, 0.00004, 0.0007)),
    (0.3, (-0.001, 0.002, 0.02), (0.0002, 0.00001, 0.00002, 0.0002, -0.00001, 0.0003)),
)
ROTOR_INERTIA = (3.3e-4, 3.3e-4, 1.3e-4, 0.6e-4, 0.6e-4, 0.3e-4)
TORQUE_CONSTANT = (0.45, 0.45, 0.35, 0.25, 0.25, 0.20)
RATED_TORQUE = (1.3, 1.3, 0.9, 0.45, 0.45, 0.3)


def tx40() -> Robot:
    """Stäubli TX40-like 6R arm with the real coupled wrist (q_m6 = N6 (q5 + q6)); inertials guessed.

    Public numbers: the MDH table (D3 = 0.225 m, RL3 = 0.035 m, RL4 = 0.225 m), the gear
    ratios [32, 32, 45, -48, 45, 32] and the coupling of motor 6 with joint 5. Approximate
    datasheet values: position ranges and maximum speeds. Plausible guesses, not measured data:
    every inertial parameter, the rotor inertias, torque constants and rated torques, and the
    acceleration limits (10 x the speed limit per second). tau_max = 3 x rated torque x |N|.
    """
    joints, links = [], []
    for i, ((a, alpha, d, theta), (lo, hi), v, (m, com, ic)) in enumerate(zip(MDH, RANGES, SPEEDS, INERTIALS)):
        n = GEAR_RATIOS[i]
        limits = JointLimits(lo * DEG, hi * DEG, v * DEG, 10.0 * v * DEG, 3.0 * RATED_TORQUE[i] * abs(n))
        drive = Drive(n, ROTOR_INERTIA[i], TORQUE_CONSTANT[i], RATED_TORQUE[i])
        joints.append(dh_joint("revolute", a, alpha * DEG, d, theta * DEG, "mdh", f"joint{i + 1}", i - 1,
                               limits, drive))
        links.append(Link(f"link{i + 1}", from_mass_com_inertia(m, com, ic)))
    t = np.diag(GEAR_RATIOS)
    for k, j, ratio in COUPLING:
        t[k, j] = ratio
    return Robot("tx40", tuple(joints), tuple(links), transmission=t,
                 description="Stäubli TX40-like arm, coupled wrist (public MDH table and gear ratios)")
