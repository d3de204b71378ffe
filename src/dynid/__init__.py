"""dynid: robot dynamic model identification (docs/formats.md section 1 is the public API).

The dynamics functions and ``load_robot`` are imported on first use (``dynid.lazy``): ``import
dynid`` stays light so that the command line starts in a fraction of a second."""

from dynid.files.environment import matplotlib_config, numba_cache
from dynid.errors import DataError, DynidError, IllConditionedError, ModelError
from dynid.lazy import lazy_attributes
from dynid.version import __version__

numba_cache()  # before any kernel module: a read-only install must not crash Numba's cache (files/environment.py)
matplotlib_config()

_WHERE = {name: "dynid.dynamics" for name in (
    "coriolis_torques", "forward_dynamics", "forward_kinematics", "gravity_torques",
    "inverse_dynamics", "kinetic_energy", "mass_matrix", "potential_energy", "regressor")}
_WHERE.update({"Robot": "dynid.robot", "load_robot": "dynid.robot"})

__getattr__, __dir__ = lazy_attributes(__name__, _WHERE)

__all__ = [
    "DataError", "DynidError", "IllConditionedError", "ModelError", "Robot",
    "coriolis_torques", "forward_dynamics", "forward_kinematics", "gravity_torques",
    "inverse_dynamics", "kinetic_energy", "load_robot", "mass_matrix", "potential_energy",
    "regressor",
]
