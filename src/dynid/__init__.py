"""dynid: robot dynamic model identification (CONTRACTS.md section 1 is the public API)."""

from dynid.dynamics import (
    coriolis_torques,
    forward_dynamics,
    forward_kinematics,
    gravity_torques,
    inverse_dynamics,
    kinetic_energy,
    mass_matrix,
    potential_energy,
    regressor,
)
from dynid.errors import DataError, DynidError, IllConditionedError, ModelError
from dynid.robot import Robot, load_robot

__version__ = "0.1.0"

__all__ = [
    "DataError", "DynidError", "IllConditionedError", "ModelError", "Robot",
    "coriolis_torques", "forward_dynamics", "forward_kinematics", "gravity_torques",
    "inverse_dynamics", "kinetic_energy", "load_robot", "mass_matrix", "potential_energy",
    "regressor",
]
