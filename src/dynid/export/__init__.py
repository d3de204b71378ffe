"""Export of an identified model: URDF with the identified inertial elements, MJCF for MuJoCo,
and a JSON/YAML model file with friction, rotor inertia and drive parameters.

Modules, one job each:
    identified  the identified model read back from result.json (physically consistent only)
    urdf        URDF text of a Robot with given standard parameters (and joint friction)
    mjcf        MJCF (MuJoCo) model: inertials, armature, damping, frictionloss (coupled motors: tendons)
    model_file  JSON / YAML model description (links, friction, drives)
"""

from dynid.export.identified import IdentifiedModel, identified_model
from dynid.export.mjcf import mjcf_text, motor_terms, write_mjcf
from dynid.export.model_file import model_dict, write_model_file
from dynid.export.urdf import urdf_text, write_urdf

__all__ = ["IdentifiedModel", "identified_model", "mjcf_text", "model_dict", "motor_terms", "urdf_text",
           "write_mjcf", "write_model_file", "write_urdf"]
