"""Export of an identified model: URDF with the identified inertial elements, MJCF for MuJoCo,
and a JSON/YAML model file with friction, rotor inertia and drive parameters.

Modules, one job each:
    identified  the identified model read back from result.json (physically consistent only)
    urdf        URDF text of a Robot with given standard parameters (and joint friction)
    mjcf        MJCF (MuJoCo) model: inertials, armature, damping, frictionloss (coupled motors: tendons)
    motor_terms each motor's identified terms as joint attributes, and a note per kind a format cannot carry
    model_file  JSON / YAML model description (links, friction, drives)
"""

from dynid.export.identified import IdentifiedModel, identified_model
from dynid.export.mjcf import mjcf_text, write_mjcf
from dynid.export.motor_terms import motor_terms, urdf_terms
from dynid.export.model_file import model_dict, write_model_file
from dynid.export.urdf import urdf_text, write_urdf

__all__ = ["IdentifiedModel", "identified_model", "mjcf_text", "model_dict", "motor_terms", "urdf_terms",
           "urdf_text", "write_mjcf", "write_model_file", "write_urdf"]
