"""JSON / YAML description of an identified model: links (mass, center of mass, central inertia
and the ten standard parameters), joints with friction, rotor inertia, offset and drive data.

Units: kg, m, kg m^2, N m, N m s/rad, A; the friction law of each joint is named
(``identify.model``: Coulomb-viscous ``Fc sign(dq) + Fv dq`` etc.).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from dynid import __version__
from dynid.data.io import atomic_write_text
from dynid.errors import DataError
from dynid.identify.model import FRICTION_MODELS
from dynid.robot.inertia import PARAMETER_NAMES, inertia_six, to_mass_com_inertia

FRICTION_LAWS = {
    "none": "0",
    "coulomb-viscous": "Fc sign(dq) + Fv dq",
    "polynomial": "Fc sign(dq) + Fv dq + Fv2 dq^2 sign(dq) + Fv3 dq^3",
    "asymmetric": "Fcp s+ - Fcn s- + (Fvp s+ + Fvn s-) dq, s+- = (1 +- sign(dq)) / 2",
    "stribeck": "(Fc + (Fs - Fc) exp(-(dq / vs)^2)) sign(dq) + Fv dq",
    "load-dependent": "(Fc + Fl |tau_load|) sign(dq) + Fv dq, tau_load the links' and rotors' inertial, "
                      "Coriolis and gravity torque (result.json model.load_parameters)",
}


def _finite(x) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None


def model_dict(model, result: dict | None = None) -> dict:
    """The model file's content for an ``export.identified.IdentifiedModel``."""
    robot, options = model.robot, model.options
    links = []
    for i, link in enumerate(robot.links):
        mass, com, ic = to_mass_com_inertia(link.inertial)
        links.append({"name": link.name, "mass": mass, "com": com.tolist(),
                      "inertia_about_com": inertia_six(ic).tolist(),
                      "standard_parameters": dict(zip(PARAMETER_NAMES, link.inertial.tolist()))})
    joints = []
    names = FRICTION_MODELS[options.friction]
    for j, joint in enumerate(robot.actuated_joints):  # mimic followers have no friction, rotor or drive
        drive = joint.drive
        entry = {"name": joint.name, "type": joint.type,
                 "friction": {"model": options.friction, "law": FRICTION_LAWS[options.friction],
                              **{k: float(v) for k, v in zip(names, model.friction[j])},
                              **({"vs": options.stribeck_velocity[j]} if options.friction == "stribeck" else {})},
                 "rotor_inertia": None if model.rotor_inertia is None else float(model.rotor_inertia[j]),
                 "offset": None if model.offsets is None else float(model.offsets[j]),
                 "drive": {"gear_ratio": float(drive.gear_ratio),
                           "motor_rotor_inertia_nominal": float(drive.rotor_inertia),
                           "torque_constant": _finite(drive.torque_constant),
                           "rated_torque": _finite(drive.rated_torque)}}
        joints.append(entry)
    out = {"robot": robot.name, "estimator": model.estimator, "source": model.source,
           "gravity": robot.gravity.tolist(), "smooth_sign": options.smooth_sign,
           "notes": ["rotor_inertia is joint side (I_a = N^2 J_m) as identified; friction and offset are "
                     "joint-side torques [N m]; inertia_about_com is [Ixx, Ixy, Ixz, Iyy, Iyz, Izz] in link axes; "
                     "standard_parameters are about the link frame origin (docs/formats.md section 1)"],
           "links": links, "joints": joints, "dynid_version": __version__}
    if robot.is_coupled:  # docs/transmissions.md: motor k's terms act through row k of T
        out["transmission"] = {"matrix": robot.transmission_matrix.tolist(),
                               "note": "q_m = T q; friction, rotor_inertia and offset of joint k are those of motor k "
                                       "in joint-k units, acting on every joint its row of T touches (eq. C1)"}
    if result is not None:
        out["fit"] = {k: result.get("fit", {}).get(k) for k in ("rmsd", "relative_rmsd", "condition_number")}
        for key in ("drive",):  # drive identification (identify --drive), when present
            if key in result:
                out[key] = result[key]
    return out


def write_model_file(path: str | Path, content: dict) -> None:
    """Write ``content`` as JSON (.json) or YAML (.yaml/.yml), atomically."""
    suffix = Path(path).suffix.lower()
    if suffix == ".json":
        text = json.dumps(content, indent=2) + "\n"
    elif suffix in (".yaml", ".yml"):
        import yaml

        text = yaml.safe_dump(_plain(content), sort_keys=False)
    else:
        raise DataError(f"{path}: model file must end in .json, .yaml or .yml")
    atomic_write_text(path, text)


def _plain(x):
    """numpy scalars and tuples -> plain Python for yaml.safe_dump."""
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, np.generic):
        return x.item()
    return x
