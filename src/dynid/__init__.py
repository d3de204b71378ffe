"""dynid: robot dynamic model identification (docs/formats.md section 1 is the public API).

The public API: ``load_robot`` and the batched dynamics functions (``inverse_dynamics``,
``regressor``...), and ``Identification`` (the steps of ``dynid identify`` as one call), whose
``fit`` returns an ``IdentificationResult`` (``load_result`` reads one from a result.json).

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
_WHERE.update({"Identification": "dynid.identify.identification",
               "IdentificationResult": "dynid.identify.identification_result",
               "load_result": "dynid.identify.identification_result"})

__getattr__, __dir__ = lazy_attributes(__name__, _WHERE)

__all__ = [
    "DataError", "DynidError", "IdentificationResult", "Identification", "IllConditionedError", "ModelError", "Robot",
    "coriolis_torques", "forward_dynamics", "forward_kinematics", "gravity_torques",
    "inverse_dynamics", "kinetic_energy", "load_result", "load_robot", "mass_matrix", "potential_energy",
    "regressor",
]
