"""Batched rigid-body algorithms over time-major (N, n) arrays."""

from dynid.dynamics.energy import kinetic_energy, potential_energy
from dynid.dynamics.forward import forward_dynamics, integrate_rk4
from dynid.dynamics.kinematics import forward_kinematics, joint_transforms, link_motion
from dynid.dynamics.mass_matrix import mass_matrix
from dynid.dynamics.regressor import regressor
from dynid.dynamics.rnea import coriolis_torques, gravity_torques, inverse_dynamics, link_wrenches

__all__ = [
    "coriolis_torques", "forward_dynamics", "forward_kinematics", "gravity_torques",
    "integrate_rk4", "inverse_dynamics", "joint_transforms", "kinetic_energy", "link_motion",
    "link_wrenches", "mass_matrix", "potential_energy", "regressor",
]
