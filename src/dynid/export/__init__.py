"""Export of an identified model: URDF with the identified inertial elements, and a JSON/YAML
model file with friction, rotor inertia and drive parameters.

Modules, one job each:
    identified  the identified model read back from result.json (physically consistent only)
    urdf        URDF text of a Robot with given standard parameters
    model_file  JSON / YAML model description (links, friction, drives)
"""

from dynid.export.identified import IdentifiedModel, identified_model
from dynid.export.model_file import model_dict, write_model_file
from dynid.export.urdf import urdf_text, write_urdf

__all__ = ["IdentifiedModel", "identified_model", "model_dict", "urdf_text", "write_model_file", "write_urdf"]
